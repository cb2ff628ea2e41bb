// Middleware: code that runs around a route's handler, on the whole app or on the routes under
// a path prefix ("/api").
//
//   app.use([](skiff::request& req, skiff::response& res, const skiff::next& next) {
//       if (req.header("authorization") != "Bearer secret") return res.status(401).text("no\n");
//       next();                                   // the rest of the chain, then the handler
//       res.header("X-Status-Seen", res.status() == 200 ? "ok" : "other");  // added late
//   });
//
// A middleware answers early by not calling next(); it runs code before and after the rest of
// the chain; after next() it sees the final status and may still add headers (response.hpp
// says when the head is written: for a plain response, after the whole chain has returned).
//
// Chains are built once: use() applies to the routes registered after it (as in Express), and
// route() composes the middleware in force into one fixed sequence for that route. A route with
// none keeps its handler as it is, so a program that registers no middleware runs exactly the
// code it ran before (the contract app's instruction counts do not move). App-wide middleware
// (no prefix) also wraps the 404 and 405 answers and the automatic OPTIONS answer (204 with
// Allow, for a path whose routes have no OPTIONS handler), so a CORS preflight reaches it.
//
// A built-in that needs what only the server knows, its threading policy (concurrency_limit's
// count, shared by the loops), is not a middleware but a maker: an object with
// `template <class Policy> middleware for_policy() const`. use() calls it with the server's own
// Policy, so the two cannot disagree (a count compiled for `single` on a sharded server is a
// data race that compiles).
//
// Not here: the request path is not matched against prefixes per request (the route's pattern
// was, at registration); a middleware added after a route does not reach it.
#ifndef SKIFF_SERVER_MIDDLEWARE_HPP
#define SKIFF_SERVER_MIDDLEWARE_HPP

#include "skiff/http/request.hpp"
#include "skiff/http/response.hpp"
#include "skiff/router/router.hpp"
#include "skiff/server/policy.hpp"

#include <cstddef>      // std::size_t
#include <functional>   // std::function
#include <memory>       // std::shared_ptr: chains share their middleware
#include <string>       // std::string prefixes (start-up only)
#include <string_view>  // std::string_view patterns
#include <type_traits>  // std::void_t, detecting a maker
#include <utility>      // std::declval, std::move
#include <vector>       // std::vector of middleware

namespace skiff {

class next;
using middleware = std::function<void(request&, response&, const next&)>;

namespace detail {

// One route's fixed sequence: the middleware in order, then the handler.
struct chain {
    std::vector<std::shared_ptr<const middleware>> steps;
    handler last;

    void run(std::size_t i, request& req, response& res) const;
};

} // namespace detail

// Continues the chain from the middleware that received it. Calling it twice runs the rest
// twice; not calling it ends the chain there.
class next {
public:
    next(const detail::chain& c, std::size_t i, request& req, response& res) noexcept
        : chain_(&c), index_(i), req_(&req), res_(&res) {}
    void operator()() const { chain_->run(index_ + 1, *req_, *res_); }

private:
    const detail::chain* chain_;
    std::size_t index_;
    request* req_;
    response* res_;
};

namespace detail {

inline void chain::run(std::size_t i, request& req, response& res) const {
    if (i < steps.size()) return (*steps[i])(req, res, next(*this, i, req, res));
    if (last) last(req, res);
}

// Whether T is a maker (above): basic_server::use() takes it and supplies its Policy.
template <class T, class = void>
inline constexpr bool is_policy_bound = false;
template <class T>
inline constexpr bool
    is_policy_bound<T, std::void_t<decltype(std::declval<const T&>().template for_policy<single>())>> = true;

// The middleware registered so far, with the prefixes they apply to ("" for the whole app).
class middleware_stack {
public:
    void add(std::string prefix, middleware m) {
        entries_.push_back({std::move(prefix), std::make_shared<const middleware>(std::move(m))});
    }
    bool has_app_wide() const noexcept {
        for (const entry& e : entries_)
            if (e.prefix.empty()) return true;
        return false;
    }

    // h behind the middleware whose prefix covers pattern; h itself when none does.
    handler wrap(std::string_view pattern, handler h) const {
        return compose(std::move(h), [&](const entry& e) { return covers(e.prefix, pattern); });
    }
    // h behind the app-wide middleware only (for 404 and 405).
    handler wrap_app(handler h) const {
        return compose(std::move(h), [](const entry& e) { return e.prefix.empty(); });
    }

private:
    struct entry {
        std::string prefix;
        std::shared_ptr<const middleware> fn;
    };

    template <class Applies>
    handler compose(handler h, Applies applies) const {
        chain c;
        for (const entry& e : entries_)
            if (applies(e)) c.steps.push_back(e.fn);
        if (c.steps.empty()) return h;  // no middleware: the handler is called directly
        c.last = std::move(h);
        auto shared = std::make_shared<const chain>(std::move(c));
        return [shared](request& req, response& res) { shared->run(0, req, res); };
    }

    // "/api" covers "/api", "/api/users" and "/api/:id", not "/apis".
    static bool covers(std::string_view prefix, std::string_view pattern) noexcept {
        if (prefix.empty()) return true;
        if (pattern.substr(0, prefix.size()) != prefix) return false;
        return pattern.size() == prefix.size() || prefix.back() == '/' || pattern[prefix.size()] == '/';
    }

    std::vector<entry> entries_;
};

} // namespace detail
} // namespace skiff

#endif // SKIFF_SERVER_MIDDLEWARE_HPP
