// Request methods: the nine of RFC 9110 §9 and RFC 5789 get an enum value, so the router can
// index a handler slot without comparing strings; any other token is `other` and is routed by
// name (RFC 9110 §9.1: the method set is extensible).
#ifndef SKIFF_HTTP_METHOD_HPP
#define SKIFF_HTTP_METHOD_HPP

#include <array>        // std::array of names
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint8_t
#include <cstring>      // std::memcmp
#include <string_view>  // std::string_view

namespace skiff {

enum class method : std::uint8_t { get, head, post, put, delete_, patch, options, connect, trace, other };

inline constexpr std::size_t known_method_count = 9;

inline constexpr std::array<std::string_view, known_method_count> method_names = {
    "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "CONNECT", "TRACE"};

constexpr std::string_view to_string(method m) {
    return m == method::other ? std::string_view("other") : method_names[static_cast<std::size_t>(m)];
}

// Methods are case-sensitive (RFC 9110 §9.1): "get" is the extension method "get", not GET.
inline method method_from(std::string_view s) noexcept {
    switch (s.size()) {
    case 3:
        if (std::memcmp(s.data(), "GET", 3) == 0) return method::get;
        if (std::memcmp(s.data(), "PUT", 3) == 0) return method::put;
        break;
    case 4:
        if (std::memcmp(s.data(), "POST", 4) == 0) return method::post;
        if (std::memcmp(s.data(), "HEAD", 4) == 0) return method::head;
        break;
    case 5:
        if (std::memcmp(s.data(), "PATCH", 5) == 0) return method::patch;
        if (std::memcmp(s.data(), "TRACE", 5) == 0) return method::trace;
        break;
    case 6:
        if (std::memcmp(s.data(), "DELETE", 6) == 0) return method::delete_;
        break;
    case 7:
        if (std::memcmp(s.data(), "OPTIONS", 7) == 0) return method::options;
        if (std::memcmp(s.data(), "CONNECT", 7) == 0) return method::connect;
        break;
    default:
        break;
    }
    return method::other;
}

} // namespace skiff

#endif // SKIFF_HTTP_METHOD_HPP
