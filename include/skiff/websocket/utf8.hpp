// Incremental UTF-8 validation (RFC 3629 §4), for WebSocket text messages and close reasons
// (RFC 6455 §8.1): bytes may come in pieces split anywhere, even inside a character, and the
// first byte that no valid text could continue with is reported at once, so a connection can
// fail fast (the Autobahn testsuite's case group 6 checks that it does).
//
// Not here: decoding to code points, replacement of bad bytes, normalisation.
// Invariant: state_ says what the next byte must be; `ready` means the bytes so far are whole
// characters. Overlong forms, surrogates (U+D800-U+DFFF) and code points past U+10FFFF are
// rejected by the ranges of RFC 3629's table, checked on the byte after the lead.
#ifndef SKIFF_WEBSOCKET_UTF8_HPP
#define SKIFF_WEBSOCKET_UTF8_HPP

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint64_t, std::uint8_t
#include <cstring>  // std::memcpy for the word loads of the ASCII run

namespace skiff::detail {

class utf8_validator {
public:
    // false from the first byte of p[0, n) that makes the text invalid; stays false afterwards.
    bool feed(const char* p, std::size_t n) noexcept {
        const char* end = p + n;
        while (p != end && state_ != state::invalid) {
            if (state_ == state::ready) p = skip_ascii(p, end);
            if (p != end) state_ = next(state_, static_cast<std::uint8_t>(*p++));
        }
        return state_ != state::invalid;
    }

    // The text so far ends with a whole character (also false once invalid).
    bool complete() const noexcept { return state_ == state::ready; }
    bool failed() const noexcept { return state_ == state::invalid; }
    void reset() noexcept { state_ = state::ready; }

private:
    enum class state : std::uint8_t {
        ready,      // between characters
        tail1,      // one continuation byte (80-BF) left
        tail2,
        tail3,
        after_e0,   // E0: A0-BF next (no overlong three-byte form)
        after_ed,   // ED: 80-9F next (no surrogates)
        after_f0,   // F0: 90-BF next (no overlong four-byte form)
        after_f4,   // F4: 80-8F next (nothing past U+10FFFF)
        invalid,
    };

    // Text is mostly ASCII: eight bytes a step while none has its high bit, then byte by byte.
    static const char* skip_ascii(const char* p, const char* end) noexcept {
        for (; end - p >= 8; p += 8) {
            std::uint64_t w;
            std::memcpy(&w, p, 8);
            if ((w & 0x8080808080808080ull) != 0) break;
        }
        while (p != end && static_cast<std::uint8_t>(*p) < 0x80) ++p;
        return p;
    }

    static state lead(std::uint8_t b) noexcept {
        if (b < 0x80) return state::ready;
        if (b < 0xc2) return state::invalid;  // a continuation byte, or C0/C1 (overlong)
        if (b < 0xe0) return state::tail1;
        if (b == 0xe0) return state::after_e0;
        if (b == 0xed) return state::after_ed;
        if (b < 0xf0) return state::tail2;
        if (b == 0xf0) return state::after_f0;
        if (b < 0xf4) return state::tail3;
        if (b == 0xf4) return state::after_f4;
        return state::invalid;  // F5-FF never appear
    }

    static state next(state s, std::uint8_t b) noexcept {
        bool tail = b >= 0x80 && b <= 0xbf;
        switch (s) {
        case state::ready: return lead(b);
        case state::tail1: return tail ? state::ready : state::invalid;
        case state::tail2: return tail ? state::tail1 : state::invalid;
        case state::tail3: return tail ? state::tail2 : state::invalid;
        case state::after_e0: return b >= 0xa0 && b <= 0xbf ? state::tail1 : state::invalid;
        case state::after_ed: return b >= 0x80 && b <= 0x9f ? state::tail1 : state::invalid;
        case state::after_f0: return b >= 0x90 && b <= 0xbf ? state::tail2 : state::invalid;
        case state::after_f4: return b >= 0x80 && b <= 0x8f ? state::tail2 : state::invalid;
        default: return state::invalid;
        }
    }

    state state_ = state::ready;
};

} // namespace skiff::detail

#endif // SKIFF_WEBSOCKET_UTF8_HPP
