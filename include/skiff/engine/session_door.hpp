// The session's side of the door (handover.hpp): what a handed connection's taker is offered,
// in the session's terms, and how the session hands a connection over and takes it back. It is
// to session.hpp what redis's blocked.c is to networking.c: the protocol hands a connection
// here through a few calls and knows nothing of what takes it.
//
//   the session -> here                          here -> a taker (handed)
//     hand_over_answer(c)   a handler left a       begin, on_readable, on_deadline, await,
//                           taker (defer, file)    on_sent (abandon: the session's close)
//     route_body(c, ...)    a head whose route
//                           takes its body unread  a taker -> here (door)
//     on_readable(c), on_deadline(c), on_sent(c),    read, write, flush, answer, finish,
//     await(c), serve_handed(c, ...)  its events     answered, serve_after, close, ...
//
// It does not parse, route or write by itself: each door operation is a call of the session's
// (serve, keep_tail, after_write, the writer). Not templated on the policy in its interface
// (door), so the features behind it are compiled once, whatever the policy.
//
// Invariants: a taker is called only while its connection is handed (c.taker holds
// it). One that finishes during an event (finish, answered) is kept in retired_ until the
// event is over, then freed: it may still be running when it gives the connection back.
#ifndef SKIFF_ENGINE_SESSION_DOOR_HPP
#define SKIFF_ENGINE_SESSION_DOOR_HPP

#include "skiff/config.hpp"
#include "skiff/detail/guarded_call.hpp"
#include "skiff/engine/connection.hpp"
#include "skiff/engine/handover.hpp"
#include "skiff/engine/hooks.hpp"
#include "skiff/engine/loop_hub.hpp"
#include "skiff/engine/options.hpp"
#include "skiff/engine/report.hpp"
#include "skiff/engine/writer.hpp"
#include "skiff/http/request.hpp"
#include "skiff/http/response.hpp"
#include "skiff/http/response_access.hpp"
#include "skiff/platform/socket.hpp"

#include <cstddef>       // std::size_t
#include <cstdint>       // std::int64_t, std::uint8_t
#include <functional>    // a late answer's callback
#include <memory>        // std::unique_ptr
#include <string_view>   // std::string_view
#include <sys/socket.h>  // recv

namespace skiff::detail {

// While the server stops, every answer says Connection: close.
enum class serving : std::uint8_t { normally, until_stop };

template <class Session>
class session_door final : public door {
    using conn = typename Session::conn;

public:
    explicit session_door(Session& s) noexcept : s_(s) {}

    // ---- the session hands a connection over, and brings it its events ------------------

    // The handler left a taker (response::defer, response::file): the connection is handed
    // to it. Kept out of respond(), which must stay small enough to inline into serve(): 29
    // instructions a request when this was inlined into it (callgrind, contract app). A taker
    // that called answer() (door::answer) is not freed here: it is still running.
    // The request's method and target are kept only where an error hook may need them.
    SKIFF_NOINLINE void hand_over_answer(conn& c) {
        request_origin origin;
        if (s_.opt_.on_error) origin = request_access::origin_of(s_.req_);
        hand_over_answer(c, std::move(origin));
    }
    void hand_over_answer(conn& c, request_origin origin) {
        install(c, handed_ptr(response_access::take_taker(s_.res_)));
        pending_body request;
        request.context.origin = std::move(origin);
        (void)c.taker->begin(*this, c, request, nullptr, 0);
    }

    // A head that declares a body is in, at buf[0, head_size()): offer it to its route if the
    // route takes it unread; else go on buffering it (0 used: the next parse takes the body).
    SKIFF_NOINLINE std::size_t route_body(conn& c, char* buf, std::size_t len) {
        request_head& head = request_access::head(s_.req_);
        if (s_.router_.streams(head.verb, head.method_name, head.path)) return offer_body(c, buf, len);
        if (c.parser.declares_more_than(s_.limits_.max_body))
            s_.reports_.answer_error(c, 413, phase::draining, rejection::body_too_large, {buf, len});
        return 0;
    }

    SKIFF_NOINLINE fate on_readable(conn& c) { return after_event(c.taker->on_readable(*this, c)); }
    SKIFF_NOINLINE fate on_deadline(conn& c) { return after_event(c.taker->on_deadline(*this, c)); }
    void on_sent(conn& c) { c.taker->on_sent(*this, c); }
    fate await(conn& c) { return c.taker->await(*this, c); }

    // A handed connection's turn that comes from elsewhere (loop_context::serve_handed: an
    // answer made on another thread), on the thread that serves c.
    fate serve_handed(conn& c, loop_context::handed_call call, void* arg) { return after_event(call(*this, c, arg)); }

    // ---- door: what a taker is offered --------------------------------------------------

