// A loop's sense of time: one monotonic reading per wake-up, for every deadline armed while
// that wake-up is handled, and the Date line, reformatted at most once a second. Reading the
// clock once per wake (not per request) keeps clock_gettime off the per-request path.
//
// Owned by one loop and read by its session; never shared between threads.
#ifndef SKIFF_ENGINE_LOOP_TIME_HPP
#define SKIFF_ENGINE_LOOP_TIME_HPP

#include "skiff/config.hpp"
#include "skiff/detail/date_cache.hpp"
#include "skiff/engine/options.hpp"

#include <cstdint>  // std::int64_t
#include <ctime>    // clock_gettime for deadlines, std::time for the Date line

namespace skiff::detail {

// Deadlines are whole milliseconds with a tick of 5 ms or more, so the coarse clock (a
// kernel tick's resolution, read without touching the hardware counter) is precise enough,
// and reading it directly skips std::chrono's call layer (measured: 68-byte keep-alive
// request 1,193 -> 1,187 instructions).
#if defined(CLOCK_MONOTONIC_COARSE)
inline constexpr clockid_t loop_clock = CLOCK_MONOTONIC_COARSE;
#else
inline constexpr clockid_t loop_clock = CLOCK_MONOTONIC;
#endif

inline std::int64_t monotonic_ms() noexcept {
    timespec ts{};
    ::clock_gettime(loop_clock, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// The wall clock is read only when the monotonic second changes, so a wake-up costs one
// clock reading; the Date line may then lag the wall clock by under a second, which RFC 9110
// §6.6.1 allows (the best available approximation), and it follows the wall clock's jumps.
struct loop_time {
    std::int64_t now_ms = 0;
    date_cache date;

    SKIFF_ALWAYS_INLINE void tick() noexcept {  // once per wake; a call cost 6 instructions
        now_ms = monotonic_ms();
        if (now_ms < next_second_ms_) return;
        next_second_ms_ = (now_ms / 1000 + 1) * 1000;
        date.update(std::time(nullptr));
    }

    // How long the loop's wait may block: as long as the loop asks (test_loop's clock says 0).
    static constexpr int wait_ms(int wanted) noexcept { return wanted; }
    // The clock the loop's services (loop_ref timers, deferred_timeout) follow, read once a
    // turn and only by a program that has them.
    static std::int64_t services_ms() noexcept { return monotonic_ms(); }

private:
    std::int64_t next_second_ms_ = 0;  // the start of the monotonic second after the last reading
};

// A tick of about a tenth of the shortest deadline: fine enough for tests that set 200 ms,
// coarse enough that a server with idle connections wakes a few times a second at most.
inline std::int64_t tick_for(const options& o) noexcept {
    auto shortest = o.header_timeout;
    for (auto d : {o.body_timeout, o.idle_timeout, o.write_timeout, o.linger_timeout})
        if (d < shortest) shortest = d;
    std::int64_t t = shortest.count() / 10;
    return t < 5 ? 5 : t > 250 ? 250 : t;
}

} // namespace skiff::detail

#endif // SKIFF_ENGINE_LOOP_TIME_HPP
