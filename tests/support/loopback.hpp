// Loopback helpers for end-to-end tests: a server on an ephemeral port in a background thread,
// and a raw socket client with timeouts, so a broken server fails a test instead of hanging it.
#ifndef SKIFF_TESTS_SUPPORT_LOOPBACK_HPP
#define SKIFF_TESTS_SUPPORT_LOOPBACK_HPP

#include <skiff/skiff.hpp>

#include "support/responses.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <ostream>  // doctest prints a failed std::error_code with it
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

// Every end-to-end test runs under each threading policy:
//   TEST_CASE_TEMPLATE("...", Policy, SKIFF_TEST_POLICIES) { running_server<Policy> srv(...); }
#define SKIFF_TEST_POLICIES skiff::single, skiff::sharded, skiff::shared

// The suites instantiate the server once per policy, in support/servers.cpp, rather than in
// each of their files: that halves each file's compile time (unoptimised builds; an optimising
// compiler still instantiates what it may inline). A program that includes this header without
// linking that file (a fuzz target) instantiates them itself, as any user does.
#ifdef SKIFF_TEST_SERVERS_COMPILED
SKIFF_EXTERN_SERVER(skiff::single);
SKIFF_EXTERN_SERVER(skiff::sharded);
SKIFF_EXTERN_SERVER(skiff::shared);
#endif

namespace skiff_test {

using namespace std::chrono_literals;

// Sanitizer builds change memory use and timing; tests of RSS skip their bounds there.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool sanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool sanitized = true;
#else
inline constexpr bool sanitized = false;
#endif
#else
inline constexpr bool sanitized = false;
#endif

// A server on 127.0.0.1:<ephemeral> running in a background thread until destroyed.
template <class Policy = skiff::single>
class running_server {
public:
    // Multi-threaded policies get two workers unless the test says otherwise.
    // The constructor returns once every worker thread runs, so a test that then changes the
    // process (its descriptor limit, say) does not race the server's start-up.
    explicit running_server(std::function<void(skiff::basic_server<Policy>&)> setup, skiff::options opt = {})
        : app_(std::make_unique<skiff::basic_server<Policy>>(with_workers(std::move(opt), started_))) {
        setup(*app_);
        if (auto ec = app_->listen(0)) throw std::runtime_error("listen: " + ec.message());
        thread_ = std::thread([this] { exit_code_ = app_->run(); });
        unsigned workers = std::is_same_v<Policy, skiff::single> ? 0 : app_->settings().workers;
        while (started_->load() < workers) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    running_server(const running_server&) = delete;
    running_server& operator=(const running_server&) = delete;
    ~running_server() { stop(); }

    std::uint16_t port() const { return app_->port(); }
    skiff::basic_server<Policy>& app() { return *app_; }

    // Stops and joins; returns run()'s exit code.
    int stop() {
        if (thread_.joinable()) {
            app_->stop();
            thread_.join();
        }
        return exit_code_;
    }

private:
    static skiff::options with_workers(skiff::options opt, const std::shared_ptr<std::atomic<unsigned>>& started) {
        if (opt.workers == 0) opt.workers = 2;
        opt.on_worker_start = [started, user = opt.on_worker_start](unsigned i) {
            if (user) user(i);
            ++*started;
        };
        return opt;
    }

    std::shared_ptr<std::atomic<unsigned>> started_ = std::make_shared<std::atomic<unsigned>>(0);
    std::unique_ptr<skiff::basic_server<Policy>> app_;
    std::thread thread_;
    int exit_code_ = -1;
};

// A Unix socket address for client: a path, or "@name" for an abstract one (Linux).
struct unix_address {
    std::string path;
};

// A blocking TCP (or Unix socket) client with a deadline on every read.
class client {
public:
    explicit client(const unix_address& to) {
        fd_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::memcpy(a.sun_path, to.path.data(), to.path.size());
        if (!to.path.empty() && to.path[0] == '@') a.sun_path[0] = '\0';
        auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + to.path.size() + (a.sun_path[0] ? 1 : 0));
        if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), len) != 0) {
            ::close(fd_);
            throw std::runtime_error("connect to " + to.path + " failed");
        }
    }
    explicit client(std::uint16_t port) {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
            throw std::runtime_error("connect failed");
        int one = 1;
        ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    client(const client&) = delete;
    client& operator=(const client&) = delete;
    client(client&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
    ~client() {
        if (fd_ >= 0) ::close(fd_);
    }

    int fd() const { return fd_; }

    void send(const std::string& data) {
        std::size_t off = 0;
        while (off < data.size()) {
            ssize_t n = ::send(fd_, data.data() + off, data.size() - off, MSG_NOSIGNAL);
            if (n <= 0) throw std::runtime_error("send failed");
            off += static_cast<std::size_t>(n);
        }
    }

    void shutdown_write() { ::shutdown(fd_, SHUT_WR); }

    // Reads what is available within `wait`; returns "" on timeout, and sets closed() on EOF.
    std::string read_some(std::chrono::milliseconds wait = 2000ms) {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(wait.count())) <= 0) return {};
        char buf[65536];
        ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
        if (n <= 0) {
            closed_ = true;
            reset_ = n < 0;
            return {};
        }
        return std::string(buf, static_cast<std::size_t>(n));
    }

    // Reads until `done(all bytes so far)` holds, EOF, or the deadline passes.
    template <class Done>
    std::string read_until(Done done, std::chrono::milliseconds limit = 3000ms) {
        std::string all;
        auto end = std::chrono::steady_clock::now() + limit;
        while (!done(all) && !closed_ && std::chrono::steady_clock::now() < end) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
            all += read_some(left > 0ms ? left : 1ms);
        }
        return all;
    }

    // Reads until the peer closes (or the deadline passes).
    std::string read_to_close(std::chrono::milliseconds limit = 3000ms) {
        return read_until([](const std::string&) { return false; }, limit);
    }

    bool closed() const { return closed_; }
    bool reset() const { return reset_; }

