// One event loop, and nothing but the loop (redis's ae.c, where session.hpp is its
// networking.c): wait for readiness, read the clock once, hand each event to the acceptor or
// the session, expire deadlines, and stop. One turn of run():
//
//   1. wait       set_.poller().wait(): up to wait_batch ready descriptors, or a timeout
//                 when a deadline may pass, or a wake (stop, a handed-over connection)
//   2. clock      time_.tick(): one clock reading for everything this turn arms
//   3. dispatch   the listener -> acceptor_.accept_ready(); a connection -> the session's
//                 on_writable() then on_readable(), each of which reads, serves and flushes
//   4. expire     deadlines passed by now -> session_.on_deadline() (408 or close)
//   0. services   only once a program defers or asks for its loop, before each wait: the
//                 hub's tasks and timers (async/hub.hpp); its notifier and watched
//                 descriptors come as events in 3
//
// It is also the loop_context the hub applies deferred answers through (server/loop_hub.hpp):
// each is checked against the connection it names, and dropped when that has gone.
//
// Level-triggered readiness and one read per event: reading again until EAGAIN would cost a
// system call per request for nothing, since the next wait reports what is left. Interest is
// changed only when a write falls short and when it drains, never per request.
//
// Time is the loop's clock (loop_time.hpp): the monotonic clock, or, for the test client
// (testing/test_loop.hpp), one the test moves by hand and a wait that never blocks. It is a
// template parameter so that the clock a server runs on costs what it did before the seam.
//
// The threading policy is the connection set's business (connection_set.hpp): where the
// listener lives, whether a wake means stop, who expires deadlines. This file reads the same
// for every policy. Invariant: a connection the session reports closed is not touched again.
#ifndef SKIFF_SERVER_EVENT_LOOP_HPP
#define SKIFF_SERVER_EVENT_LOOP_HPP

#include "skiff/detail/guarded_call.hpp"
#include "skiff/platform/socket.hpp"
#include "skiff/poller/poll_event.hpp"
#include "skiff/router/router.hpp"
#include "skiff/server/acceptor.hpp"
#include "skiff/server/local_set.hpp"
#include "skiff/server/loop_hub.hpp"
#include "skiff/server/loop_time.hpp"
#include "skiff/server/options.hpp"
#include "skiff/server/policy.hpp"
#include "skiff/server/session.hpp"
#include "skiff/server/shared_set.hpp"

#include <cstddef>       // std::size_t
#include <cstdint>       // std::uint8_t, std::uint16_t
#include <string>        // pushed bytes
#include <system_error>  // std::error_code
#include <type_traits>   // std::conditional_t

namespace skiff::detail {

template <class Policy>
using connection_set_for = std::conditional_t<is_shared<Policy>, shared_set,
                                              std::conditional_t<is_sharded<Policy>, sharded_set, local_set>>;

template <class Policy, class Time = loop_time>
class event_loop final : public loop_context {
public:
    using set_type = connection_set_for<Policy>;
    using conn = typename set_type::conn;

    // The set is opened by the runner, which owns it: the loop's own (single, sharded) or the
    // one every thread serves (shared).
    event_loop(const options& opt, const router& routes, set_type& set)
        : opt_(opt), set_(set), session_(opt, routes, set, time_), acceptor_(opt, set, time_) {}
    event_loop(const event_loop&) = delete;
    event_loop& operator=(const event_loop&) = delete;

    // Allocates every buffer the hot path uses.
    void open() {
        time_.tick();
        session_.open();
    }
    void limit_connections(std::size_t n) noexcept { acceptor_.limit_connections(n); }
    // Which loop this is, for the observers (response_event::loop).
    void number(std::size_t loop) noexcept {
        session_.number(loop);
        acceptor_.number(loop);
    }

    // Serves until stop(), then drains: answers what was read, closes idle connections, and
    // returns when none is left or stop_timeout has passed. A failing wait (not an
    // interruption) ends the loop with its error, since waiting again would fail again.
    std::error_code run() {
        while (!set_.drained(time_.now_ms))
            if (SKIFF_UNLIKELY(turn() < 0)) return close_all(last_errno());
        return close_all({});
    }

