// The loop hub's timers (async/hub.hpp): callbacks due at a time on the loop's clock, once or
// every period, kept by due time, run in due order once a turn, cancelled by id.
//
// It does not lock: the hub calls it under its process lock. The one thing read without that
// lock is next_due(), an atomic, so that a turn with nothing due costs one load.
//
// Invariants: every live timer has one entry in by_due_ at its due time; a cancelled timer
// leaves stale entries there, skipped when they come up. next_due_ is the earliest entry's
// time (stale ones included: a turn that finds only a stale one runs nothing), or no_timer.
#ifndef SKIFF_ASYNC_HUB_TIMERS_HPP
#define SKIFF_ASYNC_HUB_TIMERS_HPP

#include "skiff/detail/guarded_call.hpp"
#include "skiff/detail/unique_function.hpp"
#include "skiff/engine/loop_hub.hpp"

#include <atomic>         // the next timer's due time, read without the lock
#include <cstdint>        // std::int64_t, std::uint64_t, std::uint8_t
#include <limits>         // no timer
#include <map>            // timers by due time
#include <unordered_map>  // timers by id
#include <utility>        // std::move, std::swap

namespace skiff {

// What a repeating timer's callback wants next (loop_ref::every): to run again after its
// period, or to end here, as loop_ref::cancel would.
enum class timer_action : std::uint8_t { keep, stop };

} // namespace skiff

namespace skiff::detail {

using timer_task = unique_function<timer_action(loop_context&)>;

class timer_queue {
public:
    static constexpr std::int64_t no_timer = std::numeric_limits<std::int64_t>::max();

    void insert(std::uint64_t id, std::int64_t due, std::int64_t period_ms, timer_task fn) {
        timers_.emplace(id, timer{due, period_ms, std::move(fn)});
        by_due_.emplace(due, id);
        note_next_due();
    }

    void drop(std::uint64_t id) {
        if (timers_.erase(id) != 0 && timers_.empty()) by_due_.clear();
        note_next_due();
    }

    // Any thread: when the earliest timer is due, or no_timer.
    std::int64_t next_due() const noexcept { return next_due_.load(std::memory_order_relaxed); }

    // Runs every timer due by now_ms, in due order. A callback may insert or cancel timers,
    // itself included; one that throws runs again, as before it could say.
    void run_due(std::int64_t now_ms, loop_context& ctx) {
        while (!by_due_.empty() && by_due_.begin()->first <= now_ms) {
            std::uint64_t id = by_due_.begin()->second;
            by_due_.erase(by_due_.begin());
            auto it = timers_.find(id);
            if (it == timers_.end()) continue;  // cancelled
            timer_task fn = std::move(it->second.fn);
            std::int64_t period = it->second.period;
            if (period == 0) timers_.erase(it);
            timer_action next = timer_action::keep;
            call_guarded([&] { next = fn(ctx); }, [] {});
            it = timers_.find(id);  // fn may have cancelled itself
            if (period != 0 && it != timers_.end() && next == timer_action::stop) drop(id);
            else if (period != 0 && it != timers_.end()) {
                it->second.fn = std::move(fn);
                it->second.due = now_ms + period;
                by_due_.emplace(it->second.due, id);
            }
        }
        note_next_due();
    }

    // Everything, to be destroyed by the caller outside its locks (the hub's detach()).
    void take_all(timer_queue& into) {
        std::swap(timers_, into.timers_);
        std::swap(by_due_, into.by_due_);
        note_next_due();
    }

private:
    struct timer {
        std::int64_t due;
        std::int64_t period;
        timer_task fn;
    };

    void note_next_due() noexcept {
        next_due_.store(by_due_.empty() ? no_timer : by_due_.begin()->first, std::memory_order_relaxed);
    }

    std::unordered_map<std::uint64_t, timer> timers_;
    std::multimap<std::int64_t, std::uint64_t> by_due_;
    std::atomic<std::int64_t> next_due_{no_timer};
};

} // namespace skiff::detail

#endif // SKIFF_ASYNC_HUB_TIMERS_HPP