private:
    int fd_ = -1;
    bool closed_ = false;
    bool reset_ = false;
};

// Resident set size of this process, in bytes (Linux /proc).
inline long resident_bytes() {
    long pages = 0, resident = 0;
    FILE* f = std::fopen("/proc/self/statm", "r");
    if (f == nullptr) return -1;
    int got = std::fscanf(f, "%ld %ld", &pages, &resident);
    std::fclose(f);
    return got == 2 ? resident * ::sysconf(_SC_PAGESIZE) : -1;
}

// Raises the descriptor limit towards `want`; returns the limit now in force.
inline long raise_fd_limit(long want) {
    rlimit r{};
    ::getrlimit(RLIMIT_NOFILE, &r);
    if (static_cast<long>(r.rlim_cur) < want) {
        r.rlim_cur = static_cast<long>(r.rlim_max) < want ? r.rlim_max : static_cast<rlim_t>(want);
        ::setrlimit(RLIMIT_NOFILE, &r);
        ::getrlimit(RLIMIT_NOFILE, &r);
    }
    return static_cast<long>(r.rlim_cur);
}

// Reads until n complete responses arrived (or the deadline).
inline std::vector<response> read_responses(client& c, std::size_t n, std::chrono::milliseconds limit = 3000ms) {
    std::string all = c.read_until([n](const std::string& s) { return parse_responses(s).size() >= n; }, limit);
    return parse_responses(all);
}

// Sends raw on a new connection and returns the one response to it; throws (a failed test
// case) when none arrives in time.
inline response one_response(std::uint16_t port, const std::string& raw) {
    client c(port);
    c.send(raw);
    auto rs = read_responses(c, 1);
    if (rs.empty()) throw std::runtime_error("no response to: " + raw.substr(0, raw.find('\r')));
    return rs[0];
}

// True when nothing listens on port any more (a stopped server's listener is closed).
inline bool connect_refused(std::uint16_t port) {
    try {
        client c(port);
        return false;
    } catch (const std::runtime_error&) {
        return true;
    }
}

} // namespace skiff_test

#endif // SKIFF_TESTS_SUPPORT_LOOPBACK_HPP
