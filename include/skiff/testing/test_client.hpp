// A test client for handlers, middleware, deadlines and pipelining, without a listening
// socket or a thread: the routes a program registers on a server, served by skiff's own loop
// (testing/test_loop.hpp) over a socketpair, stepped by hand on the calling thread.
//
//   skiff::testing::test_client client([](skiff::server& app) { add_routes(app); });
//   auto r = client.get("/user/7");            // sends, serves until idle, reads the answer
//   CHECK(r.status == 200);
//   client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n");
//   client.advance(std::chrono::seconds(11));  // the clock moves only here: deadlines and timers fire
//
// Every call that sends or moves the clock then serves until idle: the loop turns until a
// turn finds nothing ready and brings no bytes either way. What the server wrote is kept
// whole (raw_output) and read response by response (next_response). The Date header is fixed
// (testing::fixed_date), so answers compare byte for byte.
//
// It does not: run the sharded or shared policies (the routes are the same under each; their
// threading is tested with a real server) or wait for a thread that completes a deferred
// answer: join it, then run(). The loop's services (loop_ref timers, deferred_timeout) follow
// the test clock like the deadlines. Use client.loop(), not app().loop(): the
// server object only holds the routes and options; it never listens.
#ifndef SKIFF_TESTING_TEST_CLIENT_HPP
#define SKIFF_TESTING_TEST_CLIENT_HPP

#include "skiff/app/server.hpp"
#include "skiff/async/deferred.hpp"
#include "skiff/config.hpp"
#include "skiff/engine/options.hpp"
#include "skiff/fwd.hpp"
#include "skiff/platform/socket.hpp"
#include "skiff/policy/policy.hpp"
#include "skiff/testing/test_loop.hpp"
#include "skiff/testing/test_response.hpp"

#include <cerrno>        // EAGAIN and friends
#include <chrono>        // std::chrono::milliseconds
#include <cstddef>       // std::size_t
#include <cstdint>       // std::uint8_t
#include <cstdio>        // std::fprintf, without exceptions
#include <cstdlib>       // std::abort, without exceptions
#include <memory>        // std::unique_ptr: the loop is made on first use
#include <stdexcept>     // std::runtime_error when no socketpair can be made
#include <string>        // pending input, output
#include <string_view>   // std::string_view
#include <sys/socket.h>  // socketpair, recv
#include <type_traits>   // std::enable_if_t, std::is_invocable_v
#include <unistd.h>      // close
#include <utility>       // std::move

namespace skiff::detail {

// No loop or no socketpair (descriptors ran out): the test cannot go on.
#if SKIFF_HAS_EXCEPTIONS
[[noreturn]] inline void fail_test_setup(const std::string& why) {
    throw std::runtime_error("skiff test client: " + why);
}
#else
[[noreturn]] inline void fail_test_setup(const std::string& why) {
    std::fprintf(stderr, "skiff test client: %s\n", why.c_str());
    std::abort();
}
#endif // SKIFF_HAS_EXCEPTIONS

} // namespace skiff::detail

namespace skiff::testing {

// Declared in fwd.hpp with its default, Policy = single, and the alias test_client.
template <class Policy>
class basic_test_client {
    static_assert(skiff::detail::is_single<Policy>,
                  "skiff::testing::basic_test_client<Policy>: the test client steps one loop on the calling thread; "
                  "use skiff::single (routes and handlers are the same under every policy)");

public:
    using server_type = basic_server<Policy>;

    explicit basic_test_client(skiff::options opt = {}) : app_(std::move(opt)) {}
    // setup(app()) registers the routes: the same function a program calls on its server.
    template <class Setup, class = std::enable_if_t<std::is_invocable_v<Setup&, server_type&>>>
    explicit basic_test_client(Setup&& setup, skiff::options opt = {}) : app_(std::move(opt)) {
        setup(app_);
    }
    basic_test_client(const basic_test_client&) = delete;
    basic_test_client& operator=(const basic_test_client&) = delete;
    ~basic_test_client() { hang_up(); }

    // Routes, middleware and options, before the first request.
    server_type& app() noexcept { return app_; }

    // ---- sending: each serves until idle afterwards --------------------------------------

    // The bytes exactly as given (several requests, half of one, garbage).
    basic_test_client& send(std::string_view bytes) {
        connect_once();
        unsent_.append(bytes);
        run();
        return *this;
    }
    // A request with Host and, for a body, Content-Length; then the next response.
    test_response get(std::string_view target) { return request("GET", target); }
    test_response post(std::string_view target, std::string_view body, std::string_view content_type = "text/plain") {
        return request("POST", target, body, content_type);
    }
    test_response request(std::string_view method, std::string_view target, std::string_view body = {},
                          std::string_view content_type = {}) {
        std::string r = std::string(method) + " " + std::string(target) + " HTTP/1.1\r\nHost: test\r\n";
        if (!content_type.empty()) r += "Content-Type: " + std::string(content_type) + "\r\n";
        if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH")
            r += "Content-Length: " + std::to_string(body.size()) + "\r\n";
        r += "\r\n";
        r += body;
        send(r);
        return next_response(method == "HEAD" ? answer_to::head : answer_to::other);
    }

    // ---- time and stepping ---------------------------------------------------------------

    // Moves the clock on, then serves until idle: the deadlines it passed fire (a deadline
    // fires up to one wheel tick, a tenth of the shortest, after its time; never before).
    void advance(std::chrono::milliseconds by) {
        open_loop();
        loop_->advance(by);
        run();
    }
    std::chrono::milliseconds now() {
        open_loop();
        return loop_->now();
    }

