// Base64 (RFC 4648 §4, the standard alphabet with '=' padding), as the WebSocket handshake
// needs it: encoding the 20-byte SHA-1 of the accept key, and checking that a client's
// Sec-WebSocket-Key decodes to exactly 16 bytes (RFC 6455 §4.2.1 item 5).
//
// Not here: the URL-safe alphabet, line breaks, whitespace, decoding without padding.
// Decoding is strict (RFC 4648 §3.3, §3.5): any byte outside the alphabet, padding anywhere but
// at the end, a length that is not a multiple of 4, and non-zero bits under the padding are
// errors, so each byte string has exactly one accepted encoding.
#ifndef SKIFF_WEBSOCKET_BASE64_HPP
#define SKIFF_WEBSOCKET_BASE64_HPP

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint32_t, std::uint8_t
#include <string_view>  // std::string_view

namespace skiff::detail {

inline constexpr char base64_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Characters needed for n bytes: 4 for every 3, the last group padded.
constexpr std::size_t base64_size(std::size_t n) noexcept { return (n + 2) / 3 * 4; }

// Writes the encoding of in[0, n) to out[0, base64_size(n)); returns that size.
inline std::size_t base64_encode(const std::uint8_t* in, std::size_t n, char* out) noexcept {
    char* o = out;
    for (std::size_t i = 0; i < n; i += 3) {
        std::size_t have = n - i < 3 ? n - i : 3;
        std::uint32_t group = std::uint32_t{in[i]} << 16;
        if (have > 1) group |= std::uint32_t{in[i + 1]} << 8;
        if (have > 2) group |= in[i + 2];
        *o++ = base64_alphabet[group >> 18];
        *o++ = base64_alphabet[(group >> 12) & 63];
        *o++ = have > 1 ? base64_alphabet[(group >> 6) & 63] : '=';
        *o++ = have > 2 ? base64_alphabet[group & 63] : '=';
    }
    return static_cast<std::size_t>(o - out);
}

// The 6-bit value of an alphabet character, or -1.
constexpr int base64_value(char c) noexcept {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

// Decodes `in` into out[0, size) when it is a canonical encoding of at most `room` bytes;
// false otherwise (out's contents are then unspecified). Allocates nothing.
inline bool base64_decode(std::string_view in, std::uint8_t* out, std::size_t room, std::size_t& size) noexcept {
    if (in.size() % 4 != 0) return false;
    std::size_t pad = 0;
    while (pad < 2 && pad < in.size() && in[in.size() - 1 - pad] == '=') ++pad;
    std::size_t n = in.size() / 4 * 3 - pad;
    if (n > room) return false;
    std::uint32_t group = 0;
    for (std::size_t i = 0; i < in.size() - pad; ++i) {
        int v = base64_value(in[i]);
        if (v < 0) return false;
        group = group << 6 | static_cast<std::uint32_t>(v);
        if (i % 4 == 3) {
            out[i / 4 * 3] = static_cast<std::uint8_t>(group >> 16);
            out[i / 4 * 3 + 1] = static_cast<std::uint8_t>(group >> 8);
            out[i / 4 * 3 + 2] = static_cast<std::uint8_t>(group);
        }
    }
    size = n;
    if (pad == 0) return true;
    // The last group: 2 characters (12 bits, 4 under the padding) or 3 (18 bits, 2 under it).
    std::size_t at = in.size() / 4 * 3 - 3;
    std::uint32_t low = pad == 2 ? (group & 15) : (group & 3);
    if (low != 0) return false;  // §3.5: non-canonical
    group >>= pad == 2 ? 4 : 2;
    if (pad == 2) out[at] = static_cast<std::uint8_t>(group);
    else {
        out[at] = static_cast<std::uint8_t>(group >> 8);
        out[at + 1] = static_cast<std::uint8_t>(group);
    }
    return true;
}

} // namespace skiff::detail

#endif // SKIFF_WEBSOCKET_BASE64_HPP
