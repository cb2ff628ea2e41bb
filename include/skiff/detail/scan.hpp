// Byte scanners for the parser: runs of token, field-value, request-target and reg-name
// characters, OWS trimming, and the window a limit allows. Each scanner returns the first
// byte that ends the run and never reads outside [p, end): the SSE2 versions step 16 bytes
// while 16 remain and finish byte by byte.
//
// Not here: what a parse step answers (http/parse_status.hpp; the CRLF step is in
// http/crlf.hpp). Like all of detail/, this knows nothing of HTTP messages: bytes in, a
// position out.
#ifndef SKIFF_DETAIL_SCAN_HPP
#define SKIFF_DETAIL_SCAN_HPP

#include "skiff/config.hpp"
#include "skiff/detail/ascii.hpp"

#include <cstddef>      // std::size_t
#include <string_view>  // std::string_view

#if defined(__SSE2__)
#include <emmintrin.h>  // 16-byte scans of field values and targets
#endif // __SSE2__

namespace skiff::detail {

// First byte of [p, end) not in `table`. Unrolled so the compiler keeps the table base in a
// register (measured: fewer loads per byte than the plain loop).
inline const char* scan_table(const char* p, const char* end, const char_table& table) noexcept {
    auto in = [&](char c) { return table[static_cast<unsigned char>(c)]; };
    while (end - p >= 4) {
        if (!in(p[0])) return p;
        if (!in(p[1])) return p + 1;
        if (!in(p[2])) return p + 2;
        if (!in(p[3])) return p + 3;
        p += 4;
    }
    while (p < end && in(*p)) ++p;
    return p;
}

// Also stops at `also` when it is not '\0': the target scan stops at the '?' that ends the
// path, so the path and query are split as the line is read, not by a second scan.
inline const char* scan_target_chars_scalar(const char* p, const char* end, char also = '\0') noexcept {
    while (p < end && is_target_char(*p) && *p != also) ++p;
    return p;
}

#if defined(__SSE2__)
inline int first_set(int mask) noexcept { return __builtin_ctz(static_cast<unsigned>(mask)); }

// The SSE2 scans, each stepping 16 bytes while 16 remain and finishing byte by byte. Their
// constants are members, built once: a header section runs two scans a field line, and
// building the constants in every call cost more than the scan of a short name did. The
// field loop keeps one of these on its stack (its members then live in registers); the free
// functions below build one per call, for the callers that scan once.
// Measured (tools/bench/counts.py): 715-byte keep-alive request 3,175 -> 3,104 instructions.
class byte_scans {
public:
    // First byte of [p, end) that may not appear in a field value (a CTL other than HTAB,
    // or DEL). One signed compare flags a byte: b + 1 below 0x21 as a signed byte is a CTL
    // (0x00-0x1f become 0x01-0x20) or DEL (0x7f becomes 0x80), and also HTAB and obs-text
    // (0x80-0xff), rare in values, which the table then clears bit by bit. Measured
    // (tools/bench/counts.py): 715-byte keep-alive request 3,029 -> 2,970 instructions.
    SKIFF_ALWAYS_INLINE const char* field_chars(const char* p, const char* end) const noexcept {
        while (end - p >= 16) {
            int mask = _mm_movemask_epi8(_mm_cmpgt_epi8(above_sp_, _mm_add_epi8(load(p), one_)));
            for (; mask != 0; mask &= mask - 1)
                if (!is_field_char(p[first_set(mask)])) return p + first_set(mask);
            p += 16;
        }
        return scan_table(p, end, field_char_table);
    }

    // First byte of [p, end) that is not a tchar. Field names and methods are nearly always
    // letters, digits and '-': 16 of those are checked at a time, and the table takes over at
    // the first other byte (the ':' that ends a name, or a rarer tchar such as '_'). The
    // ranges are tested with a saturating subtract (x - lo, saturated at hi - lo, is 0 only
    // inside): fewer operations than two signed compares each.
    SKIFF_ALWAYS_INLINE const char* tchars(const char* p, const char* end) const noexcept {
        while (end - p >= 16) {
            __m128i v = load(p);
            __m128i in = _mm_or_si128(is_zero(_mm_min_epu8(letter_miss(v), digit_miss(v, nine_off_))), _mm_cmpeq_epi8(v, dash_));
            int mask = _mm_movemask_epi8(in) ^ 0xffff;
            if (mask == 0) { p += 16; continue; }
            p += first_set(mask);
            if (!is_tchar(*p)) return p;
            ++p;
        }
        return scan_table(p, end, tchar_table);
    }

