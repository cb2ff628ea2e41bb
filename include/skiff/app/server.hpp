// basic_server<Policy>: the public face. Register routes, listen, run; stop from anywhere.
//
//   skiff::server app;                               // basic_server<skiff::single>
//   app.get("/", [](skiff::request&, skiff::response& res) { res.text("Hello, World!"); });
//   if (auto ec = app.listen(8080)) return 1;        // 127.0.0.1 unless a host is given
//   return app.run();                                // until stop(); 0 on a clean stop
//
// Routes are registered before the first listener; from then on the router is read-only and
// shared by every loop. A server may have several listeners (TCP ports, Unix sockets,
// adopted or systemd descriptors, up to max_listeners) and accepts on all of them. Errors at
// start-up (a bad pattern, a port in use) are reported before serving: route registration
// throws route_error, the listen calls return the error code. run() serves on the caller's
// thread; start() on a thread of its own (background.hpp), which stop() and the destructor
// join.
#ifndef SKIFF_APP_SERVER_HPP
#define SKIFF_APP_SERVER_HPP

#include "skiff/async/hub.hpp"
#include "skiff/detail/call_chain.hpp"
#include "skiff/detail/unique_fd.hpp"
#include "skiff/engine/hooks.hpp"
#include "skiff/engine/options.hpp"
#include "skiff/files/serve_dir.hpp"
#include "skiff/fwd.hpp"
#include "skiff/middleware/stack.hpp"
#include "skiff/observe/access_log.hpp"
#include "skiff/observe/metrics.hpp"
#include "skiff/platform/listen_error.hpp"
#include "skiff/platform/listener.hpp"
#include "skiff/platform/socket.hpp"
#include "skiff/policy/background.hpp"
#include "skiff/policy/policy.hpp"
#include "skiff/policy/runners.hpp"
#include "skiff/router/router.hpp"
#include "skiff/upload/upload.hpp"
#include "skiff/upload/upload_hub.hpp"

#include <cstddef>       // std::size_t
#include <cstdint>       // std::uint16_t, std::uint8_t
#include <functional>    // std::function hooks
#include <memory>        // std::unique_ptr for the background thread
#include <string>        // std::string host and path
#include <string_view>   // std::string_view patterns
#include <sys/types.h>   // mode_t
#include <system_error>  // std::error_code
#include <type_traits>   // std::enable_if_t: use() of a maker; is_constructible_v: make_runner
#include <utility>       // std::move
#include <vector>        // std::vector of socket files and inherited descriptors

namespace skiff {

namespace detail {

// The runner a policy runs on. A threaded one starts each set's hub at listen and is handed
// the starter here, since the hub (async/) sits above the runners; single starts its hub on
// first use, so a single program that never defers names none (policy/runners.hpp).
template <class Runner>
Runner make_runner(const options& opt, const router& r) {
    if constexpr (std::is_constructible_v<Runner, const options&, const router&, start_services>)
        return Runner(opt, r, &async_hub::start);
    else
        return Runner(opt, r);
}

} // namespace detail

// Declared in fwd.hpp with its default, Policy = single, and the alias server =
// basic_server<single>; loop_ref is defined in async/deferred.hpp.
template <class Policy>
class basic_server {
    static_assert(detail::is_policy<Policy>,
                  "skiff::basic_server<Policy>: Policy must be skiff::single, skiff::sharded or skiff::shared, "
                  "or derive from exactly one of them");

public:
    explicit basic_server(skiff::options opt = {}) : opt_(std::move(opt)), runner_(detail::make_runner<detail::runner_for<Policy>>(opt_, router_)) {}
    basic_server(const basic_server&) = delete;
    basic_server& operator=(const basic_server&) = delete;
    // A server start()ed and still serving is stopped and joined first.
    ~basic_server() {
        if (background_) stop();
    }

    // Registers a handler. Patterns: "/static", "/user/:id", "/files/*path" (see router/trie.hpp).
    basic_server& route(std::string_view method, std::string_view pattern, handler h) {
        router_.add(method, pattern, middleware_.wrap(pattern, std::move(h)));
        return *this;
    }

