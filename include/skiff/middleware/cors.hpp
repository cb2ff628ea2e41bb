// The CORS built-in (Fetch standard, "CORS protocol"): lets pages from other origins call
// the server, and answers their preflights.
//
//   skiff::cors_options o;
//   o.origins = {"https://app.example"};          // or {"*"}: any origin
//   app.use(skiff::cors(o));                      // app-wide: preflights need no OPTIONS route
//
// A request whose Origin is allowed gets Access-Control-Allow-Origin: <that origin> (or "*"
// when any origin is allowed and credentials are not: with credentials a browser refuses
// "*", so the origin is echoed), Access-Control-Allow-Credentials: true when credentials are
// allowed, and Access-Control-Expose-Headers when expose_headers is set. Origins compare
// exactly, as browsers send them ("https://app.example", no path, no trailing slash).
// With a list of origins, or with credentials, every answer says Vary: Origin, allowed or
// not, so a cache keeps one answer per origin. Other origins, and requests without Origin,
// get no CORS field.
//
// A preflight (OPTIONS with Origin and Access-Control-Request-Method) from an allowed origin
// is answered here, 204 without calling next(): Allow-Origin as above, Allow-Methods
// (methods), Allow-Headers (headers, or when empty the Access-Control-Request-Headers the
// preflight asked for, over all its lines, with Vary: Access-Control-Request-Headers, as
// Express's cors does, so a cache keeps one answer per list), and Max-Age (max_age seconds; nullopt for none). A preflight from
// another origin goes on as a plain OPTIONS request (the router's automatic 204 with Allow)
// and gets no CORS field, so the browser refuses the call.
//
// Used app-wide, it also wraps the router's automatic OPTIONS answers and its 404s, so no
// OPTIONS route is needed; used under a prefix (app.use("/api", cors(o))), it wraps only the
// routes there, and a preflight to a path without an OPTIONS route is not seen: add one
// (app.options("/api/*rest", ...)) or use it app-wide.
//
// Not here: origin patterns (wildcard subdomains); Access-Control-Allow-Private-Network.
#ifndef SKIFF_MIDDLEWARE_CORS_HPP
#define SKIFF_MIDDLEWARE_CORS_HPP

#include "skiff/config.hpp"
#include "skiff/detail/bytes.hpp"
#include "skiff/http/method.hpp"
#include "skiff/http/request.hpp"
#include "skiff/http/response.hpp"
#include "skiff/http/response_access.hpp"
#include "skiff/middleware/stack.hpp"

#include <cstdint>      // std::uint32_t, std::uint8_t
#include <memory>       // std::shared_ptr: the policy, shared by every copy
#include <optional>     // std::optional max age
#include <string>       // std::string options
#include <string_view>  // std::string_view
#include <utility>      // std::move
#include <vector>       // std::vector of origins

namespace skiff {

enum class cors_credentials : std::uint8_t { omitted, allowed };

struct cors_options {
    std::vector<std::string> origins;  // exact origins, or {"*"} for any; empty: none allowed
    std::string methods = "GET, HEAD, POST, PUT, PATCH, DELETE";
    std::string headers;         // Allow-Headers of a preflight; empty: those the preflight asked for
    std::string expose_headers;  // Access-Control-Expose-Headers on other answers; empty: none
    cors_credentials credentials = cors_credentials::omitted;
    std::optional<std::uint32_t> max_age = 600;  // seconds a browser may cache a preflight
};

namespace detail {

class cors_policy {
public:
    explicit cors_policy(cors_options o)
        : opt_(checked(std::move(o))), any_(opt_.origins.size() == 1 && opt_.origins[0] == "*"),
          max_age_(opt_.max_age ? std::to_string(*opt_.max_age) : std::string()) {
        if (!any_ || opt_.credentials == cors_credentials::allowed) vary_.lines = "Vary: Origin\r\n";
        if (opt_.credentials == cors_credentials::allowed) credentials_.lines = "Access-Control-Allow-Credentials: true\r\n";
        if (!opt_.expose_headers.empty())
            exposed_.lines = "Access-Control-Expose-Headers: " + opt_.expose_headers + "\r\n";
    }

