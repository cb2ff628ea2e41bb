// The router a server owns: handlers by (method, pattern) over the trie (trie.hpp states the
// matching rules), and the answers HTTP requires when no handler fits:
//  - no route matches the path: 404 (on_not_found() replaces the body);
//  - routes match the path, none for this method: 405 with Allow (RFC 9110 §15.5.6;
//    on_method_not_allowed() replaces the body);
//  - OPTIONS with no OPTIONS handler: 204 with Allow (RFC 9110 §9.3.7); "OPTIONS *" lists
//    every method some route accepts;
//  - HEAD with no HEAD handler: the GET handler runs, and the response omits the body.
// Allow lists the methods in a fixed order (GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS,
// CONNECT, TRACE, then extension methods in registration order): HEAD wherever GET is, and
// OPTIONS always, since the router answers it.
//
// Trailing slash: "/users" and "/users/" are different routes unless set_trailing_slash(
// trailing_slash::either) was called before the first route; then every route is registered
// under both spellings at start-up (a wildcard route as it is: it matches the slash already),
// so the lookup costs nothing more and nothing redirects.
//
// Built before serving; const and shared by every loop afterwards. serve() allocates nothing
// beyond what a handler does: parameters decode into the request's arena, and Allow is built
// in fixed room.
#ifndef SKIFF_ROUTER_ROUTER_HPP
#define SKIFF_ROUTER_ROUTER_HPP

#include "skiff/detail/scan.hpp"
#include "skiff/http/method.hpp"
#include "skiff/http/request.hpp"
#include "skiff/http/response.hpp"
#include "skiff/http/route_params.hpp"
#include "skiff/router/allow_list.hpp"
#include "skiff/router/route_error.hpp"
#include "skiff/router/trie.hpp"

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint32_t, std::uint8_t
#include <functional>   // std::function: the handler type
#include <string>       // std::string for errors (start-up only)
#include <string_view>  // std::string_view
#include <utility>      // std::move
#include <vector>       // std::vector of handlers

namespace skiff {

using handler = std::function<void(request&, response&)>;

enum class trailing_slash : std::uint8_t {
    distinct,  // "/a" and "/a/" are different routes (the default)
    either,    // each route also answers under its other spelling
};

// How a route takes a request body: buffered whole before the handler runs, or streamed to
// it in pieces (upload/upload.hpp), which the server must know from the head alone.
enum class route_body : std::uint8_t { buffered, streamed };

class router {
public:
    // Registers h for method (any token: "GET", "PURGE") and pattern. Throws route_error
    // (aborts with the message under -fno-exceptions) on a bad or conflicting pattern.
    void add(std::string_view method_name, std::string_view pattern, handler h,
             route_body body = route_body::buffered) {
        std::string err = try_add(method_name, pattern, std::move(h), body);
        if (!err.empty()) detail::fail_registration(err);
    }

    // As add(), but returns the error message instead ("" on success). A refused route
    // changes nothing.
    std::string try_add(std::string_view method_name, std::string_view pattern, handler h,
                        route_body body = route_body::buffered) {
        if (method_name.empty()) return "empty method name";
        if (!detail::all_tchars(method_name)) return detail::message({"invalid method name '", method_name, "'"});
        std::string twin = slash_ == trailing_slash::either ? other_spelling(pattern) : std::string();
        std::string err = trie_.check(method_name, pattern);
        if (err.empty() && !twin.empty()) {
            err = trie_.check(method_name, twin);
            if (!err.empty())
                err += detail::message({" (with trailing_slash::either, '", pattern, "' is also '", twin, "')"});
        }
        if (!err.empty()) return err;
        auto index = static_cast<std::uint32_t>(handlers_.size());
        trie_.add(method_name, pattern, index, pattern);
        if (!twin.empty()) trie_.add(method_name, twin, index, pattern);
        handlers_.push_back(std::move(h));
        bodies_.push_back(body);
        if (body == route_body::streamed) streamed_ = route_body::streamed;
        return {};
    }

    // How a trailing slash matches (see the file comment). Call it before the first route.
    void set_trailing_slash(trailing_slash rule) {
        if (!handlers_.empty()) detail::fail_registration("set_trailing_slash() must come before the first route");
        slash_ = rule;
    }

    // Custom answers for unknown paths and wrong methods; the status (404, 405) and, for 405,
    // the Allow field are already set when they run.
    void on_not_found(handler h) { not_found_ = std::move(h); }
    void on_method_not_allowed(handler h) { not_allowed_ = std::move(h); }
    // The automatic OPTIONS answer (204, Allow set) through h instead: the server passes it
    // the app-wide middleware, so a CORS preflight needs no OPTIONS route.
    void on_automatic_options(handler h) { automatic_options_ = std::move(h); }
    // The 501 for a method no route takes (status set) through h instead: the server passes
    // it the app-wide middleware too, so it carries their fields as a 404 does.
    void on_not_implemented(handler h) { not_implemented_ = std::move(h); }
    // The 400 for a route's parameter that does not decode (%zz, an encoded '/' or NUL; status
    // set) through h instead: the server passes it the app-wide middleware too.
    void on_bad_parameter(handler h) { bad_parameter_ = std::move(h); }

