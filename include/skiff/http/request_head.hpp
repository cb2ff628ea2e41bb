// What parsing a request head yields: its field lines and the facts the server acts on
// (method, target split into path and query, host, version, framing, keep-alive, Expect).
//
// Not here: how it is parsed (head_parser.hpp, fields.hpp, target.hpp) or what a handler may
// ask of it (request.hpp). Invariant: every string_view points into the buffer the head was
// parsed from, so a request_head is valid only while that buffer is unchanged.
#ifndef SKIFF_HTTP_REQUEST_HEAD_HPP
#define SKIFF_HTTP_REQUEST_HEAD_HPP

#include "skiff/http/method.hpp"

#include <cstdint>      // std::uint64_t, std::uint32_t, std::uint8_t
#include <string_view>  // std::string_view

namespace skiff {

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
    std::string_view body;     // set once the whole message is in (message_parser)
};

} // namespace skiff

#endif // SKIFF_HTTP_REQUEST_HEAD_HPP
