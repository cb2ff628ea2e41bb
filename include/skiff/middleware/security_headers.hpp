// The security headers built-in: fields that tell a browser to be strict with the answers.
//
//   app.use(skiff::security_headers());                       // the defaults below
//   skiff::security_options o;  o.hsts = skiff::hsts_options{};  // and HSTS, for an HTTPS site
//   app.use(skiff::security_headers(o));
//
// Every answer of the chain gets, written before next() (so early answers have them too):
//   X-Content-Type-Options: nosniff       always;
//   X-Frame-Options: DENY                 frame_options, empty for none;
//   Referrer-Policy: no-referrer          referrer_policy, empty for none (no-referrer, the
//                                         strictest, as the default; strict-origin-when-cross-
//                                         origin is the usual relaxed choice);
//   Strict-Transport-Security             only when hsts is set: "max-age=N", and
//                                         "; includeSubDomains" when asked. RFC 6797 §7.2: a
//                                         browser ignores it over plain HTTP, so set it only
//                                         where clients reach the server through TLS.
// The fields are composed and checked once, at start-up, into one block that the head takes
// by reference (response_access::add_fixed_fields): a request pays one copy of it, and a 200
// stays on the pre-composed head (tools/bench/middleware_counts.py measures it alone on a
// hello route). A handler that sets one of these fields too sends both lines, as before.
//
// Not here: Content-Security-Policy (it depends on the pages; set it with res.header()).
#ifndef SKIFF_MIDDLEWARE_SECURITY_HEADERS_HPP
#define SKIFF_MIDDLEWARE_SECURITY_HEADERS_HPP

#include "skiff/http/request.hpp"
#include "skiff/http/response.hpp"
#include "skiff/http/response_access.hpp"
#include "skiff/middleware/stack.hpp"

#include <cstdint>   // std::uint32_t, std::uint8_t
#include <memory>    // std::shared_ptr: the composed block, shared by every copy
#include <optional>  // std::optional HSTS
#include <string>    // std::string values
#include <utility>   // std::move, std::pair
#include <vector>    // the composed fields

namespace skiff {

enum class hsts_subdomains : std::uint8_t { excluded, included };

struct hsts_options {
    std::uint32_t max_age = 31536000;  // seconds: a year
    hsts_subdomains subdomains = hsts_subdomains::excluded;
};

struct security_options {
    std::string frame_options = "DENY";
    std::string referrer_policy = "no-referrer";
    std::optional<hsts_options> hsts;
};

namespace detail {

using field_list = std::vector<std::pair<std::string, std::string>>;

// The fields to write, each checked here once (a value with CR, LF or NUL is left out, as
// header() would leave it), so a request pays only their copy.
inline field_list security_fields(const security_options& o) {
    field_list fields{{"X-Content-Type-Options", "nosniff"}};
    if (!o.frame_options.empty()) fields.emplace_back("X-Frame-Options", o.frame_options);
    if (!o.referrer_policy.empty()) fields.emplace_back("Referrer-Policy", o.referrer_policy);
    if (o.hsts) {
        std::string value = "max-age=" + std::to_string(o.hsts->max_age);
        if (o.hsts->subdomains == hsts_subdomains::included) value += "; includeSubDomains";
        fields.emplace_back("Strict-Transport-Security", std::move(value));
    }
    field_list kept;
    for (auto& f : fields)
        if (response_access::checkable_field(f.first, f.second)) kept.push_back(std::move(f));
    return kept;
}

// The built-in's state: the checked fields as one block of head lines.
class security_state {
public:
    explicit security_state(const security_options& o) {
        for (const auto& f : security_fields(o)) block_.lines.append(f.first).append(": ").append(f.second).append("\r\n");
    }
    template <class Next>
    void serve(request&, response& res, const Next& go) const {
        response_access::add_fixed_fields(res, block_);
        go();
    }

private:
    field_block block_;
};

} // namespace detail

inline middleware security_headers(const security_options& o = {}) {
    return detail::make_builtin(std::make_shared<const detail::security_state>(o));
}

} // namespace skiff

#endif // SKIFF_MIDDLEWARE_SECURITY_HEADERS_HPP
