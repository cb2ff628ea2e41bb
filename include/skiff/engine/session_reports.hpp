// The server's own error answers (a framing or limit error, a deadline's 408, a handler's
// 500) and what the session tells the application's observers (options: on_response,
// on_error, on_rejection): each answer timed and measured for the response hook, a handler's
// exception for the error hook, and a rejection's fields and body for the rejection hook.
// Kept apart from session.hpp, whose hot path tests one empty std::function per request and
// comes here only when a hook is set or a request is refused.
//
// The handlers' answers are the session's; this reads what was written (status, bytes) and
// calls the hooks, each guarded, so a hook that throws does not end the loop.
#ifndef SKIFF_ENGINE_SESSION_REPORTS_HPP
#define SKIFF_ENGINE_SESSION_REPORTS_HPP

#include "skiff/config.hpp"
#include "skiff/detail/guarded_call.hpp"
#include "skiff/engine/connection.hpp"
#include "skiff/engine/handover.hpp"
#include "skiff/engine/hooks.hpp"
#include "skiff/engine/options.hpp"
#include "skiff/engine/report.hpp"
#include "skiff/http/request.hpp"
#include "skiff/http/request_head.hpp"
#include "skiff/http/response.hpp"
#include "skiff/http/response_access.hpp"
#include "skiff/http/status.hpp"

#include <chrono>       // std::chrono::steady_clock, an answer's duration
#include <cstddef>      // std::size_t
#include <cstring>      // std::memcpy
#include <memory>       // std::unique_ptr
#include <string_view>  // std::string_view

namespace skiff::detail {

// Whether a request's bytes, past the empty lines that may come first, begin a HEAD: a
// rejected request is read from its bytes, since its parse may have failed before its method
// was noted (a 414 request line, say).
inline bool begins_head_request(std::string_view input) noexcept {
    std::size_t first = input.find_first_not_of("\r\n");
    return first != std::string_view::npos && input.substr(first, 5) == "HEAD ";
}

template <class Session>
class session_reports {
    using conn = typename Session::conn;

public:
    explicit session_reports(Session& s) noexcept : s_(s) {}

    // Which loop this is (response_event::loop): set by the runner, 0 unless threaded.
    void number(std::size_t loop) noexcept { loop_ = loop; }
    std::size_t loop() const noexcept { return loop_; }

    // respond() with a response hook: the answer is timed and measured, then reported (one
    // made later when it is written, through the door).
    SKIFF_NOINLINE void respond_observed(conn& c, std::size_t received) {
        std::size_t start = s_.writer_.batch().size();
        outcome_ = rejection::none;
        auto began = std::chrono::steady_clock::now();
        s_.answer_request(c);
        auto took = std::chrono::steady_clock::now() - began;
        if (response_access::pending_deferred(s_.res_) != nullptr) return;
        const request_head& head = request_access::head(s_.req_);
        response_event e;
        e.reason = outcome_;
        e.status = s_.res_.status();
        e.bytes_sent = s_.writer_.batch().size() - start;
        e.bytes_received = received;
        e.duration = std::chrono::duration_cast<std::chrono::nanoseconds>(took);
        e.method = head.method_name;
        e.target = head.target;
        e.version = version_text(head.version_minor);
        report(c, e);
    }

    // A framing or limit error: the stream can no longer be trusted, so answer and close,
    // draining what the client still sends (`how`) so that it reads the answer, not a reset.
    // `why` and `input` (the bytes of the request being rejected) are for a response hook.
    // A HEAD (the rejected bytes say so) is answered without the content (RFC 9110 §9.3.2).
    SKIFF_NOINLINE void answer_error(conn& c, int status, phase how, rejection why, std::string_view input) {
        response& res = s_.res_;
        std::size_t start = s_.writer_.batch().size();
        response_access::start(res, s_.writer_.batch(), s_.time_.date, begins_head_request(input), true, false);
        std::string_view reason = reason_phrase(status);
        char text[64];
        std::size_t n = reason.size() < sizeof text - 1 ? reason.size() : sizeof text - 1;
        std::memcpy(text, reason.data(), n);
        text[n++] = '\n';
        res.status(status);
        if (SKIFF_UNLIKELY(static_cast<bool>(s_.opt_.on_rejection))) decorate_rejection(why, input);
        if (!res.sent()) res.text({text, n});  // else the hook rendered its own body
        Session::close_after_output(c, how);
        if (SKIFF_UNLIKELY(static_cast<bool>(s_.opt_.on_response))) rejected(c, why, input, s_.writer_.batch().size() - start);
    }

    // A handler threw: its answer so far is discarded, and the 500 goes out decorated.
    SKIFF_NOINLINE void answer_internal_error() {
        response& res = s_.res_;
        handed_ptr dropped(response_access::take_taker(res));  // it deferred, then threw
        response_access::discard(res);
        res.status(500);
        if (s_.opt_.on_rejection) decorate_rejection(rejection::handler_exception);
        if (!res.sent()) res.text("Internal Server Error\n");
    }

    // A late answer (a handed connection's): its request's head is gone by then, so its method
    // and target are those kept in the context.
    SKIFF_NOINLINE void late(conn& c, const answer_context& ctx, std::size_t bytes) {
        response_event e;
        e.status = s_.res_.status();
        e.bytes_sent = bytes;
        e.method = ctx.origin.method;
        e.target = ctx.origin.target;
        e.version = version_text(ctx.http10 ? 0 : 1);
        report(c, e);
    }

    // A rejection (a framing or limit error) the session answered.
    SKIFF_NOINLINE void rejected(conn& c, rejection why, std::string_view input, std::size_t bytes) {
        response_event e;
        e.reason = why;
        e.status = s_.res_.status();
        e.bytes_sent = bytes;
        e.bytes_received = input.size();
        describe_request_line(input, s_.limits_, e);
        report(c, e);
    }

    // The handler threw: the error hook sees what it threw and the request, before the 500.
    SKIFF_NOINLINE void handler_threw() {
        outcome_ = rejection::handler_exception;
        if (!s_.opt_.on_error) return;
        const char* what = describe_current_exception();
        call_guarded([&] { s_.opt_.on_error(what, s_.req_); }, [] {});
    }

    // The rejection hook adds its fields, and may write the body itself (a JSON API's error
    // object); one that throws leaves the answer as it was. The status is the server's: a hook
    // that changed it gets the plain answer instead. The reason is told as the response hook
    // tells it (a 400 whose request line is good is the header's fault).
    SKIFF_NOINLINE void decorate_rejection(rejection why, std::string_view input = {}) {
        response& res = s_.res_;
        response_event e;
        e.reason = why;
        describe_request_line(input, s_.limits_, e);
        int status = res.status();
        call_guarded([&] { s_.opt_.on_rejection(res, e.reason); }, [] {});
        if (res.status() == status) return;
        response_access::discard(res);
        res.status(status);
    }

private:
    void report(conn& c, response_event& e) {
        peer_text peer(c.fd);
        e.peer = peer.view();
        e.loop = loop_;
        call_guarded([&] { s_.opt_.on_response(e); }, [] {});  // a throwing hook must not end the loop
    }

    Session& s_;
    rejection outcome_ = rejection::none;  // the current answer's, for the response hook
    std::size_t loop_ = 0;
};

} // namespace skiff::detail

#endif // SKIFF_ENGINE_SESSION_REPORTS_HPP
