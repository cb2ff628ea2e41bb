// Cookies (RFC 6265): reading the Cookie request field, and building Set-Cookie values.
//
//   if (auto id = skiff::cookie(req, "session")) ...;                 // std::optional<string_view>
//   skiff::set_cookie c("session", token);
//   c.path("/").max_age(std::chrono::hours(1)).http_only().secure().same_site(skiff::same_site::lax);
//   if (auto ec = skiff::add_cookie(res, c)) ...;                    // refused: ec.message() says why
//
// Reading is tolerant, as browsers are not uniform: pairs split on ';', spaces and tabs around
// names and values dropped, one pair of double quotes around a value removed, empty items and
// items without '=' skipped, several Cookie fields read in order. Values are returned as sent
// (views into the request; no percent-decoding: RFC 6265 defines none).
//
// Building is strict (RFC 6265 §4.1.1), so a handler cannot emit what browsers drop or split:
// the name must be a token, the value cookie-octets (optionally quoted: no space, '"', ',',
// ';', '\\' or control), Domain letters, digits, '-' and '.', Path starting with '/' and
// without ';' or control characters. Also refused, since browsers refuse them: SameSite=None or
// Partitioned without Secure, and the __Secure- / __Host- name prefixes without their rules.
// Not here: cookie jars, signing or encryption, percent-encoding values.
#ifndef SKIFF_HTTP_COOKIE_HPP
#define SKIFF_HTTP_COOKIE_HPP

#include "skiff/detail/ascii.hpp"
#include "skiff/detail/date_cache.hpp"
#include "skiff/detail/scan.hpp"
#include "skiff/http/request.hpp"
#include "skiff/http/response.hpp"

#include <chrono>        // std::chrono::seconds, system_clock for Max-Age and Expires
#include <cstdint>       // std::uint8_t
#include <optional>      // std::optional for a cookie that may be absent
#include <string>        // std::string for the built field value
#include <string_view>   // std::string_view
#include <system_error>  // std::error_code, std::error_category
#include <type_traits>   // std::true_type for is_error_code_enum

namespace skiff {

// ---- reading ----------------------------------------------------------------------------

namespace detail {

inline std::string_view trim_cookie_space(std::string_view s) noexcept {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

} // namespace detail

// Calls fn(name, value) for each pair of one Cookie field value, in order (rules above).
template <class Fn>
void for_each_cookie(std::string_view field, Fn fn) {
    while (!field.empty()) {
        std::size_t semi = field.find(';');
        std::string_view item = field.substr(0, semi);
        std::size_t eq = item.find('=');
        std::string_view name = detail::trim_cookie_space(item.substr(0, eq));
        if (eq != std::string_view::npos && !name.empty()) {
            std::string_view value = detail::trim_cookie_space(item.substr(eq + 1));
            if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
            fn(name, value);
        }
        if (semi == std::string_view::npos) break;
        field.remove_prefix(semi + 1);
    }
}

// The value of the first cookie called `name` (case-sensitive, as RFC 6265 compares names)
// in any Cookie field of req, or nullopt when there is none. Allocation-free.
inline std::optional<std::string_view> cookie(const request& req, std::string_view name) {
    std::optional<std::string_view> found;
    for (const header_field& f : req) {
        if (found || !detail::iequals(f.name, "cookie")) continue;
        for_each_cookie(f.value, [&](std::string_view n, std::string_view v) {
            if (!found && n == name) found = v;
        });
    }
    return found;
}

// ---- building ---------------------------------------------------------------------------

enum class cookie_errc {
    invalid_name = 1,           // empty, or not a token (RFC 9110 §5.6.2)
    invalid_value,              // not cookie-octets (RFC 6265 §4.1.1)
    invalid_domain,             // empty, or other than letters, digits, '-' and '.'
    invalid_path,               // not starting with '/', or holding ';' or a control character
    none_without_secure,        // SameSite=None needs Secure
    partitioned_without_secure, // Partitioned needs Secure
    prefix_rules,               // __Secure- needs Secure; __Host- needs Secure, Path=/ and no Domain
};

} // namespace skiff

namespace std {
template <>
struct is_error_code_enum<skiff::cookie_errc> : true_type {};
} // namespace std

namespace skiff {

inline const std::error_category& cookie_category() noexcept {
    struct category : std::error_category {
        const char* name() const noexcept override { return "skiff.cookie"; }
        std::string message(int e) const override {
            switch (static_cast<cookie_errc>(e)) {
            case cookie_errc::invalid_name: return "cookie name must be a non-empty token (RFC 9110 5.6.2)";
            case cookie_errc::invalid_value:
                return "cookie value may not hold spaces, '\"', ',', ';', '\\' or control characters (RFC 6265 4.1.1)";
            case cookie_errc::invalid_domain: return "cookie Domain must be letters, digits, '-' and '.'";
            case cookie_errc::invalid_path: return "cookie Path must start with '/' and hold no ';' or control character";
            case cookie_errc::none_without_secure: return "SameSite=None requires Secure";
            case cookie_errc::partitioned_without_secure: return "Partitioned requires Secure";
            case cookie_errc::prefix_rules:
                return "__Secure- cookies require Secure; __Host- cookies require Secure, Path=/ and no Domain";
            }
            return "unknown cookie error";
        }
    };
    static const category c;
    return c;
}

inline std::error_code make_error_code(cookie_errc e) noexcept { return {static_cast<int>(e), cookie_category()}; }

enum class same_site : std::uint8_t { unset, strict, lax, none };

namespace detail {

// RFC 6265 §4.1.1: cookie-octet = %x21 / %x23-2B / %x2D-3A / %x3C-5B / %x5D-7E.
constexpr bool is_cookie_octet(char ch) noexcept {
    auto c = static_cast<unsigned char>(ch);
    return c >= 0x21 && c <= 0x7E && c != '"' && c != ',' && c != ';' && c != '\\';
}

inline bool valid_cookie_value(std::string_view v) noexcept {
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
    for (char c : v)
        if (!is_cookie_octet(c)) return false;
    return true;
}

inline bool valid_cookie_domain(std::string_view d) noexcept {
    if (d.empty()) return false;
    for (char c : d)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.'))
            return false;
    return true;
}

// RFC 6265 §4.1.1: path-value = <any CHAR except CTLs or ";">; and it must name a path.
inline bool valid_cookie_path(std::string_view p) noexcept {
    if (p.empty() || p.front() != '/') return false;
    for (char ch : p) {
        auto c = static_cast<unsigned char>(ch);
        if (c < 0x20 || c >= 0x7F || c == ';') return false;
    }
    return true;
}

} // namespace detail

// One Set-Cookie field value, built attribute by attribute. Start-up or handler code, not the
// hot path: it allocates.
class set_cookie {
public:
    set_cookie(std::string_view name, std::string_view value) : name_(name), value_(value) {}

