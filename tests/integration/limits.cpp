// Limits a public server needs: connection count, descriptors running out, output that a
// client does not read, many concurrent clients, and memory per idle connection (keep-alive,
// and WebSocket once upgraded).
#include "support/loopback.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <fcntl.h>
#include <malloc.h>
#include <memory>
#include <sys/socket.h>
#include <sys/wait.h>
#include <string>
#include <thread>
#include <vector>

using namespace skiff_test;

namespace {

template <class Policy>
void limits_routes(skiff::basic_server<Policy>& app) {
    app.get("/", [](skiff::request&, skiff::response& res) { res.text("hi"); });
}

int open_descriptor_count() {
    int n = 0;
    for (int fd = 0; fd < 4096; ++fd) n += ::fcntl(fd, F_GETFD) != -1;
    return n;
}

// Heap in use, mmap'd blocks included (glibc): large buffers are mapped but not touched until
// written, so resident memory would not show a reservation; the allocator's count does.
std::size_t heap_in_use() {
    struct mallinfo2 m = ::mallinfo2();
    return m.uordblks + m.hblkhd;
}

} // namespace

TEST_CASE_TEMPLATE("beyond max_connections, with none idle, a new connection gets 503 and is closed", Policy,
                   SKIFF_TEST_POLICIES) {
    skiff::options opt;
    opt.max_connections = 2;
    opt.workers = 1;  // the limit is shared out per loop: one loop keeps the count exact
    running_server<Policy> srv(limits_routes<Policy>, opt);
    client a(srv.port()), b(srv.port());
    // Each holds its place mid-request, so neither is idle and neither gives way.
    a.send("GET / HTTP/1.1\r\n");
    b.send("GET / HTTP/1.1\r\n");
    client third(srv.port());
    auto rs = parse_responses(third.read_to_close());
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == 503);
    CHECK(third.closed());
    // The first two are still served.
    a.send("Host: x\r\n\r\n");
    b.send("Host: x\r\n\r\n");
    CHECK(read_responses(a, 1).size() == 1);
    CHECK(read_responses(b, 1).size() == 1);
}

TEST_CASE_TEMPLATE("a refused client still sending its body reads the 503 and the end, not a reset", Policy,
                   SKIFF_TEST_POLICIES) {
    skiff::options opt;
    opt.max_connections = 1;
    opt.workers = 1;
    running_server<Policy> srv(limits_routes<Policy>, opt);
    client a(srv.port());
    a.send("GET / HTTP/1.1\r\n");  // holds the one place mid-request
    client late(srv.port());
    late.send("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 65536\r\n\r\n");
    std::string got = late.read_until([](const std::string& s) { return s.find("\r\n\r\n") != std::string::npos; });
    REQUIRE(got.rfind("HTTP/1.1 503 ", 0) == 0);
    // The body goes on after the 503, as a client uploading does: a socket closed with it
    // unread would answer it with a reset, failing these sends and the read below.
    const std::string piece(16384, 'x');
    for (int i = 0; i < 4; ++i) {
        CHECK(::send(late.fd(), piece.data(), piece.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(piece.size()));
        std::this_thread::sleep_for(20ms);
    }
    CHECK(late.read_to_close().empty());
    CHECK(late.closed());
    CHECK_FALSE(late.reset());
    a.send("Host: x\r\n\r\n");  // the held connection is served as before
    CHECK(read_responses(a, 1).size() == 1);
}

TEST_CASE_TEMPLATE("at max_connections the connection idle longest is closed to make room for a new one", Policy,
                   SKIFF_TEST_POLICIES) {
    skiff::options opt;
    opt.max_connections = 2;
    opt.workers = 1;
    running_server<Policy> srv(limits_routes<Policy>, opt);
    client a(srv.port()), b(srv.port());
    a.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    REQUIRE(read_responses(a, 1).size() == 1);
    std::this_thread::sleep_for(20ms);  // b's idle time starts later than a's (deadlines are in ms)
    b.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    REQUIRE(read_responses(b, 1).size() == 1);
    client third(srv.port());
    third.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    auto rs = read_responses(third, 1);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == 200);
    // a, idle longest, was closed without a word; b keeps its place and is served.
    CHECK(a.read_to_close().empty());
    CHECK(a.closed());
    b.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    rs = read_responses(b, 1);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == 200);
    // Now b and third are idle and hold both places: the next newcomer takes b's.
    client fourth(srv.port());
    fourth.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(read_responses(fourth, 1).size() == 1);
}