    // The files under root at prefix ("/" or "/static"), for GET and HEAD: a `*path` route
    // answered by files/serve_dir.hpp (types, ETag, Range, precompressed siblings, sendfile).
    // root is resolved now; one that does not exist answers 404 to everything. The prefix
    // without its slash ("/static") is a directory too, so it answers 301 to "/static/", as
    // "/static/sub" does to "/static/sub/"; a GET route already registered there is kept.
    basic_server& serve_dir(std::string_view prefix, const std::string& root, static_options opt = {}) {
        std::string base(prefix);
        if (base.empty() || base.back() != '/') base += '/';
        detail::static_dir files(base, root, std::move(opt));
        get(base + "*path", files);
        std::string bare = base.substr(0, base.size() - 1);
        if (!bare.empty()) router_.try_add("GET", bare, middleware_.wrap(bare, std::move(files)));
        return *this;
    }

    // Middleware (middleware/stack.hpp) for the routes registered after this call: all of
    // them, and the 404, 405 and automatic OPTIONS answers; or those whose pattern lies under prefix ("/api").
    basic_server& use(middleware m) { return use("", std::move(m)); }
    basic_server& use(std::string prefix, middleware m) {
        middleware_.add(std::move(prefix), std::move(m));
        wrap_fallbacks();
        return *this;
    }
    // A built-in that needs this server's policy (concurrency_limit(n)): built here with
    // Policy, so it cannot be built for another (middleware/stack.hpp, "a maker").
    template <class Maker, class = std::enable_if_t<detail::is_policy_bound<Maker>>>
    basic_server& use(const Maker& make) {
        return use("", make.template for_policy<Policy>());
    }
    template <class Maker, class = std::enable_if_t<detail::is_policy_bound<Maker>>>
    basic_server& use(std::string prefix, const Maker& make) {
        return use(std::move(prefix), make.template for_policy<Policy>());
    }
    basic_server& get(std::string_view pattern, handler h) { return route("GET", pattern, std::move(h)); }
    basic_server& head(std::string_view pattern, handler h) { return route("HEAD", pattern, std::move(h)); }
    basic_server& post(std::string_view pattern, handler h) { return route("POST", pattern, std::move(h)); }
    basic_server& put(std::string_view pattern, handler h) { return route("PUT", pattern, std::move(h)); }
    basic_server& patch(std::string_view pattern, handler h) { return route("PATCH", pattern, std::move(h)); }
    basic_server& del(std::string_view pattern, handler h) { return route("DELETE", pattern, std::move(h)); }
    basic_server& options(std::string_view pattern, handler h) { return route("OPTIONS", pattern, std::move(h)); }

    // A route that takes its request body in pieces as they arrive (upload/upload.hpp), with
    // the middleware in force as route() has it.
    basic_server& upload(std::string_view method, std::string_view pattern, upload_handler fn) {
        auto route = detail::upload_route(std::move(fn), detail::paused_upload_holder<Policy>);
        router_.add(method, pattern, middleware_.wrap(pattern, std::move(route)), route_body::streamed);
        return *this;
    }

    // Custom 404 and 405 answers (status and Allow are already set when they run).
    basic_server& on_not_found(handler h) {
        not_found_ = std::move(h);
        wrap_fallbacks();
        return *this;
    }
    basic_server& on_method_not_allowed(handler h) {
        not_allowed_ = std::move(h);
        wrap_fallbacks();
        return *this;
    }

    // ---- observers (engine/hooks.hpp): set them before run() or start() -------------------
    // Each call adds one; several run in the order added. docs/api.md says when each is called.

