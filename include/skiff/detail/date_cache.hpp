// The Date header line (RFC 9110 §6.6.1, IMF-fixdate), formatted at most once a second per
// loop. The line has a fixed length, so copying it into a response is a constant-size memcpy;
// generation() tells those who keep a copy of it composed into a longer block when to redo it.
#ifndef SKIFF_DETAIL_DATE_CACHE_HPP
#define SKIFF_DETAIL_DATE_CACHE_HPP

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t
#include <ctime>        // std::time_t, gmtime_r
#include <string_view>  // std::string_view

namespace skiff::detail {

// IMF-fixdate's three-letter names, in struct tm's order (tm_wday from Sunday, tm_mon from
// January); also what files/http_date.hpp parses against.
inline constexpr std::string_view day_names = "SunMonTueWedThuFriSat";
inline constexpr std::string_view month_names = "JanFebMarAprMayJunJulAugSepOctNovDec";

class date_cache {
public:
    // "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
    static constexpr std::size_t line_size = 37;

    // Reformats when `now` (seconds since the epoch) is a different second.
    void update(std::time_t now) noexcept {
        if (now == second_) return;
        second_ = now;
        ++generation_;
        std::tm tm{};
        ::gmtime_r(&now, &tm);
        format(tm);
    }

    const char* data() const noexcept { return line_; }
    std::string_view line() const noexcept { return {line_, line_size}; }
    // Changes whenever the line does: what a copy of the line composed into something else
    // (the response's pre-composed 200 heads) compares to see whether it is stale.
    std::uint64_t generation() const noexcept { return generation_; }

private:
    static void put2(char* p, int v) noexcept {
        p[0] = static_cast<char>('0' + v / 10);
        p[1] = static_cast<char>('0' + v % 10);
    }

    void format(const std::tm& tm) noexcept {
        char* p = line_;
        for (char c : std::string_view("Date: ")) *p++ = c;
        for (int i = 0; i < 3; ++i) *p++ = day_names[static_cast<std::size_t>(tm.tm_wday * 3 + i)];
        *p++ = ',';
        *p++ = ' ';
        put2(p, tm.tm_mday);
        p += 2;
        *p++ = ' ';
        for (int i = 0; i < 3; ++i) *p++ = month_names[static_cast<std::size_t>(tm.tm_mon * 3 + i)];
        *p++ = ' ';
        int year = tm.tm_year + 1900;
        put2(p, year / 100);
        put2(p + 2, year % 100);
        p += 4;
        *p++ = ' ';
        put2(p, tm.tm_hour);
        p[2] = ':';
        put2(p + 3, tm.tm_min);
        p[5] = ':';
        put2(p + 6, tm.tm_sec);
        p += 8;
        for (char c : std::string_view(" GMT\r\n")) *p++ = c;
    }

    std::time_t second_ = -1;
    std::uint64_t generation_ = 0;
    char line_[line_size] = {};
};

} // namespace skiff::detail

#endif // SKIFF_DETAIL_DATE_CACHE_HPP