TEST_CASE_TEMPLATE("out of descriptors, accepting pauses without spinning and resumes when they free up", Policy,
                   SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(limits_routes<Policy>);
    rlimit saved{};
    ::getrlimit(RLIMIT_NOFILE, &saved);
    std::vector<std::unique_ptr<client>> clients;
    rlimit tight = saved;
    tight.rlim_cur = static_cast<rlim_t>(open_descriptor_count() + 6);  // room for a few connections
    ::setrlimit(RLIMIT_NOFILE, &tight);
    for (int i = 0; i < 6; ++i) {
        try {
            clients.push_back(std::make_unique<client>(srv.port()));  // the kernel completes the handshake
        } catch (const std::exception&) {
            break;  // our own descriptors ran out first
        }
    }
    std::this_thread::sleep_for(300ms);  // the server hits EMFILE on some of them
    rusage before{};
    ::getrusage(RUSAGE_SELF, &before);
    std::this_thread::sleep_for(300ms);
    rusage after{};
    ::getrusage(RUSAGE_SELF, &after);
    auto cpu_us = [](const rusage& r) { return r.ru_utime.tv_sec * 1000000L + r.ru_utime.tv_usec + r.ru_stime.tv_sec * 1000000L + r.ru_stime.tv_usec; };
    CHECK(cpu_us(after) - cpu_us(before) < 150000);  // not a busy loop: well under half a core
    ::setrlimit(RLIMIT_NOFILE, &saved);
    REQUIRE(clients.size() >= 2);
    for (auto& c : clients) c->send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    for (auto& c : clients) CHECK(read_responses(*c, 1, 3000ms).size() == 1);  // all served once descriptors free up
}

// Two ways to pipeline without reading: batches whose answers pass write_high_water in one
// read, and paced batches of two whose answers stay under it, so that only the output
// already parked on the connection can stop the reading.
TEST_CASE_TEMPLATE("a client that sends requests but never reads stops being read", Policy, SKIFF_TEST_POLICIES) {
    for (int per_send : {100, 2}) {
        CAPTURE(per_send);
        std::atomic<int> answered{0};
        std::string big(16 * 1024, 'x');
        running_server<Policy> srv([&](skiff::basic_server<Policy>& app) {
            app.get("/big", [&](skiff::request&, skiff::response& res) {
                ++answered;
                res.text(big);
            });
        });
        client c(srv.port());
        ::fcntl(c.fd(), F_SETFL, ::fcntl(c.fd(), F_GETFL) | O_NONBLOCK);
        std::string req = "GET /big HTTP/1.1\r\nHost: x\r\n\r\n";
        std::string batch;
        for (int i = 0; i < per_send; ++i) batch += req;
        long sent = 0;
        long before = resident_bytes();
        // For a second, or until sends are refused for 200 ms running: by then far more has
        // been sent than the server will take before its output stops it.
        auto start = std::chrono::steady_clock::now();
        auto last_taken = start;
        while (std::chrono::steady_clock::now() - last_taken < 200ms && std::chrono::steady_clock::now() - start < 1s) {
            ssize_t n = ::send(c.fd(), batch.data(), batch.size(), MSG_NOSIGNAL);
            if (n > 0) {
                sent += n;
                last_taken = std::chrono::steady_clock::now();
            }
            std::this_thread::sleep_for(n > 0 ? (per_send < 100 ? 1ms : 0ms) : 10ms);  // small batches: one read each
        }
        // What the server already read may still be answered while its own send queue drains
        // into ours, so wait for the count to hold still for 500 ms (a busy machine is slow).
        int settled = answered.load();
        auto still_since = std::chrono::steady_clock::now();
        auto waited_from = still_since;
        while (std::chrono::steady_clock::now() - still_since < 500ms &&
               std::chrono::steady_clock::now() - waited_from < 10s) {
            std::this_thread::sleep_for(50ms);
            int now_answered = answered.load();
            if (now_answered != settled) {
                settled = now_answered;
                still_since = std::chrono::steady_clock::now();
            }
        }
        long growth = resident_bytes() - before;
        long requests_sent = sent / static_cast<long>(req.size());
        MESSAGE("requests sent " << requests_sent << ", answered " << settled << ", resident growth "
                                 << growth / 1024 << " KiB");
        CHECK(std::chrono::steady_clock::now() - still_since >= 500ms);  // the server stopped reading...
        CHECK(settled < requests_sent);     // ...well before it had read everything
        if (!sanitized) CHECK(growth < 4L * 1024 * 1024);  // and holds little: the rest waits in kernel buffers
    }
}

