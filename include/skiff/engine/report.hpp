// Builds the response_event (hooks.hpp) for a rejection the server answers itself: the reason
// a parse error stands for, and the request line's method, target and version when it was
// well-formed. Used only where options::on_response is set, so the re-parse of the request
// line costs nothing otherwise.
//
// Not here: calling the hook (session.hpp, acceptor.hpp do, each on its own path).
#ifndef SKIFF_ENGINE_REPORT_HPP
#define SKIFF_ENGINE_REPORT_HPP

#include "skiff/engine/hooks.hpp"
#include "skiff/http/head_parser.hpp"
#include "skiff/http/parse_status.hpp"
#include "skiff/http/request_head.hpp"

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint8_t
#include <string_view>  // std::string_view

namespace skiff::detail {

// The reason a parse error stands for; a 400 counts as a bad request line until
// describe_request_line() finds the line well-formed.
constexpr rejection rejection_for(parse_status s) noexcept {
    switch (s) {
    case parse_status::bad_request: return rejection::bad_request_line;
    case parse_status::content_too_large: return rejection::body_too_large;
    case parse_status::uri_too_long: return rejection::uri_too_long;
    case parse_status::expectation_failed: return rejection::expectation_failed;
    case parse_status::fields_too_large: return rejection::header_too_large;
    case parse_status::not_implemented: return rejection::not_implemented;
    case parse_status::version_not_supported: return rejection::version_not_supported;
    case parse_status::complete:
    case parse_status::incomplete:
    case parse_status::body_follows: break;
    }
    return rejection::none;
}

constexpr std::string_view version_text(std::uint8_t minor) noexcept { return minor == 0 ? "HTTP/1.0" : "HTTP/1.1"; }

// Fills e's method, target and version from the request line at the start of input when it
// is well-formed (and then a 400 is the header's fault); the views point into input. Only the
// line and its CRLF are handed to parse_head(), so a good line leaves the fields incomplete.
// parse_head() rather than the request-line parser itself: a second caller of that changed
// how GCC inlines it into the hot path (measured: 22 instructions a request, contract app).
inline void describe_request_line(std::string_view input, const parse_limits& limits, response_event& e) noexcept {
    std::size_t start = input.find_first_not_of("\r\n");
    std::size_t line_end = start == std::string_view::npos ? start : input.find('\n', start);
    if (line_end == std::string_view::npos) return;
    request_head h;
    header_field none[1];
    if (parse_head(input.data(), line_end + 1, h, none, limits).status != parse_status::incomplete) return;
    e.method = h.method_name;
    e.target = h.target;
    e.version = version_text(h.version_minor);
    if (e.reason == rejection::bad_request_line) e.reason = rejection::bad_header;
}

} // namespace skiff::detail

#endif // SKIFF_ENGINE_REPORT_HPP