    read_result read(connection& c) override {
        ssize_t n = ::recv(c.fd, s_.scratch_.data(), s_.scratch_.capacity(), 0);
        if (n > 0) return {read_outcome::got, s_.scratch_.data(), static_cast<std::size_t>(n)};
        return {n < 0 && retry_later() ? read_outcome::retry : read_outcome::ended};
    }
    void write(std::string_view bytes) override { s_.writer_.batch().append(bytes.data(), bytes.size()); }
    void watch(connection& c, std::uint8_t interest) override { s_.set_.watch(own(c), interest); }
    void arm(connection& c, deadline_kind kind) override { s_.arm(own(c), kind); }
    std::int64_t now_ms() const noexcept override { return s_.time_.now_ms; }
    const options& settings() const noexcept override { return s_.opt_; }
    bool workers_wait() const noexcept override { return Session::workers_wait; }
    push_ledger& pushes() noexcept override { return s_.set_.anchor().pushes; }
    void finish(connection& c) override {
        retired_ = std::move(c.taker);
        c.state = c.then;
    }
    void answer(connection& c, answer_context& ctx, const std::function<void(response&)>& fn) override;
    void reject(connection& c, int status, rejection why) override {
        s_.reports_.answer_error(own(c), status, phase::draining, why, {});
    }
    fate serve_after(connection& c, char* data, std::size_t len, std::size_t used) override {
        conn& x = own(c);
        if (takes_requests(x.state)) used += s_.serve(x, data + used, len - used);
        s_.keep_tail(x, data, true, len, used);
        return s_.after_write(x, s_.writer_.flush(x));
    }
    fate serve_waiting(connection& c) override {
        conn& x = own(c);
        if (takes_requests(x.state)) {
            std::size_t len = x.in.size();
            std::size_t used = s_.serve(x, x.in.data(), len);
            s_.keep_tail(x, x.in.data(), false, len, used);
        }
        return s_.after_write(x, s_.writer_.flush(x));
    }
    fate close(connection& c) override { return s_.close(own(c)); }

    bool stopping() const noexcept override { return s_.serving_ == serving::until_stop; }
    push_framing answer_push(connection& c, answer_context& ctx, const std::function<void(response&)>& fields,
                             std::string_view content_type) override;
    void write_piece(push_framing framing, std::string_view bytes) override {
        stream_framing f = framing == push_framing::chunked ? stream_framing::chunked : stream_framing::until_close;
        s_.writer_.append_piece(f, bytes.data(), bytes.size());
    }
    void write_last_chunk() override { s_.writer_.append_last_chunk(); }
    write_status flush(connection& c) override { return s_.writer_.flush(own(c)); }
    write_status write_parked(connection& c) override { return s_.writer_.write_parked(own(c)); }
    fate after_write(connection& c, write_status w) override { return s_.after_write(own(c), w); }
    std::size_t parked(const connection& c) const noexcept override { return Session::writer_type::pending(c); }
    peek_outcome peek(connection& c) override {
        char byte;
        ssize_t n = ::recv(c.fd, &byte, 1, MSG_PEEK);
        if (n > 0) return peek_outcome::bytes;
        if (n == 0) return peek_outcome::ended;
        return retry_later() ? peek_outcome::retry : peek_outcome::failed;
    }
    char* scratch(std::size_t& size) noexcept override {
        size = s_.scratch_.capacity();
        return s_.scratch_.data();
    }
    void close_after_output(connection& c) override { Session::close_after_output(own(c), phase::closing); }
    void linger_after_output(connection& c) override { Session::close_after_output(own(c), phase::draining); }
    void answered(connection& c) override;

private:
    static conn& own(connection& c) noexcept { return static_cast<conn&>(c); }

    // c is handed to taker from now on; it goes on in `then` (reading) when it comes back.
    static void install(conn& c, handed_ptr taker) {
        c.taker = std::move(taker);
        c.then = phase::reading;
        c.state = phase::handed;
    }

    fate after_event(fate f) {
        retired_.reset();  // a taker that finished during the event (finish, answered)
        return f;
    }

    // Runs the route on the head with the body lent unread; it leaves a taker (the connection
    // is handed to it), or answers at once and the body is dropped. Returns the bytes used.
    std::size_t offer_body(conn& c, char* buf, std::size_t len);
    pending_body describe_body(conn& c) const;
    std::size_t hand_over(conn& c, handed_ptr taker, pending_body& body, char* data, std::size_t len) {
        c.parser.reset();
        install(c, std::move(taker));
        std::size_t used = c.taker->begin(*this, c, body, data, len);
        retired_.reset();
        return used;
    }

    std::size_t start_late(conn& c, const answer_context& ctx);

