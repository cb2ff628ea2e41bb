// A route pattern on its own: its segments one by one, what kind each is (a literal, a
// ':param' or a '*wildcard'), and the rules a pattern must keep whatever else is registered
// (it starts with '/', at most max_route_depth segments and max_route_params parameters, named
// parameters, distinct names, a wildcard only last). The trie (trie.hpp) checks a pattern
// here before it looks for conflicts with other routes.
//
// Start-up only: nothing here runs per request.
#ifndef SKIFF_ROUTER_PATTERN_HPP
#define SKIFF_ROUTER_PATTERN_HPP

#include "skiff/http/route_params.hpp"
#include "skiff/router/route_error.hpp"

#include <array>        // the names seen so far
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint8_t
#include <string>       // an error message
#include <string_view>  // std::string_view

namespace skiff {

inline constexpr std::size_t max_route_depth = 32;

namespace detail {

enum class segment_kind : std::uint8_t { literal, param, wildcard };

inline segment_kind kind_of(std::string_view seg) noexcept {
    if (seg.empty()) return segment_kind::literal;
    if (seg.front() == ':') return segment_kind::param;
    return seg.front() == '*' ? segment_kind::wildcard : segment_kind::literal;
}

// The segments of a pattern that starts with '/', one by one: "/" is one empty segment.
class segment_reader {
public:
    explicit segment_reader(std::string_view pattern) noexcept : rest_(pattern.substr(1)) {}

    // The next segment, and whether it is the last; false once all were read.
    bool next(std::string_view& seg, bool& last) noexcept {
        if (done_) return false;
        std::size_t slash = rest_.find('/');
        seg = rest_.substr(0, slash);
        last = done_ = slash == std::string_view::npos;
        if (!last) rest_.remove_prefix(slash + 1);
        return true;
    }

private:
    std::string_view rest_;
    bool done_ = false;
};

// Why a pattern breaks its own rules, or "" when it keeps them.
inline std::string pattern_error(std::string_view pattern) {
    const char* why = nullptr;
    std::string_view twice;
    if (pattern.empty() || pattern.front() != '/') why = "route pattern must start with '/':";
    std::array<std::string_view, max_route_params> names;
    std::size_t depth = 0, params = 0;
    segment_reader segments(why ? "/" : pattern);
    std::string_view seg;
    bool last = false;
    while (why == nullptr && segments.next(seg, last)) {
        segment_kind kind = kind_of(seg);
        std::string_view name = seg.substr(seg.empty() ? 0 : 1);
        if (++depth > max_route_depth) why = "route pattern has more than 32 segments:";
        else if (kind == segment_kind::literal) continue;
        else if (name.empty()) why = "route parameter without a name in";
        else if (kind == segment_kind::wildcard && !last) why = "wildcard must be the last segment in";
        else if (params == max_route_params) why = "route pattern has more than 16 parameters:";
        for (std::size_t i = 0; i < params && why == nullptr; ++i) {
            if (names[i] != name) continue;
            twice = name;
            why = "appears twice in";
        }
        if (why == nullptr) names[params++] = name;
    }
    if (why == nullptr) return {};
    if (!twice.empty()) return message({"parameter '", twice, "' ", why, " '", pattern, "'"});
    return message({why, " '", pattern, "'"});
}

} // namespace detail
} // namespace skiff

#endif // SKIFF_ROUTER_PATTERN_HPP
