// The connections of a server under the shared policy: one poller that every worker thread
// waits on, with one-shot readiness, so a ready connection is handed to exactly one thread and
// stays disarmed until that thread re-arms it (event_done). Same members as local_set.
//
// Deadlines cannot live on a timing wheel here: the thread that would expire a connection is
// not the one that may be serving it. Instead the owner stores each deadline in an atomic, and
// once a tick one thread (whichever gets the reaper lock) scans the connections; an expired one
// is marked and its read side shut down, which wakes the connection through the poller, so its
// next owner handles the deadline (answers 408 or closes). The pool lock makes the scan and
// every close exclusive, so a scanned descriptor is never one that was closed and reused.
// Cost: O(connections) per tick on one thread, and one mutex per accept and per close.
#ifndef SKIFF_SERVER_SHARED_SET_HPP
#define SKIFF_SERVER_SHARED_SET_HPP

#include "skiff/detail/unique_fd.hpp"
#include "skiff/poller/poller.hpp"
#include "skiff/server/connection.hpp"

#include <atomic>        // deadlines, flags and counts read across threads
#include <cstddef>       // std::size_t
#include <cstdint>       // std::int64_t, std::uint8_t
#include <mutex>         // std::mutex for the pool and the reaper
#include <sys/socket.h>  // shutdown
#include <system_error>  // std::error_code
#include <unistd.h>      // close

namespace skiff::detail {

struct shared_connection : connection {
    std::atomic<std::int64_t> due{0};         // deadline in ms, 0 when none
    std::atomic<deadline_kind> due_kind{deadline_kind::idle};
    std::atomic<bool> expired{false};         // set by the reaper, taken by the owner
    // Hands the connection from the thread that re-arms it to the thread the poller gives it
    // to next. The poller orders the two already; this says so in terms the C++ memory model
    // (and ThreadSanitizer, which cannot see through epoll) understands. A plain store and
    // load on x86.
    std::atomic<std::uint32_t> handoff{0};
};

// A template only so that a program that does not use the shared policy does not compile it
// (its pool, locks and reaper), even though this header is always included.
template <class Policy>
class shared_set {
public:
    using conn = shared_connection;

    std::error_code open(std::int64_t, std::int64_t tick_ms) {
        tick_ = tick_ms;
        return poller_.open();
    }

    default_poller& poller() noexcept { return poller_; }

    // As local_set::add. Everything about the connection is set before it is registered: from
    // that moment another thread may own it, and this one must not touch it again.
    bool add(int fd, deadline_kind kind, std::int64_t deadline) {
        conn* c = nullptr;
        {
            std::lock_guard<std::mutex> g(pool_lock_);
            c = &pool_.acquire();
            c->fd = fd;
            c->expired.store(false, std::memory_order_relaxed);
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

    // Recorded here, given to the poller when the event is done (one re-arm per event).
    void watch(conn& c, std::uint8_t w) noexcept { c.watching = w; }
    void event_done(conn& c) noexcept {
        int fd = c.fd;  // read before the hand-off: from then on c belongs to the next thread
        std::uint8_t watching = c.watching;
        c.handoff.store(0, std::memory_order_release);
        poller_.modify(fd, &c, watching, poll_mode::oneshot);
    }
    // The receiving side of handoff, first thing when an event for c arrives.
    static void take_ownership(conn& c) noexcept { (void)c.handoff.load(std::memory_order_acquire); }

    void arm(conn& c, std::int64_t deadline) noexcept {
        c.due_kind.store(c.deadline, std::memory_order_relaxed);
        c.due.store(deadline, std::memory_order_relaxed);
    }

    // The owner's side: true once after the reaper expired c.
    static bool take_expired(conn& c) noexcept {
        return c.expired.load(std::memory_order_relaxed) && c.expired.exchange(false);
    }

    // The reaper: at most one thread per tick scans for passed deadlines (see file comment).
    // While stopping, idle connections count as expired, and after the stop deadline all do.
    template <class Unused>
    void expire(std::int64_t now_ms, Unused&&) {
        std::unique_lock<std::mutex> r(reaper_lock_, std::try_to_lock);
        if (!r.owns_lock() || now_ms < next_scan_) return;
        next_scan_ = now_ms + tick_;
        bool stopping = stopping_.load(std::memory_order_relaxed);
        bool past_stop = stopping && now_ms >= stop_deadline_.load(std::memory_order_relaxed);
        std::lock_guard<std::mutex> g(pool_lock_);
        pool_.for_each_open([&](conn& c) {
            std::int64_t due = c.due.load(std::memory_order_relaxed);
            bool idle = c.due_kind.load(std::memory_order_relaxed) == deadline_kind::idle;
            bool hit = (due != 0 && due <= now_ms) || (stopping && idle) || past_stop;
            // Only header and body deadlines are answered (408), so only they keep the write
            // side; shutting both is also what wakes a kqueue descriptor armed for writing
            // only (EV_EOF on EVFILT_WRITE): a write stall would otherwise never be seen.
            deadline_kind kind = c.due_kind.load(std::memory_order_relaxed);
            bool may_answer = !past_stop && (kind == deadline_kind::header || kind == deadline_kind::body);
            if (hit && !c.expired.exchange(true)) ::shutdown(c.fd, may_answer ? SHUT_RD : SHUT_RDWR);
        });
    }

    bool has_deadlines() const noexcept { return true; }  // every thread wakes once a tick
    std::int64_t tick_ms() const noexcept { return tick_; }
    std::size_t size() const noexcept { return size_.load(std::memory_order_relaxed); }

    // Only when no worker runs (after they are joined).
    template <class Fn>
    void for_each(Fn fn) {
        pool_.for_each_open(fn);
    }

    // Stop: the first caller gets true (and closes the listener); all see stopping().
    bool begin_stop(std::int64_t deadline) noexcept {
        if (stopping_.exchange(true)) return false;
        stop_deadline_.store(deadline);
        return true;
    }
    bool stopping() const noexcept { return stopping_.load(std::memory_order_relaxed); }
    std::int64_t stop_deadline() const noexcept { return stop_deadline_.load(std::memory_order_relaxed); }

    // basic_server::stop(): async-signal-safe (a lock-free store and a write).
    void request_stop() noexcept {
        stop_requested_.store(true, std::memory_order_relaxed);
        poller_.wake();
    }
    bool stop_requested() const noexcept { return stop_requested_.load(std::memory_order_relaxed); }

    // The one listener, shared by every thread, re-armed after each accept round.
    unique_fd listener;
    std::atomic<bool> listener_open{false};

private:
    default_poller poller_;
    basic_pool<conn> pool_;
    std::mutex pool_lock_;
    std::mutex reaper_lock_;
    std::int64_t next_scan_ = 0;
    std::int64_t tick_ = 100;
    std::atomic<std::size_t> size_{0};
    std::atomic<bool> stopping_{false};
    std::atomic<bool> stop_requested_{false};
    std::atomic<std::int64_t> stop_deadline_{0};
};

} // namespace skiff::detail

#endif // SKIFF_SERVER_SHARED_SET_HPP
