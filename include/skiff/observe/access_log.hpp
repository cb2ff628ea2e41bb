// An access log: one line per response, the server's own rejections included, to a sink the
// program gives (standard output, a file, a logging library). It is a response hook:
//
//   app.on_response(skiff::access_log([](std::string_view line) { std::printf("%.*s\n", int(line.size()), line.data()); }));
//
// Two formats. Common Log Format (the NCSA/Apache "common" format):
//   127.0.0.1 - - [10/Oct/2000:13:55:36 +0000] "GET /x HTTP/1.1" 200 2326
// and JSON lines, one object a line, its strings JSON-escaped:
//   {"remote":"127.0.0.1:54321","time":"2000-10-10T13:55:36Z","method":"GET","target":"/x",
//    "status":200,"bytes":2326,"duration_us":12,"reason":"none"}
// The byte count is the whole response as queued, head included (a stream's head only); the
// time is UTC, to the second. A rejection whose request line did not parse logs "-" for it.
// The line is handed without its newline. Under sharded and shared the sink is called from
// every worker thread, so it must be safe to call concurrently.
//
// Not here: when responses are reported (hooks.hpp).
#ifndef SKIFF_OBSERVE_ACCESS_LOG_HPP
#define SKIFF_OBSERVE_ACCESS_LOG_HPP

#include "skiff/engine/hooks.hpp"
#include "skiff/http/json_escape.hpp"
#include "skiff/http/response.hpp"

#include <chrono>       // std::chrono::microseconds
#include <cstdint>      // std::uint8_t, std::uint64_t
#include <ctime>        // std::time_t, std::time
#include <functional>   // std::function sink and hook
#include <string>       // the line
#include <string_view>  // std::string_view
#include <utility>      // std::move

