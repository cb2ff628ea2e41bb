// The connections of a server under the shared policy: one poller that every worker thread
// waits on, with one-shot readiness, so a ready connection is handed to exactly one thread and
// stays disarmed until that thread re-arms it (event_done). It offers the loop the interface
// in connection_set.hpp, as local_set does.
//
// A wait takes one event (wait_batch = 1): the promise of this policy is that any idle thread
// takes the next ready connection, and a thread that took a batch would serve it alone while
// the others idle (measured: 4 slow requests on 2 workers took 3 request-times with a batch
// of 256, 2 with 1). The price is one epoll_wait per event under load.
//
// Deadlines cannot live on a timing wheel here: the thread that would expire a connection is
// not the one that may be serving it. Instead the owner stores each deadline in an atomic, and
// once a tick one thread (whichever gets the reaper lock) scans the connections; an expired one
// is marked and its read side shut down, which wakes the connection through the poller, so its
// next owner handles the deadline (answers 408 or closes). The pool lock makes the scan and
// every close exclusive, so a scanned descriptor is never one that was closed and reused.
// Cost: O(connections) per tick on one thread, and one mutex per accept and per close.
#ifndef SKIFF_POLICY_SHARED_SET_HPP
#define SKIFF_POLICY_SHARED_SET_HPP

#include "skiff/config.hpp"
#include "skiff/detail/unique_fd.hpp"
#include "skiff/engine/connection.hpp"
#include "skiff/engine/connection_pool.hpp"
#include "skiff/engine/connection_set.hpp"
#include "skiff/engine/listener_list.hpp"
#include "skiff/engine/loop_hub.hpp"
#include "skiff/platform/listen_error.hpp"
#include "skiff/platform/socket.hpp"
#include "skiff/policy/shared_budget.hpp"
#include "skiff/poller/poller.hpp"

#include <atomic>        // deadlines, flags and counts read across threads
#include <cstddef>       // std::size_t
#include <cstdint>       // std::int64_t, std::uint8_t, std::uint16_t, std::uint32_t
#include <mutex>         // std::mutex for the pool and the reaper; std::call_once at stop
#include <optional>      // close_an_idle: a connection that is not idle
#include <sys/socket.h>  // shutdown
#include <system_error>  // std::error_code
#include <unistd.h>      // close
#include <utility>       // std::move, std::forward

namespace skiff::detail {

struct shared_connection : connection {
    std::atomic<std::int64_t> due_ms{0};  // deadline for the reaper, 0 when none
    std::atomic<deadline_kind> due_kind{deadline_kind::idle};
    std::atomic<bool> expired{false};     // set by the reaper, taken by the owner
    // Hands the connection from the thread that re-arms it to the thread the poller gives it
    // to next. The poller orders the two already; this says so in terms the C++ memory model
    // (and ThreadSanitizer, which cannot see through epoll) understands. A plain store and
    // load on x86.
    std::atomic<std::uint32_t> handoff{0};
    // A refusal of memory, set by the session, read when the owner parks it (shared_budget.hpp).
    memory_wait memory = memory_wait::none;
    std::size_t memory_wanted = 0;  // to_grow: the grant asked for
    std::size_t memory_held = 0;    // to_grow: what the connection held already
};

class shared_set {
public:
    using conn = shared_connection;
    static constexpr int wait_batch = 1;  // see the file comment
    // A connection waiting on a deferred answer is left disarmed, so no worker gets its events;
    // the hub's processor (whichever thread holds its process lock) applies the answer, and
    // re-arms it once the answer is written. The worker that read the request hands it over
    // when its event is done (event_loop.hpp), since until then it still owns it.
    static constexpr bool hands_over_deferred = true;

    shared_set() = default;
    shared_set(const shared_set&) = delete;
    shared_set& operator=(const shared_set&) = delete;
    ~shared_set() {
        if (anchor_.hub) anchor_.hub->detach();
    }

    std::error_code open(std::int64_t, std::int64_t tick_ms) {
        tick_ = tick_ms;
        anchor_.mode = poll_mode::oneshot;
        listener_open_.store(true);
        return poller_.open();
    }