    // First byte of [p, end) that is not a reg-name byte (unreserved or sub-delims): letters,
    // digits, '-' and '.' 16 at a time, the rarer ones confirmed by the table. A Host value
    // nearly always ends here at its CR; a ':', '[' or '%' stops it for http/host.hpp.
    SKIFF_ALWAYS_INLINE const char* reg_name_chars(const char* p, const char* end) const noexcept {
        while (end - p >= 16) {
            __m128i v = load(p);
            __m128i punct = _mm_subs_epu8(_mm_sub_epi8(v, dash_), dot_off_);  // '-' and '.'
            __m128i miss = _mm_min_epu8(_mm_min_epu8(letter_miss(v), digit_miss(v, nine_off_)), punct);
            int mask = _mm_movemask_epi8(is_zero(miss)) ^ 0xffff;
            if (mask == 0) { p += 16; continue; }
            p += first_set(mask);
            if (!is_reg_name_char(*p)) return p;
            ++p;
        }
        return scan_table(p, end, reg_name_char_table);
    }

private:
    static __m128i load(const char* p) noexcept { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); }
    static __m128i is_zero(__m128i v) noexcept { return _mm_cmpeq_epi8(v, _mm_setzero_si128()); }
    // 0 exactly for the bytes in [lo, lo + off] (x - lo, saturated at off).
    __m128i letter_miss(__m128i v) const noexcept { return _mm_subs_epu8(_mm_sub_epi8(_mm_or_si128(v, case_bit_), a_), z_off_); }
    __m128i digit_miss(__m128i v, __m128i off) const noexcept { return _mm_subs_epu8(_mm_sub_epi8(v, zero_), off); }

    __m128i a_ = _mm_set1_epi8('a'), z_off_ = _mm_set1_epi8('z' - 'a'), case_bit_ = _mm_set1_epi8(0x20);
    __m128i zero_ = _mm_set1_epi8('0'), nine_off_ = _mm_set1_epi8(9);
    __m128i dash_ = _mm_set1_epi8('-'), dot_off_ = _mm_set1_epi8('.' - '-');
    __m128i above_sp_ = _mm_set1_epi8(0x21), one_ = _mm_set1_epi8(1);
};

// First byte of [p, end) that may not appear in a request-target (see is_target_char), or
// that is `also` (see scan_target_chars_scalar); scan_target_chars and scan_path_chars below.
inline const char* scan_target_run(const char* p, const char* end, char also) noexcept {
    const __m128i low = _mm_set1_epi8(0x21);  // signed compare: also catches 0x80-0xff
    const __m128i del = _mm_set1_epi8(0x7f);
    const __m128i hash = _mm_set1_epi8('#');
    const __m128i extra = _mm_set1_epi8(also);  // '\0' is below 0x21: stops already
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        __m128i odd = _mm_or_si128(_mm_cmpeq_epi8(v, hash), _mm_cmpeq_epi8(v, extra));
        __m128i bad = _mm_or_si128(_mm_cmplt_epi8(v, low), _mm_or_si128(_mm_cmpeq_epi8(v, del), odd));
        int mask = _mm_movemask_epi8(bad);
        if (mask != 0) return p + first_set(mask);
        p += 16;
    }
    return scan_target_chars_scalar(p, end, also);
}
#else
// Without SSE2 the scans are the table loops; the class keeps one interface for the parser.
class byte_scans {
public:
    const char* field_chars(const char* p, const char* end) const noexcept { return scan_table(p, end, field_char_table); }
    const char* tchars(const char* p, const char* end) const noexcept { return scan_table(p, end, tchar_table); }
    const char* reg_name_chars(const char* p, const char* end) const noexcept { return scan_table(p, end, reg_name_char_table); }
};
inline const char* scan_target_run(const char* p, const char* end, char also) noexcept {
    return scan_target_chars_scalar(p, end, also);
}
#endif // __SSE2__

inline const char* scan_target_chars(const char* p, const char* end) noexcept { return scan_target_run(p, end, '\0'); }
// The path of a target: target characters up to the first '?'.
inline const char* scan_path_chars(const char* p, const char* end) noexcept { return scan_target_run(p, end, '?'); }

// One scan, for callers outside the header section's loop.
inline const char* scan_tchars(const char* p, const char* end) noexcept { return byte_scans{}.tchars(p, end); }
inline const char* scan_reg_name_chars(const char* p, const char* end) noexcept { return byte_scans{}.reg_name_chars(p, end); }
inline const char* scan_field_chars(const char* p, const char* end) noexcept { return byte_scans{}.field_chars(p, end); }

// Whether every byte of s is a token character.
inline bool all_tchars(std::string_view s) noexcept {
    return scan_tchars(s.data(), s.data() + s.size()) == s.data() + s.size();
}

inline bool is_ows(char c) noexcept { return c == ' ' || c == '\t'; }

inline std::string_view trim_ows(std::string_view s) noexcept {
    while (!s.empty() && is_ows(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_ows(s.back())) s.remove_suffix(1);
    return s;
}

// [p, end) cut to at most n bytes: the window a limit allows a parser to look at.
inline const char* cap(const char* p, const char* end, std::size_t n) noexcept {
    return static_cast<std::size_t>(end - p) > n ? p + n : end;
}

inline std::size_t saturating_add(std::size_t a, std::size_t b) noexcept {
    return a > static_cast<std::size_t>(-1) - b ? static_cast<std::size_t>(-1) : a + b;
}

} // namespace skiff::detail

#endif // SKIFF_DETAIL_SCAN_HPP
