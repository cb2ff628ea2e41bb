// End to end over loopback: exact bytes of the answers a user sees first.
#include "support/loopback.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace skiff_test;

namespace {

template <class Policy>
void contract_routes(skiff::basic_server<Policy>& app) {
    app.get("/", [](skiff::request&, skiff::response& res) { res.text("Hello, World!"); });
    app.get("/user/:id", [](skiff::request& req, skiff::response& res) { res.text(req.param("id")); });
    app.post("/echo", [](skiff::request& req, skiff::response& res) {
        res.body(req.body(), req.header("content-type"));
    });
}

const std::string hello_response =
    "HTTP/1.1 200 OK\r\nDate: <date>\r\nContent-Type: text/plain\r\nContent-Length: 13\r\n\r\nHello, World!";

} // namespace

TEST_CASE_TEMPLATE("one GET is answered with exactly these bytes", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(contract_routes<Policy>);
    client c(srv.port());
    c.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    std::string got = c.read_until([](const std::string& s) { return s.size() >= 100 && s.find("World!") != std::string::npos; });
    CHECK(mask_date(got) == hello_response);
}

TEST_CASE_TEMPLATE("three pipelined GETs in one write get three responses, in order", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(contract_routes<Policy>);
    client c(srv.port());
    c.send("GET /user/1 HTTP/1.1\r\nHost: x\r\n\r\n"
           "GET /user/22 HTTP/1.1\r\nHost: x\r\n\r\n"
           "GET /user/333 HTTP/1.1\r\nHost: x\r\n\r\n");
    auto rs = read_responses(c, 3);
    REQUIRE(rs.size() == 3);
    CHECK(rs[0].body == "1");
    CHECK(rs[1].body == "22");
    CHECK(rs[2].body == "333");
    CHECK(rs[2].head == "HTTP/1.1 200 OK\r\nDate: <date>\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n");
}

TEST_CASE_TEMPLATE("a POST with a Content-Length body is echoed with its Content-Type", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(contract_routes<Policy>);
    client c(srv.port());
    c.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: text/x-test\r\nContent-Length: 11\r\n\r\nhello there");
    auto rs = read_responses(c, 1);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].head == "HTTP/1.1 200 OK\r\nDate: <date>\r\nContent-Type: text/x-test\r\nContent-Length: 11\r\n");
    CHECK(rs[0].body == "hello there");
}

TEST_CASE_TEMPLATE("an unknown path is 404", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(contract_routes<Policy>);
    client c(srv.port());
    c.send("GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n");
    auto rs = read_responses(c, 1);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].head == "HTTP/1.1 404 Not Found\r\nDate: <date>\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n");
    CHECK(rs[0].body == "Not Found\n");
}

TEST_CASE_TEMPLATE("a known path with the wrong method is 405 with Allow", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(contract_routes<Policy>);
    client c(srv.port());
    c.send("DELETE /echo HTTP/1.1\r\nHost: x\r\n\r\n");
    auto rs = read_responses(c, 1);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].head ==
          "HTTP/1.1 405 Method Not Allowed\r\nDate: <date>\r\nContent-Type: text/plain\r\nContent-Length: 19\r\n"
          "Allow: POST, OPTIONS\r\n");
    CHECK(rs[0].body == "Method Not Allowed\n");
}
