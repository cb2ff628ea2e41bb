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
#ifndef SKIFF_SERVER_ACCESS_LOG_HPP
#define SKIFF_SERVER_ACCESS_LOG_HPP

#include "skiff/http/json_escape.hpp"
#include "skiff/server/hooks.hpp"

#include <chrono>       // std::chrono::microseconds
#include <cstdint>      // std::uint8_t
#include <cstdio>       // std::snprintf
#include <ctime>        // std::time_t, gmtime_r, strftime
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
inline void append_clf_escaped(std::string& out, std::string_view s) {
    static constexpr char hex[] = "0123456789abcdef";
    for (char ch : s) {
        auto b = static_cast<unsigned char>(ch);
        if (b >= 0x20 && b < 0x7f && ch != '"' && ch != '\\') {
            out += ch;
            continue;
        }
        out += "\\x";
        out += hex[b >> 4];
        out += hex[b & 0xf];
    }
}

inline std::string_view format_time(std::time_t when, const char* pattern, char (&buf)[40]) noexcept {
    std::tm t{};
    gmtime_r(&when, &t);
    return {buf, std::strftime(buf, sizeof buf, pattern, &t)};
}

} // namespace detail

// e as one Common Log Format line, appended to out.
inline void append_common_log(std::string& out, const response_event& e, std::time_t when) {
    char stamp[40];
    out.append(detail::peer_host(e.peer)).append(" - - [");
    out.append(detail::format_time(when, "%d/%b/%Y:%H:%M:%S +0000", stamp)).append("] \"");
    if (e.method.empty()) {
        out += '-';
    } else {
        detail::append_clf_escaped(out, e.method);
        out += ' ';
        detail::append_clf_escaped(out, e.target);
        out += ' ';
        out.append(e.version);
    }
    out.append("\" ").append(std::to_string(e.status)).append(" ").append(std::to_string(e.bytes_sent));
}

// e as one JSON object (one line), appended to out.
inline void append_json_log(std::string& out, const response_event& e, std::time_t when) {
    char stamp[40];
    auto field = [&out](const char* name, std::string_view text) {
        out.append(name);
        append_json_escaped(out, text);
        out += '"';
    };
    field("{\"remote\":\"", e.peer);
    field(",\"time\":\"", detail::format_time(when, "%Y-%m-%dT%H:%M:%SZ", stamp));
    field(",\"method\":\"", e.method);
    field(",\"target\":\"", e.target);
    out.append(",\"status\":").append(std::to_string(e.status));
    out.append(",\"bytes\":").append(std::to_string(e.bytes_sent));
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(e.duration).count();
    out.append(",\"duration_us\":").append(std::to_string(us));
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

#endif // SKIFF_SERVER_ACCESS_LOG_HPP