    // A cookie that deletes `name` in the browser: empty value, Max-Age=0, Expires in 1970.
    // Give it the Path and Domain the cookie was set with.
    static set_cookie removal(std::string_view name) {
        set_cookie c(name, "");
        c.max_age(std::chrono::seconds(0)).expires(std::chrono::system_clock::time_point{});
        return c;
    }

    set_cookie& max_age(std::chrono::seconds s) {  // negative counts as 0: expire now
        max_age_ = s.count() < 0 ? 0 : s.count();
        return *this;
    }
    set_cookie& expires(std::chrono::system_clock::time_point t) {
        detail::date_cache d;  // IMF-fixdate, as the Date field (RFC 6265 §4.1.1: sane-cookie-date)
        d.update(std::chrono::system_clock::to_time_t(t));
        std::string_view line = d.line();  // "Date: <date>\r\n"
        expires_ = std::string(line.substr(6, line.size() - 8));
        return *this;
    }
    set_cookie& domain(std::string_view d) {
        domain_ = d;
        return *this;
    }
    set_cookie& path(std::string_view p) {
        path_ = p;
        return *this;
    }
    set_cookie& secure() {
        secure_ = true;
        return *this;
    }
    set_cookie& http_only() {
        http_only_ = true;
        return *this;
    }
    set_cookie& same_site(skiff::same_site s) {
        same_site_ = s;
        return *this;
    }
    set_cookie& partitioned() {
        partitioned_ = true;
        return *this;
    }

    // Empty when the cookie may be sent; otherwise the first rule it breaks.
    std::error_code check() const noexcept {
        if (name_.empty() || !detail::all_tchars(name_)) return cookie_errc::invalid_name;
        if (!detail::valid_cookie_value(value_)) return cookie_errc::invalid_value;
        if (domain_ && !detail::valid_cookie_domain(*domain_)) return cookie_errc::invalid_domain;
        if (path_ && !detail::valid_cookie_path(*path_)) return cookie_errc::invalid_path;
        if (same_site_ == skiff::same_site::none && !secure_) return cookie_errc::none_without_secure;
        if (partitioned_ && !secure_) return cookie_errc::partitioned_without_secure;
        if (!prefix_rules_hold()) return cookie_errc::prefix_rules;
        return {};
    }

    // The Set-Cookie field value; empty when check() fails.
    std::string to_string() const {
        if (check()) return {};
        std::string out = name_ + "=" + value_;
        if (max_age_) out += "; Max-Age=" + std::to_string(*max_age_);
        if (expires_) out += "; Expires=" + *expires_;
        if (domain_) out += "; Domain=" + *domain_;
        if (path_) out += "; Path=" + *path_;
        if (secure_) out += "; Secure";
        if (http_only_) out += "; HttpOnly";
        if (same_site_ != skiff::same_site::unset) out += same_site_text();
        if (partitioned_) out += "; Partitioned";
        return out;
    }

private:
    // draft-ietf-httpbis-rfc6265bis §4.1.3: cookie name prefixes.
    bool prefix_rules_hold() const noexcept {
        std::string_view n = name_;
        if (n.substr(0, 9) == "__Secure-") return secure_;
        if (n.substr(0, 7) == "__Host-") return secure_ && !domain_ && path_ && *path_ == "/";
        return true;
    }

    const char* same_site_text() const noexcept {
        switch (same_site_) {
        case skiff::same_site::strict: return "; SameSite=Strict";
        case skiff::same_site::lax: return "; SameSite=Lax";
        case skiff::same_site::none: return "; SameSite=None";
        case skiff::same_site::unset: break;
        }
        return "";
    }

    std::string name_;
    std::string value_;
    std::optional<long long> max_age_;
    std::optional<std::string> expires_;
    std::optional<std::string> domain_;
    std::optional<std::string> path_;
    skiff::same_site same_site_ = skiff::same_site::unset;
    bool secure_ = false;
    bool http_only_ = false;
    bool partitioned_ = false;
};

// Adds a Set-Cookie field to res, or, when the cookie breaks a rule, adds nothing and returns
// why (cookie_category()).
inline std::error_code add_cookie(response& res, const set_cookie& c) {
    if (std::error_code ec = c.check()) return ec;
    res.header("Set-Cookie", c.to_string());
    return {};
}

} // namespace skiff

#endif // SKIFF_HTTP_COOKIE_HPP
