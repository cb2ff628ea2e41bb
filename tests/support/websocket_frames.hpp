// Client frames built byte by byte from RFC 6455 §5.2's layout, not with frame_writer.hpp, so
// that the reader is never checked against the writer's own mistakes.
#ifndef SKIFF_TESTS_SUPPORT_WEBSOCKET_FRAMES_HPP
#define SKIFF_TESTS_SUPPORT_WEBSOCKET_FRAMES_HPP

#if __has_include(<skiff/websocket/frame.hpp>)
#include <skiff/websocket/frame.hpp>
#else
#include <skiff/skiff.hpp>  // the single-header build: websocket/ is in it
#endif

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint8_t, std::uint64_t
#include <string>       // std::string
#include <string_view>  // std::string_view

namespace skiff_test::ws {

using skiff::websocket::opcode;

inline constexpr std::uint8_t fin = 0x80;
inline constexpr std::uint8_t rsv1 = 0x40, rsv2 = 0x20, rsv3 = 0x10;

// How the length is written: the shortest form, or (allowed, §5.2) a longer one.
enum class length_form : std::uint8_t { minimal, with_16, with_64 };
enum class masking : std::uint8_t { masked, unmasked };

struct frame_spec {
    std::uint8_t first = fin;  // FIN, RSV and opcode bits
    length_form form = length_form::minimal;
    masking mask = masking::masked;
    std::uint8_t key[4] = {0x37, 0xfa, 0x21, 0x3d};  // RFC 6455 §5.7's example key
};

// A client frame: first byte, MASK and length, key, payload XORed with the key.
inline std::string client_frame(const frame_spec& s, std::string_view payload) {
    std::string f(1, static_cast<char>(s.first));
    std::uint64_t n = payload.size();
    char mask_bit = s.mask == masking::masked ? char(0x80) : char(0);
    length_form form = s.form;
    if (form == length_form::minimal) form = n < 126 ? form : n <= 0xffff ? length_form::with_16 : length_form::with_64;
    if (form == length_form::minimal) f += static_cast<char>(mask_bit | static_cast<char>(n));
    int width = form == length_form::with_16 ? 2 : form == length_form::with_64 ? 8 : 0;
    if (width) f += static_cast<char>(mask_bit | (width == 2 ? 126 : 127));
    for (int i = width - 1; i >= 0; --i) f += static_cast<char>(n >> (8 * i));
    if (s.mask == masking::masked) f.append(reinterpret_cast<const char*>(s.key), 4);
    for (std::size_t i = 0; i < payload.size(); ++i)
        f += s.mask == masking::masked ? static_cast<char>(payload[i] ^ static_cast<char>(s.key[i % 4])) : payload[i];
    return f;
}

inline std::string frame(opcode op, std::string_view payload, bool final = true) {
    frame_spec s;
    s.first = static_cast<std::uint8_t>((final ? fin : 0) | static_cast<std::uint8_t>(op));
    return client_frame(s, payload);
}
inline std::string text(std::string_view p, bool final = true) { return frame(opcode::text, p, final); }
inline std::string binary(std::string_view p, bool final = true) { return frame(opcode::binary, p, final); }
inline std::string cont(std::string_view p, bool final = true) { return frame(opcode::continuation, p, final); }
inline std::string ping(std::string_view p) { return frame(opcode::ping, p); }
inline std::string pong(std::string_view p) { return frame(opcode::pong, p); }
inline std::string close_frame(std::uint16_t code, std::string_view reason = {}) {
    std::string p{static_cast<char>(code >> 8), static_cast<char>(code & 0xff)};
    return frame(opcode::close, p.append(reason));
}

} // namespace skiff_test::ws

#endif // SKIFF_TESTS_SUPPORT_WEBSOCKET_FRAMES_HPP
