// The parameters a route match hands to the request: name and value pairs in fixed room, so a
// lookup fills them without allocating.
//
// Not here: how they are matched (router/trie.hpp) or decoded (request.hpp). It lives in
// http/ because the request exposes it, and http/ knows nothing of the router. Invariants:
// count <= max_route_params; items[0, count) are the match, the rest is stale.
// Kinds: a `:name` parameter is one path segment; a `*name` wildcard is the rest of the path,
// slashes included (kind defaults to segment, so the trie names only wildcards).
//
// What a handler may be given (param_value_allowed, applied by the request after decoding,
// whose refusal the router answers 400): no NUL byte, since C APIs would cut the value short
// there; in a `:name`, no '/' (a decoded %2F would turn one segment into two); in either kind,
// no ".." segment (%2e%2e, or sent raw by a crafted request: browsers remove dot segments
// before sending), so that a value joined to a directory cannot climb out of it.
#ifndef SKIFF_HTTP_ROUTE_PARAMS_HPP
#define SKIFF_HTTP_ROUTE_PARAMS_HPP

#include <array>        // std::array of parameters
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint8_t
#include <string_view>  // std::string_view

namespace skiff {

inline constexpr std::size_t max_route_params = 16;

enum class param_kind : std::uint8_t {
    segment,  // `:name`: one non-empty segment
    rest,     // `*name`: the rest of the path, possibly empty, slashes included
};

struct route_param {
    std::string_view name;
    std::string_view value;  // raw in the trie; percent-decoded once the request has it
    param_kind kind = param_kind::segment;
};

namespace detail {

// True when some '/'-separated segment of v is exactly "..".
inline bool has_dot_dot_segment(std::string_view v) noexcept {
    for (std::size_t at = v.find(".."); at != std::string_view::npos; at = v.find("..", at + 1)) {
        bool starts = at == 0 || v[at - 1] == '/';
        bool ends = at + 2 == v.size() || v[at + 2] == '/';
        if (starts && ends) return true;
    }
    return false;
}

// Whether a decoded value may reach the handler (the rules in the file comment).
inline bool param_value_allowed(std::string_view v, param_kind kind) noexcept {
    if (v.find('\0') != std::string_view::npos) return false;
    if (kind == param_kind::segment && v.find('/') != std::string_view::npos) return false;
    return !has_dot_dot_segment(v);
}

// The same for a value that had no '%', and so decodes to itself: it cannot hold a NUL (the
// parser refuses one in the target) nor, as a `:name`, a '/'; only ".." needs a look.
inline bool raw_param_allowed(std::string_view v, param_kind kind) noexcept {
    if (kind == param_kind::segment) return !(v.size() == 2 && v[0] == '.' && v[1] == '.');
    return !has_dot_dot_segment(v);
}

} // namespace detail

struct route_params {
    std::array<route_param, max_route_params> items;
    std::size_t count = 0;
};

} // namespace skiff

#endif // SKIFF_HTTP_ROUTE_PARAMS_HPP