    // Every response the server queues: the handlers' (404 and 405 too) and its own rejections
    // (400, 408, 413, 414, 417, 431, 501, 505, the 500 after a throw, the 503 at accept), with
    // the reason, status, bytes, duration and peer. Called on the loop's thread.
    basic_server& on_response(std::function<void(const response_event&)> fn) {
        detail::append_call(opt_.on_response, std::move(fn));
        return *this;
    }
    // A handler (or its middleware) threw: what() of a std::exception, else "unknown
    // exception", and the request, before the 500 is queued. Or a stream's source threw, on
    // the loop that writes it: the body is cut there, and the request has only its method
    // and target (its head is gone by then).
    basic_server& on_error(std::function<void(std::string_view what, const request&)> fn) {
        detail::append_call(opt_.on_error, std::move(fn));
        return *this;
    }
    // The server's own answers (400, 408, 413, 414, 417, 431, 501, 505, and the 500 after a
    // throw) pass no middleware, since no route was chosen; fn sees each before its body is
    // written and may add fields with header(), so those answers carry what middleware puts
    // on the others, and may write the body itself in the application's format:
    //   app.on_rejection([](skiff::response& res, skiff::rejection why) {
    //       res.json(std::string(R"({"error":")") + skiff::to_string(why) + "\"}");
    //   });
    // The status stays the server's (a hook that changes it gets the plain answer). The 503 at
    // accept is a fixed text and is not decorated.
    basic_server& on_rejection(std::function<void(response&, rejection)> fn) {
        detail::append_call(opt_.on_rejection, std::move(fn));
        return *this;
    }
    // stop() has begun (docs/stopping.md): fn runs once, on a serving thread, at the first turn
    // after stop(). Push streams and deferred answers are still open then: what fn writes to a
    // stream is sent before the server ends it, stop_grace later. So an application ends its
    // streams here (a last event, then close()), and tells its producers to stop.
    basic_server& on_stop(std::function<void()> fn) {
        detail::append_call(opt_.on_stop, std::move(fn));
        return *this;
    }
    // Keeps the counters of observe/metrics.hpp (from now on) and serves them at GET `path` in
    // the Prometheus text format. A route like any other, so register it where routes go.
    // `app_metrics(metrics_writer&)`, when given, appends the application's own families
    // after the server's at each scrape; under sharded and shared it is called from several
    // loop threads at once, so what it reads must be safe to read so (atomics, a lock).
    basic_server& serve_metrics(std::string_view path, std::function<void(metrics_writer&)> app_metrics = {}) {
        if (!metrics_) start_metrics();
        auto m = metrics_;
        return get(path, [m, app = std::move(app_metrics)](request&, response& res) {
            std::string text = m->render();
            if (app) {
                metrics_writer w(text);
                app(w);
            }
            res.body(text, "text/plain; version=0.0.4");
        });
    }

    // ---- listeners: each call adds one (or, for systemd, each it was passed) -------------
    // All of them before run() or start(), after the routes. Each returns the cause of a
    // failure (errno, skiff.listen or skiff.resolve category) and leaves the others in place.

    // TCP on host:port (port 0: the system picks; see port()). host is an IPv4 or IPv6 literal
    // ("0.0.0.0", "::1") or a name resolved with getaddrinfo ("localhost": its IPv4 address
    // when it has one, else the first given).
    std::error_code listen(std::uint16_t port, const std::string& host = "127.0.0.1") {
        if (background_) return listen_errc::already_started;
        detail::endpoint ep;
        if (auto ec = detail::resolve_endpoint(host, port, ep)) return ec;
        return note(runner_.listen(ep, opt_));
    }

    // A Unix domain socket at path, its file given `mode` before it accepts anyone (0660: the
    // owner and its group; 0666 for every local user). A socket file that no server answers on
    // any more (left by a crash) is replaced; a live one, or a file of another kind, is an
    // error. The file is removed when the server is destroyed. On Linux, "@name" is an
    // abstract socket: no file, no mode, gone with the server.
    std::error_code listen_unix(const std::string& path, mode_t mode = 0660) {
        if (background_) return listen_errc::already_started;
        detail::unique_fd fd;
        if (auto ec = detail::open_unix_listener(path, mode, opt_.listen_backlog, fd)) return ec;
        if (path.front() != '@') socket_files_.emplace_back(path);
        return note(runner_.adopt(std::move(fd), detail::transport::local, opt_));
    }

    // A socket someone else opened and put in the listening state (TCP or Unix). When it is
    // not one (not_a_listener, not_a_stream, EBADF, ENOTSOCK) fd is left as it was, still the
    // caller's; otherwise the server owns it from here on and closes it when done.
    std::error_code adopt(int fd) {
        if (background_) return listen_errc::already_started;
        detail::transport kind = detail::transport::tcp;
        if (auto ec = detail::check_listener(fd, kind)) return ec;
        return note(runner_.adopt(detail::unique_fd(fd), kind, opt_));
    }

    // systemd socket activation (sd_listen_fds(3)): adopts every descriptor systemd passed
    // (LISTEN_FDS from 3, when LISTEN_PID is this process) and unsets those variables, as
    // sd_listen_fds(1) does; no_systemd_sockets when there are none. Call it before starting
    // threads (unsetenv is not thread-safe). On an error, the descriptors after the one that
    // failed are left as they are.
    std::error_code listen_systemd() {
        std::vector<int> fds;
        if (auto ec = detail::systemd_fds(fds)) return ec;
        for (int fd : fds)
            if (auto ec = adopt(fd)) return ec;
        return {};
    }

