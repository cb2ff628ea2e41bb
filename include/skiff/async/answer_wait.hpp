// A connection whose answer is made later (response::defer, async/deferred.hpp): what it is
// handed to through the engine's door (engine/handover.hpp) while it waits, and how an answer,
// a push stream's bytes, the deadline and the stop reach it from the hub (async/hub.hpp).
//
//   defer()          makes a deferred_state and an answer_wait for it; the session hands the
//                    connection to the answer_wait when the handler returns
//   apply_answer     the answer was completed (`done` won): its head and body, or the head of
//                    a push stream, are written, and the connection goes on (door::answered)
//   apply_push       more of a push stream, and its end
//   give_up          deferred_timeout passed: 503, unless a completion won first
//   end_for_stop     stop_grace passed: 503, or the push stream's last chunk
//   on_held_socket   shared: the hub saw the socket it holds for s ready
//
// The engine knows none of this: it sees a handed connection and a door. So a program that
// never defers compiles none of it (tests/compile/no_feature_symbols.cmake), and it is compiled
// once whatever the threading policy.
//
// While it waits the connection parses nothing more (answers stay in request order): a
// readable event only tells whether the client went. Under the single and sharded policies the
// loop applies answers between events; under shared the worker that read the request lets the
// hub's processor take the connection once its event is done (take_from_workers), and the hub
// watches its socket meanwhile.
//
// Invariants: s.conn names the connection exactly while it is linked (bound and not yet
// answered or gone); unlink() clears it under the hub's process lock, and a completion that
// finds it cleared is dropped. After door::close() or door::answered() nothing of the
// answer_wait is touched: the first frees it, the second retires it, and `s` may be freed by
// either (its timer held the last reference).
#ifndef SKIFF_ASYNC_ANSWER_WAIT_HPP
#define SKIFF_ASYNC_ANSWER_WAIT_HPP

#include "skiff/async/deferred_state.hpp"
#include "skiff/detail/guarded_call.hpp"
#include "skiff/engine/connection.hpp"
#include "skiff/engine/handover.hpp"
#include "skiff/engine/loop_hub.hpp"
#include "skiff/engine/options.hpp"
#include "skiff/engine/push_ledger.hpp"
#include "skiff/http/response.hpp"
#include "skiff/platform/socket.hpp"
#include "skiff/poller/poll_event.hpp"

#include <atomic>      // std::memory_order_relaxed
#include <cstddef>     // std::size_t
#include <cstdint>     // std::int64_t, std::uint8_t
#include <functional>  // what runs when the answer settles
#include <string>      // pushed bytes

namespace skiff::detail {

class answer_wait final : public handed {
public:
    answer_wait(deferred_state& s, hub_anchor& anchor) noexcept : s_(&s), anchor_(anchor) {}

    // Nothing of the request's body is the answer's: its bytes stay for the requests behind.
    std::size_t begin(door& d, connection& c, pending_body&, char*, std::size_t) override {
        if (!d.workers_wait()) bind(c);  // else once the worker's event is done
        return 0;
    }

    // Readable while waiting: a peek tells pipelined bytes (stop watching: they wait) from an
    // end of input (the client half-closed: still answered, but told it went) or an error.
    fate on_readable(door& d, connection& c) override {
        switch (d.peek(c)) {
        case peek_outcome::retry: return fate::open;
        case peek_outcome::failed: return d.close(c);
        case peek_outcome::ended:
            s_->cancelled.store(true, std::memory_order_relaxed);
            d.close_after_output(c);
            break;
        case peek_outcome::bytes: break;
        }
        quiet_ = read_watch::stopped;
        d.watch(c, static_cast<std::uint8_t>(c.watching & ~watch_read));
        return fate::open;
    }

    // Only the guard (deadline_kind::awaited) is armed, and the session closes for it.
    fate on_deadline(door& d, connection& c) override { return d.close(c); }