    // One turn: wait (as long as Time lets it), then serve what the wait brought and the
    // deadlines that passed. The events the wait reported; -1 when it failed (errno says why).
    SKIFF_ALWAYS_INLINE int turn() {
        poll_event events[set_type::wait_batch];
        bool woken = false;
        loop_hub* hub = set_.anchor().hub;  // read once a turn: null unless the program defers
        int n = set_.poller().wait(events, set_type::wait_batch, time_.wait_ms(before_wait(hub)), woken);
        if (n < 0) return n;
        time_.tick();
        if (set_.stop_requested(woken, [this](int fd) { acceptor_.admit(fd); })) begin_stop();
        for (int i = 0; i < n; ++i) dispatch(events[i], hub);
        set_.expire(time_.now_ms, [this](conn& c) { note(session_.on_deadline(c)); });
        acceptor_.on_tick();
        return n;
    }

    // For a driver other than run() (the test client): a connected descriptor served as if
    // accepted, the clock, and closing what is left when it is done.
    void admit(int fd) { acceptor_.admit(fd); }
    Time& time() noexcept { return time_; }
    void close_connections() { (void)close_all({}); }

    // Ends the loop's current wait; thread- and async-signal-safe. For single this is stop;
    // the other policies set their stop flag first (connection_set.hpp, stop_requested).
    void wake() noexcept { set_.poller().wake(); }

    std::uint16_t port() const noexcept { return set_.port(); }

    // ---- loop_context: deferred answers, on the thread that serves their connection ------

    void answer(deferred_state& s) override {
        if (s.link == link_state::unbound) {
            s.answer_waiting = true;  // shared: applied when the worker hands the connection over
            return;
        }
        if (s.link != link_state::bound) return;
        conn& c = served(s);
        bool push = s.kind == answer_kind::push;
        fate f = session_.on_answer(c, s);
        // s may be gone now (its timer held the last reference): only c tells whether it still waits.
        if (push && f == fate::open && c.stream && c.stream->deferred == &s) f = started_stream(c, s);
        settle(c, f);
    }

    void push(deferred_state& s, std::string& bytes, bool last) override {
        if (s.link == link_state::unbound) {
            s.early += bytes;
            s.early_last = s.early_last || last;
            return;
        }
        if (s.link != link_state::bound) return;
        conn& c = served(s);
        settle(c, session_.on_push(c, s, bytes, last));
    }

    // shared: the socket of a connection the hub holds is ready (loop_hub::watch_socket). A
    // deadline the reaper found passed is handled first, as for any event (serve_event).
    void socket_ready(deferred_state& s) override {
        if (s.link != link_state::bound) return;
        conn& c = served(s);
        if (set_type::take_expired(c)) return settle(c, session_.on_deadline(c));
        settle(c, session_.on_held_socket_ready(c, s));
    }

    // stop_grace passed (async/hub.hpp): an answer not completed is answered 503 (this loop
    // says Connection: close while it stops); a push stream ends with its last chunk, or, if
    // its head is not written yet, right after it (started_stream). The producer sees
    // closed() from now on.
    void end_for_stop(deferred_state& s) override {
        if (s.link == link_state::finished) return;
        begin_stop();  // shared: this worker may not have looked at the stop flag yet
        s.at_stop = stop_mark::end_stream;
        s.push.store(push_state::closed, std::memory_order_relaxed);
        give_up(s);
        if (s.progress != push_progress::streaming || s.link == link_state::finished) return;
        std::string none;
        push(s, none, true);
    }

    // The deadline passed: answer 503 unless a completion won first (its answer is on its way).
    void give_up(deferred_state& s) override {
        if (s.link == link_state::finished) return;
        s.cancelled.store(true, std::memory_order_relaxed);
        if (s.done.exchange(true)) return;
        s.kind = answer_kind::whole;
        s.status = 503;
        s.fields.clear();
        s.content_type = "text/plain";
        s.body = "Service Unavailable\n";
        answer(s);
    }

private:
    enum class run_state : std::uint8_t { serving, stopping };

