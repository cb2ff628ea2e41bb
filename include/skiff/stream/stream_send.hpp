// A streamed response body (response::stream) on its way to the client: what the connection
// is handed to, through the engine's door (engine/handover.hpp), once the response's head is
// in the batch. It asks the body's source for a piece whenever the client has taken what was
// sent (so a slow reader holds about one piece in server memory), a few pieces an event so
// that one long stream does not hold the loop, frames each as the head said (Content-Length,
// chunked, or until the close), and gives the connection back after the last one.
//
// The engine knows none of this: a program that never streams compiles none of it.
//
// Invariants: a source that throws or ends short of its Content-Length leaves the framing
// unfinished, so the connection closes after what was sent (the head has left: no 500); the
// error hook hears what was thrown, with the request as far as it is kept (its method and
// target). After door::close() or door::answered() nothing of this state is touched.
#ifndef SKIFF_STREAM_STREAM_SEND_HPP
#define SKIFF_STREAM_STREAM_SEND_HPP

#include "skiff/detail/guarded_call.hpp"
#include "skiff/engine/connection.hpp"
#include "skiff/engine/handover.hpp"
#include "skiff/engine/options.hpp"
#include "skiff/engine/report.hpp"
#include "skiff/http/request.hpp"
#include "skiff/http/response.hpp"
#include "skiff/poller/poll_event.hpp"

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint64_t, std::uint8_t
#include <utility>  // std::move

namespace skiff::detail {

class stream_send final : public handed {
public:
    // `framing`: how the head delimits the body; `length`: its Content-Length (sized only).
    stream_send(body_source source, response_framing framing, std::uint64_t length) noexcept
        : source_(std::move(source)),
          framing_(framing == response_framing::chunked ? push_framing::chunked : push_framing::until_close),
          sized_(framing == response_framing::content_length ? bounds::sized : bounds::open),
          left_(length) {}

    // The request's method and target come in the body's context, for the error hook.
    std::size_t begin(door&, connection&, pending_body& body, char*, std::size_t) override {
        origin_ = std::move(body.context.origin);
        return 0;
    }

    // The connection is not read while the body is produced (answers stay in order).
    fate on_readable(door&, connection&) override { return fate::open; }
    fate on_deadline(door& d, connection& c) override { return d.close(c); }

    // Everything written: the next pieces, until the socket is full or a few have gone.
    fate await(door& d, connection& c) override {
        for (int round = 0; round < pieces_per_event; ++round) {
            body_end end = produce(d);
            if (end != body_end::not_yet) return done(d, c, end);
            write_status w = d.flush(c);
            if (w != write_status::drained) return d.after_write(c, w);
        }
        d.arm(c, deadline_kind::write);  // yield to the others; go on when writable
        d.watch(c, watch_write);
        return fate::open;
    }

    void abandon() noexcept override {}
    void on_sent(door&, connection&) override {}
    bool take_from_workers(loop_context&, connection&) override { return false; }
    void dispose() noexcept override { delete this; }

private:
    enum class body_end : std::uint8_t { not_yet, complete, truncated };
    enum class bounds : std::uint8_t { sized, open };  // Content-Length, or chunks / the close
    static constexpr int pieces_per_event = 4;

    // The source's next piece into the batch, framed; at the end, the last chunk.
    body_end produce(door& d) {
        std::size_t room = 0;
        char* scratch = d.scratch(room);
        std::size_t cap = sized_ == bounds::sized && left_ < room ? static_cast<std::size_t>(left_) : room;
        std::size_t n = 0;
        bool threw = false;
        call_guarded([&] { n = cap == 0 ? 0 : source_(scratch, cap); },
                     [&] {
                         threw = true;
                         tell_error_hook(d);
                     });
        if (n > cap) n = cap;
        if (n != 0) d.write_piece(framing_, {scratch, n});
        if (sized_ == bounds::sized) left_ -= n;
        if (n != 0 && !(sized_ == bounds::sized && left_ == 0) && !threw) return body_end::not_yet;
        if (threw || (sized_ == bounds::sized && left_ != 0)) return body_end::truncated;
        if (framing_ == push_framing::chunked) d.write_last_chunk();
        return body_end::complete;
    }

    // Called inside the catch, so what was thrown can still be described.
    void tell_error_hook(door& d) {
        const options& opt = d.settings();
        if (!opt.on_error) return;
        const char* what = describe_current_exception();
        request origin;
        request_access::describe(origin, origin_);
        call_guarded([&] { opt.on_error(what, origin); }, [] {});
    }

    // The body is complete or cut: the connection goes on as after any response (closing
    // after a cut one, whose framing is unfinished).
    static fate done(door& d, connection& c, body_end end) {
        if (end == body_end::truncated) d.close_after_output(c);
        d.answered(c);
        return d.after_write(c, d.flush(c));
    }

    body_source source_;
    push_framing framing_;
    bounds sized_;
    std::uint64_t left_;      // sized: the bytes still owed under Content-Length
    request_origin origin_;   // for the error hook, where one is set
};

} // namespace skiff::detail

#endif // SKIFF_STREAM_STREAM_SEND_HPP
