// basic_server<Policy>: the public face. Register routes, listen, run; stop from anywhere.
//
//   skiff::server app;                               // basic_server<skiff::single>
//   app.get("/", [](skiff::request&, skiff::response& res) { res.text("Hello, World!"); });
//   if (auto ec = app.listen(8080)) return 1;        // 127.0.0.1 unless a host is given
//   return app.run();                                // until stop(); 0 on a clean stop
//
// Routes are registered before listen(); from then on the router is read-only and shared by
// every loop. Errors at start-up (a bad pattern, a port in use) are reported before serving:
// route registration throws route_error, listen() returns the error code.
#ifndef SKIFF_SERVER_SERVER_HPP
#define SKIFF_SERVER_SERVER_HPP

#include "skiff/platform/socket.hpp"
#include "skiff/router/router.hpp"
#include "skiff/server/options.hpp"
#include "skiff/server/policy.hpp"
#include "skiff/server/runners.hpp"

#include <cstddef>       // std::size_t
#include <cstdint>       // std::uint16_t
#include <string>        // std::string host
#include <string_view>   // std::string_view patterns
#include <system_error>  // std::error_code
#include <utility>       // std::move

namespace skiff {

class loop_ref;  // async/deferred.hpp

template <class Policy = single>
class basic_server {
    static_assert(detail::is_policy<Policy>,
                  "skiff::basic_server<Policy>: Policy must be skiff::single, skiff::sharded or skiff::shared, "
                  "or derive from exactly one of them");

public:
    explicit basic_server(skiff::options opt = {}) : opt_(std::move(opt)), runner_(opt_, router_) {}
    basic_server(const basic_server&) = delete;
    basic_server& operator=(const basic_server&) = delete;

    // Registers a handler. Patterns: "/static", "/user/:id", "/files/*path" (see router/trie.hpp).
    basic_server& route(std::string_view method, std::string_view pattern, handler h) {
        router_.add(method, pattern, std::move(h));
        return *this;
    }
    basic_server& get(std::string_view pattern, handler h) { return route("GET", pattern, std::move(h)); }
    basic_server& head(std::string_view pattern, handler h) { return route("HEAD", pattern, std::move(h)); }
    basic_server& post(std::string_view pattern, handler h) { return route("POST", pattern, std::move(h)); }
    basic_server& put(std::string_view pattern, handler h) { return route("PUT", pattern, std::move(h)); }
    basic_server& patch(std::string_view pattern, handler h) { return route("PATCH", pattern, std::move(h)); }
    basic_server& del(std::string_view pattern, handler h) { return route("DELETE", pattern, std::move(h)); }
    basic_server& options(std::string_view pattern, handler h) { return route("OPTIONS", pattern, std::move(h)); }

    // Custom 404 and 405 answers (status and Allow are already set when they run).
    basic_server& on_not_found(handler h) {
        router_.on_not_found(std::move(h));
        return *this;
    }
    basic_server& on_method_not_allowed(handler h) {
        router_.on_method_not_allowed(std::move(h));
        return *this;
    }

    // Binds and listens (port 0: the system picks; see port()). host is an IPv4 or IPv6
    // literal. Call once, after the routes are registered.
    std::error_code listen(std::uint16_t port, const std::string& host = "127.0.0.1") {
        detail::endpoint ep;
        if (!detail::make_endpoint(host, port, ep)) return std::make_error_code(std::errc::invalid_argument);
        std::error_code ec = runner_.listen(ep, opt_);
        listening_ = !ec;
        return ec;
    }

    std::uint16_t port() const noexcept { return runner_.port(); }

    // Serves until stop(); returns 0 after a clean stop, 1 when listen() did not succeed or
    // the poller failed (error() says why).
    int run() {
        if (!listening_) return 1;
        error_ = runner_.run();
        return error_ ? 1 : 0;
    }

    // Why the last run() ended other than by stop(): the poller's error; empty otherwise.
    std::error_code error() const noexcept { return error_; }

    // Stops serving: the listener closes, requests already read are answered, idle
    // connections close, and run() returns within options::stop_timeout. Safe to call from
    // another thread or a signal handler, once listen() has succeeded.
    void stop() noexcept { runner_.stop(); }

    // The services of loop `index` (sharded: one per worker; single and shared: one), to post
    // work, set timers or watch descriptors on (async/deferred.hpp). After listen(); under
    // single, before run() or on the loop's own thread, since the first call starts them. A
    // template so that a program that never asks compiles none of it.
    template <class Loop = skiff::loop_ref>
    Loop loop(std::size_t index = 0) {
        return Loop(runner_.anchor(index));
    }
    // How many loops loop() can name.
    std::size_t loops() const noexcept { return runner_.loops(); }

    const skiff::options& settings() const noexcept { return opt_; }
    skiff::router& router() noexcept { return router_; }

private:
    skiff::options opt_;
    skiff::router router_;
    detail::runner_for<Policy> runner_;
    std::error_code error_;
    bool listening_ = false;
};

using server = basic_server<single>;

} // namespace skiff

#endif // SKIFF_SERVER_SERVER_HPP
