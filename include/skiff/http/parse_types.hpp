// The vocabulary of request parsing: limits, the typed outcome, and the parsed head.
// Shared by the head parser, the chunked decoder, the framing step and the request object.
#ifndef SKIFF_HTTP_PARSE_TYPES_HPP
#define SKIFF_HTTP_PARSE_TYPES_HPP

#include "skiff/http/method.hpp"

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t, std::uint32_t, std::uint8_t
#include <string_view>  // std::string_view

namespace skiff {

// Every limit the parser enforces; the server copies these from its options.
struct parse_limits {
    std::size_t max_request_line = 8 * 1024;  // -> 414 URI Too Long
    std::size_t max_header_bytes = 8 * 1024;  // header section after the request line -> 431
    std::size_t max_headers = 64;             // field lines -> 431
    std::uint64_t max_body = 1024 * 1024;     // decoded body bytes -> 413
};

// The outcome of a parse step. Errors name the response status (http_status() maps them).
enum class parse_status : std::uint8_t {
    complete,
    incomplete,
    bad_request,            // 400
    content_too_large,      // 413
    uri_too_long,           // 414
    expectation_failed,     // 417
    fields_too_large,       // 431
    not_implemented,        // 501
    version_not_supported,  // 505
};

constexpr int http_status(parse_status s) {
    switch (s) {
    case parse_status::bad_request: return 400;
    case parse_status::content_too_large: return 413;
    case parse_status::uri_too_long: return 414;
    case parse_status::expectation_failed: return 417;
    case parse_status::fields_too_large: return 431;
    case parse_status::not_implemented: return 501;
    case parse_status::version_not_supported: return 505;
    default: return 0;
    }
}

struct parse_result {
    parse_status status;
    std::size_t consumed;  // bytes of the head (or whole message) when complete, else 0
};

struct header_field {
    std::string_view name;   // as sent; compare case-insensitively
    std::string_view value;  // leading and trailing whitespace removed
};

enum class body_framing : std::uint8_t { none, length, chunked };

// What parse_head() learns. Views point into the parsed buffer.
struct request_head {
    std::string_view method_name;
    std::string_view target;   // as sent
    std::string_view path;     // target up to '?' ("/" for an absolute-form target without one)
    std::string_view query;    // after '?', without it; empty when none
    std::string_view host;     // Host field, or the authority of an absolute-form target
    header_field* fields = nullptr;
    std::uint32_t field_count = 0;
    method verb = method::other;
    std::uint8_t version_minor = 1;  // 0 or 1: HTTP/1.x with x > 1 is treated as 1.1 (§2.3)
    body_framing framing = body_framing::none;
    bool keep_alive = true;
    bool expect_continue = false;
    std::uint64_t content_length = 0;
    std::string_view body;     // set once the whole message is in (request_parser)
};

} // namespace skiff

#endif // SKIFF_HTTP_PARSE_TYPES_HPP