    // Before the workers start: the list is not guarded.
    std::error_code add_listener(unique_fd fd, transport kind) {
        listener_slot* l = listeners_.add(std::move(fd), kind);
        if (l == nullptr) return listen_errc::too_many_listeners;
        return poller_.add(l->fd.get(), l, watch_read, poll_mode::oneshot);
    }

    default_poller& poller() noexcept { return poller_; }
    // The services every worker shares, started at listen; watched descriptors are one-shot, so
    // one worker at a time runs a watch callback.
    hub_anchor& anchor() noexcept { return anchor_; }

    // ---- the listeners: shared by every thread, each re-armed after its accept round ----

    bool is_listener(const void* data) const noexcept { return listeners_.contains(data); }
    listener_slot& listener(void* data) noexcept { return listeners_.at(data); }
    std::uint16_t port() const noexcept { return listeners_.port(); }
    void accept_round_done(listener_slot& l) noexcept {
        if (listener_open_.load(std::memory_order_relaxed))
            poller_.modify(l.fd.get(), &l, watch_read, poll_mode::oneshot);
    }
    static void pause_accepting() noexcept {}  // one-shot: it stays disarmed until re-armed
    // Re-arming one that is armed already changes nothing, so all are.
    void resume_accepting() noexcept {
        listeners_.for_each([this](listener_slot& l) { accept_round_done(l); });
    }
    static bool hand_off(int) noexcept { return false; }

    // ---- connections --------------------------------------------------------------------

    // As local_set::add. Everything about the connection is set before it is registered: from
    // that moment another thread may own it, and this one must not touch it again.
    bool add(int fd, deadline_kind kind, std::int64_t deadline) {
        conn* c = nullptr;
        {
            std::lock_guard<std::mutex> g(pool_lock_);
            c = &pool_.acquire();
            c->fd = fd;
            c->expired.store(false, std::memory_order_relaxed);
            c->memory = memory_wait::none;
            c->deadline = kind;
            arm(*c, deadline);  // under the lock: the reaper must not see the last occupant's deadline
        }
        c->watching = watch_read;
        size_.fetch_add(1, std::memory_order_relaxed);
        c->handoff.store(0, std::memory_order_release);
        if (poller_.add(fd, c, watch_read, poll_mode::oneshot)) {
            remove(*c);
            return false;
        }
        return true;
    }

    void remove(conn& c) noexcept {
        poller_.remove(c.fd);
        {
            std::lock_guard<std::mutex> g(pool_lock_);
            ::close(c.fd);
            pool_.release(c);
        }
        size_.fetch_sub(1, std::memory_order_relaxed);
    }

    // Recorded here, given to the poller when the event is done (one re-arm per event). A
    // connection the session refused memory is parked in the budget's line instead, disarmed,
    // unless memory came back meanwhile.
    static void watch(conn& c, std::uint8_t w) noexcept { c.watching = w; }
    // The event that served c is over: c goes back to the workers, unless it is handed to a
    // taker that waits on other threads (an answer made elsewhere), which takes it from them.
    void event_over(conn& c, loop_context& ctx) {
        if (c.state == phase::handed && c.taker->take_from_workers(ctx, c)) return;
        event_done(c);
    }

    void event_done(conn& c) {
        if (SKIFF_UNLIKELY(c.memory != memory_wait::none)) {
            if (!budget_.park(c)) rearm_reading(c);
            return;
        }
        rearm(c);
    }

    // ---- the memory budget (shared_budget.hpp) ------------------------------------------
    // Any thread may grow or free a connection's buffers, so one budget counts options::
    // max_buffered for every worker, behind a lock. The session asks it what it asks a loop's
    // own (local_set); a refused connection is not put in line here but by its owner when its
    // event is done (event_done), from what the refusal noted in it.

