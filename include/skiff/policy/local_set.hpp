// The connections of one loop that owns them, for the single and sharded policies: a
// level-triggered poller, the listener, the connection pool, a timing wheel and the loop's
// memory budget, all touched by the loop's thread only, so nothing is locked.
// connection_set.hpp states the interface that this, sharded_set and shared_set each offer
// the loop; a trait checks it at compile time.
//
// sharded_set adds what a sharded loop needs beyond its own connections: the server's stop
// flag and its once-at-stop flag, and, when one acceptor hands connections round-robin (no SO_REUSEPORT, or
// options::reuse_port off), an inbox of accepted descriptors. Only the sharded policy
// instantiates its members.
#ifndef SKIFF_POLICY_LOCAL_SET_HPP
#define SKIFF_POLICY_LOCAL_SET_HPP

#include "skiff/config.hpp"
#include "skiff/detail/unique_fd.hpp"
#include "skiff/engine/connection.hpp"
#include "skiff/engine/connection_pool.hpp"
#include "skiff/engine/connection_set.hpp"
#include "skiff/engine/listener_list.hpp"
#include "skiff/engine/loop_hub.hpp"
#include "skiff/engine/memory_budget.hpp"
#include "skiff/engine/timer_wheel.hpp"
#include "skiff/platform/listen_error.hpp"
#include "skiff/platform/socket.hpp"
#include "skiff/poller/poller.hpp"

#include <atomic>        // the sharded server's stop flag
#include <cstddef>       // std::size_t
#include <cstdint>       // std::int64_t, std::uint8_t, std::uint16_t
#include <mutex>         // std::mutex guarding a sharded loop's inbox; std::call_once at stop
#include <optional>      // close_an_idle: a connection that is not idle
#include <system_error>  // std::error_code
#include <unistd.h>      // close
#include <utility>       // std::move, std::swap, std::forward
#include <vector>        // std::vector of descriptors and peers

namespace skiff::detail {

class local_set {
public:
    using conn = connection;
    // One loop takes every ready descriptor it can in one wait: nobody else would serve them.
    static constexpr int wait_batch = 256;
    // Deferred answers are applied by this loop between events: no hand-over.
    static constexpr bool hands_over_deferred = false;

    local_set() = default;
    local_set(const local_set&) = delete;
    local_set& operator=(const local_set&) = delete;
    // Handles that outlive the server then complete as no-ops (async/hub.hpp).
    ~local_set() {
        if (anchor_.hub) anchor_.hub->detach();
    }

    std::error_code open(std::int64_t now_ms, std::int64_t tick_ms) {
        timers_.init(now_ms, tick_ms, 512);
        return poller_.open();
    }

    // A sharded loop fed by the acceptor has none.
    std::error_code add_listener(unique_fd fd, transport kind) {
        listener_slot* l = listeners_.add(std::move(fd), kind);
        if (l == nullptr) return listen_errc::too_many_listeners;
        return poller_.add(l->fd.get(), l, watch_read);
    }

    default_poller& poller() noexcept { return poller_; }
    // The loop's services, started by the first defer (or by the runner, for sharded).
    hub_anchor& anchor() noexcept { return anchor_; }

    // ---- the listeners ------------------------------------------------------------------

    bool is_listener(const void* data) const noexcept { return listeners_.contains(data); }
    listener_slot& listener(void* data) noexcept { return listeners_.at(data); }
    std::uint16_t port() const noexcept { return listeners_.port(); }
    static void accept_round_done(listener_slot&) noexcept {}  // level-triggered: nothing to re-arm
    void pause_accepting() noexcept { watch_listeners(watch_none); }
    void resume_accepting() noexcept { watch_listeners(watch_read); }
    static bool hand_off(int) noexcept { return false; }  // this loop serves what it accepts

    // ---- connections --------------------------------------------------------------------

