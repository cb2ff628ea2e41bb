// The request-head parser: request line and header section, RFC 9112 §2-§5, strict.
//
// parse_head() is stateless and restartable in the picohttpparser shape: hand it everything
// received so far and it answers complete (with the head's length), incomplete, or an error
// that names the status to answer. Results are string_views into the caller's buffer; nothing
// allocates. It reads only within [buf, buf + len): no padding is assumed (tests place inputs
// against a PROT_NONE page to hold it to that).
//
// Strictness, each a choice that closes a smuggling or desync hole:
//  - lines end in CRLF only; a bare LF or bare CR is 400 (RFC 9112 §2.2 allows either choice);
//  - no whitespace between a field name and its colon, no obs-fold, no CTL or DEL in a value;
//  - one Host for HTTP/1.1; Content-Length with Transfer-Encoding is 400; duplicate
//    Content-Length fields must agree and a comma list of lengths is 400;
//  - CONNECT has authority-form only, no body, and closes after its answer;
//  - Transfer-Encoding must end in exactly one "chunked" (else 400, RFC 9112 §6.3 item 4; a
//    coding before it is 501, §6.1; in HTTP/1.0 any is 400).
//
// Not here: the body, and any state kept between reads (message_parser.hpp frames the whole
// message and decides when to call this again).
#ifndef SKIFF_HTTP_HEAD_PARSER_HPP
#define SKIFF_HTTP_HEAD_PARSER_HPP

#include "skiff/detail/ascii.hpp"
#include "skiff/detail/bytes.hpp"
#include "skiff/detail/scan.hpp"
#include "skiff/http/crlf.hpp"
#include "skiff/http/fields.hpp"
#include "skiff/http/method.hpp"
#include "skiff/http/parse_status.hpp"
#include "skiff/http/request_head.hpp"
#include "skiff/http/target.hpp"

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t for the version word
#include <string_view>  // std::string_view

