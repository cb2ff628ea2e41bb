// The server's deadlines on the real clock, under each policy: the wall-clock side of the
// deadline tests. Each case here waits for a deadline in real time (hundreds of milliseconds,
// times three policies), so it runs once per full test run, in the system preset, rather than
// in every preset's suite. The same checks on the test client's hand-moved clock (exact
// times, no waiting, the single policy) are in tests/integration/: deadlines.cpp, deferred.cpp,
// hooks.cpp and test_client.cpp. What only this file shows: the timing wheels of the sharded
// loops and of the shared workers and hub firing on a real clock, beside threads that serve
// other clients, and what a real TCP peer sees (a reset at the write deadline, a client still
// sending while the server lingers, another client served throughout a slowloris).
//
// The cases are those the integration suite had, unchanged; helpers keep their old files' names.
#include "support/loopback.hpp"
#include "support/parked.hpp"

#include <doctest/doctest.h>

#include <sys/socket.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

using namespace skiff_test;

// ---- header, body, write and linger deadlines (from integration/deadlines.cpp) --------------

namespace {

template <class Policy>
void deadlines_routes(skiff::basic_server<Policy>& app) {
    app.get("/", [](skiff::request&, skiff::response& res) { res.text("hi"); });
    app.post("/echo", [](skiff::request& req, skiff::response& res) { res.text(req.body()); });
    app.get("/endless", [](skiff::request&, skiff::response& res) {
        res.stream("application/octet-stream", [](char* buf, std::size_t cap) {
            std::memset(buf, 'x', cap);
            return cap;
        });
    });
}

skiff::options short_deadlines() {
    skiff::options opt;
    opt.header_timeout = std::chrono::milliseconds(300);
    opt.body_timeout = std::chrono::milliseconds(300);
    opt.write_timeout = std::chrono::milliseconds(300);
    return opt;
}

} // namespace

TEST_CASE_TEMPLATE("a slowloris client gets 408 at the header deadline while another is served", Policy,
                   SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(deadlines_routes<Policy>, short_deadlines());
    client slow(srv.port());
    client fast(srv.port());
    std::string head = "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ";
    auto start = std::chrono::steady_clock::now();
    int served = 0;
    for (std::size_t i = 0; i < head.size() + 20 && !slow.closed(); ++i) {
        try {
            slow.send(std::string(1, i < head.size() ? head[i] : 'a'));  // one byte every 20 ms
        } catch (const std::exception&) {
            break;  // the server closed: expected once the deadline passed
        }
        fast.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        served += static_cast<int>(read_responses(fast, 1, 1000ms).size());
        std::this_thread::sleep_for(20ms);
        if (std::chrono::steady_clock::now() - start > 400ms) break;
    }
    std::string answer = slow.read_to_close(2000ms);
    auto rs = parse_responses(answer);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == 408);
    CHECK(slow.closed());
    CHECK(served >= 10);  // the normal client was answered throughout
}

TEST_CASE_TEMPLATE("a body that stalls is cut at the body deadline with 408", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(deadlines_routes<Policy>, short_deadlines());
    client c(srv.port());
    c.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc");
    auto rs = parse_responses(c.read_to_close(2000ms));
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == 408);
    CHECK(c.closed());
}

