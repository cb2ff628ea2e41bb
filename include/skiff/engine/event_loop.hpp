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
// It is also the loop_context through which the hub brings a handed connection its turn from
// another thread (an answer made elsewhere, engine/loop_hub.hpp): the feature's code runs
// through the session's door, and the loop only settles the connection after it.
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
#ifndef SKIFF_ENGINE_EVENT_LOOP_HPP
#define SKIFF_ENGINE_EVENT_LOOP_HPP

#include "skiff/detail/guarded_call.hpp"
#include "skiff/engine/acceptor.hpp"
#include "skiff/engine/loop_hub.hpp"
#include "skiff/engine/loop_time.hpp"
#include "skiff/engine/options.hpp"
#include "skiff/engine/session.hpp"
#include "skiff/platform/socket.hpp"
#include "skiff/poller/poll_event.hpp"
#include "skiff/router/router.hpp"

#include <cstddef>       // std::size_t
#include <cstdint>       // std::uint8_t, std::uint16_t
#include <system_error>  // std::error_code

namespace skiff::detail {

// Set: the connection set this loop serves (policy/: local_set, sharded_set or shared_set),
// chosen by the runner from the threading policy; the loop itself knows no policy.
template <class Set, class Time = loop_time>
class event_loop final : public loop_context {
public:
    using set_type = Set;
    using conn = typename set_type::conn;

    // The set is opened by the runner, which owns it: the loop's own (single, sharded) or the
    // one every thread serves (shared).
    event_loop(const options& opt, const router& routes, set_type& set)
        : opt_(opt), set_(set), session_(opt, routes, set, time_), acceptor_(opt, set, time_, idle_closer{&session_}) {}
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

    // ---- loop_context: a handed connection's turn, on the thread that serves it ------------

    void serve_handed(connection& handed_conn, handed_call call, void* arg, expiry e) override {
        conn& c = static_cast<conn&>(handed_conn);
        if (e == expiry::served_first && set_type::take_expired(c)) return settle(c, session_.on_deadline(c));
        settle(c, session_.serve_handed(c, call, arg));
    }
    void give_to_workers(connection& c) override { set_.event_over(static_cast<conn&>(c), *this); }

    // The on_stop hooks first (once for the server), so that what they push is queued before
    // anything is ended; then the hub's grace for deferred answers and push streams begins.
    void begin_stop() override {
        if (state_ == run_state::stopping) return;
        state_ = run_state::stopping;
        if (opt_.on_stop) set_.once_at_stop([this] { call_guarded([this] { opt_.on_stop(); }, [] {}); });
        session_.begin_stop();  // answers from now on say Connection: close
        acceptor_.begin_stop();
        set_.begin_stop(time_.now_ms + opt_.stop_timeout.count(),
                        [this](conn& c) { (void)session_.settle_for_stop(c); });
        if (loop_hub* hub = set_.anchor().hub) hub->begin_stop(time_.services_ms(), opt_.stop_grace.count());
    }

private:
    enum class run_state : std::uint8_t { serving, stopping };

    // How the acceptor closes an idle connection to make room at the limit: as its idle
    // deadline would.
    struct idle_closer {
        session<set_type>* s;
        void operator()(conn& c) const { (void)s->close(c); }
    };

    // The wait's timeout; with services, first what the last turn brought them (tasks posted,
    // timers due), after every event of its batch, so that no task closes a connection whose
    // event is still to be dispatched. One test a turn when there are none.
    int before_wait(loop_hub* hub) {
        int base = -1;
        if (set_.has_deadlines() || state_ != run_state::serving || acceptor_.wants_ticks()) base = static_cast<int>(set_.tick_ms());
        if (SKIFF_LIKELY(hub == nullptr)) return base;
        std::int64_t now = time_.services_ms();
        if (SKIFF_UNLIKELY(state_ == run_state::stopping)) hub->begin_stop(now, opt_.stop_grace.count());  // single: a hub started by a defer after stop()
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
        if (note(serve_event(c, ev)) == fate::open) set_.event_over(c, *this);
    }

    fate serve_event(conn& c, const poll_event& ev) {
        if (set_type::take_expired(c)) return session_.on_deadline(c);
        if (ev.writable && (c.watching & watch_write) && session_.on_writable(c) == fate::closed) return fate::closed;
        if (ev.readable && (c.watching & watch_read)) return session_.on_readable(c);
        if (SKIFF_UNLIKELY(c.watching == watch_none)) return session_.on_unwatched_event(c);
        return fate::open;
    }

    // After a handed connection's turn: re-armed (shared) once it is no longer handed.
    void settle(conn& c, fate f) {
        if (note(f) == fate::open && c.state != phase::handed) set_.event_done(c);
    }

    // A closed connection frees a descriptor: a paused listener may accept again.
    fate note(fate f) noexcept {
        if (f == fate::closed) acceptor_.on_close();
        return f;
    }

    std::error_code close_all(std::error_code result) {
        set_.close_remaining([this](conn& c) { (void)session_.close(c); });
        acceptor_.close_refused();
        return result;
    }

    const options& opt_;
    set_type& set_;
    Time time_;
    session<set_type> session_;
    acceptor<set_type, idle_closer> acceptor_;
    run_state state_ = run_state::serving;
};

} // namespace skiff::detail

#endif // SKIFF_ENGINE_EVENT_LOOP_HPP