    // Turns the loop until a turn finds nothing to do. For answers completed since the last
    // call (a deferred answer the test completed, a task posted to the loop).
    void run() {
        open_loop();
        for (std::size_t i = 0; i < max_turns; ++i)
            if (step() == progress::idle) return;
    }

    // ---- what came back ------------------------------------------------------------------

    // The next complete response not yet returned, or one whose status is 0 (false) when
    // there is none (yet). answer_to::head: it answers a HEAD request, so it has no body.
    test_response next_response(answer_to to = answer_to::other) {
        test_response r;
        std::size_t used = 0;
        stream_end end = link_ == link::closed_by_server ? stream_end::closed : stream_end::open;
        std::string_view rest = std::string_view(output_).substr(read_at_);
        if (read_response(rest, to, end, r, used) != read_state::complete) return {};
        read_at_ += used;
        return r;
    }
    // Every byte the server wrote on this connection, exactly.
    const std::string& raw_output() const noexcept { return output_; }
    // What the server wrote that no response returned yet took, and taking the first n bytes
    // of it: for what follows an upgrade (testing/test_websocket.hpp reads frames so).
    std::string_view unread() const noexcept { return std::string_view(output_).substr(read_at_); }
    void take(std::size_t n) noexcept { read_at_ += n < output_.size() - read_at_ ? n : output_.size() - read_at_; }
    // The server closed this connection (its end reads EOF or reset).
    bool closed() const noexcept { return link_ == link::closed_by_server; }
    // Connections the server holds open.
    std::size_t connections() const noexcept { return loop_ ? loop_->connections() : 0; }

    // From now on the client takes nothing more off its socket, as a client that stops
    // reading: the server's writes stall once the socket buffers fill, and its write deadline
    // (options::write_timeout) runs. What came back until now stays readable. A server close
    // is then not seen by closed(); connections() says whether the server still holds it.
    // reconnect() reads again.
    void stop_reading() noexcept { reading_ = reading::stopped; }

    // Drops this connection (the server sees the client go) and opens a fresh one: output,
    // unsent bytes and the read position start again.
    void reconnect() {
        hang_up();
        connect_once();
    }

    // The loop's services: post work and set timers on the loop the client steps.
    template <class Loop = skiff::loop_ref>
    Loop loop() {
        open_loop();
        return Loop(loop_->anchor());
    }

private:
    enum class link : std::uint8_t { none, open, closed_by_server };
    enum class progress : std::uint8_t { some, idle };
    enum class reading : std::uint8_t { on, stopped };

    static constexpr std::size_t max_turns = 100000;        // a handler that never goes idle
    static constexpr std::size_t max_output = 64u << 20;     // past this the client stops reading

    void open_loop() {
        if (loop_) return;
        loop_ = std::make_unique<skiff::detail::test_loop>(app_.settings(), app_.router());
        if (auto ec = loop_->open()) skiff::detail::fail_test_setup(ec.message());
    }

    void connect_once() {
        open_loop();
        if (link_ != link::none) return;
        int fds[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0)
            skiff::detail::fail_test_setup("socketpair: " + skiff::detail::last_errno().message());
        for (int fd : fds) {
            skiff::detail::set_nonblocking(fd);
            skiff::detail::set_cloexec(fd);
            skiff::detail::prepare_connection(fd, skiff::detail::transport::local);
        }
        fd_ = fds[0];
        link_ = link::open;
        loop_->admit(fds[1]);
    }

    // One turn of the loop between a write of what is unsent and a read of what came back.
    progress step() {
        bool moved = write_some();
        int events = loop_->turn();
        moved = read_some() || moved;
        return events > 0 || moved ? progress::some : progress::idle;
    }

    bool write_some() {
        if (link_ != link::open || sent_ == unsent_.size()) return false;
        ssize_t n = skiff::detail::send_some(fd_, unsent_.data() + sent_, unsent_.size() - sent_);
        if (n <= 0) return false;  // full until the server reads; or closed, which read_some sees
        sent_ += static_cast<std::size_t>(n);
        if (sent_ == unsent_.size()) forget_sent();
        return true;
    }
    void forget_sent() noexcept {
        unsent_.clear();
        sent_ = 0;
    }

    bool read_some() {
        if (link_ != link::open || reading_ == reading::stopped || output_.size() >= max_output) return false;
        char buf[16384];
        bool got = false;
        for (;;) {
            ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
            if (n > 0) {
                output_.append(buf, static_cast<std::size_t>(n));
                got = true;
                continue;
            }
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return got;
            link_ = link::closed_by_server;  // EOF, or reset
            return true;
        }
    }

    // The client goes: the server reads EOF and closes its end on the next turn.
    void hang_up() {
        if (link_ != link::none) {
            ::close(fd_);
            link_ = link::none;
            if (loop_) run();
        }
        fd_ = -1;
        forget_sent();
        output_.clear();
        read_at_ = 0;
        reading_ = reading::on;
    }

    server_type app_;
    std::unique_ptr<skiff::detail::test_loop> loop_;
    int fd_ = -1;
    link link_ = link::none;
    reading reading_ = reading::on;
    std::string unsent_;  // what send() was given, from sent_ on not yet taken by the socket
    std::size_t sent_ = 0;
    std::string output_;
    std::size_t read_at_ = 0;
};

} // namespace skiff::testing

#endif // SKIFF_TESTING_TEST_CLIENT_HPP