TEST_CASE_TEMPLATE("a client that stops reading is dropped at the write deadline", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(deadlines_routes<Policy>, short_deadlines());
    client c(srv.port());
    int small = 4096;
    ::setsockopt(c.fd(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    c.send("GET /endless HTTP/1.1\r\nHost: x\r\n\r\n");
    std::this_thread::sleep_for(1000ms);  // the server's writes stall, then its deadline passes
    std::size_t total = 0;
    auto start = std::chrono::steady_clock::now();
    while (!c.closed() && std::chrono::steady_clock::now() - start < 5s) total += c.read_some(500ms).size();
    CHECK(c.closed());
    CHECK(c.reset());  // reset, so the kernel stops holding the unsent bytes for it
    CHECK(total > 0);
}

TEST_CASE_TEMPLATE("after an error answer, a client that keeps sending is cut at linger_timeout", Policy,
                   SKIFF_TEST_POLICIES) {
    skiff::options opt = short_deadlines();
    opt.linger_timeout = std::chrono::milliseconds(300);
    running_server<Policy> srv(deadlines_routes<Policy>, opt);
    client c(srv.port());
    c.send("GET / HTTP/1.1\r\nHost: x\r\nBad Header: x\r\n\r\n");  // 400: space before the colon
    auto start = std::chrono::steady_clock::now();
    std::string got;
    while (!c.closed() && std::chrono::steady_clock::now() - start < 3s) {
        try {
            c.send("more bytes that will never be read as a request\r\n");
        } catch (const std::exception&) {
            break;
        }
        got += c.read_some(50ms);
    }
    got += c.read_to_close(1000ms);
    auto rs = parse_responses(got);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == 400);
    CHECK(c.closed());
    CHECK(std::chrono::steady_clock::now() - start < 2500ms);  // not kept for as long as it sends
}

// ---- idle keep-alive (from integration/connection_close.cpp) --------------------------------

namespace {

template <class Policy>
void connection_close_routes(skiff::basic_server<Policy>& app) {
    app.get("/", [](skiff::request&, skiff::response& res) { res.text("hi"); });
    app.post("/echo", [](skiff::request& req, skiff::response& res) { res.text(req.body()); });
}

} // namespace

TEST_CASE_TEMPLATE("an idle keep-alive connection is closed silently after idle_timeout", Policy, SKIFF_TEST_POLICIES) {
    skiff::options opt;
    opt.idle_timeout = std::chrono::milliseconds(200);
    running_server<Policy> srv(connection_close_routes<Policy>, opt);
    client c(srv.port());
    c.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    REQUIRE(read_responses(c, 1).size() == 1);
    auto start = std::chrono::steady_clock::now();
    std::string rest = c.read_to_close(3000ms);
    auto waited = std::chrono::steady_clock::now() - start;
    CHECK(rest.empty());
    CHECK(c.closed());
    CHECK(waited >= 150ms);  // not before the deadline (one tick of slack)
}

// ---- deferred_timeout (from integration/deferred.cpp) --------------------------------------

namespace {

std::string request(const std::string& path, const char* method = "GET") {
    return std::string(method) + " " + path + " HTTP/1.1\r\nHost: x\r\n\r\n";
}

// Sets a field before next(), as request_id(), security_headers() and cors() do, and one
// after it (a late field: inserted into a plain answer's head, dropped from a deferred one).
template <class Policy>
void mark_around(skiff::basic_server<Policy>& app) {
    app.use([](skiff::request&, skiff::response& res, const skiff::next& next) {
        res.header("X-Before", "mw");
        next();
        res.header("X-After", "mw");
    });
}

} // namespace

TEST_CASE_TEMPLATE("an answer not completed by deferred_timeout is answered 503, and the late one dropped", Policy,
                   SKIFF_TEST_POLICIES) {
    parked waiting;
    skiff::options opt;
    opt.deferred_timeout = 200ms;
    running_server<Policy> srv([&](skiff::basic_server<Policy>& app) {
        app.get("/wait", [&](skiff::request&, skiff::response& res) { waiting.put(res.defer()); });
        app.get("/", [](skiff::request&, skiff::response& res) { res.text("next"); });
    }, opt);
    client c(srv.port());
    c.send(request("/wait") + request("/"));
    auto handles = waiting.take(1);
    REQUIRE(handles.size() == 1);
    auto rs = read_responses(c, 2, 3000ms);
    REQUIRE(rs.size() == 2);
    CHECK(rs[0].status == 503);
    CHECK(rs[1].body == "next");
    CHECK(handles[0]->cancelled());
    CHECK_FALSE(handles[0]->text("too late"));
    CHECK(c.read_some(200ms).empty());
}

TEST_CASE_TEMPLATE("a deferred answer given up at its deadline keeps the fields set before defer()", Policy,
                   SKIFF_TEST_POLICIES) {
    parked waiting;
    skiff::options opt;
    opt.deferred_timeout = 100ms;
    running_server<Policy> srv(
        [&waiting](skiff::basic_server<Policy>& app) {
            mark_around(app);
            app.get("/wait", [&waiting](skiff::request&, skiff::response& res) { waiting.put(res.defer()); });
        },
        opt);
    client c(srv.port());
    c.send(request("/wait"));
    auto handles = waiting.take(1);
    auto rs = read_responses(c, 1);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == 503);
    CHECK(rs[0].head.rfind("HTTP/1.1 503 ", 0) == 0);
    CHECK(rs[0].header("X-Before") == "mw");
}

// ---- the response hook at a deadline (from integration/hooks.cpp) --------------------------

namespace {

// A response_event with its views copied.
struct seen {
    skiff::rejection reason;
    int status;
    std::size_t bytes_sent;
    std::size_t bytes_received;
    std::string method, target, version, peer;
};

// Collects events from any loop thread.
class recorder {
public:
    void add(const skiff::response_event& e) {
        std::lock_guard<std::mutex> g(m_);
        events_.push_back({e.reason, e.status, e.bytes_sent, e.bytes_received, std::string(e.method),
                           std::string(e.target), std::string(e.version), std::string(e.peer)});
    }
    // The hook runs before the response is written, so once the client has it, it is here.
    std::vector<seen> events() {
        std::lock_guard<std::mutex> g(m_);
        return events_;
    }

private:
    std::mutex m_;
    std::vector<seen> events_;
};

template <class Policy>
void observed_app(skiff::basic_server<Policy>& app, recorder& rec) {
    app.on_response([&rec](const skiff::response_event& e) { rec.add(e); });
    app.get("/hello", [](skiff::request&, skiff::response& res) { res.text("Hello, World!"); });
    app.post("/echo", [](skiff::request& req, skiff::response& res) { res.body(req.body(), "text/plain"); });
}

seen only_event(recorder& rec) {
    auto all = rec.events();
    REQUIRE(all.size() == 1);
    return all[0];
}

} // namespace

TEST_CASE_TEMPLATE("the response hook sees a 408 for a head that does not arrive", Policy, SKIFF_TEST_POLICIES) {
    recorder rec;
    skiff::options opt;
    opt.header_timeout = std::chrono::milliseconds(100);
    running_server<Policy> srv([&](skiff::basic_server<Policy>& app) { observed_app(app, rec); }, opt);
    CHECK(one_response(srv.port(), "GET /hello HTTP/1.1\r\nHost:").status == 408);
    seen e = only_event(rec);
    CHECK(e.reason == skiff::rejection::timeout);
    CHECK(e.method == "GET");
}