    void limit_budget(std::size_t bytes) { budget_.limit_to(bytes); }
    std::size_t budget_limit() { return budget_.limit(); }
    bool budget_full() const noexcept { return budget_.full(); }
    bool try_grow(conn& c, std::size_t n, std::size_t own) {
        if (budget_.try_take(n, own)) return true;
        c.memory = memory_wait::to_grow;
        c.memory_wanted = n;
        c.memory_held = own;
        return false;
    }
    void take_memory(std::size_t n) { budget_.take(n); }
    // Memory came back: the connections it lets go on are read again.
    void give_back(std::size_t n) {
        budget_.give(n, [this](conn& c) { rearm_reading(c); });
    }
    // One with output to drain waits for that first: then it reads, and asks, again.
    static void wait_for_memory(conn& c) noexcept {
        watch(c, static_cast<std::uint8_t>(c.watching & ~watch_read));
        if (!c.out.empty()) c.memory = memory_wait::none;
        else if (c.memory == memory_wait::none) c.memory = memory_wait::to_read;
    }
    // A parked connection is disarmed and nobody's: no event comes for it, and its owner,
    // which closes it, never parked it.
    static constexpr bool waits_for_memory(const conn&) noexcept { return false; }
    static void forget_waiting(conn&) noexcept {}

    // The receiving side of handoff, first thing when an event for c arrives.
    static void take_ownership(conn& c) noexcept { (void)c.handoff.load(std::memory_order_acquire); }

    static void arm(conn& c, std::int64_t deadline) noexcept {
        c.due_kind.store(c.deadline, std::memory_order_relaxed);
        c.due_ms.store(deadline, std::memory_order_relaxed);
    }

    // The owner's side: true once after the reaper expired c.
    static bool take_expired(conn& c) noexcept {
        return c.expired.load(std::memory_order_relaxed) && c.expired.exchange(false);
    }

    // The reaper: at most one thread per tick scans for passed deadlines (see file comment);
    // the owner of each expired connection handles it, so the callback is not used.
    template <class Unused>
    void expire(std::int64_t now_ms, Unused&&) {
        std::unique_lock<std::mutex> r(reaper_lock_, std::try_to_lock);
        if (!r.owns_lock() || now_ms < next_scan_) return;
        next_scan_ = now_ms + tick_;
        std::lock_guard<std::mutex> g(pool_lock_);
        pool_.for_each_open([&](conn& c) { reap_if_due(c, now_ms); });
    }

    // As local_set::close_an_idle, but the connection may be another thread's: it is expired
    // as the reaper would expire its idle deadline, and its owner closes it at once. So the
    // count falls a moment after the new connection is admitted (above the limit by the
    // closes in flight).
    template <class Close>
    bool close_an_idle(Close&&) {
        std::lock_guard<std::mutex> g(pool_lock_);
        conn* oldest = pool_.earliest_of_next(reclaim_scan, [](const conn& c) -> std::optional<std::int64_t> {
            std::int64_t due = c.due_ms.load(std::memory_order_relaxed);
            bool idle = c.due_kind.load(std::memory_order_relaxed) == deadline_kind::idle && due != 0 &&
                        !c.expired.load(std::memory_order_relaxed);
            if (!idle) return std::nullopt;
            return due;
        });
        if (oldest == nullptr) return false;
        expire_now(*oldest, SHUT_RDWR);
        return true;
    }

    bool has_deadlines() const noexcept { return true; }  // every thread wakes once a tick
    std::int64_t tick_ms() const noexcept { return tick_; }
    std::size_t size() const noexcept { return size_.load(std::memory_order_relaxed); }

    // ---- wake and stop ------------------------------------------------------------------

    // basic_server::stop(): async-signal-safe (a lock-free store and a write).
    void request_stop() noexcept {
        stop_requested_.store(true, std::memory_order_relaxed);
        poller_.wake();
    }

    // Looked at after every wait, woken or not: a wake reaches one thread only.
    template <class Admit>
    bool stop_requested(bool, Admit&&) const noexcept {
        return stop_requested_.load(std::memory_order_relaxed);
    }

    // The first worker to stop runs fn; the others wait for it.
    template <class Fn>
    void once_at_stop(Fn&& fn) {
        std::call_once(stop_once_, std::forward<Fn>(fn));
    }

