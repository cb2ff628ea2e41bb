// The response timer built-in: how long the chain behind it took, as a field added after
// the handler ran.
//
//   app.use(skiff::response_timer());                                  // Server-Timing: app;dur=1.234
//   app.use(skiff::response_timer(skiff::timer_field::response_time)); // X-Response-Time: 1.234ms
//
// The time is in milliseconds with three decimals (microsecond resolution), measured on the
// steady clock from entering this middleware to next() returning: the rest of the chain and
// the handler, not the parse before nor the write after. Register it first to time the most.
// The field is added late (response.hpp: inserted before the end of the head already written,
// which the head writer noted: no scan for it), so it is
// on plain and streamed answers; a deferred answer's head is written when it completes, and
// a late field is dropped from it, as is this one.
//
// Not here: several Server-Timing metrics; the time to the last byte (see the access log).
#ifndef SKIFF_MIDDLEWARE_RESPONSE_TIMER_HPP
#define SKIFF_MIDDLEWARE_RESPONSE_TIMER_HPP

#include "skiff/http/request.hpp"
#include "skiff/http/response.hpp"
#include "skiff/http/response_access.hpp"
#include "skiff/middleware/stack.hpp"

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t, std::uint8_t
#include <cstring>      // std::memcpy
#include <memory>       // std::make_shared: the step's state
#include <string_view>  // std::string_view
#include <time.h>       // clock_gettime, CLOCK_MONOTONIC (POSIX)

namespace skiff {

enum class timer_field : std::uint8_t {
    server_timing,  // Server-Timing: app;dur=1.234 (W3C Server Timing; browsers show it)
    response_time,  // X-Response-Time: 1.234ms
};

namespace detail {

inline constexpr std::string_view server_timing_prefix = "app;dur=";
inline constexpr std::string_view millis_suffix = "ms";
// Room for the longest value: the prefix, 20 digits, '.' and 3 more (32; the suffix is
// shorter than the prefix); 8 bytes over it, so that GCC's -Wstringop-overflow does not take
// put()'s branch for copies over 32 bytes, inlined with this room, for a certain overrun.
inline constexpr std::size_t timer_value_room = server_timing_prefix.size() + head_text::max_decimal_digits + 4 + 8;

// The value "<prefix><ms>.<3 digits><suffix>" for a time in microseconds: its size first,
// then written in the field's place (response_access::add_checked_field with a writer), not
// formatted aside and copied (measured, middleware_counts.py: response_timer() +158 -> +149
// instructions a request). One division for the milliseconds, and the three decimals as a
// digit and a pair from the table (+195 -> +171, against a division a decimal).
template <timer_field Field>
class millis_value {
public:
    explicit millis_value(std::uint64_t micros) noexcept
        : ms_(micros / 1000), frac_(static_cast<unsigned>(micros - ms_ * 1000)), digits_(decimal_digits(ms_)) {}

    std::size_t size() const noexcept { return affix.size() + digits_ + 4; }
    SKIFF_ALWAYS_INLINE void operator()(char* p) const noexcept {
        if constexpr (Field == timer_field::server_timing) p = put(p, affix);
        format_decimal(p + digits_, ms_);
        p += digits_;
        unsigned hundreds = frac_ / 100;
        p[0] = '.';
        p[1] = static_cast<char>('0' + hundreds);
        std::memcpy(p + 2, decimal_pairs + 2 * (frac_ - hundreds * 100), 2);
        if constexpr (Field == timer_field::response_time) put(p + 4, affix);
    }

private:
    // What the field's form adds to the number: Server-Timing's prefix, X-Response-Time's suffix.
    static constexpr std::string_view affix =
        Field == timer_field::server_timing ? server_timing_prefix : millis_suffix;

    std::uint64_t ms_;
    unsigned frac_;
    std::size_t digits_;
};

// The steady clock (CLOCK_MONOTONIC, which std::chrono::steady_clock reads on Linux and the
// BSDs), in nanoseconds, read with clock_gettime itself: steady_clock::now() is a call into
// the C++ library around it (measured: about 20 instructions a request for the two reads).
// ts is left unset for clock_gettime to fill: it fails only for a clock or an address that is
// not valid, and neither is, so the zeroing would be two stores a reading for nothing.
inline std::uint64_t monotonic_nanos() noexcept {
    timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

// The built-in's state, one type per field, so the name and format are constants.
template <timer_field Field>
struct response_timer_state {
    template <class Next>
    void serve(request&, response& res, const Next& go) const {
        response_access::expect_late_fields(res);  // the head notes its end: no scan for it
        std::uint64_t start = monotonic_nanos();
        go();
        millis_value<Field> value((monotonic_nanos() - start) / 1000);
        char spare[timer_value_room];
        constexpr std::string_view name = Field == timer_field::server_timing ? "Server-Timing" : "X-Response-Time";
        response_access::add_checked_field(res, name, value.size(), spare, value);
    }
};

} // namespace detail

inline middleware response_timer(timer_field f = timer_field::server_timing) {
    using detail::response_timer_state;
    if (f == timer_field::response_time)
        return detail::make_builtin(std::make_shared<const response_timer_state<timer_field::response_time>>());
    return detail::make_builtin(std::make_shared<const response_timer_state<timer_field::server_timing>>());
}

} // namespace skiff

#endif // SKIFF_MIDDLEWARE_RESPONSE_TIMER_HPP
