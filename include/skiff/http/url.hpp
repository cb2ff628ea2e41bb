// Percent-decoding (RFC 3986 §2.1) and key=value lists: the query string and
// application/x-www-form-urlencoded bodies (WHATWG URL, "application/x-www-form-urlencoded
// parsing": '+' is a space and a '%' not followed by two hex digits stays as it is).
// Decoders write into caller-provided room at least as long as the input; no allocation.
#ifndef SKIFF_HTTP_URL_HPP
#define SKIFF_HTTP_URL_HPP

#include "skiff/detail/ascii.hpp"

#include <cstddef>      // std::size_t
#include <optional>     // std::optional: a decoded length, or none for a bad escape
#include <string_view>  // std::string_view

namespace skiff {

// Path segments: every '%' must start a valid escape; '+' is a plus. Returns the decoded
// length, or nullopt when a '%' is not followed by two hex digits (the caller answers 400).
inline std::optional<std::size_t> percent_decode(std::string_view in, char* out) noexcept {
    std::size_t n = 0;
    for (std::size_t i = 0; i < in.size(); ++i) {
        char c = in[i];
        if (c == '%') {
            if (i + 2 >= in.size()) return std::nullopt;
            int hi = detail::hex_value(in[i + 1]), lo = detail::hex_value(in[i + 2]);
            if (hi < 0 || lo < 0) return std::nullopt;
            c = static_cast<char>(hi * 16 + lo);
            i += 2;
        }
        out[n++] = c;
    }
    return n;
}

// Query strings and form bodies: never fails. Returns the decoded length.
inline std::size_t form_decode(std::string_view in, char* out) noexcept {
    std::size_t n = 0;
    for (std::size_t i = 0; i < in.size(); ++i) {
        char c = in[i];
        if (c == '+') c = ' ';
        else if (c == '%' && i + 2 < in.size()) {
            int hi = detail::hex_value(in[i + 1]), lo = detail::hex_value(in[i + 2]);
            if (hi >= 0 && lo >= 0) {
                c = static_cast<char>(hi * 16 + lo);
                i += 2;
            }
        }
        out[n++] = c;
    }
    return n;
}

// Calls fn(raw_key, raw_value) for each non-empty '&'-separated element; an element without
// '=' has an empty value.
template <class Fn>
void for_each_pair(std::string_view s, Fn fn) {
    while (!s.empty()) {
        std::size_t amp = s.find('&');
        std::string_view item = s.substr(0, amp);
        if (!item.empty()) {
            std::size_t eq = item.find('=');
            fn(item.substr(0, eq), eq == std::string_view::npos ? std::string_view() : item.substr(eq + 1));
        }
        if (amp == std::string_view::npos) break;
        s.remove_prefix(amp + 1);
    }
}

} // namespace skiff

#endif // SKIFF_HTTP_URL_HPP