    // Registers a new connection for reading, with its first deadline; false if the poller
    // refused it (the descriptor is then closed).
    bool add(int fd, deadline_kind kind, std::int64_t deadline) {
        conn& c = pool_.acquire();
        c.fd = fd;
        c.deadline = kind;
        timers_.arm(c, deadline);
        ++size_;
        if (poller_.add(fd, &c, watch_read)) {
            remove(c);
            return false;
        }
        c.watching = watch_read;
        return true;
    }

    void remove(conn& c) noexcept {
        poller_.remove(c.fd);
        ::close(c.fd);
        timers_.disarm(c);
        pool_.release(c);
        --size_;
    }

    // Interest changes only when it differs from what the poller has.
    void watch(conn& c, std::uint8_t w) noexcept {
        if (c.watching == w) return;
        c.watching = w;
        poller_.modify(c.fd, &c, w);
    }

    // Level-triggered and one thread: nothing to re-arm after an event, nobody to hand to,
    // and deadlines come from the wheel, never from another thread.
    static void event_done(conn&) noexcept {}
    static void event_over(conn&, loop_context&) noexcept {}
    static void take_ownership(conn&) noexcept {}
    static constexpr bool take_expired(conn&) noexcept { return false; }

    void arm(conn& c, std::int64_t deadline) noexcept { timers_.arm(c, deadline); }

    template <class OnExpired>
    void expire(std::int64_t now_ms, OnExpired on_expired) {
        timers_.expire(now_ms, [&](timer_node& t) { on_expired(static_cast<conn&>(t)); });
    }

    // At the connection limit: closes, through close(c), the connection idle longest among the
    // next reclaim_scan slots (round the pool), as nginx reuses its keep-alive connections;
    // false when none of them is idle. Bounded, so a flood at the limit cannot make each
    // accept walk every connection.
    template <class Close>
    bool close_an_idle(Close&& close) {
        conn* oldest = pool_.earliest_of_next(reclaim_scan, [](const conn& c) {
            return idle_between_requests(c) ? std::optional<std::int64_t>(c.expires_ms) : std::nullopt;
        });
        if (oldest == nullptr) return false;
        close(*oldest);
        return true;
    }

    bool has_deadlines() const noexcept { return !timers_.empty(); }
    std::int64_t tick_ms() const noexcept { return timers_.tick_ms(); }
    std::size_t size() const noexcept { return size_; }

    // ---- the memory budget (memory_budget.hpp): this loop's connections' -----------------

    // The runner's share (sharded), then options::max_buffered (session::open): the lower.
    void limit_budget(std::size_t bytes) noexcept {
        if (budget_.limit() > bytes) budget_.set_limit(bytes);
    }
    std::size_t budget_limit() const noexcept { return budget_.limit(); }
    bool budget_full() const noexcept { return budget_.full(); }
    bool try_grow(conn&, std::size_t n, std::size_t own) noexcept { return budget_.try_take(n, own); }
    void take_memory(std::size_t n) noexcept { budget_.take(n); }

    // Waiting connections are read again, in the line's order (memory_budget::wake_waiters);
    // if their answers fill the budget again, the rest wait again. Out of line, so that the
    // wake loop is not copied into the writer and the close path that return memory.
    SKIFF_NOINLINE void give_back(std::size_t n) {
        budget_.give(n);
        budget_.wake_waiters([this](conn& w) { watch(w, static_cast<std::uint8_t>(w.watching | watch_read)); });
    }

    // Unwatched for reading, in line until memory is given back; its deadline keeps running.
    void wait_for_memory(conn& c) {
        watch(c, static_cast<std::uint8_t>(c.watching & ~watch_read));
        budget_.wait(c);
    }
    bool waits_for_memory(const conn& c) const noexcept { return budget_.has_waiters() && budget_.is_waiting(c); }
    void forget_waiting(conn& c) noexcept {
        if (SKIFF_UNLIKELY(budget_.has_waiters())) budget_.forget(c);
    }

    // ---- wake and stop ------------------------------------------------------------------