    template <class Next>
    void serve(request& req, response& res, const Next& go) const {
        response_access::add_fixed_fields(res, vary_);  // the answer differs per origin (or empty)
        std::string_view allowed = allow_origin(token_field(req, "origin"));
        if (allowed.empty()) return go();
        if (req.verb() == method::options && req.has_header("access-control-request-method"))
            return answer_preflight(req, res, allowed);
        mark(res, allowed);
        response_access::add_fixed_fields(res, exposed_);
        go();
    }

private:
    // Every field this writes is checked here, once, or comes from the request (whose field
    // values the parser admitted: no CR, LF or NUL), so a request pays only the copies. An
    // origin or a list that header() would refuse is dropped.
    static cors_options checked(cors_options o) {
        auto fits = [](std::string_view value) { return response_access::checkable_field("Vary", value); };
        std::vector<std::string> origins;
        for (std::string& origin : o.origins)
            if (fits(origin)) origins.push_back(std::move(origin));
        o.origins = std::move(origins);
        for (std::string* list : {&o.methods, &o.headers, &o.expose_headers})
            if (!fits(*list)) list->clear();
        return o;
    }

    static void add(response& res, std::string_view name, std::string_view value) {
        response_access::add_checked_field(res, name, value);
    }

    // The Access-Control-Allow-Origin value for origin; empty when it is not allowed.
    std::string_view allow_origin(std::string_view origin) const noexcept {
        if (origin.empty()) return {};
        if (any_) return opt_.credentials == cors_credentials::allowed ? origin : std::string_view("*");
        for (const std::string& o : opt_.origins)
            if (o.size() == origin.size() && same_bytes(o.data(), origin.data(), o.size())) return origin;
        return {};
    }

    SKIFF_ALWAYS_INLINE void mark(response& res, std::string_view allowed) const {
        response_access::add_checked_field(res, "Access-Control-Allow-Origin", allowed);  // inline: every answer
        response_access::add_fixed_fields(res, credentials_);
    }

    void answer_preflight(const request& req, response& res, std::string_view allowed) const {
        res.status(204);
        mark(res, allowed);
        if (!opt_.methods.empty()) add(res, "Access-Control-Allow-Methods", opt_.methods);
        std::string joined;
        std::string_view headers = opt_.headers;
        if (headers.empty()) {  // the preflight's own list, echoed: the answer differs by it
            headers = requested_headers(req, joined);
            add(res, "Vary", "Access-Control-Request-Headers");
        }
        if (!headers.empty()) add(res, "Access-Control-Allow-Headers", headers);
        if (!max_age_.empty()) add(res, "Access-Control-Max-Age", max_age_);
        res.end();
    }

    // Access-Control-Request-Headers is a list, which a client or proxy may split over several
    // lines (RFC 9110 §5.3): all of them, joined into `joined`; a lone line is returned as it is.
    static std::string_view requested_headers(const request& req, std::string& joined) {
        std::string_view first;
        for (std::string_view line : req.header_values("access-control-request-headers")) {
            if (line.empty()) continue;
            if (first.empty()) {
                first = line;
                continue;
            }
            if (joined.empty()) joined = first;
            joined.append(", ").append(line);
        }
        return joined.empty() ? first : std::string_view(joined);
    }

    cors_options opt_;
    bool any_;
    std::string max_age_;      // the decimal seconds, composed once
    field_block vary_;         // "Vary: Origin" where the answer depends on the origin; else empty
    field_block credentials_;  // Allow-Credentials: true, when allowed; else empty
    field_block exposed_;      // Access-Control-Expose-Headers, when set; else empty
};

} // namespace detail

inline middleware cors(cors_options o) {
    return detail::make_builtin(std::make_shared<const detail::cors_policy>(std::move(o)));
}

} // namespace skiff

#endif // SKIFF_MIDDLEWARE_CORS_HPP