    // The first thread to stop closes the listener; idle connections are closed by the
    // reaper, each on the thread that owns it next, so `settle` is not used.
    template <class Settle>
    void begin_stop(std::int64_t deadline, Settle&&) noexcept {
        if (stopping_.exchange(true)) return;
        stop_deadline_.store(deadline);
        // Other threads may still be accepting on this descriptor, so it is not closed (its
        // number could be reused under them) but shut: Linux then stops listening, and new
        // connections are refused. close_all() closes it once every worker has returned.
        listener_open_.store(false);
        listeners_.for_each([this](listener_slot& l) {
            poller_.remove(l.fd.get());
            ::shutdown(l.fd.get(), SHUT_RDWR);
        });
    }

    // Two ticks past the stop deadline, so that the reaper's last round has been handled.
    bool drained(std::int64_t now_ms) const noexcept {
        if (!stopping_.load(std::memory_order_relaxed)) return false;
        return size() == 0 || now_ms >= stop_deadline_.load(std::memory_order_relaxed) + 2 * tick_;
    }

    // A worker's loop ends while others may still serve: nothing is closed here.
    template <class Close>
    static void close_remaining(Close&&) noexcept {}

    // After every worker has returned: the connections past the stop deadline, the listener.
    void close_all() noexcept {
        pool_.for_each_open([this](conn& c) { remove(c); });
        listeners_.close_all();
    }

private:
    // While stopping, idle connections count as expired, and after the stop deadline all do.
    void reap_if_due(conn& c, std::int64_t now_ms) noexcept {
        bool stopping = stopping_.load(std::memory_order_relaxed);
        bool past_stop = stopping && now_ms >= stop_deadline_.load(std::memory_order_relaxed);
        std::int64_t due = c.due_ms.load(std::memory_order_relaxed);
        deadline_kind kind = c.due_kind.load(std::memory_order_relaxed);
        bool hit = (due != 0 && due <= now_ms) || (stopping && kind == deadline_kind::idle) || past_stop;
        // Only header and body deadlines are answered (408), so only they keep the write
        // side; shutting both is also what wakes a kqueue descriptor armed for writing
        // only (EV_EOF on EVFILT_WRITE): a write stall would otherwise never be seen.
        bool may_answer = !past_stop && (kind == deadline_kind::header || kind == deadline_kind::body);
        if (hit) expire_now(c, may_answer ? SHUT_RD : SHUT_RDWR);
    }

    // Marks c expired (once) and shuts it (`how`), which wakes its next owner to handle it.
    void expire_now(conn& c, int how) noexcept {
        if (c.expired.exchange(true)) return;
        ::shutdown(c.fd, how);
        if (budget_.take_out(c)) rearm_reading(c);  // parked, so disarmed: the shutdown alone would wake nobody
    }

    // Out of the budget's line (or never put in): watched for reading again.
    void rearm_reading(conn& c) noexcept {
        c.watching = static_cast<std::uint8_t>(c.watching | watch_read);
        rearm(c);
    }

    void rearm(conn& c) noexcept {
        int fd = c.fd;  // read before the hand-off: from then on c belongs to the next thread
        std::uint8_t watching = c.watching;
        c.handoff.store(0, std::memory_order_release);
        poller_.modify(fd, &c, watching, poll_mode::oneshot);
    }

    default_poller poller_;
    listener_list listeners_;
    hub_anchor anchor_;
    std::atomic<bool> listener_open_{false};
    connection_pool<conn> pool_;
    shared_budget<conn> budget_;
    std::mutex pool_lock_;
    std::mutex reaper_lock_;
    std::int64_t next_scan_ = 0;
    std::int64_t tick_ = 100;
    std::atomic<std::size_t> size_{0};
    std::atomic<bool> stopping_{false};
    std::atomic<bool> stop_requested_{false};
    std::atomic<std::int64_t> stop_deadline_{0};
    std::once_flag stop_once_;  // the on_stop hooks
};

static_assert(is_connection_set<shared_set>,
              "shared_set must offer the loop the interface in connection_set.hpp");

} // namespace skiff::detail

#endif // SKIFF_POLICY_SHARED_SET_HPP
