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
// (no prefix) also wraps the 404, 405 and 501 answers, the 400 for a parameter that does not
// decode, and the automatic OPTIONS answer (204 with Allow, for a path whose routes have no
// OPTIONS handler), so a CORS preflight reaches it.
//
// A built-in that needs what only the server knows, its threading policy (concurrency_limit's
// count, shared by the loops), is not a middleware but a maker: an object with
// `template <class Policy> middleware for_policy() const`. use() calls it with the server's own
// Policy, so the two cannot disagree (a count compiled for `single` on a sharded server is a
// data race that compiles).
//
// A chain is a flat array of steps, each a plain function and the state it serves with,
// ending with the route's handler; next() calls the step after its own. A built-in (the
// middleware/ headers) is a std::function holding a detail::builtin_step, which use() finds
// and calls directly, so the chain pays no std::function hop for it; any other middleware
// is called through its std::function. (Where the standard library cannot find the step in
// the function, without RTTI under libc++, a built-in is called through it too: the same
// answer, a few instructions more.)
//
// Not here: the request path is not matched against prefixes per request (the route's pattern
// was, at registration); a middleware added after a route does not reach it.
#ifndef SKIFF_MIDDLEWARE_STACK_HPP
#define SKIFF_MIDDLEWARE_STACK_HPP

#include "skiff/detail/ascii.hpp"
#include "skiff/detail/bytes.hpp"
#include "skiff/http/request.hpp"
#include "skiff/http/response.hpp"
#include "skiff/policy/policy.hpp"
#include "skiff/router/router.hpp"

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t, std::uint32_t: word compares
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

// One step of a route's chain: a plain function and the state it serves with (the file
// comment). The last step of a chain is the handler, which is given a next it ignores.
struct chain_step {
    using function = void (*)(const void* state, request&, response&, const next&);
    function call;
    const void* state;
};

} // namespace detail

// Continues the chain from the middleware that received it. Calling it twice runs the rest
// twice; not calling it ends the chain there.
class next {
public:
    next(const detail::chain_step* rest, request& req, response& res) noexcept : rest_(rest), req_(&req), res_(&res) {}
    void operator()() const { rest_->call(rest_->state, *req_, *res_, next(rest_ + 1, *req_, *res_)); }

private:

    const detail::chain_step* rest_;  // the step that runs next; the handler's is the last
    request* req_;
    response* res_;
};

namespace detail {

// The rest of the chain when it is only the handler: what the last built-in of a chain is
// given as its next, so that go() calls the handler itself (no next built, no step between).
class handler_next {
public:
    handler_next(const handler& h, request& req, response& res) noexcept : handler_(&h), req_(&req), res_(&res) {}
    void operator()() const {
        if (*handler_) (*handler_)(*req_, *res_);
    }

private:
    const handler* handler_;
    request* req_;
    response* res_;
};

// A built-in and the handler behind it, as one handler: what the router calls for a route
// whose last middleware is a built-in (the built-in's serve() inlined into the call, the
// handler called from it: measured about 25 instructions a request less than as two steps).
template <class State>
struct builtin_then_handler {
    std::shared_ptr<const State> state;
    handler last;

    void operator()(request& req, response& res) const { state->serve(req, res, handler_next(last, req, res)); }
};

// What a built-in middleware is inside its std::function: its step, and the state the step
// points at, kept alive by every copy. Called as a middleware, it runs its step.
// (The state's serve() takes its next as a template parameter: skiff::next, or handler_next
// where the handler follows it.)
class builtin_step {
public:
    // A built-in joined with the handler behind it (builtin_then_handler); `keep` is its state.
    using joiner = handler (*)(const std::shared_ptr<const void>& keep, handler h);

