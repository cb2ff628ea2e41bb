// The vocabulary of WebSocket framing (RFC 6455 §5.2, §7.4): opcodes, close codes and the
// limits the RFC fixes, shared by the reader, the assembler and the writer.
//
// Not here: reading or writing frames (frame_reader.hpp, frame_writer.hpp).
// Invariant: the enumerators' values are the wire values.
#ifndef SKIFF_WEBSOCKET_FRAME_HPP
#define SKIFF_WEBSOCKET_FRAME_HPP

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint8_t, std::uint16_t

namespace skiff::websocket {

// §5.2 and §11.8: 0x3-0x7 and 0xB-0xF are reserved (a frame with one fails the connection).
enum class opcode : std::uint8_t {
    continuation = 0x0,
    text = 0x1,
    binary = 0x2,
    close = 0x8,
    ping = 0x9,
    pong = 0xa,
};

// §5.5: control frames have the high bit of the opcode set.
constexpr bool is_control(opcode op) noexcept { return (static_cast<std::uint8_t>(op) & 0x8) != 0; }

// §7.4.1 and the IANA registry (§11.7). The codes a server sends, and the ones a client's
// close frame may carry; 1005 and 1006 only ever describe a close, they are never sent.
enum class close_code : std::uint16_t {
    normal = 1000,
    going_away = 1001,         // the server stops (stop() closes every WebSocket with it)
    protocol_error = 1002,     // a framing rule broken
    unsupported_data = 1003,
    no_status = 1005,          // a close frame with no payload
    abnormal = 1006,           // the connection went without a close frame
    invalid_payload = 1007,    // text (or a close reason) that is not UTF-8
    policy_violation = 1008,
    message_too_big = 1009,    // over the message limit
    extension_missing = 1010,
    internal_error = 1011,
};

// §5.5: a control frame's payload is at most 125 bytes (so its length fits the first byte).
inline constexpr std::size_t max_control_payload = 125;
// A close frame's reason fits in what is left after the two-byte code.
inline constexpr std::size_t max_close_reason = max_control_payload - 2;

// Whether a code received in a close frame is one an endpoint may send (§7.4.1, §7.4.2): the
// registered 1000-1003, 1007-1014 (1012-1014 registered with IANA after the RFC; the
// Autobahn testsuite's case 7.9 no longer lists them as invalid) and the private 3000-4999.
// 1004 is reserved, 1005, 1006 and 1015 must never be sent, the rest below 3000 is
// unassigned and 5000 and above is outside the range (case 7.13: closing with 1002 is right).
constexpr bool is_valid_close_code(std::uint16_t code) noexcept {
    if (code >= 1000 && code <= 1003) return true;
    if (code >= 1007 && code <= 1014) return true;
    return code >= 3000 && code <= 4999;
}

} // namespace skiff::websocket

#endif // SKIFF_WEBSOCKET_FRAME_HPP
