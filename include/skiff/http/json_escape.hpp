// JSON string escaping (RFC 8259 §7), for handlers that build a small JSON answer by hand:
//
//   res.json("{\"name\":\"" + skiff::json_escape(name) + "\"}");
//
// What it escapes: '"' and '\\'; the control characters U+0000..U+001F (\b \f \n \r \t by
// their short names, the others as \u00XX). Valid UTF-8 passes through unchanged, '/' and
// DEL included. Each byte that does not belong to a well-formed UTF-8 sequence (RFC 3629:
// no overlong forms, no surrogates, nothing above U+10FFFF) becomes \ufffd, so the output is
// always valid JSON text whatever the input.
//
// What it does not do: add the surrounding quotes (json_quote does), or parse JSON. For
// anything larger than a few fields, use a JSON library (examples/json_api.cpp shows one).
#ifndef SKIFF_HTTP_JSON_ESCAPE_HPP
#define SKIFF_HTTP_JSON_ESCAPE_HPP

#include <cstddef>      // std::size_t
#include <string>       // std::string output
#include <string_view>  // std::string_view input

namespace skiff {
namespace detail {

// The length of the well-formed UTF-8 sequence starting at s[i] (RFC 3629 §4, the table of
// well-formed byte sequences), or 0 when the byte there does not start one.
inline std::size_t utf8_sequence_length(std::string_view s, std::size_t i) noexcept {
    auto at = [&](std::size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0u; };
    auto in = [](unsigned c, unsigned lo, unsigned hi) { return c >= lo && c <= hi; };
    unsigned b0 = at(i), b1 = at(i + 1);
    if (b0 < 0x80) return 1;
    if (in(b0, 0xC2, 0xDF)) return in(b1, 0x80, 0xBF) ? 2 : 0;
    // Second-byte ranges exclude overlong forms (E0, F0), surrogates (ED) and > U+10FFFF (F4).
    unsigned lo = b0 == 0xE0 ? 0xA0 : b0 == 0xF0 ? 0x90 : 0x80;
    unsigned hi = b0 == 0xED ? 0x9F : b0 == 0xF4 ? 0x8F : 0xBF;
    if (in(b0, 0xE0, 0xEF)) return in(b1, lo, hi) && in(at(i + 2), 0x80, 0xBF) ? 3 : 0;
    if (in(b0, 0xF0, 0xF4))
        return in(b1, lo, hi) && in(at(i + 2), 0x80, 0xBF) && in(at(i + 3), 0x80, 0xBF) ? 4 : 0;
    return 0;
}

// The escape for one ASCII byte, or an empty view when it goes out as it is.
inline std::string_view json_short_escape(char c) noexcept {
    switch (c) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\b': return "\\b";
    case '\f': return "\\f";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    default: return {};
    }
}

} // namespace detail

// Appends s, escaped as the inside of a JSON string, to out. Allocates only as out grows.
inline void append_json_escaped(std::string& out, std::string_view s) {
    static constexpr char hex[] = "0123456789abcdef";
    out.reserve(out.size() + s.size());
    for (std::size_t i = 0; i < s.size();) {
        std::size_t n = detail::utf8_sequence_length(s, i);
        if (n == 0) {  // RFC 8259 §8.1: the text must be UTF-8; a stray byte is replaced
            out += "\\ufffd";
            ++i;
            continue;
        }
        auto c = static_cast<unsigned char>(s[i]);
        if (std::string_view e = detail::json_short_escape(s[i]); !e.empty()) out += e;
        else if (c < 0x20) out.append("\\u00").append(1, hex[c >> 4]).append(1, hex[c & 0xF]);
        else out.append(s, i, n);
        i += n;
    }
}

// s escaped as the inside of a JSON string (no quotes).
inline std::string json_escape(std::string_view s) {
    std::string out;
    append_json_escaped(out, s);
    return out;
}

// s as a complete JSON string: escaped, between double quotes.
inline std::string json_quote(std::string_view s) {
    std::string out = "\"";
    append_json_escaped(out, s);
    out += '"';
    return out;
}

} // namespace skiff

#endif // SKIFF_HTTP_JSON_ESCAPE_HPP
