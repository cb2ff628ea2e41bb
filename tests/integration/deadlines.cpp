// Deadlines on the timing wheel: header, body, write stall, and a slowloris client cut at the
// header deadline while a normal client is served.
#include "support/loopback.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace skiff_test;

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

// On the test client's clock (skiff/testing/test_client.hpp): the times are exact, and
// nothing sleeps.
TEST_CASE("each pipelined request has its own header deadline, from its own first byte") {
    skiff::options opt;
    opt.header_timeout = std::chrono::milliseconds(600);
    skiff::testing::test_client c(deadlines_routes<skiff::single>, opt);
    c.send("GET / HTTP/1.1\r\nHost:");  // request 1 begins at 0 ms
    c.advance(400ms);
    c.send(" x\r\n\r\nGET / HTTP/1.1\r\nHost:");  // at 400 it ends, and request 2 begins
    c.advance(400ms);
    c.send(" x\r\n\r\nGET / HTTP/1.1\r\nHost:");  // at 800: past request 1's deadline, not 2's
    CHECK(c.next_response().status == 200);
    CHECK(c.next_response().status == 200);
    c.advance(700ms);  // request 3, begun at 800, is still unfinished at 1500
    CHECK(c.next_response().status == 408);
    CHECK(c.closed());
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

TEST_CASE("a connection that opens and sends nothing is closed at the header deadline") {
    skiff::testing::test_client c(deadlines_routes<skiff::single>, short_deadlines());
    c.send("");  // connects
    c.advance(200ms);
    CHECK_FALSE(c.closed());
    c.advance(200ms);  // 400 ms: past the 300 ms deadline and its 30 ms tick
    CHECK(c.closed());
    CHECK(c.raw_output().empty());  // nothing was asked, so nothing is answered
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