    // Waiting on the answer: watch for the client going (unless it already sent more, which
    // waits in the kernel), and keep a deadline past the hub's own, as a last resort.
    fate await(door& d, connection& c) override {
        d.watch(c, quiet_ == read_watch::stopped ? watch_none : watch_read);
        d.arm(c, deadline_kind::awaited);
        return fate::open;
    }

    void abandon() noexcept override {
        if (s_ != nullptr) unlink(link_end::gone);
    }

    // A push stream's parked bytes went (some or all): the producer sees it in buffered(), and
    // on_writable hears once the backlog is down to half.
    void on_sent(door& d, connection& c) override {
        if (s_ == nullptr) return;
        s_->parked.store(d.parked(c), std::memory_order_relaxed);
        anchor_.pushes.note(s_->stall, c.out.capacity(), c);  // less held, or none: no shedding
        tell_if_drained(*s_);
    }

    // shared: the worker's event is done; the hub's processor takes the connection. An answer
    // that came meanwhile is applied now, else the hub watches the socket for the client going.
    // Declared inline here, or it would be the class's key function, and GCC would emit the
    // class's vtable and every member into each program that includes this file.
    inline bool take_from_workers(loop_context& ctx, connection& c) override;
    void dispose() noexcept override { delete this; }

    // ---- on the thread that serves the connection (the hub brings each) ------------------

    // s was completed (or given up on) and `done` won: write it, and go on with the requests
    // that waited behind it.
    fate on_answer(door& d, connection& c) {
        deferred_state& s = *s_;
        answer_context ctx;
        ctx.head_request = s.head_request;
        ctx.http10 = s.http10;
        ctx.head_fields = std::move(s.head_fields);  // the chain's, before defer()
        if (s.kind == answer_kind::push) return start_push(d, c, ctx);
        if (s.kind == answer_kind::dropped) return drop(d, c);
        d.answer(c, ctx, [&s](response& res) {
            give_head(res, s);
            res.body(s.body, s.content_type);
        });
        finish(d, c);
        return d.after_write(c, d.flush(c));
    }

    // More of a push stream (and, with `last`, its end), framed as its head said.
    fate on_push(door& d, connection& c, std::string& bytes, bool last) {
        deferred_state& s = *s_;
        s.queued.fetch_sub(bytes.size(), std::memory_order_relaxed);
        // Past max_push_buffer. From start_push the stream's head is still in the loop's
        // batch: close() drops it with the connection.
        if (s.overflowed.load(std::memory_order_relaxed)) return d.close(c);
        if (!bytes.empty()) d.write_piece(framing_, bytes);
        if (last) {
            if (framing_ == push_framing::chunked) d.write_last_chunk();
            else d.close_after_output(c);  // until_close: the end is the close
            finish(d, c);
        }
        write_status w = d.flush(c);
        if (last || w == write_status::failed) return d.after_write(c, w);
        std::size_t parked = d.parked(c);
        s.parked.store(parked, std::memory_order_relaxed);
        if (static_cast<std::int64_t>(parked) > s.push_limit) return d.close(c);  // the client does not read
        if (SKIFF_UNLIKELY(note_pushed(d, c) == fate::closed)) return fate::closed;
        if (d.workers_wait() && parked != 0) anchor_.hub->watch_socket(s, c.fd, watch_write);
        tell_if_drained(s);
        return d.after_write(c, w);
    }

    // shared: the hub saw the socket it holds ready (loop_hub::watch_socket): readable while
    // the answer is awaited (the client went, or sent more), or writable for a push stream's
    // parked bytes.
    fate on_socket_ready(door& d, connection& c) {
        if (s_->socket_watch == watch_read) {
            s_->socket_watch = watch_none;  // one-shot: it fired
            return on_readable(d, c);
        }
        write_status w = d.parked(c) == 0 ? write_status::drained : d.write_parked(c);
        if (w == write_status::failed) return d.close(c);
        on_sent(d, c);
        if (d.parked(c) != 0) anchor_.hub->watch_socket(*s_, c.fd, watch_write);
        return d.after_write(c, w);
    }