    // The port of the first TCP listener (what port 0 chose); 0 when none is TCP.
    std::uint16_t port() const noexcept { return runner_.port(); }

    // Serves on this thread until stop(); returns 0 after a clean stop, 1 when no listener was
    // added or the poller failed (error() says why).
    int run() {
        if (listening_ == listening::none) {
            error_ = listen_errc::no_listener;
            return 1;
        }
        error_ = runner_.run();
        return error_ ? 1 : 0;
    }

    // Serves on a new thread and returns at once; stop() (or the destructor) stops and joins
    // it, and error() then says how serving ended. Errors: no_listener, already_started.
    // Only a program that calls start() contains its thread.
    std::error_code start() {
        if (listening_ == listening::none) return listen_errc::no_listener;
        if (background_) return listen_errc::already_started;
        background_ = detail::start_background([this] { error_ = runner_.run(); });
        return {};
    }

    // Why the last run() ended other than by stop(): the poller's error; empty otherwise.
    std::error_code error() const noexcept { return error_; }

    // Stops serving: the listeners close, requests already read are answered, idle
    // connections close, the on_stop hooks run, push streams end and deferred answers not
    // completed are answered 503 after options::stop_grace, and run() returns once every
    // connection has closed, within options::stop_timeout (docs/stopping.md). Safe to call from
    // another thread or a signal handler, once a listener was added. After start(), it also
    // waits for the serving thread to finish (so: from a thread, not a signal handler; from a
    // handler of this server it cannot wait, and returns at once).
    void stop() noexcept {
        runner_.stop();
        if (background_) background_->join();
    }
    // The same stop, begun and not waited for, after start() too: async-signal-safe on any
    // thread (skiff::stop_on_signals calls it). run() returns, or the serving thread ends,
    // once the drain is over; after start(), stop() or the destructor then joins it.
    void request_stop() noexcept { runner_.stop(); }

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
    enum class listening : std::uint8_t { none, some };

    // The router's 404, 405, 501 and bad-parameter 400 answers and its automatic OPTIONS,
    // behind the app-wide middleware when there is some.
    void wrap_fallbacks() {
        if (!middleware_.has_app_wide()) {
            router_.on_not_found(not_found_);
            router_.on_method_not_allowed(not_allowed_);
            router_.on_automatic_options(nullptr);
            router_.on_not_implemented(nullptr);
            router_.on_bad_parameter(nullptr);
            return;
        }
        auto or_text = [](const handler& h, const char* text) -> handler {
            if (h) return h;
            return [text](request&, response& res) { res.text(text); };
        };
        router_.on_not_found(middleware_.wrap_app(or_text(not_found_, "Not Found\n")));
        router_.on_method_not_allowed(middleware_.wrap_app(or_text(not_allowed_, "Method Not Allowed\n")));
        router_.on_automatic_options(middleware_.wrap_app([](request&, response& res) { res.end(); }));
        router_.on_not_implemented(middleware_.wrap_app(or_text(nullptr, "Not Implemented\n")));
        router_.on_bad_parameter(middleware_.wrap_app(or_text(nullptr, "Bad Request\n")));
    }

    using metrics_type = detail::metrics_store<detail::writers_for<detail::is_single<Policy>, detail::is_shared<Policy>>>;

    void start_metrics() {
        std::size_t loops = detail::is_single<Policy> ? 1 : detail::worker_count(opt_);
        metrics_ = std::make_shared<metrics_type>(loops);
        auto m = metrics_;
        on_response([m](const response_event& e) { m->record(e); });
        detail::append_call(opt_.on_connection, std::function<void(connection_change, std::size_t)>(
                                  [m](connection_change c, std::size_t loop) { m->on_connection(c, loop); }));
    }

    std::error_code note(std::error_code ec) noexcept {
        if (!ec) listening_ = listening::some;
        return ec;
    }

    skiff::options opt_;
    skiff::router router_;
    detail::middleware_stack middleware_;
    handler not_found_;    // as the user gave them; the router holds them wrapped
    handler not_allowed_;
    std::vector<detail::socket_file> socket_files_;  // removed after the runner closed the sockets
    detail::runner_for<Policy> runner_;
    std::unique_ptr<detail::background_thread> background_;  // set by start() only
    std::error_code error_;
    listening listening_ = listening::none;
    std::shared_ptr<metrics_type> metrics_;  // set by serve_metrics only
};

} // namespace skiff

#endif // SKIFF_APP_SERVER_HPP
