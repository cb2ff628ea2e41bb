// The parts a response's head is made of, below the response itself (response.hpp): the fixed
// text of a head, the number formatting and copies it is written with, the rules a field
// written must keep, the fields held or kept aside for a head written later, and the
// pre-composed 200 heads (ok_heads), refreshed once a second.
//
// It does not decide what a head says (response.hpp does) nor when it is written. Invariant:
// each block of ok_heads is the exact head text for its type and the current Date line.
#ifndef SKIFF_HTTP_RESPONSE_HEAD_HPP
#define SKIFF_HTTP_RESPONSE_HEAD_HPP

#include "skiff/config.hpp"
#include "skiff/detail/ascii.hpp"
#include "skiff/detail/date_cache.hpp"
#include "skiff/detail/scan.hpp"
#include "skiff/http/status.hpp"

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t, std::uint8_t
#include <cstring>      // std::memcpy
#include <string>       // held_fields, field_block
#include <string_view>  // std::string_view

namespace skiff::detail {

// How a response's content is delimited, as the head says it (RFC 9112 §6.3).
enum class response_framing : std::uint8_t {
    no_content,      // 1xx, 204, 304: no length, no body
    content_length,  // Content-Length: the body that follows
    chunked,         // Transfer-Encoding: chunked (a stream of unknown length, HTTP/1.1)
    until_close,     // neither: the body ends when the connection closes
};

// The fixed text of a head, named once so that each width is the length of its own text.
namespace head_text {
inline constexpr std::string_view crlf = "\r\n";
inline constexpr std::string_view field_separator = ": ";
inline constexpr std::string_view content_type = "Content-Type: ";
inline constexpr std::string_view content_length = "Content-Length: ";
inline constexpr std::string_view chunked = "Transfer-Encoding: chunked\r\n";
inline constexpr std::string_view close = "Connection: close\r\n";
inline constexpr std::string_view keep_alive = "Connection: keep-alive\r\n";
inline constexpr std::string_view version = "HTTP/1.1 ";
inline constexpr std::string_view empty_reason = " \r\n";
inline constexpr std::size_t status_digits = 3;  // status() keeps codes in 100-599
inline constexpr std::size_t status_line_room = version.size() + status_digits + empty_reason.size();
inline constexpr std::size_t max_decimal_digits = 20;  // of a std::uint64_t
} // namespace head_text

constexpr std::size_t length_of(std::string_view s) noexcept { return s.size(); }

// "00".."99": two decimal digits a step, half the divisions of a digit at a time.
inline constexpr char decimal_pairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

// Decimal digits of v, written backwards ending at `end`; returns the first digit. Always
// inline: GCC otherwise calls it once it has a few callers (measured: GET /hello +11
// instructions a request).
SKIFF_ALWAYS_INLINE char* format_decimal(char* end, std::uint64_t v) noexcept {
    const char* pairs = decimal_pairs;
    while (v >= 100) {
        std::size_t i = static_cast<std::size_t>(v % 100) * 2;
        v /= 100;
        *--end = pairs[i + 1];
        *--end = pairs[i];
    }
    if (v >= 10) {
        std::size_t i = static_cast<std::size_t>(v) * 2;
        *--end = pairs[i + 1];
        *--end = pairs[i];
        return end;
    }
    *--end = static_cast<char>('0' + v);
    return end;
}

template <std::size_t N>
inline void move_bytes(char* to, const char* from) noexcept {
    char word[N];
    std::memcpy(word, from, N);  // constant sizes: compiled to plain loads and stores
    std::memcpy(to, word, N);
}

// Copies s to p and returns the end. The strings of a response head are short (a status
// line, a type, a few digits): two overlapping word moves copy them without a call to
// memcpy. Measured with the Date line's fixed-size copy: write_head 216 -> 193 instructions a
// response (callgrind, contract app, pipelined GET /). Reads only s itself: an empty view may
// even hold a null pointer.
#if defined(__GNUC__)
[[gnu::always_inline]]  // measured: GCC 12 otherwise calls it, at 12 instructions a call
#endif // __GNUC__
inline char* put(char* p, std::string_view s) noexcept {
    std::size_t n = s.size();
    const char* from = s.data();
    if (n > 32) {
        std::memcpy(p, from, n);
    } else if (n > 16) {
        move_bytes<16>(p, from);
        move_bytes<16>(p + n - 16, from + n - 16);
    } else if (n >= 8) {
        move_bytes<8>(p, from);
        move_bytes<8>(p + n - 8, from + n - 8);
    } else if (n >= 4) {
        move_bytes<4>(p, from);
        move_bytes<4>(p + n - 4, from + n - 4);
    } else if (n >= 2) {
        move_bytes<2>(p, from);
        move_bytes<2>(p + n - 2, from + n - 2);
    } else if (n == 1) {
        *p = *from;
    }
    return p + n;
}

// memmove(to, from, n) for to > from, inline for the short bodies a late field moves (a
// greeting, a small JSON answer): every load before any store, so the overlap is safe.
SKIFF_ALWAYS_INLINE void move_up(char* to, const char* from, std::size_t n) noexcept {
    if (n > 32) {
        std::memmove(to, from, n);
    } else if (n > 16) {
        char a[16], b[16];
        std::memcpy(a, from, 16);
        std::memcpy(b, from + n - 16, 16);
        std::memcpy(to, a, 16);
        std::memcpy(to + n - 16, b, 16);
    } else if (n >= 8) {
        char a[8], b[8];
        std::memcpy(a, from, 8);
        std::memcpy(b, from + n - 8, 8);
        std::memcpy(to, a, 8);
        std::memcpy(to + n - 8, b, 8);
    } else {
        for (std::size_t i = n; i-- > 0;) to[i] = from[i];
    }
}

// How many decimal digits v has. Most bodies are under 10,000 bytes: their digit count takes
// compares, not divisions.
inline std::size_t decimal_digits(std::uint64_t v) noexcept {
    std::size_t n = v < 10 ? 1 : v < 100 ? 2 : v < 1000 ? 3 : v < 10000 ? 4 : 5;
    for (std::uint64_t t = v / 100000; t != 0; t /= 10) ++n;
    return n;
}

// The decimal digits of v written at p, in place (their count first): no staging copy.
inline char* put_decimal(char* p, std::uint64_t v) noexcept {
    std::size_t n = decimal_digits(v);
    format_decimal(p + n, v);
    return p + n;
}

// Fields header() wrote for a head that is written later (see the file comment), and what
// they told that head. Empty for a chain that wrote none.
struct held_fields {
    std::string bytes;  // "name: value\r\n" lines, as header() wrote them
    bool has_type = false;
    bool has_date = false;
};

// What header() writes of a field, and the built-ins check once: a token name, and a value
// without CR, LF or NUL, so that no field can split the response.
inline bool valid_field(std::string_view name, std::string_view value) noexcept {
    if (name.empty() || !all_tchars(name)) return false;
    for (char c : value)
        if (c == '\r' || c == '\n' || c == '\0') return false;
    return true;
}

// The fields skiff frames and dates itself, which a late field may not change.
inline bool is_framing_field(std::string_view name) noexcept {
    return iequals_lower(name, "content-length") || iequals_lower(name, "transfer-encoding") ||
           iequals_lower(name, "connection") || iequals_lower(name, "date");
}

// Whether send_ok() notes where the head ends (response::head_end_), for a late field to come.
enum class head_end : std::uint8_t { unnoted, noted };

// Header lines known at start-up ("name: value\r\n" each, checked once), added to an answer by
// reference (response_access::add_fixed_fields): a request pays one copy of them, into its head.
struct field_block {
    std::string lines;
};

// Whether a response keeps fields aside for its head (the file comment), and whether the
// head written noted where it ends (head_end_). none: neither, the plain answer.
enum class head_aside : std::uint8_t {
    none,   // the plain answer: a late field finds the head's end by a scan
    kept,   // fields kept aside (maybe none, expect_late_fields); the writer notes head_end_
    noted,  // head_end_ found by a late field's scan
};

// The room a response keeps for the per-request fields the built-ins add before its head; a
// field that does not fit is written as header() writes it (the general head writer then).
inline constexpr std::size_t extra_field_room = 256;

// The content types of text(), json() and html(), and none (end()): each has a pre-composed
// 200 head (ok_heads).
enum class known_type : std::uint8_t { plain, json, html, none };
inline constexpr std::size_t known_type_count = 4;
inline constexpr std::string_view known_type_names[known_type_count] = {"text/plain", "application/json",
                                                                       "text/html; charset=utf-8", ""};

// "HTTP/1.1 200 OK\r\n", the Date line, the Content-Type field and "Content-Length: ", one
// block per known type, recomposed when the Date line changes (once a second). A 200 head is
// then one constant-size copy and the length digits, where the general write_head() makes
// eight copies of run-time sizes (measured: contract app keep-alive 1,714 -> 1,605 instructions
// a request). Each block lies in `room` bytes, copied whole: the bytes past its size are
// overwritten by what follows.
class ok_heads {
public:
    static constexpr std::size_t room = 112;  // 110 for html, the longest