    template <class State>
    explicit builtin_step(std::shared_ptr<const State> state)
        : step_{&serve<State>, state.get()}, join_(&join<State>), keep_(std::move(state)) {}
    void operator()(request& req, response& res, const next& go) const { step_.call(step_.state, req, res, go); }
    chain_step step() const noexcept { return step_; }
    joiner join_handler() const noexcept { return join_; }
    const std::shared_ptr<const void>& keep() const noexcept { return keep_; }

private:
    template <class State>
    static void serve(const void* state, request& req, response& res, const next& go) {
        static_cast<const State*>(state)->serve(req, res, go);
    }
    template <class State>
    static handler join(const std::shared_ptr<const void>& keep, handler h) {
        return builtin_then_handler<State>{std::static_pointer_cast<const State>(keep), std::move(h)};
    }
    chain_step step_;
    joiner join_;
    std::shared_ptr<const void> keep_;
};

// A built-in: `state` answers template <class Next> serve(request&, response&, const Next&) const.
template <class State>
middleware make_builtin(std::shared_ptr<const State> state) {
    return builtin_step(std::move(state));
}

// One route's fixed sequence: the middleware's steps in order, then the handler's; `keep`
// holds what the steps point at.
struct chain {
    std::vector<chain_step> steps;
    std::vector<std::shared_ptr<const void>> keep;
    handler last;

};

// iequals_token (ascii.hpp) for the field names the built-ins look up, with overlapping word
// loads in place of its byte-at-a-time tail: s is a token, every byte of lower has the 0x20
// bit (lower-case letters, digits, '-').
inline bool token_is(std::string_view s, std::string_view lower) noexcept {
    std::size_t n = s.size();
    if (n != lower.size()) return false;
    const char* a = s.data();
    const char* b = lower.data();
    constexpr std::uint64_t bits8 = 0x2020202020202020u;
    constexpr std::uint32_t bits4 = 0x20202020u;
    if (n >= 8) {
        for (std::size_t i = 0; i + 8 < n; i += 8)
            if ((load8(a + i) | bits8) != load8(b + i)) return false;
        return (load8(a + n - 8) | bits8) == load8(b + n - 8);
    }
    if (n >= 4) return (load4(a) | bits4) == load4(b) && (load4(a + n - 4) | bits4) == load4(b + n - 4);
    return iequals_token(s, lower);
}

// The value of the first field named `lower`, as request::header() finds it, a word at a
// time (token_is; measured: the Origin lookup of cors() about 60 -> 20 instructions).
inline std::string_view token_field(const request& req, std::string_view lower) noexcept {
    for (const header_field& f : req)
        if (token_is(f.name, lower)) return f.value;
    return {};
}

// What the router holds for a route with middleware: the first step itself (one load less
// a request than reaching it through the chain) and the rest.
struct chain_entry {
    chain_step first;
    const chain_step* rest;
    std::shared_ptr<const chain> keep;

    void operator()(request& req, response& res) const { first.call(first.state, req, res, next(rest, req, res)); }
};

inline void call_middleware(const void* fn, request& req, response& res, const next& go) {
    (*static_cast<const middleware*>(fn))(req, res, go);
}
inline void call_handler(const void* fn, request& req, response& res, const next&) {
    const handler& h = *static_cast<const handler*>(fn);
    if (h) h(req, res);
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
        if (const builtin_step* b = m.target<builtin_step>()) {
            entries_.push_back({std::move(prefix), b->step(), b->join_handler(), b->keep()});
            return;
        }
        auto fn = std::make_shared<const middleware>(std::move(m));
        chain_step step{&call_middleware, fn.get()};
        entries_.push_back({std::move(prefix), step, nullptr, std::move(fn)});
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
    // h behind the app-wide middleware only (for 404, 405, 501 and a bad parameter's 400).
    handler wrap_app(handler h) const {
        return compose(std::move(h), [](const entry& e) { return e.prefix.empty(); });
    }

private:
    struct entry {
        std::string prefix;
        chain_step step;
        builtin_step::joiner join;         // a built-in's; null for any other middleware
        std::shared_ptr<const void> keep;  // what step points at
    };

    template <class Applies>
    handler compose(handler h, Applies applies) const {
        std::vector<const entry*> in_force;
        for (const entry& e : entries_)
            if (applies(e)) in_force.push_back(&e);
        if (in_force.empty()) return h;  // no middleware: the handler is called directly
        if (in_force.back()->join != nullptr) {  // a built-in last: joined with the handler
            h = in_force.back()->join(in_force.back()->keep, std::move(h));
            in_force.pop_back();
            if (in_force.empty()) return h;
        }
        auto c = std::make_shared<chain>();
        for (const entry* e : in_force) {
            c->steps.push_back(e->step);
            c->keep.push_back(e->keep);
        }
        c->last = std::move(h);
        c->steps.push_back({&call_handler, &c->last});  // c is not moved again: the address holds
        return chain_entry{c->steps[0], c->steps.data() + 1, std::move(c)};
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

#endif // SKIFF_MIDDLEWARE_STACK_HPP
