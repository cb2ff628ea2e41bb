// The request fields a static file answer depends on, parsed: entity tags (If-Match,
// If-None-Match, If-Range), HTTP dates (If-Unmodified-Since, If-Modified-Since, If-Range,
// Last-Modified), one byte range (Range)
// and content codings (Accept-Encoding). Pure functions of strings, so each rule has a test;
// a list field is read over all its lines (RFC 9110 §5.3), given as request::header_values.
//
// Not here: reading files or choosing the status (files/serve_dir.hpp does); dates
// (files/http_date.hpp, included here for the fields that hold them).
#ifndef SKIFF_FILES_CONDITIONAL_HPP
#define SKIFF_FILES_CONDITIONAL_HPP

#include "skiff/detail/ascii.hpp"
#include "skiff/detail/scan.hpp"
#include "skiff/files/http_date.hpp"

#include <cstdint>      // std::uint64_t
#include <optional>     // a date or range that may not parse
#include <string_view>  // std::string_view
#include <type_traits>  // std::is_convertible_v: one line, or several

namespace skiff::detail {

// Calls f on each comma-separated element of one field line, trimmed, empty ones skipped.
template <class F>
void for_each_element_of_line(std::string_view line, F& f) {
    while (!line.empty()) {
        std::size_t comma = line.find(',');
        std::string_view item = trim_ows(line.substr(0, comma));
        if (!item.empty()) f(item);
        if (comma == std::string_view::npos) break;
        line.remove_prefix(comma + 1);
    }
}

// The same over a whole list field: `lines` is one line (a string) or all of them
// (request::header_values). RFC 9110 §5.3: the lines of one name are one field, their values
// joined by commas in order, so a list split over two lines is read whole.
template <class Lines, class F>
void for_each_element(const Lines& lines, F&& f) {
    if constexpr (std::is_convertible_v<const Lines&, std::string_view>) {
        for_each_element_of_line(lines, f);
    } else {
        for (std::string_view line : lines) for_each_element_of_line(line, f);
    }
}

// If-None-Match (RFC 9110 §13.1.2): "*", or a list of tags compared weakly (W/ ignored).
template <class Lines>
bool none_match_hits(const Lines& field, std::string_view etag) noexcept {
    bool hit = false;
    auto opaque = [](std::string_view t) { return t.substr(0, 2) == "W/" ? t.substr(2) : t; };
    for_each_element(field, [&](std::string_view tag) {
        if (tag == "*" || opaque(tag) == opaque(etag)) hit = true;
    });
    return hit;
}

// If-Match (RFC 9110 §13.1.1): "*", or a list of tags of which one is the current tag by the
// strong comparison (§8.8.3.2: neither weak, the same opaque tag).
template <class Lines>
bool match_hits(const Lines& field, std::string_view etag) noexcept {
    bool hit = false;
    bool weak_etag = etag.substr(0, 2) == "W/";
    for_each_element(field, [&](std::string_view tag) {
        if (tag == "*" || (!weak_etag && tag == etag)) hit = true;
    });
    return hit;
}

// A single byte range resolved against a file's size (RFC 9110 §14.1.2).
enum class range_kind : std::uint8_t {
    none,           // no Range, not bytes, malformed, or several ranges: answer the whole file
    satisfiable,    // 206 with [first, last]
    unsatisfiable,  // 416 with "bytes */size"
    empty_whole,    // a suffix range of an empty file: satisfiable (RFC 9110 §14.1.1), yet no
                    // byte range can say so, so the whole (empty) file, 200
};

struct byte_range {
    range_kind kind = range_kind::none;
    std::uint64_t first = 0;
    std::uint64_t last = 0;  // inclusive
};

// Decimal digits, all of s, without overflow; nullopt otherwise.
inline std::optional<std::uint64_t> parse_decimal(std::string_view s) noexcept {
    if (s.empty() || s.size() > 19) return std::nullopt;
    std::uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + static_cast<std::uint64_t>(c - '0');
    }
    return v;
}

// "bytes=a-b", "bytes=a-" or "bytes=-n". Several ranges are answered whole (a 200 is always
// allowed, and multipart/byteranges is not worth its code here); so is a range whose last
// byte comes before its first (invalid, so the field is ignored).
inline byte_range parse_range(std::string_view field, std::uint64_t size) noexcept {
    field = trim_ows(field);
    if (field.size() < 6 || !iequals_lower(field.substr(0, 6), "bytes=")) return {};
    std::string_view spec = trim_ows(field.substr(6));
    std::size_t dash = spec.find('-');
    if (spec.find(',') != std::string_view::npos || dash == std::string_view::npos) return {};
    std::string_view a = trim_ows(spec.substr(0, dash)), b = trim_ows(spec.substr(dash + 1));
    if (a.empty()) {  // the last n bytes
        std::optional<std::uint64_t> n = parse_decimal(b);
        if (!n) return {};
        if (*n == 0) return {range_kind::unsatisfiable};
        if (size == 0) return {range_kind::empty_whole};
        return {range_kind::satisfiable, *n >= size ? 0 : size - *n, size - 1};
    }
    std::optional<std::uint64_t> first = parse_decimal(a);
    std::optional<std::uint64_t> last = b.empty() ? std::optional<std::uint64_t>(~std::uint64_t{0}) : parse_decimal(b);
    if (!first || !last || *last < *first) return {};
    if (*first >= size) return {range_kind::unsatisfiable};
    return {range_kind::satisfiable, *first, *last >= size ? size - 1 : *last};
}

// Whether Accept-Encoding (its lines, as for_each_element takes them) allows `coding` (RFC
// 9110 §12.5.3): listed with q > 0, or not
// listed while "*" is, with q > 0. An absent field allows nothing here, since skiff only
// picks a precompressed file when the client asked for one.
template <class Lines>
bool accepts_coding(const Lines& field, std::string_view coding) noexcept {
    enum class said : std::uint8_t { nothing, yes, no };
    said named = said::nothing, star = said::nothing;
    for_each_element(field, [&](std::string_view item) {
        std::size_t semi = item.find(';');
        std::string_view name = trim_ows(item.substr(0, semi));
        bool zero = false;
        if (semi != std::string_view::npos) {
            std::string_view param = trim_ows(item.substr(semi + 1));
            if (param.size() >= 2 && (param[0] == 'q' || param[0] == 'Q') && param[1] == '=') {
                std::string_view q = trim_ows(param.substr(2));
                zero = !q.empty() && q[0] == '0' && q.find_first_of("123456789") == std::string_view::npos;
            }
        }
        said s = zero ? said::no : said::yes;
        if (iequals(name, coding)) named = s;
        else if (name == "*") star = s;
    });
    return named == said::yes || (named == said::nothing && star == said::yes);
}

} // namespace skiff::detail

#endif // SKIFF_FILES_CONDITIONAL_HPP