    // Answers req: runs the matching handler, or writes the 400/404/405/501/OPTIONS response.
    // Exceptions from a handler propagate (the loop turns them into 500).
    // The whole-path hit is inlined into the caller, the rest is a call: measured, contract
    // app 1,210 -> 1,193 instructions a request.
    SKIFF_ALWAYS_INLINE void serve(request& req, response& res) const {
        if (detail::route_id h = trie_.find_static_route(req.verb(), req.method(), req.path())) {
            detail::request_access::params(req).count = 0;  // nothing to decode
            return handlers_[h.index()](req, res);
        }
        serve_by_trie(req, res);
    }

    // The trie walk: parameters, wildcards, 404, 405 and the automatic OPTIONS.
    SKIFF_NOINLINE void serve_by_trie(request& req, response& res) const {
        route_params& params = detail::request_access::params(req);
        detail::trie_match m = trie_.search(req.verb(), req.method(), req.path(), params);
        if (m.handler) {
            if (!detail::request_access::decode_params(req)) return bad_parameter(req, res);
            return handlers_[m.handler.index()](req, res);
        }
        params.count = 0;  // a 404 or 405 handler must not see values from a failed branch
        if (!implemented(req.verb(), req.method())) {
            res.status(501);
            return not_implemented_ ? not_implemented_(req, res) : res.text("Not Implemented\n");
        }
        bool asterisk = req.verb() == method::options && req.path() == "*";
        if (m.allowed == 0 && !asterisk) {
            res.status(404);
            return not_found_ ? not_found_(req, res) : res.text("Not Found\n");
        }
        write_allow(res, asterisk ? trie_.all_methods() : m.allowed, req.path());
        if (req.verb() == method::options) {
            res.status(204);
            return automatic_options_ ? automatic_options_(req, res) : res.end();
        }
        res.status(405);
        return not_allowed_ ? not_allowed_(req, res) : res.text("Method Not Allowed\n");
    }

    // The handler for (method, path) and the raw (not yet decoded) parameter values, or
    // nullptr when serve() would answer 404, 405 or the automatic OPTIONS. HEAD finds the GET
    // handler. Allocation-free.
    const handler* match(method verb, std::string_view method_name, std::string_view path,
                         route_params& params) const noexcept {
        if (detail::route_id h = trie_.find_static_route(verb, method_name, path)) {
            params.count = 0;
            return &handlers_[h.index()];
        }
        detail::route_id h = trie_.search(verb, method_name, path, params).handler;
        return h ? &handlers_[h.index()] : nullptr;
    }

    // True when some handler would serve (method, path); used before reading a body.
    bool has_route(method verb, std::string_view method_name, std::string_view path) const noexcept {
        route_params scratch;
        return match(verb, method_name, path, scratch) != nullptr;
    }

    std::size_t size() const noexcept { return handlers_.size(); }

    // Whether any route streams its body, and whether the one for (method, path) does.
    bool streams_any() const noexcept { return streamed_ == route_body::streamed; }
    bool streams(method verb, std::string_view method_name, std::string_view path) const noexcept {
        route_params scratch;
        const handler* h = match(verb, method_name, path, scratch);
        return h != nullptr && bodies_[static_cast<std::size_t>(h - handlers_.data())] == route_body::streamed;
    }

private:
    SKIFF_NOINLINE void bad_parameter(request& req, response& res) const {
        detail::request_access::params(req).count = 0;  // none decoded: the handler sees none
        res.status(400);
        return bad_parameter_ ? bad_parameter_(req, res) : res.text("Bad Request\n");
    }

    // RFC 9110 §9.1: a method the server recognises for no resource gets 501, not 405. The
    // methods every HTTP server is expected to know answer 405 with Allow instead; TRACE,
    // CONNECT and extension methods are 501 unless some route takes them.
    bool implemented(method verb, std::string_view name) const noexcept {
        switch (verb) {
        case method::get:
        case method::head:
        case method::post:
        case method::put:
        case method::delete_:
        case method::patch:
        case method::options: return true;
        default: return trie_.routes_method(verb, name);
        }
    }

    // "/a" <-> "/a/". None for "/" (its other spelling is no path) or for a pattern ending in a
    // wildcard, which matches a trailing slash already; a bad pattern is left to check().
    static std::string other_spelling(std::string_view p) {
        if (p.size() < 2 || p.front() != '/') return {};
        if (p.back() == '/') return std::string(p.substr(0, p.size() - 1));
        if (p[p.rfind('/') + 1] == '*') return {};
        return std::string(p) + '/';
    }

    void write_allow(response& res, detail::method_mask allowed, std::string_view path) const {
        detail::allow_list allow;
        auto has = [&](method m) { return ((allowed >> static_cast<unsigned>(m)) & 1u) != 0; };
        for (std::size_t i = 0; i < known_method_count; ++i) {
            auto m = static_cast<method>(i);
            if (has(m) || (m == method::head && has(method::get)) || m == method::options) allow.add(method_names[i]);
        }
        if ((allowed & detail::other_bit) && path == "*") {
            for (const std::string& name : trie_.other_methods()) allow.add(name);
        } else if (allowed & detail::other_bit) {
            route_params scratch;  // the same search again, now noting the extension methods
            trie_.search(method::other, {}, path, scratch, &allow);
        }
        res.header("Allow", allow.value());
    }

    detail::route_trie trie_;
    std::vector<handler> handlers_;
    std::vector<route_body> bodies_;  // by handler index
    route_body streamed_ = route_body::buffered;  // streamed once any route is
    handler not_found_;
    handler not_allowed_;
    handler automatic_options_;
    handler not_implemented_;
    handler bad_parameter_;
    trailing_slash slash_ = trailing_slash::distinct;
};

} // namespace skiff

#endif // SKIFF_ROUTER_ROUTER_HPP