    // The wait's timeout; with services, first what the last turn brought them (tasks posted,
    // timers due), after every event of its batch, so that no task closes a connection whose
    // event is still to be dispatched. One test a turn when there are none.
    int before_wait(loop_hub* hub) {
        int base = -1;
        if (set_.has_deadlines() || state_ != run_state::serving || acceptor_.paused()) base = static_cast<int>(set_.tick_ms());
        if (SKIFF_LIKELY(hub == nullptr)) return base;
        std::int64_t now = time_.services_ms();
        if (SKIFF_UNLIKELY(state_ == run_state::stopping)) hub->begin_stop(opt_.stop_grace.count());  // single: a hub started by a defer after stop()
        hub->on_turn(now, *this);
        // A task that closed the last connection of a stopping loop: no wait before returning.
        if (SKIFF_UNLIKELY(state_ == run_state::stopping) && set_.drained(time_.now_ms)) return 0;
        return hub->timeout(base, now);
    }

    void dispatch(const poll_event& ev, loop_hub* hub) {
        if (set_.is_listener(ev.data)) return acceptor_.accept_ready(ev.data);
        if (SKIFF_UNLIKELY(hub != nullptr) && hub->claims(ev.data)) return hub->on_event(ev.data, *this);
        conn& c = *static_cast<conn*>(ev.data);
        set_type::take_ownership(c);
        if (note(serve_event(c, ev)) == fate::open) event_done(c);
    }

    fate serve_event(conn& c, const poll_event& ev) {
        if (set_type::take_expired(c)) return session_.on_deadline(c);
        if (ev.writable && (c.watching & watch_write) && session_.on_writable(c) == fate::closed) return fate::closed;
        if (ev.readable && (c.watching & watch_read)) return session_.on_readable(c);
        if (SKIFF_UNLIKELY(c.watching == watch_none)) return session_.on_unwatched_event(c);
        return fate::open;
    }

    // shared: a connection that now waits on a deferred answer is handed to the hub's
    // processor, not re-armed; an answer that came meanwhile is applied now, else the hub
    // watches the socket for the client going.
    void event_done(conn& c) {
        if constexpr (set_type::hands_over_deferred) {
            if (c.state == phase::deferred) return hand_over(c);
        }
        set_.event_done(c);
    }

    void hand_over(conn& c) {
        struct args {
            event_loop& loop;
            conn& c;
        } a{*this, c};
        set_.anchor().hub->exclusive(
            [](void* p) {
                auto& x = *static_cast<args*>(p);
                deferred_state& s = *x.c.stream->deferred;
                session<set_type>::bind(x.c, s);
                if (s.answer_waiting) x.loop.answer(s);  // may re-arm c: not touched after
                else session<set_type>::hold(x.c, s, *x.loop.set_.anchor().hub);  // nor after this
            },
            &a);
    }

    conn& served(deferred_state& s) noexcept { return static_cast<conn&>(*s.conn); }

    // A push answer's head is written and its stream open: a stop that came first ends it now.
    fate started_stream(conn& c, deferred_state& s) {
        s.progress = push_progress::streaming;
        if (s.at_stop != stop_mark::end_stream) return fate::open;
        std::string none;
        return session_.on_push(c, s, none, true);
    }

    // After an answer or a push: re-armed (shared) once it no longer waits on its answer.
    void settle(conn& c, fate f) {
        if (note(f) == fate::open && c.state != phase::deferred) set_.event_done(c);
    }

    // A closed connection frees a descriptor: a paused listener may accept again.
    fate note(fate f) noexcept {
        if (f == fate::closed) acceptor_.on_close();
        return f;
    }

    // The on_stop hooks first (once for the server), so that what they push is queued before
    // anything is ended; then the hub's grace for deferred answers and push streams begins.
    void begin_stop() {
        if (state_ == run_state::stopping) return;
        state_ = run_state::stopping;
        if (opt_.on_stop) set_.once_at_stop([this] { call_guarded([this] { opt_.on_stop(); }, [] {}); });
        session_.begin_stop();  // answers from now on say Connection: close
        acceptor_.begin_stop();
        set_.begin_stop(time_.now_ms + opt_.stop_timeout.count(),
                        [this](conn& c) { (void)session_.settle_for_stop(c); });
        if (loop_hub* hub = set_.anchor().hub) hub->begin_stop(opt_.stop_grace.count());
    }

    std::error_code close_all(std::error_code result) {
        set_.close_remaining([this](conn& c) { (void)session_.close(c); });
        return result;
    }

    const options& opt_;
    set_type& set_;
    Time time_;
    session<set_type> session_;
    acceptor<set_type> acceptor_;
    run_state state_ = run_state::serving;
};

} // namespace skiff::detail

#endif // SKIFF_SERVER_EVENT_LOOP_HPP
