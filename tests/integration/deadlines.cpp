// Deadlines on the timing wheel, on the test client's hand-moved clock
// (skiff/testing/test_client.hpp): header (a slowloris client, a silent one, pipelined
// requests), body (buffered and streamed), write stall and linger. The times are exact and nothing sleeps. The same
// deadlines on the real clock, under every policy, are in tests/system/deadlines_wall_clock.cpp
// (run by the system preset), since waiting for them here would cost every preset's run.
#include <skiff/testing.hpp>

#include "support/loopback.hpp"

#include <doctest/doctest.h>

#include <chrono>
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

// 300 ms deadlines: the wheel ticks every 30 ms, so each fires between 300 and 330 ms.
TEST_CASE("a slowloris client gets 408 at the header deadline, counted from its first byte") {
    skiff::testing::test_client c(deadlines_routes<skiff::single>, short_deadlines());
    std::string head = "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: " + std::string(20, 'a');
    for (char byte : head) {  // one byte every 20 ms: each is progress, none moves the deadline
        c.send(std::string(1, byte));
        if (c.closed()) break;
        c.advance(20ms);
    }
    CHECK(c.closed());  // seen at the first 20 ms step past the cut:
    CHECK(c.now() >= 300ms);  // not before the deadline,
    CHECK(c.now() <= 340ms);  // though the head (53 bytes: 1,060 ms at this pace) was still coming
    auto r = c.next_response();
    CHECK(r.status == 408);
    CHECK(r.header("connection") == "close");
    CHECK_FALSE(c.next_response());  // the 408 only: nothing of the head was served
    c.reconnect();  // the server serves on
    CHECK(c.get("/").status == 200);
}

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

TEST_CASE("a body that stalls is cut at the body deadline with 408, counted from the end of the head") {
    skiff::testing::test_client c(deadlines_routes<skiff::single>, short_deadlines());
    c.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n");
    c.advance(200ms);
    c.send("abc");  // progress, but the deadline is for the whole body
    c.advance(90ms);
    CHECK_FALSE(c.closed());
    CHECK(c.raw_output().empty());
    c.advance(50ms);  // 340 ms: past the 300 ms deadline and its tick
    auto r = c.next_response();
    CHECK(r.status == 408);
    CHECK(c.closed());
    c.reconnect();
    CHECK(c.post("/echo", "whole body").body == "whole body");
}

TEST_CASE("a streamed body that stalls gets 408 at body_timeout from its last piece, and the route on_abort") {
    int aborted = 0;
    std::size_t got = 0;
    skiff::testing::test_client c([&](skiff::server& app) {
        app.upload("PUT", "/up", [&](skiff::request&, skiff::response&) {
            skiff::upload u;
            u.on_piece = [&](std::string_view p) { got += p.size(); return skiff::piece_status::taken; };
            u.on_end = [](skiff::response& res) { res.status(201).end(); };
            u.on_abort = [&] { ++aborted; };
            return u;
        });
        app.get("/", [](skiff::request&, skiff::response& res) { res.text("hi"); });
    }, short_deadlines());
    c.send("PUT /up HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nab");
    c.advance(200ms);
    c.send("cd");  // a piece: for a streamed body the deadline runs from the last one read
    c.advance(290ms);
    CHECK_FALSE(c.closed());
    CHECK(c.raw_output().empty());
    c.advance(50ms);  // 340 ms after the last piece: past the 300 ms deadline and its tick
    auto r = c.next_response();
    CHECK(r.status == 408);  // as for a buffered body (RFC 9110 §15.5.9), not a silent close
    CHECK(r.header("connection") == "close");
    CHECK(got == 4);
    CHECK(aborted == 1);
    c.advance(2000ms);  // past the linger that follows the answer
    CHECK(c.closed());
    c.reconnect();
    CHECK(c.get("/").status == 200);
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

TEST_CASE("a client that stops reading is dropped at the write deadline") {
    skiff::testing::test_client c(deadlines_routes<skiff::single>, short_deadlines());
    c.stop_reading();
    c.send("GET /endless HTTP/1.1\r\nHost: x\r\n\r\n");  // the server writes until the buffers fill
    CHECK(c.connections() == 1);
    c.advance(250ms);
    CHECK(c.connections() == 1);  // stalled, within its deadline
    c.advance(90ms);  // 340 ms without progress
    CHECK(c.connections() == 0);
    c.reconnect();  // a fresh connection reads again
    CHECK(c.get("/").status == 200);
}

TEST_CASE("after an error answer the connection lingers until linger_timeout, then is dropped") {
    skiff::options opt = short_deadlines();
    opt.linger_timeout = std::chrono::milliseconds(300);
    skiff::testing::test_client c(deadlines_routes<skiff::single>, opt);
    c.send("GET / HTTP/1.1\r\nHost: x\r\nBad Header: x\r\n\r\n");  // 400: space before the colon
    auto r = c.next_response();
    CHECK(r.status == 400);
    CHECK(c.closed());  // the server's side is shut: it reads on, to drain what the client sends
    c.advance(250ms);
    CHECK(c.connections() == 1);
    c.advance(90ms);  // 340 ms
    CHECK(c.connections() == 0);
    CHECK_FALSE(c.next_response());  // the 400 only
}
