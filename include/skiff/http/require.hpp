// Typed parameters that answer for the handler: a route parameter or query value that must be
// an integer, and a clear 400 when it is missing or is not one, so that a handler reads
//
//   auto id = skiff::require_param<long long>(req, res, "id");
//   if (!id) return;  // answered: 400 "parameter id: expected an integer"
//
// An integer out of T's range is not one (so "99999999999" for an int answers 400).
//
// The parsing is request::param_as / query_as (request.hpp: whole decimal, in range). The 400
// goes through the response like any answer, so response hooks and middleware see it.
#ifndef SKIFF_HTTP_REQUIRE_HPP
#define SKIFF_HTTP_REQUIRE_HPP

#include "skiff/http/request.hpp"
#include "skiff/http/response.hpp"

#include <optional>     // the value, or none once answered
#include <string>       // the 400's text
#include <string_view>  // names
#include <type_traits>  // std::is_unsigned_v

namespace skiff {

namespace detail {

template <class T>
std::optional<T> answer_bad_integer(response& res, std::string_view what, std::string_view name) {
    std::string why;
    why.append(what).append(" ").append(name);
    why.append(std::is_unsigned_v<T> ? ": expected a non-negative integer\n" : ": expected an integer\n");
    res.status(400).text(why);
    return std::nullopt;
}

} // namespace detail

// The route parameter `name` as T; when it is not a whole integer in T's range, answers 400
// (text/plain, naming the parameter) and is empty: the handler returns.
template <class T>
std::optional<T> require_param(const request& req, response& res, std::string_view name) {
    std::optional<T> v = req.param_as<T>(name);
    return v ? v : detail::answer_bad_integer<T>(res, "parameter", name);
}

// The same for the query value `key`; missing is as invalid (use query_as for optional ones).
template <class T>
std::optional<T> require_query(request& req, response& res, std::string_view key) {
    std::optional<T> v = req.query_as<T>(key);
    return v ? v : detail::answer_bad_integer<T>(res, "query value", key);
}

} // namespace skiff

#endif // SKIFF_HTTP_REQUIRE_HPP