    void refresh(const date_cache& date) noexcept {
        if (date.generation() == generation_) return;
        generation_ = date.generation();
        for (std::size_t t = 0; t < known_type_count; ++t) compose(t, date);
    }
    const char* block(known_type t) const noexcept { return blocks_[static_cast<std::size_t>(t)]; }
    std::size_t size(known_type t) const noexcept { return sizes_[static_cast<std::size_t>(t)]; }

private:
    void compose(std::size_t t, const date_cache& date) noexcept {
        namespace text = head_text;
        std::string_view type = known_type_names[t];
        char* p = put(blocks_[t], known_status_line(200));
        p = put(p, date.line());
        if (!type.empty()) p = put(put(put(p, text::content_type), type), text::crlf);
        p = put(p, text::content_length);
        sizes_[t] = static_cast<std::uint8_t>(p - blocks_[t]);
    }

    std::uint64_t generation_ = ~std::uint64_t{0};  // none yet: a date_cache starts at 0
    char blocks_[known_type_count][room] = {};
    std::uint8_t sizes_[known_type_count] = {};
};
static_assert(known_status_line(200).size() + date_cache::line_size + head_text::content_type.size() +
                      known_type_names[2].size() + head_text::crlf.size() + head_text::content_length.size() <=
                  ok_heads::room,
              "the longest pre-composed head fits its room");
} // namespace skiff::detail

#endif // SKIFF_HTTP_RESPONSE_HEAD_HPP
