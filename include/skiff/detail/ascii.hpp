// Character classes of RFC 9110/9112 as 256-entry tables, and case-insensitive comparison.
// Pure and constexpr: every table is checked against its grammar, byte by byte, in tests.
#ifndef SKIFF_DETAIL_ASCII_HPP
#define SKIFF_DETAIL_ASCII_HPP

#include <array>        // std::array for the tables
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t for word compares
#include <cstring>      // std::memcpy for unaligned word loads
#include <string_view>  // std::string_view

namespace skiff::detail {

using char_table = std::array<bool, 256>;

constexpr bool is_alpha(unsigned c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
constexpr bool is_digit(unsigned c) { return c >= '0' && c <= '9'; }

// RFC 9110 §5.6.2: tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." /
//                          "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA
constexpr bool is_tchar_slow(unsigned c) {
    if (is_alpha(c) || is_digit(c)) return true;
    for (char t : std::string_view("!#$%&'*+-.^_`|~"))
        if (c == static_cast<unsigned char>(t)) return true;
    return false;
}

// RFC 9110 §5.5: field-vchar = VCHAR / obs-text, plus SP and HTAB inside a value.
// Everything else below 0x20, and DEL, is rejected (NUL and bare CR/LF are smuggling tools).
constexpr bool is_field_char_slow(unsigned c) { return c == '\t' || (c >= 0x20 && c != 0x7f); }

// Request-target bytes: visible ASCII except '#' (a fragment is never sent, RFC 9110 §7.1).
// Bytes above 0x7e are rejected: a client must percent-encode them (RFC 3986 §2.1).
constexpr bool is_target_char_slow(unsigned c) { return c > 0x20 && c < 0x7f && c != '#'; }

// reg-name bytes but pct-encoded (RFC 3986 §3.2.2): unreserved and sub-delims. A Host made
// only of these needs no further look; ':', '[', ']' and '%' send it to http/host.hpp.
constexpr bool is_reg_name_char_slow(unsigned c) {
    if (is_alpha(c) || is_digit(c)) return true;
    for (char t : std::string_view("-._~!$&'()*+,;="))
        if (c == static_cast<unsigned char>(t)) return true;
    return false;
}

template <class Pred>
constexpr char_table make_table(Pred pred) {
    char_table t{};
    for (unsigned c = 0; c < 256; ++c) t[c] = pred(c);
    return t;
}

inline constexpr char_table tchar_table = make_table(is_tchar_slow);
inline constexpr char_table field_char_table = make_table(is_field_char_slow);
inline constexpr char_table target_char_table = make_table(is_target_char_slow);
inline constexpr char_table reg_name_char_table = make_table(is_reg_name_char_slow);

constexpr bool is_tchar(char c) { return tchar_table[static_cast<unsigned char>(c)]; }
constexpr bool is_field_char(char c) { return field_char_table[static_cast<unsigned char>(c)]; }
constexpr bool is_target_char(char c) { return target_char_table[static_cast<unsigned char>(c)]; }
constexpr bool is_reg_name_char(char c) { return reg_name_char_table[static_cast<unsigned char>(c)]; }

constexpr char to_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }

// ASCII case-insensitive equality; `lower` must already be lower case.
constexpr bool iequals_lower(std::string_view s, std::string_view lower) {
    if (s.size() != lower.size()) return false;
    for (std::size_t i = 0; i < s.size(); ++i)
        if (to_lower(s[i]) != lower[i]) return false;
    return true;
}

// The hot-path form of iequals_lower, eight bytes at a time: each byte of s with the 0x20 bit
// set must equal the byte of lower. That is exact for letters. For the '-', digits, ':' and
// '/' of the literals skiff compares, it would also accept a control byte (0x0D for '-',
// say), so s must hold none: it is a token or a field value, already checked for controls.
// Every byte of `lower` must have the 0x20 bit (lower-case letters, digits, "-:/").
inline bool iequals_token(std::string_view s, std::string_view lower) noexcept {
    if (s.size() != lower.size()) return false;
    std::size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) {
        std::uint64_t a, b;
        std::memcpy(&a, s.data() + i, 8);
        std::memcpy(&b, lower.data() + i, 8);
        if ((a | 0x2020202020202020u) != b) return false;
    }
    for (; i < s.size(); ++i)
        if ((s[i] | 0x20) != lower[i]) return false;
    return true;
}

constexpr bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (to_lower(a[i]) != to_lower(b[i])) return false;
    return true;
}

// Value of a hex digit, or -1.
constexpr int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

} // namespace skiff::detail

#endif // SKIFF_DETAIL_ASCII_HPP