    Session& s_;
    handed_ptr retired_;  // a taker done in this event, freed once it is over
};

template <class Session>
std::size_t session_door<Session>::offer_body(conn& c, char* buf, std::size_t len) {
    response& res = s_.res_;
    pending_body body = describe_body(c);
    std::size_t head_len = c.parser.head_size();
    bool may_drop = body.framing == body_framing::length && body.declared <= early_answer_drain &&
                    body.declared <= s_.limits_.max_body && !body.expects_continue;
    request_access::reset(s_.req_);
    bool close = body.context.close || stopping() || !may_drop;
    std::size_t start = s_.writer_.batch().size();
    response_access::start(res, s_.writer_.batch(), s_.time_.date, body.context.head_request, close, body.context.http10);
    response_access::lend_body(res, &body);
    call_guarded([&] { s_.router_.serve(s_.req_, res); }, [&] { s_.reports_.answer_internal_error(); });
    response_access::lend_body(res, nullptr);
    // An answer deferred before the body is read is not taken up: the route answers here or
    // through its taker (a handler that defers does so at the body's end).
    handed_ptr unsupported(response_access::take_taker(res));
    if (body.taker && !res.sent()) {
        body.context.head_fields = response_access::hold_fields(res);  // the answer comes after the body
        return head_len + hand_over(c, std::move(body.taker), body, buf + head_len, len - head_len);
    }
    body.taker.reset();
    if (!res.sent()) res.end();
    if (SKIFF_UNLIKELY(!unsupported && static_cast<bool>(s_.opt_.on_response)))
        s_.reports_.late(c, body.context, s_.writer_.batch().size() - start);
    if (res.closes_connection()) {  // a body too large to drop, or 100 Continue asked
        Session::close_after_output(c, phase::draining);
        return len;
    }
    return head_len + hand_over(c, handed_ptr(new body_drop(body.declared)), body, buf + head_len,
                                len - head_len);
}

template <class Session>
pending_body session_door<Session>::describe_body(conn& c) const {
    const request_head& head = request_access::head(s_.req_);
    pending_body body;
    body.framing = c.parser.framing();
    body.declared = head.content_length;
    body.limits = s_.limits_;
    body.expects_continue = head.expect_continue;
    body.context.head_request = head.verb == method::head;
    body.context.http10 = head.version_minor == 0;
    body.context.close = !head.keep_alive;
    if (s_.opt_.on_error || s_.opt_.on_response) body.context.origin = request_access::origin_of(s_.req_);  // for the hooks, later
    return body;
}

// Answers a request whose head is gone, as a handler would.
template <class Session>
void session_door<Session>::answer(connection& base, answer_context& ctx, const std::function<void(response&)>& fn) {
    conn& c = own(base);
    response& res = s_.res_;
    std::size_t start = start_late(c, ctx);
    call_guarded([&] { if (fn) fn(res); }, [&] { s_.reports_.answer_internal_error(); });
    if (!res.sent()) res.end();
    bool later = response_access::pending_deferred(res) != nullptr;  // reported when written
    if (!later && SKIFF_UNLIKELY(static_cast<bool>(s_.opt_.on_response))) s_.reports_.late(c, ctx, s_.writer_.batch().size() - start);
    if (response_access::hands_over(res)) hand_over_answer(c, std::move(ctx.origin));
    if (res.closes_connection()) Session::close_after_output(c, phase::closing);
}

// A late answer's head, its body pushed later.
template <class Session>
push_framing session_door<Session>::answer_push(connection& base, answer_context& ctx,
                                                const std::function<void(response&)>& fields,
                                                std::string_view content_type) {
    conn& c = own(base);
    response& res = s_.res_;
    std::size_t start = start_late(c, ctx);
    fields(res);
    response_framing f = response_access::push_head(res, content_type);
    if (SKIFF_UNLIKELY(static_cast<bool>(s_.opt_.on_response))) s_.reports_.late(c, ctx, s_.writer_.batch().size() - start);
    if (res.closes_connection()) Session::close_after_output(c, phase::closing);
    if (f == response_framing::no_content) return push_framing::none;
    return f == response_framing::chunked ? push_framing::chunked : push_framing::until_close;
}

// A late answer starts with the fields the chain set before it was put off; it closes the
// connection if the request asked, if the connection already ends after it, or while the
// server stops. Returns where it begins in the batch, for a response hook.
template <class Session>
std::size_t session_door<Session>::start_late(conn& c, const answer_context& ctx) {
    bool close = ctx.close || Session::final_phase(c) >= phase::closing || stopping();
    std::size_t start = s_.writer_.batch().size();
    response_access::start(s_.res_, s_.writer_.batch(), s_.time_.date, ctx.head_request, close, ctx.http10);
    response_access::restore_fields(s_.res_, ctx.head_fields);  // the chain's, held since the head
    return start;
}

// The late answer is written: as finish(), then on as after a stream (the requests that waited
// are served once the connection is writable).
template <class Session>
void session_door<Session>::answered(connection& base) {
    conn& c = own(base);
    if (stopping()) Session::close_after_output(c, phase::closing);
    finish(c);
    if (c.state == phase::reading && !c.in.empty()) c.state = phase::waiting;
    if (c.state == phase::reading || c.state == phase::waiting)
        s_.arm(c, c.in.empty() ? deadline_kind::idle : deadline_kind::header);
}

} // namespace skiff::detail

#endif // SKIFF_ENGINE_SESSION_DOOR_HPP