    // single: the only reason to wake a loop is to stop it.
    template <class Admit>
    static bool stop_requested(bool woken, Admit&&) noexcept {
        return woken;
    }

    // single: one loop, which begins its stop once.
    template <class Fn>
    static void once_at_stop(Fn&& fn) {
        fn();
    }

    // Stops listening and lets `settle` decide, for each connection, whether it closes now.
    template <class Settle>
    void begin_stop(std::int64_t deadline, Settle settle) {
        stop_deadline_ = deadline;
        stopping_ = true;
        listeners_.for_each([this](listener_slot& l) { poller_.remove(l.fd.get()); });
        listeners_.close_all();
        pool_.for_each_open(settle);
    }

    bool drained(std::int64_t now_ms) const noexcept {
        return stopping_ && (size_ == 0 || now_ms >= stop_deadline_);
    }

    // After the loop: whatever outlived the stop deadline.
    template <class Close>
    void close_remaining(Close close) {
        pool_.for_each_open(close);
    }

private:
    void watch_listeners(std::uint8_t w) noexcept {
        listeners_.for_each([&](listener_slot& l) { poller_.modify(l.fd.get(), &l, w); });
    }

    default_poller poller_;
    listener_list listeners_;
    hub_anchor anchor_;
    connection_pool<conn> pool_;
    timer_wheel timers_;
    memory_budget<conn> budget_;  // the runner's share of options::max_buffered (sharded), else all of it
    std::size_t size_ = 0;
    std::int64_t stop_deadline_ = 0;
    bool stopping_ = false;
};

class sharded_set : public local_set {
public:
    // The server's stop flag, set by basic_server::stop() before it wakes every loop, and the
    // flag that runs the on_stop hooks once for all loops.
    void follow(const std::atomic<bool>& stop_flag, std::once_flag& stop_once) noexcept {
        stop_flag_ = &stop_flag;
        stop_once_ = &stop_once;
    }

    // Whichever loop stops first runs fn; the others wait for it (so none ends its streams
    // before the hooks have written to them).
    template <class Fn>
    void once_at_stop(Fn&& fn) {
        std::call_once(*stop_once_, std::forward<Fn>(fn));
    }
    // On the accepting loop only: every loop's set, itself included, to take turns.
    void hand_to(std::vector<sharded_set*> peers) { peers_ = std::move(peers); }

    // With one acceptor: the next loop in turn takes the connection (true when it was not
    // this one), through its inbox and a wake.
    bool hand_off(int fd) {
        if (peers_.empty()) return false;
        sharded_set* to = peers_[next_++ % peers_.size()];
        if (to == this) return false;
        {
            std::lock_guard<std::mutex> g(to->inbox_lock_);
            to->inbox_.push_back(fd);
        }
        to->poller().wake();
        return true;
    }

    // A wake means: take handed-over connections, then look at the stop flag.
    template <class Admit>
    bool stop_requested(bool woken, Admit&& admit) {
        if (!woken) return false;
        adopt_inbox(admit);
        return stop_flag_ != nullptr && stop_flag_->load(std::memory_order_relaxed);
    }

    template <class Admit>
    void adopt_inbox(Admit&& admit) {
        std::vector<int> fds;
        {
            std::lock_guard<std::mutex> g(inbox_lock_);
            std::swap(fds, inbox_);
        }
        for (int fd : fds) admit(fd);
    }

private:
    const std::atomic<bool>* stop_flag_ = nullptr;
    std::once_flag* stop_once_ = nullptr;
    std::mutex inbox_lock_;
    std::vector<int> inbox_;
    std::vector<sharded_set*> peers_;
    std::size_t next_ = 0;
};

static_assert(is_connection_set<local_set> && is_connection_set<sharded_set>,
              "local_set and sharded_set must offer the loop the interface in connection_set.hpp");

} // namespace skiff::detail

#endif // SKIFF_POLICY_LOCAL_SET_HPP