// Under single and sharded a declared body is reserved whole, within options::max_buffered
// (memory_budget.cpp); shared keeps no budget and reserves as the bytes arrive.
TEST_CASE_TEMPLATE("under shared a declared body reserves memory as its bytes arrive, not as the head declares", Policy,
                   skiff::shared) {
    if (sanitized) return;  // the sanitizers' allocators do not report through mallinfo2
    running_server<Policy> srv([](skiff::basic_server<Policy>& app) {
        app.post("/upload", [](skiff::request& req, skiff::response& res) {
            res.text(std::to_string(req.body().size()));
        });
    });
    std::vector<std::unique_ptr<client>> clients;
    std::size_t before = heap_in_use();
    for (int i = 0; i < 20; ++i) {  // each declares 1 MiB (the default max_body) and sends one byte
        clients.push_back(std::make_unique<client>(srv.port()));
        clients.back()->send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\nx");
    }
    std::this_thread::sleep_for(100ms);
    for (auto& c : clients) c->send("x");  // a second read, into the connection's own buffer
    std::this_thread::sleep_for(200ms);
    std::size_t growth = heap_in_use() - before;
    MESSAGE("heap growth for 20 stalled 1 MiB uploads: " << growth / 1024 << " KiB");
    CHECK(growth < 20u * 256 * 1024);  // a read's worth each at most, not a mebibyte or two
    clients[0]->send(std::string((1u << 20) - 2, 'y'));  // one finishes: the body still arrives whole
    auto rs = read_responses(*clients[0], 1, 3000ms);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].body == "1048576");
}

TEST_CASE_TEMPLATE("1,000 concurrent connections each doing keep-alive requests are all answered", Policy,
                   SKIFF_TEST_POLICIES) {
    if (raise_fd_limit(2200) < 2200) {
        MESSAGE("skipped: descriptor limit below 2,200");
        return;
    }
    running_server<Policy> srv(limits_routes<Policy>);
    std::vector<std::unique_ptr<client>> clients;
    for (int i = 0; i < 1000; ++i) clients.push_back(std::make_unique<client>(srv.port()));
    int answered = 0;
    for (int round = 0; round < 3; ++round) {
        for (auto& c : clients) c->send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        for (auto& c : clients) answered += static_cast<int>(read_responses(*c, 1).size());
    }
    CHECK(answered == 3000);
}

// What each idle client sent before going quiet: one keep-alive request (answered: a response),
// or a WebSocket upgrade (answered: the 101 head; then the connection is an open WebSocket).
enum class idle_kind : std::uint8_t { keep_alive, websocket };

// The 10,000 client ends live in a child process, forked before any server thread exists, so
// this process holds only the server's ends (and the descriptor limit needs 10,000, not 20,000).
class idle_clients {
public:
    explicit idle_clients(int count, idle_kind kind = idle_kind::keep_alive) : count_(count), kind_(kind) {
        if (::pipe(to_child_) != 0 || ::pipe(from_child_) != 0) throw std::runtime_error("pipe");
        pid_ = ::fork();
        if (pid_ == 0) run_child();
        ::close(to_child_[0]);
        ::close(from_child_[1]);
    }
    ~idle_clients() {
        ::close(to_child_[1]);  // EOF: the child closes its connections and exits
        ::close(from_child_[0]);
        int status = 0;
        ::waitpid(pid_, &status, 0);
    }
    // Connects all, one request (or upgrade) each; returns how many were answered.
    int connect_to(std::uint16_t port) {
        if (::write(to_child_[1], &port, sizeof port) != sizeof port) return 0;
        int answered = 0;
        if (::read(from_child_[0], &answered, sizeof answered) != sizeof answered) return 0;
        return answered;
    }
    // RFC 6455 §1.3's sample key; the answer's head is all the server sends. 1: upgraded.
    static int upgrade(client& c) {
        c.send("GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n");
        std::string head = c.read_until([](const std::string& s) { return s.find("\r\n\r\n") != std::string::npos; });
        return head.compare(0, 13, "HTTP/1.1 101 ") == 0 ? 1 : 0;
    }

private:
    [[noreturn]] void run_child() {
        ::close(to_child_[1]);
        ::close(from_child_[0]);
        std::uint16_t port = 0;
        if (::read(to_child_[0], &port, sizeof port) != sizeof port) ::_exit(1);
        raise_fd_limit(count_ + 100);
        std::vector<int> fds;
        int answered = 0;
        for (int i = 0; i < count_; ++i) {
            client c(port);
            answered += kind_ == idle_kind::keep_alive ? one_request(c) : upgrade(c);
            fds.push_back(::dup(c.fd()));
        }
        if (::write(from_child_[1], &answered, sizeof answered) != sizeof answered) ::_exit(1);
        char byte;
        while (::read(to_child_[0], &byte, 1) > 0) {
        }
        ::_exit(0);
    }

