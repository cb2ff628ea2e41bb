// Server frames (RFC 6455 §5.2), never masked (§5.1: a server must not mask): the header for
// any payload length, and whole data, fragment, close, ping and pong frames appended to a
// byte string.
//
// Not here: queueing, backpressure, when to send (the taker that owns the connection).
// Invariants: lengths use the minimal encoding (§5.2: 7 bits up to 125, then 16, then 64);
// control frames never pass 125 bytes: a longer ping or pong payload, or close reason, is cut
// (a reason at a UTF-8 character boundary, so it stays valid text).
#ifndef SKIFF_WEBSOCKET_FRAME_WRITER_HPP
#define SKIFF_WEBSOCKET_FRAME_WRITER_HPP

#include "skiff/websocket/frame.hpp"

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t, std::uint16_t, std::uint8_t
#include <string>       // std::string, what frames are appended to
#include <string_view>  // std::string_view

namespace skiff::detail {

// reason cut to at most `room` bytes, never inside a UTF-8 character.
constexpr std::string_view cut_utf8(std::string_view reason, std::size_t room) noexcept {
    if (reason.size() <= room) return reason;
    std::size_t n = room;
    while (n > 0 && (static_cast<std::uint8_t>(reason[n]) & 0xc0) == 0x80) --n;  // reason[n] continues a character
    return reason.substr(0, n);
}

} // namespace skiff::detail

namespace skiff::websocket {

enum class fin_bit : std::uint8_t {
    more,   // a fragment: more frames of this message follow
    final,  // the message's last (or only) frame
};

// A frame's header, up to 10 bytes, by value: so a broadcast can send one header and one
// payload to many connections without copying the payload into each.
struct frame_head {
    char bytes[10] = {};
    std::uint8_t size = 0;
    std::string_view view() const noexcept { return {bytes, size}; }
};

// The header of an unmasked frame with `length` bytes of payload.
constexpr frame_head make_frame_head(opcode op, fin_bit fin, std::uint64_t length) noexcept {
    frame_head h;
    h.bytes[0] = static_cast<char>((fin == fin_bit::final ? 0x80 : 0x00) | static_cast<std::uint8_t>(op));
    if (length < 126) {
        h.bytes[1] = static_cast<char>(length);
        h.size = 2;
        return h;
    }
    int width = length <= 0xffff ? 2 : 8;
    h.bytes[1] = static_cast<char>(width == 2 ? 126 : 127);
    for (int i = 0; i < width; ++i) h.bytes[2 + i] = static_cast<char>(length >> (8 * (width - 1 - i)));
    h.size = static_cast<std::uint8_t>(2 + width);
    return h;
}

// One frame: header and payload. For a whole message, op is text or binary and fin final;
// for a fragmented one, the first frame has its type and fin_bit::more, the others
// opcode::continuation, the last fin_bit::final.
inline void append_frame(std::string& out, opcode op, std::string_view payload, fin_bit fin = fin_bit::final) {
    out.append(make_frame_head(op, fin, payload.size()).view());
    out.append(payload);
}

inline void append_ping(std::string& out, std::string_view payload) {
    append_frame(out, opcode::ping, payload.substr(0, max_control_payload));
}

// The answer to a ping: the same payload (§5.5.3).
inline void append_pong(std::string& out, std::string_view payload) {
    append_frame(out, opcode::pong, payload.substr(0, max_control_payload));
}

// A close frame (§5.5.1): the code in network order, then the reason (cut to 123 bytes).
// no_status and abnormal must never be sent (§7.4.1): with either, the frame has no payload,
// which the peer reads as no_status.
inline void append_close(std::string& out, close_code code, std::string_view reason = {}) {
    if (code == close_code::no_status || code == close_code::abnormal) {
        append_frame(out, opcode::close, {});
        return;
    }
    std::string_view cut = detail::cut_utf8(reason, max_close_reason);
    auto value = static_cast<std::uint16_t>(code);
    out.append(make_frame_head(opcode::close, fin_bit::final, 2 + cut.size()).view());
    out.push_back(static_cast<char>(value >> 8));
    out.push_back(static_cast<char>(value & 0xff));
    out.append(cut);
}

} // namespace skiff::websocket

#endif // SKIFF_WEBSOCKET_FRAME_WRITER_HPP
