// The server's side of the WebSocket opening handshake (RFC 6455 §4.2): the checks on the
// client's request (§4.2.1), the Sec-WebSocket-Accept key, the choice of a subprotocol, and
// the bytes of the 101 answer (§4.2.2).
//
// Not here: routing, the application's own checks (a token, a cookie), writing the answer or
// taking the connection over (the taker behind the door does that).
// Extensions (Sec-WebSocket-Extensions, such as permessage-deflate) are always declined by
// leaving them out of the answer, which §9.1 allows: skiff has no compression library and no
// runtime dependency. So the frame reader rejects any RSV bit.
// Invariants: nothing allocates but append_accept_head's output; a verdict other than accept
// names the status to answer with (and 426 must carry the version field, §4.4, and Upgrade,
// RFC 9110 §15.5.22).
#ifndef SKIFF_WEBSOCKET_HANDSHAKE_HPP
#define SKIFF_WEBSOCKET_HANDSHAKE_HPP

#include "skiff/detail/ascii.hpp"
#include "skiff/http/fields.hpp"
#include "skiff/http/method.hpp"
#include "skiff/http/request.hpp"
#include "skiff/websocket/base64.hpp"
#include "skiff/websocket/sha1.hpp"

#include <array>        // std::array for the accept key
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint8_t
#include <string>       // std::string, what the 101 head is appended to
#include <string_view>  // std::string_view

namespace skiff::detail {

// Whether any line of field `name` lists `token` (case-insensitively) in its comma list.
inline bool lists_token(const request& req, std::string_view name, std::string_view token) noexcept {
    bool found = false;
    for (std::string_view line : req.header_values(name)) {
        for_each_list_item(line, [&](std::string_view item) {
            found = iequals(item, token);
            return !found;
        });
        if (found) return true;
    }
    return false;
}

// Whether field `name` is on exactly one line: the handshake's key and version may not be
// repeated (§11.3.1, §11.3.5), and a repeated one must not be read by its first line alone,
// which would answer "8" then "13" otherwise than "13" then "8" (RFC 9110 §5.3).
inline bool one_line_of(const request& req, std::string_view name) noexcept {
    std::size_t lines = 0;
    for (std::string_view line : req.header_values(name)) {
        (void)line;
        ++lines;
    }
    return lines == 1;
}

// One Sec-WebSocket-Key whose value is the base64 of 16 bytes (§4.1 item 7, §4.2.1 item 5).
inline bool good_websocket_key(const request& req) noexcept {
    std::uint8_t nonce[16];
    std::size_t size = 0;
    return one_line_of(req, "sec-websocket-key") && base64_decode(req.header("sec-websocket-key"), nonce, 16, size) &&
           size == 16;
}

} // namespace skiff::detail

namespace skiff::websocket {

// Why a request is (not) an acceptable opening handshake, in the order they are checked.
enum class handshake_verdict : std::uint8_t {
    accept,
    not_get,                // §4.1 item 2: the method must be GET (405, with Allow: GET)
    not_http11,             // HTTP/1.1 at least (400)
    no_host,                // §4.2.1 item 2 (400)
    no_upgrade_websocket,   // Upgrade must list the token "websocket" (400)
    no_connection_upgrade,  // Connection must list the token "upgrade" (400)
    bad_version,            // one Sec-WebSocket-Version line, 13 (426, with the version and Upgrade)
    bad_key,                // one Sec-WebSocket-Key, base64 of exactly 16 bytes (400)
    head_request,           // a HEAD, answered as its GET would be, short of switching (400)
};

struct handshake_check {
    handshake_verdict verdict = handshake_verdict::accept;
    int status = 101;      // what to answer: 101 when accepted, else the rejection's status
    std::string_view key;  // accepted: the client's key, for accept_key()
};

// The version this server speaks, and the field a 426 answer carries (§4.4).
inline constexpr std::string_view version = "13";
inline constexpr std::string_view version_field_name = "Sec-WebSocket-Version";

// Checks req as an opening handshake (§4.2.1). Allocates nothing; the key views into req.
// A HEAD (which the router gives a GET route) gets its GET's answer for a failed check, and
// 400 where its GET would switch: a HEAD cannot (RFC 9110 §9.3.2 asks GET's status, no body).
inline handshake_check check_handshake(const request& req) noexcept {
    using v = handshake_verdict;
    if (req.verb() != method::get && req.verb() != method::head) return {v::not_get, 405, {}};
    if (req.version_minor() < 1) return {v::not_http11, 400, {}};
    if (req.host().empty()) return {v::no_host, 400, {}};
    if (!detail::lists_token(req, "upgrade", "websocket")) return {v::no_upgrade_websocket, 400, {}};
    if (!detail::lists_token(req, "connection", "upgrade")) return {v::no_connection_upgrade, 400, {}};
    if (!detail::one_line_of(req, "sec-websocket-version") || req.header("sec-websocket-version") != version)
        return {v::bad_version, 426, {}};
    if (!detail::good_websocket_key(req)) return {v::bad_key, 400, {}};
    if (req.verb() == method::head) return {v::head_request, 400, {}};
    return {v::accept, 101, req.header("sec-websocket-key")};
}

// §4.2.2 item 5.4: base64(SHA-1(key + the GUID)), 28 characters.
using accept_key_text = std::array<char, 28>;
inline accept_key_text accept_key(std::string_view key) noexcept {
    detail::sha1 hash;
    hash.update(key);
    hash.update("258EAFA5-E914-47DA-95CA-C5AB0DC85B11");
    auto digest = hash.finish();
    accept_key_text out{};
    detail::base64_encode(digest.data(), digest.size(), out.data());
    return out;
}

// Whether the client offered subprotocol `name` in Sec-WebSocket-Protocol (§4.1 item 10:
// compared exactly; the values are tokens, listed over one or more lines).
inline bool offers_protocol(const request& req, std::string_view name) noexcept {
    bool found = false;
    for (std::string_view line : req.header_values("sec-websocket-protocol")) {
        detail::for_each_list_item(line, [&](std::string_view item) {
            found = item == name;
            return !found;
        });
        if (found) return true;
    }
    return false;
}

// The first of `supported` (the application's order of preference) that the client offered,
// or an empty view for none, which answers with no subprotocol (§4.2.2 item 5.4). The view is
// an element of supported.
template <class Range>
std::string_view choose_protocol(const request& req, const Range& supported) noexcept {
    for (std::string_view name : supported)
        if (!name.empty() && offers_protocol(req, name)) return name;
    return {};
}

// Appends the 101 answer's head (§4.2.2 item 5) for an accepted key: Upgrade, Connection,
// Sec-WebSocket-Accept, Sec-WebSocket-Protocol when `protocol` is not empty, then `fields`
// (whole field lines, each ending in CRLF: Date, Set-Cookie...) and the empty line. No
// Sec-WebSocket-Extensions: every extension is declined. Returns false, appending nothing,
// when protocol is not a token (it would let a caller's string inject fields).
inline bool append_accept_head(std::string& out, std::string_view key, std::string_view protocol = {},
                               std::string_view fields = {}) {
    for (char c : protocol)
        if (!detail::is_tchar(c)) return false;
    accept_key_text accept = accept_key(key);
    out.append("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Accept: ");
    out.append(accept.data(), accept.size());
    out.append("\r\n");
    if (!protocol.empty()) {
        out.append("Sec-WebSocket-Protocol: ");
        out.append(protocol);
        out.append("\r\n");
    }
    out.append(fields);
    out.append("\r\n");
    return true;
}

} // namespace skiff::websocket

#endif // SKIFF_WEBSOCKET_HANDSHAKE_HPP
