// The router a server owns: handlers by (method, pattern) over the trie, and the answers
// HTTP requires when no handler fits: 404, 405 with Allow, 204 with Allow for OPTIONS, HEAD
// served by the GET handler (the response then omits the body). Built before serving; const
// and shared by every loop afterwards.
#ifndef SKIFF_ROUTER_ROUTER_HPP
#define SKIFF_ROUTER_ROUTER_HPP

#include "skiff/config.hpp"
#include "skiff/http/fields.hpp"
#include "skiff/http/method.hpp"
#include "skiff/http/request.hpp"
#include "skiff/http/response.hpp"
#include "skiff/router/trie.hpp"

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint32_t
#include <cstdio>       // std::fprintf for the -fno-exceptions registration failure
#include <cstdlib>      // std::abort
#include <functional>   // std::function: the handler type
#include <stdexcept>    // std::invalid_argument
#include <string>       // std::string for Allow and errors (start-up and error paths only)
#include <string_view>  // std::string_view
#include <utility>      // std::move
#include <vector>       // std::vector of handlers

namespace skiff {

using handler = std::function<void(request&, response&)>;

// Thrown at registration for a bad or conflicting pattern; the message names both patterns.
struct route_error : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

namespace detail {
#if SKIFF_HAS_EXCEPTIONS
[[noreturn]] inline void fail_registration(const std::string& why) { throw route_error(why); }
#else
[[noreturn]] inline void fail_registration(const std::string& why) {
    std::fprintf(stderr, "skiff: %s\n", why.c_str());
    std::abort();
}
#endif // SKIFF_HAS_EXCEPTIONS
} // namespace detail

class router {
public:
    // Registers h for method (any token: "GET", "PURGE") and pattern. Throws route_error
    // (aborts with the message under -fno-exceptions) on a bad or conflicting pattern.
    void add(std::string_view method_name, std::string_view pattern, handler h) {
        std::string err = try_add(method_name, pattern, std::move(h));
        if (!err.empty()) detail::fail_registration(err);
    }

    // As add(), but returns the error message instead ("" on success).
    std::string try_add(std::string_view method_name, std::string_view pattern, handler h) {
        if (method_name.empty()) return "empty method name";
        for (char c : method_name)
            if (!detail::is_tchar(c)) return "invalid method name '" + std::string(method_name) + "'";
        auto index = static_cast<std::uint32_t>(handlers_.size());
        std::string err = trie_.insert(method_name, pattern, index);
        if (err.empty()) handlers_.push_back(std::move(h));
        return err;
    }

    // Custom answers for unknown paths and wrong methods; the status (404, 405) and, for 405,
    // the Allow field are already set when they run.
    void on_not_found(handler h) { not_found_ = std::move(h); }
    void on_method_not_allowed(handler h) { not_allowed_ = std::move(h); }

    // Answers req: runs the matching handler, or writes the 404/405/OPTIONS response.
    // Exceptions from a handler propagate (the loop turns them into 500).
    void serve(request& req, response& res) const {
        route_params& params = detail::request_access::params(req);
        detail::trie_match m = trie_.search(req.verb(), req.method(), req.path(), params);
        if (m.handler != 0) {
            if (!detail::request_access::decode_params(req)) return res.status(400).text("Bad Request\n");
            return handlers_[m.handler - 1](req, res);
        }
        if (m.allowed == 0 && !(req.path() == "*" && req.verb() == method::options)) {
            res.status(404);
            return not_found_ ? not_found_(req, res) : res.text("Not Found\n");
        }
        detail::method_mask allowed = m.allowed == 0 ? trie_.all_methods() : m.allowed;
        res.header("Allow", allow_value(allowed, req.path()));
        if (req.verb() == method::options) return res.status(204).end();  // RFC 9110 §9.3.7
        res.status(405);
        return not_allowed_ ? not_allowed_(req, res) : res.text("Method Not Allowed\n");
    }

    // True when some handler would serve (method, path); used before reading a body.
    bool has_route(method verb, std::string_view method_name, std::string_view path) const noexcept {
        route_params scratch;
        return trie_.search(verb, method_name, path, scratch).handler != 0;
    }

    std::size_t size() const noexcept { return handlers_.size(); }

private:
    // "GET, HEAD, POST, OPTIONS": registered methods, HEAD wherever GET is, OPTIONS always.
    // An error path only, so it may build a string.
    std::string allow_value(detail::method_mask allowed, std::string_view path) const {
        std::string v;
        auto add = [&](std::string_view m) {
            bool listed = false;
            detail::for_each_list_item(v, [&](std::string_view item) { return !(listed = item == m); });
            if (listed) return;
            if (!v.empty()) v += ", ";
            v += m;
        };
        auto bit = [&](method m) { return (allowed >> static_cast<unsigned>(m)) & 1u; };
        for (std::size_t i = 0; i < known_method_count; ++i) {
            auto m = static_cast<method>(i);
            if (bit(m) || (m == method::head && bit(method::get)) || m == method::options) add(method_names[i]);
        }
        if (allowed & detail::other_bit) trie_.for_each_other_method(path, add);
        return v;
    }

    detail::route_trie trie_;
    std::vector<handler> handlers_;
    handler not_found_;
    handler not_allowed_;
};

} // namespace skiff

#endif // SKIFF_ROUTER_ROUTER_HPP
