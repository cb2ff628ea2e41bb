// The structure of a Host value and of a target's authority (RFC 9112 §3.2, RFC 3986
// §3.2.2-§3.2.3): uri-host [ ":" port ], where uri-host is an IP-literal in brackets, an IPv4
// address or a reg-name, and port is digits. A Host of any other shape is 400 (RFC 9112 §3.2
// MUST), and so is an absolute-form or CONNECT target whose authority is not one.
//
// Not here: whether the name resolves or is one this server answers for (the application's
// business), and userinfo ("user@host"), which has no place in an http URI's authority
// (RFC 9110 §4.2.4) and fails here as a character no uri-host holds.
//
// Invariant: every function reads only within its string_view. The parser runs these only
// when the fast scan of a Host value stops short of its end (a port, brackets or '%'), so a
// plain host name costs nothing here.
#ifndef SKIFF_HTTP_HOST_HPP
#define SKIFF_HTTP_HOST_HPP

#include "skiff/config.hpp"
#include "skiff/detail/ascii.hpp"

#include <cstddef>      // std::size_t
#include <string_view>  // std::string_view

namespace skiff::detail {

inline bool all_digits(std::string_view s) noexcept {
    for (char c : s)
        if (!is_digit(static_cast<unsigned char>(c))) return false;
    return true;
}

// reg-name = *( unreserved / pct-encoded / sub-delims ); an IPv4 address is one too.
inline bool valid_reg_name(std::string_view s) noexcept {
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '%') {
            if (!is_reg_name_char(s[i])) return false;
            continue;
        }
        if (s.size() - i < 3) return false;  // '%' and two hex digits
        if (hex_value(s[i + 1]) < 0 || hex_value(s[i + 2]) < 0) return false;
        i += 2;
    }
    return true;
}

// IPv4address = dec-octet "." dec-octet "." dec-octet "." dec-octet, each 0-255 without a
// leading zero (RFC 3986 §3.2.2).
inline bool valid_ipv4(std::string_view s) noexcept {
    for (int octet = 0; octet < 4; ++octet) {
        std::size_t n = 0;
        unsigned value = 0;
        while (n < s.size() && n < 4 && is_digit(static_cast<unsigned char>(s[n]))) value = value * 10 + static_cast<unsigned>(s[n++] - '0');
        if (n == 0 || n > 3 || value > 255 || (n > 1 && s[0] == '0')) return false;
        s.remove_prefix(n);
        if (octet == 3) return s.empty();
        if (s.empty() || s.front() != '.') return false;
        s.remove_prefix(1);
    }
    return false;
}

// IPv6address (RFC 3986 §3.2.2): eight groups of 1-4 hex digits, a run of zero groups
// written once as "::", and the last two groups optionally as a dotted IPv4 address.
inline bool valid_ipv6(std::string_view s) noexcept {
    std::size_t groups = 0;
    bool compressed = false;
    std::size_t i = 0;
    if (s.substr(0, 2) == "::") { compressed = true; i = 2; }
    while (i < s.size()) {
        std::size_t start = i;
        while (i < s.size() && hex_value(s[i]) >= 0 && i - start < 5) ++i;
        if (i < s.size() && s[i] == '.') {  // the dotted tail stands for the last two groups
            if (!valid_ipv4(s.substr(start))) return false;
            groups += 2;
            break;
        }
        std::size_t len = i - start;
        if (len == 0 || len > 4) return false;
        ++groups;
        if (i == s.size()) break;
        if (s[i] != ':') return false;
        ++i;
        if (i < s.size() && s[i] == ':') {
            if (compressed) return false;  // "::" at most once
            compressed = true;
            ++i;
        } else if (i == s.size()) {
            return false;  // a single trailing ':'
        }
    }
    return compressed ? groups <= 7 : groups == 8;
}

// IP-literal = "[" ( IPv6address / IPvFuture ) "]", here without its brackets;
// IPvFuture = "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" ).
inline bool valid_ip_literal(std::string_view s) noexcept {
    if (s.empty() || (s.front() != 'v' && s.front() != 'V')) return valid_ipv6(s);
    std::size_t dot = s.find('.');
    if (dot == std::string_view::npos || dot < 2 || dot + 1 == s.size()) return false;
    for (char c : s.substr(1, dot - 1))
        if (hex_value(c) < 0) return false;
    for (char c : s.substr(dot + 1))
        if (c != ':' && !is_reg_name_char(c)) return false;
    return true;
}

enum class port_rule : unsigned char { optional, required };

// uri-host [ ":" port ]: a Host value (port optional, host may be empty, RFC 9112 §3.2) or
// an authority-form target (CONNECT: port required, RFC 9110 §9.3.6).
// Out of line: a plain Host never comes here, and inlined it cost the field loop's registers.
SKIFF_NOINLINE inline bool valid_authority(std::string_view v, port_rule rule) noexcept {
    std::size_t host_end = 0;
    if (!v.empty() && v.front() == '[') {
        std::size_t close = v.find(']');
        if (close == std::string_view::npos || !valid_ip_literal(v.substr(1, close - 1))) return false;
        host_end = close + 1;
    } else {
        host_end = v.find(':');
        if (host_end == std::string_view::npos) host_end = v.size();
        if (!valid_reg_name(v.substr(0, host_end))) return false;
    }
    if (host_end == v.size()) return rule == port_rule::optional;
    if (v[host_end] != ':') return false;
    std::string_view port = v.substr(host_end + 1);
    return all_digits(port) && (rule == port_rule::optional || !port.empty());
}

} // namespace skiff::detail

#endif // SKIFF_HTTP_HOST_HPP
