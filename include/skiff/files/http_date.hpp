// HTTP dates read (RFC 9110 §5.6.7): the three forms a recipient MUST accept, IMF-fixdate
// ("Sun, 06 Nov 1994 08:49:37 GMT"), the obsolete RFC 850 form ("Sunday, 06-Nov-94 08:49:37
// GMT") and asctime's ("Sun Nov  6 08:49:37 1994"), each whole, in GMT. A date that is not
// a real one (31 Feb, a day name that is no day's, 25:00) is no date: §13.1.3 says a
// condition with an invalid date is ignored, so a caller sends the full answer.
//
// Not here: writing dates (detail/date_cache.hpp), time zones other than GMT, dates before
// 1970. The day name is checked as a name, not against the date (as nginx and Go do).
#ifndef SKIFF_FILES_HTTP_DATE_HPP
#define SKIFF_FILES_HTTP_DATE_HPP

#include "skiff/detail/date_cache.hpp"  // day_names, month_names
#include "skiff/detail/scan.hpp"        // trim_ows

#include <cstddef>      // std::size_t
#include <ctime>        // std::time_t, std::tm, timegm, std::time
#include <optional>     // a date that may not parse
#include <string_view>  // std::string_view

namespace skiff::detail {

// A calendar time, read field by field; checked as a whole by time_of().
struct civil_time {
    int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;  // month 0-11
};

// The n digits at s[at], or -1 when any is not a digit (or s is too short).
inline int digits_at(std::string_view s, std::size_t at, std::size_t n) noexcept {
    if (at + n > s.size()) return -1;
    int v = 0;
    for (std::size_t i = at; i < at + n; ++i) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

// "Jan" .. "Dec" at s[at] (case-sensitive, as the grammar is): 0-11, or -1.
inline int month_at(std::string_view s, std::size_t at) noexcept {
    if (at + 3 > s.size()) return -1;
    std::size_t i = month_names.find(s.substr(at, 3));
    return i == std::string_view::npos || i % 3 != 0 ? -1 : static_cast<int>(i / 3);
}

// day-name ("Mon") or, for RFC 850, day-name-l ("Monday").
inline bool is_day_name(std::string_view n, bool long_form) noexcept {
    static constexpr std::string_view long_names[] = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                                                      "Thursday", "Friday", "Saturday"};  // day_names' order
    for (std::size_t i = 0; i < 7; ++i)
        if (n == (long_form ? long_names[i] : day_names.substr(i * 3, 3))) return true;
    return false;
}

// "08:49:37" at s[at].
inline bool time_of_day_at(std::string_view s, std::size_t at, civil_time& t) noexcept {
    if (at + 8 > s.size() || s[at + 2] != ':' || s[at + 5] != ':') return false;
    t.hour = digits_at(s, at, 2);
    t.minute = digits_at(s, at + 3, 2);
    t.second = digits_at(s, at + 6, 2);
    return t.hour >= 0 && t.minute >= 0 && t.second >= 0;
}

inline int days_in_month(int month, int year) noexcept {
    static constexpr int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return month == 1 && leap ? 29 : days[month];
}

// Seconds since the epoch, when t is a real time (a leap second, :60, allowed).
inline std::optional<std::time_t> time_of(const civil_time& t) noexcept {
    if (t.month < 0 || t.year < 1970 || t.day < 1 || t.day > days_in_month(t.month, t.year) || t.hour > 23 ||
        t.minute > 59 || t.second > 60)
        return std::nullopt;
    std::tm tm{};
    tm.tm_year = t.year - 1900;
    tm.tm_mon = t.month;
    tm.tm_mday = t.day;
    tm.tm_hour = t.hour;
    tm.tm_min = t.minute;
    tm.tm_sec = t.second;
    return ::timegm(&tm);
}

// "Sun, 06 Nov 1994 08:49:37 GMT"
inline std::optional<std::time_t> parse_imf_fixdate(std::string_view s) noexcept {
    if (s.size() != 29 || !is_day_name(s.substr(0, 3), false) || s.substr(3, 2) != ", " || s[7] != ' ' ||
        s[11] != ' ' || s[16] != ' ' || s.substr(25) != " GMT")
        return std::nullopt;
    civil_time t;
    t.day = digits_at(s, 5, 2);
    t.month = month_at(s, 8);
    t.year = digits_at(s, 12, 4);
    if (t.day < 0 || t.year < 0 || !time_of_day_at(s, 17, t)) return std::nullopt;
    return time_of(t);
}

// A two-digit year: §5.6.7, one more than 50 years ahead of now is the last such year past.
inline int full_year(int two_digits) noexcept {
    std::time_t now = std::time(nullptr);
    std::tm utc{};
    ::gmtime_r(&now, &utc);
    int this_year = utc.tm_year + 1900;
    int year = this_year - this_year % 100 + two_digits;
    return year > this_year + 50 ? year - 100 : year;
}

// "Sunday, 06-Nov-94 08:49:37 GMT"
inline std::optional<std::time_t> parse_rfc850_date(std::string_view s) noexcept {
    std::size_t comma = s.find(',');
    if (comma == std::string_view::npos || !is_day_name(s.substr(0, comma), true)) return std::nullopt;
    s.remove_prefix(comma);
    if (s.size() != 24 || s.substr(0, 2) != ", " || s[4] != '-' || s[8] != '-' || s[11] != ' ' ||
        s.substr(20) != " GMT")
        return std::nullopt;
    civil_time t;
    t.day = digits_at(s, 2, 2);
    t.month = month_at(s, 5);
    int year = digits_at(s, 9, 2);
    if (t.day < 0 || year < 0 || !time_of_day_at(s, 12, t)) return std::nullopt;
    t.year = full_year(year);
    return time_of(t);
}

// "Sun Nov  6 08:49:37 1994" (a one-digit day after a space)
inline std::optional<std::time_t> parse_asctime_date(std::string_view s) noexcept {
    if (s.size() != 24 || !is_day_name(s.substr(0, 3), false) || s[3] != ' ' || s[7] != ' ' || s[10] != ' ' ||
        s[19] != ' ')
        return std::nullopt;
    civil_time t;
    t.month = month_at(s, 4);
    t.day = s[8] == ' ' ? digits_at(s, 9, 1) : digits_at(s, 8, 2);
    t.year = digits_at(s, 20, 4);
    if (t.day < 0 || t.year < 0 || !time_of_day_at(s, 11, t)) return std::nullopt;
    return time_of(t);
}

// Seconds since the epoch of an HTTP date in any of its three forms, or nullopt.
inline std::optional<std::time_t> parse_http_date(std::string_view s) noexcept {
    s = trim_ows(s);
    if (auto t = parse_imf_fixdate(s)) return t;
    if (auto t = parse_rfc850_date(s)) return t;
    return parse_asctime_date(s);
}

} // namespace skiff::detail

#endif // SKIFF_FILES_HTTP_DATE_HPP
