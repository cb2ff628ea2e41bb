// The bytes one loop's connections may hold beyond their standard request buffers
// (options::max_buffered, split evenly between sharded loops; whole under single and shared), and the connections waiting for
// some of it. A connection whose body would grow past the budget is not read (backpressure):
// it waits here, still under its body deadline, and is read again when another connection
// gives memory back. While the budget is full, no connection reads a new request either,
// since its answer could only add to it. The server slows under a flood of large bodies, or
// of large answers its clients do not take, instead of running out.
//
// What it counts: a connection's input buffer once it grew past the pool's standard size (a
// body being buffered, or requests queued behind a slow reader); a buffer of the standard
// size is the pool's (buffer_pool.hpp) and bounded by the connection count already. And all
// of a connection's parked output (the writer charges it, writer.hpp).
// It does not allocate, read or watch anything: the session (session.hpp) asks the
// connection set before it grows a buffer, and it and the writer report what they took and
// gave back; the set re-arms the connections it wakes.
//
// Invariants: a connection is in line at most once, and never after it closed; used() is the
// sum of the charges reported and not yet returned. A grant never waits on nothing: a
// connection that is the only holder is granted even beyond the limit (a body larger than the
// whole budget is still read, alone). Not thread-safe: one per loop, kept by its set
// (local_set.hpp), like the buffer pool; under `shared`, where any thread may grow a
// connection's buffers, the set keeps one for all of them behind a lock (shared_budget.hpp).
#ifndef SKIFF_ENGINE_MEMORY_BUDGET_HPP
#define SKIFF_ENGINE_MEMORY_BUDGET_HPP

#include "skiff/poller/poll_event.hpp"

#include <algorithm>  // std::find, std::remove
#include <cstddef>    // std::size_t
#include <cstdint>    // std::uint8_t
#include <vector>     // the connections waiting, oldest first

namespace skiff::detail {

// Why a connection of a shared server was refused memory, for its owner to park it when its
// event is done (shared_budget.hpp): to read a new request while the budget was full, or to
// grow its buffer for a body.
enum class memory_wait : std::uint8_t { none, to_read, to_grow };

template <class Conn>
class memory_budget {
public:
    void set_limit(std::size_t limit) noexcept {
        limit_ = limit;
        full_at_ = limit != 0 ? limit : 1;
    }
    std::size_t limit() const noexcept { return limit_; }
    std::size_t used() const noexcept { return used_; }
    std::size_t full_at() const noexcept { return full_at_; }

    // Whether a connection that holds `own` already may hold n more now.
    bool grants(std::size_t n, std::size_t own) const noexcept {
        return used_ == own || (used_ + n <= limit_ && n <= limit_);
    }
    void take(std::size_t n) noexcept { used_ += n; }
    // grants() and take() together: false, and nothing taken, when it does not.
    bool try_take(std::size_t n, std::size_t own) noexcept {
        if (!grants(n, own)) return false;
        take(n);
        return true;
    }
    void give(std::size_t n) noexcept { used_ -= n < used_ ? n : used_; }

    // No new request is read while it is full: used up, though never by nothing (a budget of
    // 0 would otherwise read nothing ever). One compare: the read path asks it every time.
    bool full() const noexcept { return used_ >= full_at_; }

    // A connection refused: it waits, in line, until memory is given back. Once: one that was
    // read again for another reason (its parked output drained) and refused keeps its place.
    void wait(Conn& c) {
        if (!is_waiting(c)) waiting_.push_back(&c);
    }
    bool has_waiters() const noexcept { return !waiting_.empty(); }
    bool is_waiting(const Conn& c) const noexcept {
        return std::find(waiting_.begin(), waiting_.end(), &c) != waiting_.end();
    }

    // The next connection to try again once memory was given back, or nullptr while the
    // budget is still full (it would only be refused).
    Conn* next_to_wake() noexcept {
        if (waiting_.empty() || full()) return nullptr;
        Conn* c = waiting_.front();
        waiting_.erase(waiting_.begin());
        return c;
    }

    // Memory came back: waiting connections go on, in the order they began to wait, while the
    // budget has room. One waiting for a grant for its body (it has bytes in) ends the round:
    // it takes what it needs, and the next return wakes the next, so a freed budget is not
    // stampeded. Those before it only wait to read a request, which needs no grant. One that
    // is watched for reading already (its parked output drained, so it waits for a request
    // again) is only dropped from the line: waking it would wake nobody. wake(c) re-arms c for
    // reading; under shared, c is another thread's after it.
    template <class Wake>
    void wake_waiters(Wake&& wake) {
        while (Conn* c = next_to_wake()) {
            if (c->watching & watch_read) continue;
            bool wants_body = !c->in.empty();
            wake(*c);
            if (wants_body) break;
        }
    }

    // A waiting connection that closed (its deadline, or the client went) leaves the line.
    void forget(Conn& c) noexcept { waiting_.erase(std::remove(waiting_.begin(), waiting_.end(), &c), waiting_.end()); }

private:
    std::size_t limit_ = static_cast<std::size_t>(-1);  // the session sets options::max_buffered
    std::size_t full_at_ = static_cast<std::size_t>(-1);  // limit_, or 1 for a limit of 0
    std::size_t used_ = 0;
    std::vector<Conn*> waiting_;  // short and rarely touched: a vector, not a deque (less code in every program)
};

} // namespace skiff::detail

#endif // SKIFF_ENGINE_MEMORY_BUDGET_HPP
