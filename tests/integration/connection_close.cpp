// When connections close (RFC 9112 §9.3, §9.6): Connection: close, HTTP/1.0, half-close,
// framing errors, idle keep-alive.
#include "support/loopback.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace skiff_test;

namespace {

template <class Policy>
void connection_close_routes(skiff::basic_server<Policy>& app) {
    app.get("/", [](skiff::request&, skiff::response& res) { res.text("hi"); });
    app.post("/echo", [](skiff::request& req, skiff::response& res) { res.text(req.body()); });
}

} // namespace

TEST_CASE_TEMPLATE("RFC 9112 §9.6: Connection: close is answered, then the server closes", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(connection_close_routes<Policy>);
    client c(srv.port());
    c.send("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    std::string all = c.read_to_close();
    auto rs = parse_responses(all);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].header("Connection") == "close");
    CHECK(c.closed());
}

TEST_CASE_TEMPLATE("RFC 9112 §9.3: HTTP/1.0 closes unless it asks for keep-alive", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(connection_close_routes<Policy>);
    SUBCASE("without keep-alive: one answer, then close") {
        client c(srv.port());
        c.send("GET / HTTP/1.0\r\n\r\n");
        auto rs = parse_responses(c.read_to_close());
        REQUIRE(rs.size() == 1);
        CHECK(rs[0].body == "hi");
        CHECK(c.closed());
    }
    SUBCASE("with Connection: keep-alive the connection serves a second request") {
        client c(srv.port());
        c.send("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        auto first = read_responses(c, 1);
        REQUIRE(first.size() == 1);
        CHECK(first[0].header("Connection") == "keep-alive");  // or the client would close (§9.3)
        c.send("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n");
        REQUIRE(read_responses(c, 1).size() == 1);
        CHECK_FALSE(c.closed());
    }
}

TEST_CASE_TEMPLATE("a client that shuts its write side after a full request still gets the answer", Policy,
                   SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(connection_close_routes<Policy>);
    client c(srv.port());
    c.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello");
    c.shutdown_write();
    auto rs = parse_responses(c.read_to_close());
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].body == "hello");
    CHECK(c.closed());
}

TEST_CASE_TEMPLATE("after a framing error nothing later on the connection is read as a request", Policy,
                   SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(connection_close_routes<Policy>);
    client c(srv.port());
    // Content-Length with Transfer-Encoding (RFC 9112 §6.1), then what would be a smuggled request.
    c.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n"
           "0\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n");
    std::string all = c.read_to_close();
    auto rs = parse_responses(all);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == 400);
    CHECK(rs[0].header("Connection") == "close");
    CHECK(c.closed());
    CHECK_FALSE(c.reset());  // the unread bytes were drained, not answered with a reset
}

