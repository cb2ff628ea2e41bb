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
//
// Level-triggered readiness and one read per event: reading again until EAGAIN would cost a
// system call per request for nothing, since the next wait reports what is left. Interest is
// changed only when a write falls short and when it drains, never per request.
//
// The threading policy is the connection set's business (connection_set.hpp): where the
// listener lives, whether a wake means stop, who expires deadlines. This file reads the same
// for every policy. Invariant: a connection the session reports closed is not touched again.
#ifndef SKIFF_SERVER_EVENT_LOOP_HPP
#define SKIFF_SERVER_EVENT_LOOP_HPP

#include "skiff/platform/socket.hpp"
#include "skiff/poller/poll_event.hpp"
#include "skiff/router/router.hpp"
#include "skiff/server/acceptor.hpp"
#include "skiff/server/local_set.hpp"
#include "skiff/server/loop_time.hpp"
#include "skiff/server/options.hpp"
#include "skiff/server/policy.hpp"
#include "skiff/server/session.hpp"
#include "skiff/server/shared_set.hpp"

#include <cstddef>       // std::size_t
#include <cstdint>       // std::uint8_t, std::uint16_t
#include <system_error>  // std::error_code
#include <type_traits>   // std::conditional_t

namespace skiff::detail {

template <class Policy>
using connection_set_for = std::conditional_t<is_shared<Policy>, shared_set,
                                              std::conditional_t<is_sharded<Policy>, sharded_set, local_set>>;

template <class Policy>
class event_loop {
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

    // Serves until stop(), then drains: answers what was read, closes idle connections, and
    // returns when none is left or stop_timeout has passed. A failing wait (not an
    // interruption) ends the loop with its error, since waiting again would fail again.
    std::error_code run() {
        poll_event events[set_type::wait_batch];
        while (!set_.drained(time_.now_ms)) {
            bool woken = false;
            int n = set_.poller().wait(events, set_type::wait_batch, wait_timeout(), woken);
            if (n < 0) return close_all(last_errno());
            time_.tick();
            if (set_.stop_requested(woken, [this](int fd) { acceptor_.admit(fd); })) begin_stop();
            for (int i = 0; i < n; ++i) dispatch(events[i]);
            set_.expire(time_.now_ms, [this](conn& c) { note(session_.on_deadline(c)); });
            acceptor_.on_tick();
        }
        return close_all({});
    }

    // Ends the loop's current wait; thread- and async-signal-safe. For single this is stop;
    // the other policies set their stop flag first (connection_set.hpp, stop_requested).
    void wake() noexcept { set_.poller().wake(); }

    std::uint16_t port() const noexcept { return set_.port(); }

private:
    enum class run_state : std::uint8_t { serving, stopping };

    int wait_timeout() const noexcept {
        if (!set_.has_deadlines() && state_ == run_state::serving && !acceptor_.paused()) return -1;
        return static_cast<int>(set_.tick_ms());
    }

    void dispatch(const poll_event& ev) {
        if (set_.is_listener(ev.data)) return acceptor_.accept_ready(ev.data);
        conn& c = *static_cast<conn*>(ev.data);
        set_type::take_ownership(c);
        if (note(serve_event(c, ev)) == fate::open) set_.event_done(c);
    }

    fate serve_event(conn& c, const poll_event& ev) {
        if (set_type::take_expired(c)) return session_.on_deadline(c);
        if (ev.writable && (c.watching & watch_write) && session_.on_writable(c) == fate::closed) return fate::closed;
        if (ev.readable && (c.watching & watch_read)) return session_.on_readable(c);
        return fate::open;
    }

    // A closed connection frees a descriptor: a paused listener may accept again.
    fate note(fate f) noexcept {
        if (f == fate::closed) acceptor_.on_close();
        return f;
    }

    void begin_stop() {
        if (state_ == run_state::stopping) return;
        state_ = run_state::stopping;
        session_.begin_stop();  // answers from now on say Connection: close
        acceptor_.begin_stop();
        set_.begin_stop(time_.now_ms + opt_.stop_timeout.count(),
                        [this](conn& c) { (void)session_.settle_for_stop(c); });
    }

    std::error_code close_all(std::error_code result) {
        set_.close_remaining([this](conn& c) { (void)session_.close(c); });
        return result;
    }

    const options& opt_;
    set_type& set_;
    loop_time time_;
    session<set_type> session_;
    acceptor<set_type> acceptor_;
    run_state state_ = run_state::serving;
};

} // namespace skiff::detail

#endif // SKIFF_SERVER_EVENT_LOOP_HPP