namespace skiff {

enum class log_format : std::uint8_t { common, json_lines };

namespace detail {

// The host part of a peer: "127.0.0.1" of "127.0.0.1:5", "::1" of "[::1]:5"; a path as it is.
inline std::string_view peer_host(std::string_view peer) noexcept {
    if (peer.empty()) return "-";
    if (peer.front() == '[') {
        std::size_t close = peer.find(']');
        return close == std::string_view::npos ? peer : peer.substr(1, close - 1);
    }
    std::size_t colon = peer.rfind(':');
    if (peer.front() == '/' || peer.front() == '@' || colon == std::string_view::npos) return peer;
    return peer.substr(0, colon);
}

// A request-line part inside CLF's quotes: '"', '\\' and bytes outside printable ASCII
// escaped as \xHH (Apache does the same), so a line cannot be forged or broken.
// Runs of plain bytes are appended whole (a parsed target is nearly always one run).
inline void append_clf_escaped(std::string& out, std::string_view s) {
    static constexpr char hex[] = "0123456789abcdef";
    auto plain = [](char ch) {
        auto b = static_cast<unsigned char>(ch);
        return b >= 0x20 && b < 0x7f && ch != '"' && ch != '\\';
    };
    std::size_t i = 0;
    while (i < s.size()) {
        std::size_t run = i;
        while (run < s.size() && plain(s[run])) ++run;
        out.append(s.data() + i, run - i);
        if (run == s.size()) return;
        auto b = static_cast<unsigned char>(s[run]);
        const char escaped[] = {'\\', 'x', hex[b >> 4], hex[b & 0xf]};
        out.append(escaped, sizeof escaped);
        i = run + 1;
    }
}

inline void append_decimal(std::string& out, std::uint64_t v) {
    char digits[head_text::max_decimal_digits];
    char* end = digits + sizeof digits;
    char* first = format_decimal(end, v);
    out.append(first, static_cast<std::size_t>(end - first));
}

// A UTC time broken down by hand (the civil-from-days algorithm of H. Hinnant's date
// library, in its public description): gmtime_r and strftime cost about 1,200 instructions a
// line (callgrind, observed_app), this a few dozen.
struct utc_time {
    int year, month, day, hour, minute, second;  // month 1-12
};

inline utc_time utc_of(std::time_t when) noexcept {
    long long t = static_cast<long long>(when);
    long long days = t >= 0 ? t / 86400 : (t - 86399) / 86400;
    long long secs = t - days * 86400;
    long long z = days + 719468;
    long long era = (z >= 0 ? z : z - 146096) / 146097;
    long long doe = z - era * 146097;
    long long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    long long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    long long mp = (5 * doy + 2) / 153;
    int month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
    int year = static_cast<int>(yoe + era * 400 + (month <= 2 ? 1 : 0));
    return {year, month, static_cast<int>(doy - (153 * mp + 2) / 5 + 1), static_cast<int>(secs / 3600),
            static_cast<int>(secs / 60 % 60), static_cast<int>(secs % 60)};
}

inline void append_digits(std::string& out, int v, int width) {
    char d[8];
    for (int i = width - 1; i >= 0; --i, v /= 10) d[i] = static_cast<char>('0' + v % 10);
    out.append(d, static_cast<std::size_t>(width));
}

// 10/Oct/2000:13:55:36 +0000
inline void append_clf_time(std::string& out, std::time_t when) {
    static constexpr const char* months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                             "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    utc_time t = utc_of(when);
    append_digits(out, t.day, 2);
    out.append("/").append(months[t.month - 1]).append("/");
    append_digits(out, t.year, 4);
    for (int v : {t.hour, t.minute, t.second}) {
        out += ':';
        append_digits(out, v, 2);
    }
    out.append(" +0000");
}

// 2000-10-10T13:55:36Z
inline void append_iso_time(std::string& out, std::time_t when) {
    utc_time t = utc_of(when);
    append_digits(out, t.year, 4);
    const int rest[] = {t.month, t.day, t.hour, t.minute, t.second};
    const char before[] = {'-', '-', 'T', ':', ':'};
    for (int i = 0; i < 5; ++i) {
        out += before[i];
        append_digits(out, rest[i], 2);
    }
    out += 'Z';
}

} // namespace detail

// e as one Common Log Format line, appended to out.
inline void append_common_log(std::string& out, const response_event& e, std::time_t when) {
    out.append(detail::peer_host(e.peer)).append(" - - [");
    detail::append_clf_time(out, when);
    out.append("] \"");
    if (e.method.empty()) {
        out += '-';
    } else {
        detail::append_clf_escaped(out, e.method);
        out += ' ';
        detail::append_clf_escaped(out, e.target);
        out += ' ';
        out.append(e.version);
    }
    out.append("\" ");
    detail::append_decimal(out, static_cast<std::uint64_t>(e.status));
    out += ' ';
    detail::append_decimal(out, e.bytes_sent);
}

// e as one JSON object (one line), appended to out.
inline void append_json_log(std::string& out, const response_event& e, std::time_t when) {
    auto field = [&out](const char* name, std::string_view text) {
        out.append(name);
        append_json_escaped(out, text);
        out += '"';
    };
    field("{\"remote\":\"", e.peer);
    out.append(",\"time\":\"");
    detail::append_iso_time(out, when);
    out += '"';
    field(",\"method\":\"", e.method);
    field(",\"target\":\"", e.target);
    out.append(",\"status\":");
    detail::append_decimal(out, static_cast<std::uint64_t>(e.status));
    out.append(",\"bytes\":");
    detail::append_decimal(out, e.bytes_sent);
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(e.duration).count();
    out.append(",\"duration_us\":");
    detail::append_decimal(out, static_cast<std::uint64_t>(us < 0 ? 0 : us));
    field(",\"reason\":\"", to_string(e.reason));
    out += '}';
}

// A response hook (basic_server::on_response) that hands each response's line to sink.
inline std::function<void(const response_event&)> access_log(std::function<void(std::string_view line)> sink,
                                                             log_format format = log_format::common) {
    return [sink = std::move(sink), format](const response_event& e) {
        std::string line;
        line.reserve(192);
        std::time_t now = std::time(nullptr);
        if (format == log_format::common) append_common_log(line, e, now);
        else append_json_log(line, e, now);
        sink(line);
    };
}

} // namespace skiff

#endif // SKIFF_OBSERVE_ACCESS_LOG_HPP