    // Whether the connection still waits on this answer (not answered, not gone).
    bool linked() const noexcept { return s_ != nullptr; }

private:
    enum class link_end : std::uint8_t { answered, gone };
    // Whether the client's socket is watched for reading while the answer is awaited: not once
    // it sent more (which waits in the kernel) or half-closed.
    enum class read_watch : std::uint8_t { watched, stopped };

    void bind(connection& c) noexcept {
        s_->conn = &c;
        s_->link = link_state::bound;
    }

    static void give_head(response& res, const deferred_state& s) {
        res.status(s.status);
        for (auto& f : s.fields) res.header(f.first, f.second);
    }

    // A push stream's head: chunked (HTTP/1.1) or ended by the close (HTTP/1.0); a HEAD
    // request or a status without content has no body, and the stream ends at once.
    fate start_push(door& d, connection& c, answer_context& ctx) {
        deferred_state& s = *s_;
        framing_ = d.answer_push(c, ctx, [&s](response& res) { give_head(res, s); }, s.content_type);
        if (framing_ == push_framing::none) {
            finish(d, c);
            return d.after_write(c, d.flush(c));
        }
        std::size_t buffer = d.settings().push_socket_buffer;
        if (buffer != 0) limit_send_buffer(c.fd, buffer);  // options.hpp: why
        std::string early;
        early.swap(s.early);
        return on_push(d, c, early, s.early_last);
    }

    // A handle dropped once cancelled: nothing is written for it (as nginx closes for a client
    // that went, its 499), and the connection closes after what went before.
    fate drop(door& d, connection& c) {
        finish(d, c);
        d.close_after_output(c);
        return d.after_write(c, d.flush(c));
    }

    // The answer is written (or in the batch): the connection goes on as a stream's would.
    void finish(door& d, connection& c) {
        unlink(link_end::answered);
        d.answered(c);
    }

    // The connection stops waiting on s: later completions find it unlinked and are dropped.
    // Under the hub's process lock, since under shared the processor may be looking at s.
    SKIFF_NOINLINE void unlink(link_end why) {
        struct args {
            deferred_state& s;
            link_end why;
            hub_anchor& anchor;
        } a{*s_, why, anchor_};
        std::function<void()> settled = std::move(s_->on_settled);  // s may be freed by forget()
        s_->on_settled = nullptr;
        s_ = nullptr;
        a.anchor.hub->exclusive(
            [](void* p) {
                auto& x = *static_cast<args*>(p);
                x.s.conn = nullptr;
                x.s.link = link_state::finished;
                x.s.push.store(push_state::closed, std::memory_order_relaxed);
                if (x.why == link_end::gone) x.s.cancelled.store(true, std::memory_order_relaxed);
                tell_ended(x.s);               // a producer waiting on on_writable stops
                x.anchor.pushes.forget(x.s.stall);  // it holds no unsent push output from now on
                x.anchor.hub->forget(x.s);     // last: its timer may hold the last reference to s
            },
            &a);
        if (settled) call_guarded([&] { settled(); }, [] {});  // outside the hub's lock: it may post
    }

    // A push stream's parked output grew: the ledger hears, and while push output together
    // holds more than its share of the budget, the stream that stalled longest is shed
    // (push_ledger.hpp: the rule and why), its producer hearing `closed` (unlink) as for a
    // client gone. Closed when that was c itself.
    fate note_pushed(door& d, connection& c) { return note_stalled(d, anchor_.pushes, s_->stall, c, c.out.capacity()); }