namespace skiff {
namespace detail {

// RFC 9112 §2.2: a server SHOULD ignore at least one empty line before the request-line.
// We ignore any number (they count toward the request-line limit).
inline parse_status skip_empty_lines(const char*& p, const char* end) noexcept {
    if (p != end && static_cast<unsigned char>(*p) > '\r') return parse_status::complete;  // nearly always
    while (p != end && (*p == '\r' || *p == '\n')) {
        parse_status s = expect_crlf(p, end);
        if (s != parse_status::complete) return s;
    }
    return p == end ? parse_status::incomplete : parse_status::complete;
}

// "HTTP/" DIGIT "." DIGIT CRLF (RFC 9112 §2.3). Any prefix of a valid version is incomplete.
inline parse_status parse_version(const char*& p, const char* end, request_head& h) noexcept {
    // The common case, in two word compares: "HTTP/1." and its CRLF, with the digit between
    // (the mask keeps the first seven bytes, in either byte order).
    constexpr std::uint64_t seven = little_endian ? 0x00ffffffffffffffull : 0xffffffffffffff00ull;
    if (end - p >= 10 && (load8(p) & seven) == (load8("HTTP/1.0") & seven) && load2(p + 8) == load2("\r\n") &&
        is_digit(static_cast<unsigned char>(p[7]))) {
        h.version_minor = p[7] == '0' ? 0 : 1;
        p += 10;
        return parse_status::complete;
    }
    static constexpr char shape[] = "HTTP/0.0\r\n";  // '0' stands for any digit
    std::size_t have = static_cast<std::size_t>(end - p) < 10 ? static_cast<std::size_t>(end - p) : 10;
    for (std::size_t i = 0; i < have; ++i) {
        bool ok = shape[i] == '0' ? is_digit(static_cast<unsigned char>(p[i])) : p[i] == shape[i];
        if (!ok) return parse_status::bad_request;
    }
    if (have < 10) return parse_status::incomplete;
    if (p[5] != '1') return parse_status::version_not_supported;
    h.version_minor = p[7] == '0' ? 0 : 1;
    p += 10;
    return parse_status::complete;
}

// The method token from p, its end returned and its value in verb. "GET " is one word
// compare instead of the token scan and the name switch (methods are case-sensitive,
// RFC 9110 §9.1, so the compare is exact).
inline const char* scan_method(const char* p, const char* end, method& verb) noexcept {
    if (end - p >= 4 && load4(p) == load4("GET ")) {
        verb = method::get;
        return p + 3;
    }
    const char* e = scan_tchars(p, end);
    verb = method_from(std::string_view(p, static_cast<std::size_t>(e - p)));
    return e;
}

// What a request line still open where its window ends is answered (parse_head): 414 for a
// long target, but 501 for a method that fills the window (RFC 9112 §3: longer than any
// implemented) and 400 for empty lines that do (no request line at all, so no URI). Read
// again from the start: this is the rare path, and the window alone decides it. Not inline:
// inlined, it moved the 715-byte request's count by +6 instructions (callgrind); called, +3.
SKIFF_NOINLINE inline parse_status over_the_line_limit(const char* p, const char* line_end) noexcept {
    if (skip_empty_lines(p, line_end) != parse_status::complete) return parse_status::bad_request;
    if (scan_tchars(p, line_end) == line_end) return parse_status::not_implemented;
    return parse_status::uri_too_long;
}

// method SP request-target SP HTTP-version CRLF (RFC 9112 §3), p advanced past it.
inline parse_status parse_request_line(const char*& pos, const char* end, request_head& h) noexcept {
    const char* p = pos;
    const char* m = p;
    p = scan_method(p, end, h.verb);
    if (p == end) return parse_status::incomplete;
    if (p == m || *p != ' ') return parse_status::bad_request;
    h.method_name = std::string_view(m, static_cast<std::size_t>(p - m));
    const char* t = ++p;
    p = scan_path_chars(p, end);  // the path's end: the target split costs no second scan
    const char* path_end = p;
    if (p != end && *p == '?') p = scan_target_chars(p + 1, end);
    if (p == end) return parse_status::incomplete;
    if (p == t || *p != ' ') return parse_status::bad_request;
    h.target = std::string_view(t, static_cast<std::size_t>(p - t));
    ++p;
    parse_status s = parse_version(p, end, h);
    if (s != parse_status::complete) return s;
    if (!split_target(h, static_cast<std::size_t>(path_end - t))) return parse_status::bad_request;
    pos = p;
    return parse_status::complete;
}

} // namespace detail

// Parses the request line and header section at the start of buf[0, len).
// complete: `consumed` is the head's length (through the empty line) and h is filled, with
//           h.fields pointing at fields[0, h.field_count).
// incomplete: more bytes are needed and no limit is exceeded yet.
// otherwise: the error status to answer; the connection must close after answering.
// Allocates nothing; reads nothing outside buf[0, len). h is meaningful only when complete.
inline parse_result parse_head(const char* buf, std::size_t len, request_head& h, header_field* fields,
                               const parse_limits& limits) noexcept {
    const char* p = buf;
    // Only what a successful parse might not set is reset; the request line sets method,
    // target, path, query and version, check_fields() framing, length, keep-alive and Expect.
    h.fields = fields;
    h.host = {};
    h.body = {};
    // The request line, any empty lines before it included, must end (CRLF too) within
    // max_request_line + 2 bytes. Only that window is parsed, so the answer depends on those
    // bytes alone and any split of the stream gives the same one: a line still open where
    // the window ends is 414 (or 501 or 400: over_the_line_limit), whatever bytes follow.
    std::size_t window = detail::saturating_add(limits.max_request_line, 2);
    const char* line_end = detail::cap(p, buf + len, window);
    parse_status s = detail::skip_empty_lines(p, line_end);
    if (s == parse_status::complete) s = detail::parse_request_line(p, line_end, h);
    if (s != parse_status::complete) {
        if (s == parse_status::incomplete && len >= window) s = detail::over_the_line_limit(buf, line_end);
        return {s, 0};
    }
    detail::field_facts facts;
    facts.host_from_target = !h.host.empty();
    s = detail::parse_fields(p, buf + len, h, fields, limits, facts);
    if (s == parse_status::complete) s = detail::check_fields(h, facts);
    if (SKIFF_UNLIKELY(h.verb == method::connect) && s == parse_status::complete) s = detail::check_connect(h);
    return {s, s == parse_status::complete ? static_cast<std::size_t>(p - buf) : 0};
}

} // namespace skiff

#endif // SKIFF_HTTP_HEAD_PARSER_HPP
