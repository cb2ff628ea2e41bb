// What a parse step may answer: the limits it enforces and the typed outcome it returns.
// Every limit is here because each one names the status it ends in (414, 431, 413), and that
// status is a parse_status; the head, body and chunk parsers all share the two.
//
// Not here: what a successful parse yields (request_head.hpp), or how a status is written on
// the wire (status.hpp). Invariant: every parse_status other than complete, incomplete and
// body_follows is an error with exactly one HTTP status, and the connection closes after
// answering it.
#ifndef SKIFF_HTTP_PARSE_STATUS_HPP
#define SKIFF_HTTP_PARSE_STATUS_HPP

#include <cstddef>   // std::size_t
#include <cstdint>   // std::uint64_t, std::uint8_t
#include <optional>  // std::optional: a status exists for errors only

namespace skiff {

// Whether the message parser stops after a head that declares a body, so that the caller can
// decide how the body is taken (a route that streams it: upload/upload.hpp) before any of it
// is buffered or refused by size.
enum class body_hold : std::uint8_t { never, ask };

// Every limit the parser enforces; the server's options start from these defaults.
struct parse_limits {
    std::size_t max_request_line = 8 * 1024;  // -> 414 URI Too Long
    std::size_t max_header_bytes = 8 * 1024;  // header section after the request line -> 431
    std::size_t max_headers = 100;            // field lines -> 431 (proxies and tracing add some)
    std::uint64_t max_body = 1024 * 1024;     // decoded body bytes -> 413
    body_hold hold_bodies = body_hold::never;
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
    body_follows,           // not an error: with body_hold::ask, the head is in and declares a body
};

// The status to answer for an error; nullopt for complete and incomplete, which answer
// nothing (there is no status 0 to send by mistake).
constexpr std::optional<int> http_status(parse_status s) noexcept {
    switch (s) {
    case parse_status::bad_request: return 400;
    case parse_status::content_too_large: return 413;
    case parse_status::uri_too_long: return 414;
    case parse_status::expectation_failed: return 417;
    case parse_status::fields_too_large: return 431;
    case parse_status::not_implemented: return 501;
    case parse_status::version_not_supported: return 505;
    case parse_status::complete:
    case parse_status::incomplete:
    case parse_status::body_follows: break;
    }
    return std::nullopt;
}

struct parse_result {
    parse_status status;
    std::size_t consumed;  // bytes of the head (or whole message) when complete, else 0
};

} // namespace skiff

#endif // SKIFF_HTTP_PARSE_STATUS_HPP