    deferred_state* s_;  // null once unlinked
    hub_anchor& anchor_;
    push_framing framing_ = push_framing::none;
    read_watch quiet_ = read_watch::watched;
};

// ---- what the hub brings, on the thread that serves the connection ----------------------

// The connection s names runs `step` on its answer_wait, through the door, and is settled by
// the loop after it. Dropped when s no longer names one.
template <class Step>
void on_answer_wait(loop_context& ctx, deferred_state& s, loop_context::expiry e, Step& step) {
    if (s.link == link_state::bound) serve_taker<answer_wait>(ctx, *s.conn, e, step);
}

// `done` was won: write it. A push stream whose head is written and that a stop reached first
// ends now (end_for_stop).
inline void apply_answer(loop_context& ctx, deferred_state& s) {
    if (s.link == link_state::unbound) {
        s.answer_waiting = true;  // shared: applied when the worker lets the connection go
        return;
    }
    auto step = [&s](answer_wait& w, door& d, connection& c) {
        bool push = s.kind == answer_kind::push;
        fate f = w.on_answer(d, c);
        // s may be gone now (its timer held the last reference): only w tells whether it waits.
        if (!push || f == fate::closed || !w.linked()) return f;
        s.progress = push_progress::streaming;
        if (s.at_stop != stop_mark::end_stream) return fate::open;
        std::string none;
        return w.on_push(d, c, none, true);
    };
    on_answer_wait(ctx, s, loop_context::expiry::ignored, step);
}

inline void apply_push(loop_context& ctx, deferred_state& s, std::string& bytes, bool last) {
    if (s.link == link_state::unbound) {
        s.early += bytes;
        s.early_last = s.early_last || last;
        return;
    }
    auto step = [&](answer_wait& w, door& d, connection& c) { return w.on_push(d, c, bytes, last); };
    on_answer_wait(ctx, s, loop_context::expiry::ignored, step);
}

// shared: the socket of a connection the hub holds is ready (loop_hub::watch_socket). A
// deadline the reaper found passed is handled first, as for any event.
inline void on_held_socket(loop_context& ctx, deferred_state& s) {
    auto step = [](answer_wait& w, door& d, connection& c) { return w.on_socket_ready(d, c); };
    on_answer_wait(ctx, s, loop_context::expiry::served_first, step);
}

// The deadline passed: answer 503 unless a completion won first (its answer is on its way).
inline void give_up(loop_context& ctx, deferred_state& s) {
    if (s.link == link_state::finished) return;
    s.cancelled.store(true, std::memory_order_relaxed);
    if (s.done.exchange(true)) return;
    s.kind = answer_kind::whole;
    s.status = 503;
    s.fields.clear();
    s.content_type = "text/plain";
    s.body = "Service Unavailable\n";
    apply_answer(ctx, s);
}

// stop_grace passed (async/hub.hpp): an answer not completed is answered 503 (the loop says
// Connection: close while it stops); a push stream ends with its last chunk, or, if its head
// is not written yet, right after it (apply_answer). The producer sees closed() from now on.
inline void end_for_stop(loop_context& ctx, deferred_state& s) {
    if (s.link == link_state::finished) return;
    ctx.begin_stop();  // shared: this worker may not have looked at the stop flag yet
    s.at_stop = stop_mark::end_stream;
    s.push.store(push_state::closed, std::memory_order_relaxed);
    give_up(ctx, s);
    if (s.progress != push_progress::streaming || s.link == link_state::finished) return;
    std::string none;
    apply_push(ctx, s, none, true);
}

inline bool answer_wait::take_from_workers(loop_context& ctx, connection& c) {
    struct args {
        loop_context& ctx;
        connection& c;
        answer_wait& w;
    } a{ctx, c, *this};
    anchor_.hub->exclusive(
        [](void* p) {
            auto& x = *static_cast<args*>(p);
            deferred_state& s = *x.w.s_;
            x.w.bind(x.c);
            if (s.answer_waiting) apply_answer(x.ctx, s);  // may re-arm c: not touched after
            else if (x.c.watching & watch_read) x.w.anchor_.hub->watch_socket(s, x.c.fd, watch_read);  // nor after this
        },
        &a);
    return true;
}

} // namespace skiff::detail

#endif // SKIFF_ASYNC_ANSWER_WAIT_HPP
