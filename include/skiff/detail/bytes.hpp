// Word-at-a-time byte helpers for short strings: unaligned loads, an equality test and the
// search for a '/', each without a library call, for the router's segment compares.
//
// Not here: character classes (ascii.hpp) or the parser's run scanners (scan.hpp).
// Invariants: every function reads only inside the ranges it is given (the word loads
// overlap inward, they never run past an end), so no padding is assumed.
#ifndef SKIFF_DETAIL_BYTES_HPP
#define SKIFF_DETAIL_BYTES_HPP

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint64_t, std::uint32_t, std::uint16_t
#include <cstring>  // std::memcpy for word loads

namespace skiff::detail {

inline std::uint64_t load8(const char* p) noexcept {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    return w;
}
inline std::uint16_t load2(const char* p) noexcept {
    std::uint16_t w;
    std::memcpy(&w, p, 2);
    return w;
}
inline std::uint32_t load4(const char* p) noexcept {
    std::uint32_t w;
    std::memcpy(&w, p, 4);
    return w;
}

// a[0, n) == b[0, n) for the short strings of routes, without a call to memcmp: overlapping
// loads from both ends (8 or 4 bytes), never reading outside either string.
inline bool same_bytes(const char* a, const char* b, std::size_t n) noexcept {
    if (n >= 8) {
        for (std::size_t i = 0; i + 8 < n; i += 8)
            if (load8(a + i) != load8(b + i)) return false;
        return load8(a + n - 8) == load8(b + n - 8);
    }
    if (n >= 4) return load4(a) == load4(b) && load4(a + n - 4) == load4(b + n - 4);
    for (std::size_t i = 0; i < n; ++i)
        if (a[i] != b[i]) return false;
    return true;
}

inline constexpr bool little_endian = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;

// The first '/' in [p, end), or end. Eight bytes a step while eight remain: a zero byte of
// w ^ "////////" marks a slash, and the lowest one found by (x - 0x01..) & ~x & 0x80.. is
// exact (a borrow only spoils bytes above it). Byte by byte for the rest.
inline const char* find_slash(const char* p, const char* end) noexcept {
    constexpr std::uint64_t ones = 0x0101010101010101ull;
    if constexpr (little_endian) {
        for (; end - p >= 8; p += 8) {
            std::uint64_t x = load8(p) ^ (ones * '/');
            std::uint64_t zero = (x - ones) & ~x & (ones << 7);
            if (zero != 0) return p + (__builtin_ctzll(zero) >> 3);
        }
    }
    while (p != end && *p != '/') ++p;
    return p;
}

} // namespace skiff::detail

#endif // SKIFF_DETAIL_BYTES_HPP