    static int one_request(client& c) {
        c.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        return static_cast<int>(read_responses(c, 1).size());
    }

    int count_;
    idle_kind kind_;
    int to_child_[2]{};
    int from_child_[2]{};
    pid_t pid_ = -1;
};

TEST_CASE_TEMPLATE("an idle keep-alive connection costs at most 512 bytes of server memory", Policy,
                   SKIFF_TEST_POLICIES) {
    const int count = 10000;
    if (raise_fd_limit(count + 200) < count + 200) {
        MESSAGE("skipped: descriptor limit below " << count + 200);
        return;
    }
    idle_clients clients(count);  // forked first: no server thread exists yet
    running_server<Policy> srv(limits_routes<Policy>);
    {
        client warm(srv.port());  // the loops' own buffers exist before measuring
        warm.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        read_responses(warm, 1);
    }
    long before = resident_bytes();
    int answered = clients.connect_to(srv.port());
    long after = resident_bytes();
    REQUIRE(answered == count);
    long per_connection = (after - before) / count;
    MESSAGE("server memory per idle connection: " << per_connection << " bytes");
    if (!sanitized) CHECK(per_connection <= 512);
}

// Under the kqueue shim (tests/kqueue_shim) each registered descriptor has an entry in the
// shim's own map, in this process's heap, where a real kqueue keeps it in the kernel; the
// WebSocket bound below is the server's, so it is checked where the poller is the kernel's.
#ifdef SKIFF_USE_KQUEUE
constexpr bool poller_in_process = true;
#else
constexpr bool poller_in_process = false;
#endif

// The same for a WebSocket: the taker, its shared state and the peer the connection keeps once
// upgraded (websocket/taker.hpp), beyond the connection itself. Policies that serve WebSocket.
// Counts what 10,000 idle WebSockets upgraded on `route` cost the server, per connection.
template <class Policy, class Route>
void check_idle_websockets(Route route) {
    const int count = 10000;
    if (raise_fd_limit(count + 200) < count + 200) {
        MESSAGE("skipped: descriptor limit below " << count + 200);
        return;
    }
    idle_clients clients(count, idle_kind::websocket);  // forked first: no server thread exists yet
    skiff::options opt;
    opt.max_connections = 2 * count;  // sharded splits it per loop, and SO_REUSEPORT spreads unevenly
    running_server<Policy> srv([&route](skiff::basic_server<Policy>& app) { app.get("/ws", route); }, opt);
    {
        client warm(srv.port());  // the loops' own buffers exist before measuring
        REQUIRE(idle_clients::upgrade(warm) == 1);
    }
    long before = resident_bytes();
    auto heap_before = static_cast<long>(heap_in_use());
    int upgraded = clients.connect_to(srv.port());
    long after = resident_bytes();
    auto heap_after = static_cast<long>(heap_in_use());
    REQUIRE(upgraded == count);
    long per_connection = (after - before) / count;
    // The heap's count as well: resident memory reads low when the connections reuse pages
    // that earlier test cases freed (it read 180 bytes after the keep-alive cases, 348 alone).
    long heap_per_connection = (heap_after - heap_before) / count;
    MESSAGE("server memory per idle WebSocket: " << per_connection << " bytes (heap " << heap_per_connection << ")");
    // Issue 32's bound is 256 bytes a connection: the heap's count holds to it exactly (measured
    // 232, tools/bench/README.md). Resident memory also moves with growth that is not per
    // connection (tables sized for 10,000, page granularity): measured 232-253, allowed 288.
    if (!sanitized && !poller_in_process) CHECK(heap_per_connection <= 256);
    if (!sanitized && !poller_in_process) CHECK(per_connection <= 288);
}

TEST_CASE_TEMPLATE("an idle WebSocket costs at most 256 bytes of heap", Policy, skiff::single,
                   skiff::sharded) {
    check_idle_websockets<Policy>(skiff::websocket::upgrade(skiff::websocket::handlers{}));
}

TEST_CASE("an idle WebSocket a handler accepted after its own checks costs the same") {
    auto h = std::make_shared<const skiff::websocket::handlers>();
    check_idle_websockets<skiff::single>([h](skiff::request& req, skiff::response& res) {
        if (req.header("upgrade").empty()) {
            res.status(400).text("no\n");
            return;
        }
        skiff::websocket::accept(req, res, h);  // the same handlers each time: one route per loop
    });
}
