// The memory budget (memory_budget.hpp) kept for every worker of a `shared` server at once:
// the same count and waiting line, behind one lock, with the hand-over one-shot readiness
// needs. Only shared_set instantiates it, so no other policy compiles its mutex or atomic.
//
// Who may re-arm a waiting connection is the whole difficulty. Under one-shot readiness the
// thread that served an event re-arms its connection when the event is done, after the
// session returned. So a refused connection is not put in line by the session but by its owner
// at that point (park()), under the lock, and from then on it is disarmed and nobody's: the one
// thread that takes it out of the line (a give() that makes room, or the reaper for a deadline:
// take_out()) re-arms it, and the next event hands it to a worker as any other.
//
// What a refusal asked for travels with the connection (shared_connection::memory_wait and
// the sizes beside it), so that park() can tell, under the lock, whether memory came back
// between the refusal and now; if it did, the connection is re-armed at once instead of waiting
// for a return that may never come.
//
// Invariants: a connection is in line only while disarmed and owned by no thread; used() and
// the line change only under the lock; full() reads a copy of the count without it (the read
// path asks it per request, and a stale answer only delays or hastens one read).
#ifndef SKIFF_POLICY_SHARED_BUDGET_HPP
#define SKIFF_POLICY_SHARED_BUDGET_HPP

#include "skiff/engine/memory_budget.hpp"

#include <atomic>   // the count's copy the read path reads without the lock
#include <cstddef>  // std::size_t
#include <mutex>    // std::mutex, std::lock_guard

namespace skiff::detail {

template <class Conn>
class shared_budget {
public:
    // Every worker's session caps it at options::max_buffered as it opens: set once, kept.
    void limit_to(std::size_t limit) {
        std::lock_guard<std::mutex> g(lock_);
        if (line_.limit() <= limit) return;
        line_.set_limit(limit);
        full_at_.store(line_.full_at(), std::memory_order_relaxed);
    }
    std::size_t limit() {
        std::lock_guard<std::mutex> g(lock_);
        return line_.limit();
    }

    bool full() const noexcept { return used_.load(std::memory_order_relaxed) >= full_at_.load(std::memory_order_relaxed); }

    // A connection that holds `own` takes n more, if the budget grants it.
    bool try_take(std::size_t n, std::size_t own) {
        std::lock_guard<std::mutex> g(lock_);
        bool granted = line_.try_take(n, own);
        publish();
        return granted;
    }
    void take(std::size_t n) {
        std::lock_guard<std::mutex> g(lock_);
        line_.take(n);
        publish();
    }

    // n came back: connections in line go on in memory_budget's order (wake_waiters).
    // rearm(c) hands c to the poller: after it, c is another thread's.
    template <class Rearm>
    void give(std::size_t n, Rearm&& rearm) {
        std::lock_guard<std::mutex> g(lock_);
        line_.give(n);
        publish();
        line_.wake_waiters([&](Conn& c) {
            c.memory = memory_wait::none;
            rearm(c);
        });
    }

    // The owner, when the event that refused c is done: true when c is now in line (disarmed);
    // false when it may be re-armed for reading at once (memory came back meanwhile, or its
    // deadline passed and the reaper, finding it not in line, left it to its owner).
    bool park(Conn& c) {
        std::lock_guard<std::mutex> g(lock_);
        bool room = c.memory == memory_wait::to_read ? !line_.full() : line_.grants(c.memory_wanted, c.memory_held);
        if (room || c.expired.load(std::memory_order_relaxed)) {
            c.memory = memory_wait::none;
            return false;
        }
        line_.wait(c);
        return true;
    }

    // The reaper: a connection whose deadline passed leaves the line, for its owner to answer.
    // True when it was in line (the caller re-arms it).
    bool take_out(Conn& c) {
        std::lock_guard<std::mutex> g(lock_);
        if (!line_.has_waiters() || !line_.is_waiting(c)) return false;
        line_.forget(c);
        c.memory = memory_wait::none;
        return true;
    }

private:
    // The count's copy for full(), after every change (under the lock).
    void publish() noexcept { used_.store(line_.used(), std::memory_order_relaxed); }

    std::mutex lock_;
    memory_budget<Conn> line_;  // the count and the line, as one loop keeps them; under lock_
    std::atomic<std::size_t> used_{0};
    std::atomic<std::size_t> full_at_{static_cast<std::size_t>(-1)};
};

} // namespace skiff::detail

#endif // SKIFF_POLICY_SHARED_BUDGET_HPP
