// Route registration errors: the exception a bad or conflicting pattern raises, the one place
// that raises it (or aborts under -fno-exceptions), and the joiner that builds its message.
//
// Not here: deciding what is an error (trie.hpp checks patterns, router.hpp method names).
// Invariants: used at start-up only, never while serving, so allocating here is fine; every
// message names the pattern (both patterns, for a conflict).
#ifndef SKIFF_ROUTER_ROUTE_ERROR_HPP
#define SKIFF_ROUTER_ROUTE_ERROR_HPP

#include "skiff/config.hpp"

#include <cstdio>            // std::fprintf for the -fno-exceptions registration failure
#include <cstdlib>           // std::abort
#include <initializer_list>  // std::initializer_list of message parts
#include <stdexcept>         // std::invalid_argument
#include <string>            // std::string
#include <string_view>       // std::string_view

namespace skiff {

// Thrown at registration for a bad or conflicting pattern; the message names both patterns.
struct route_error : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

namespace detail {

// Joins the parts of a registration error. One function instead of an operator+ chain at
// every call site: the chains made up most of a hello program's router code.
inline std::string message(std::initializer_list<std::string_view> parts) {
    std::string s;
    for (std::string_view p : parts) s += p;
    return s;
}

#if SKIFF_HAS_EXCEPTIONS
[[noreturn]] inline void fail_registration(const std::string& why) { throw route_error(why); }
#else
[[noreturn]] inline void fail_registration(const std::string& why) {
    std::fprintf(stderr, "skiff: %s\n", why.c_str());
    std::abort();
}
#endif // SKIFF_HAS_EXCEPTIONS

} // namespace detail
} // namespace skiff

#endif // SKIFF_ROUTER_ROUTE_ERROR_HPP
