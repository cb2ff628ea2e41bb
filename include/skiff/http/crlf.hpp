// The line ending of the request head: CRLF, as a parse step. One rule for the request line,
// the empty lines before it, each field line and the end of the section (RFC 9112 §2.2: a
// bare LF or bare CR is rejected here, a choice that closes a desync hole).
//
// Not here: the chunked coding's line ends, which its state machine reads byte by byte
// (chunked.hpp). Invariant: reads at most the two bytes at p, never past end.
#ifndef SKIFF_HTTP_CRLF_HPP
#define SKIFF_HTTP_CRLF_HPP

#include "skiff/detail/bytes.hpp"
#include "skiff/http/parse_status.hpp"

namespace skiff::detail {

// CRLF at p: complete (p advanced), incomplete, or bad_request for anything else.
inline parse_status expect_crlf(const char*& p, const char* end) noexcept {
    if (end - p >= 2 && load2(p) == load2("\r\n")) {  // the common case, in one compare
        p += 2;
        return parse_status::complete;
    }
    if (p == end) return parse_status::incomplete;
    if (*p != '\r') return parse_status::bad_request;
    if (p + 1 == end) return parse_status::incomplete;
    if (p[1] != '\n') return parse_status::bad_request;
    p += 2;
    return parse_status::complete;
}

} // namespace skiff::detail

#endif // SKIFF_HTTP_CRLF_HPP
