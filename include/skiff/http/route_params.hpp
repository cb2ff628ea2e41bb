// The parameters a route match hands to the request: name and value pairs in fixed room, so a
// lookup fills them without allocating.
//
// Not here: how they are matched (router/trie.hpp) or decoded (request.hpp). It lives in
// http/ because the request exposes it, and http/ knows nothing of the router. Invariants:
// count <= max_route_params; items[0, count) are the match, the rest is stale.
#ifndef SKIFF_HTTP_ROUTE_PARAMS_HPP
#define SKIFF_HTTP_ROUTE_PARAMS_HPP

#include <array>        // std::array of parameters
#include <cstddef>      // std::size_t
#include <string_view>  // std::string_view

namespace skiff {

inline constexpr std::size_t max_route_params = 16;

struct route_param {
    std::string_view name;
    std::string_view value;  // raw in the trie; percent-decoded once the request has it
};

struct route_params {
    std::array<route_param, max_route_params> items;
    std::size_t count = 0;
};

} // namespace skiff

#endif // SKIFF_HTTP_ROUTE_PARAMS_HPP
