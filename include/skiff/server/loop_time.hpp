// A loop's sense of time: one monotonic reading per wake-up, for every deadline armed while
// that wake-up is handled, and the Date line, reformatted at most once a second. Reading the
// clock once per wake (not per request) keeps clock_gettime off the per-request path.
//
// Owned by one loop and read by its session; never shared between threads.
#ifndef SKIFF_SERVER_LOOP_TIME_HPP
#define SKIFF_SERVER_LOOP_TIME_HPP

#include "skiff/config.hpp"
#include "skiff/detail/date_cache.hpp"
#include "skiff/server/options.hpp"

#include <chrono>   // steady_clock for deadlines
#include <cstdint>  // std::int64_t
#include <ctime>    // std::time for the Date line

namespace skiff::detail {

inline std::int64_t monotonic_ms() noexcept {
    using namespace std::chrono;
    return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
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

#endif // SKIFF_SERVER_LOOP_TIME_HPP
