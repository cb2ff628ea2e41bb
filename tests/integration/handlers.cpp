// What handlers can do and what the server guarantees around them.
#include "support/loopback.hpp"

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

using namespace skiff_test;

namespace {

template <class Policy>
void handlers_routes(skiff::basic_server<Policy>& app) {
    app.get("/", [](skiff::request&, skiff::response& res) { res.text("hello"); });
    app.get("/throw", [](skiff::request&, skiff::response& res) {
        res.header("X-Half", "written");
        throw std::runtime_error("handler failed");
    });
    app.get("/nothing", [](skiff::request&, skiff::response&) {});
    app.get("/204", [](skiff::request&, skiff::response& res) { res.status(204).text("ignored"); });
    app.get("/304", [](skiff::request&, skiff::response& res) { res.status(304).text("ignored"); });
    app.get("/inject", [](skiff::request&, skiff::response& res) {
        res.header("X-Bad", "a\r\nSet-Cookie: evil=1").header("X-Good", "ok").text("body");
    });
    app.get("/custom-type", [](skiff::request&, skiff::response& res) {
        res.header("Content-Type", "text/csv").header("Content-Length", "999").text("a,b");
    });
    app.get("/close", [](skiff::request&, skiff::response& res) { res.header("Connection", "close").text("bye"); });
}

std::string get(client& c, const std::string& path, const std::string& method = "GET") {
    c.send(method + " " + path + " HTTP/1.1\r\nHost: x\r\n\r\n");
    return c.read_until([&](const std::string& s) { return parse_responses(s, method == "HEAD").size() == 1; });
}

} // namespace

TEST_CASE_TEMPLATE("a handler that throws gets a 500, and the connection and server go on", Policy,
                   SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(handlers_routes<Policy>);
    client c(srv.port());
    auto rs = parse_responses(get(c, "/throw"));
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == 500);
    CHECK(rs[0].header("X-Half").empty());  // what it wrote before throwing is discarded
    rs = parse_responses(get(c, "/"));
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].body == "hello");
}

TEST_CASE_TEMPLATE("HEAD, 204 and 304 carry no body, and everything else has Content-Length", Policy,
                   SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(handlers_routes<Policy>);
    client c(srv.port());
    SUBCASE("HEAD: the GET headers, Content-Length included, and no body") {
        std::string raw = get(c, "/", "HEAD");
        CHECK(mask_date(raw) ==
              "HTTP/1.1 200 OK\r\nDate: <date>\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\n");
    }
    SUBCASE("204") {
        std::string raw = get(c, "/204");
        CHECK(mask_date(raw) == "HTTP/1.1 204 No Content\r\nDate: <date>\r\n\r\n");
    }
    SUBCASE("304") {
        std::string raw = get(c, "/304");
        CHECK(mask_date(raw) == "HTTP/1.1 304 Not Modified\r\nDate: <date>\r\n\r\n");
    }
    SUBCASE("a handler that sends nothing answers 200 with an empty body") {
        auto rs = parse_responses(get(c, "/nothing"));
        REQUIRE(rs.size() == 1);
        CHECK(rs[0].status == 200);
        CHECK(rs[0].header("Content-Length") == "0");
    }
    // The connection is still in step after each of them.
    auto rs = parse_responses(get(c, "/"));
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].body == "hello");
}

TEST_CASE_TEMPLATE("response fields: injection is refused, framing stays skiff's", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(handlers_routes<Policy>);
    client c(srv.port());
    SUBCASE("a value with CR LF is dropped, the others are kept") {
        auto rs = parse_responses(get(c, "/inject"));
        REQUIRE(rs.size() == 1);
        CHECK(rs[0].header("X-Bad").empty());
        CHECK(rs[0].header("Set-Cookie").empty());
        CHECK(rs[0].header("X-Good") == "ok");
    }
    SUBCASE("a user Content-Type wins; a user Content-Length is ignored") {
        auto rs = parse_responses(get(c, "/custom-type"));
        REQUIRE(rs.size() == 1);
        CHECK(rs[0].header("Content-Type") == "text/csv");
        CHECK(rs[0].header("Content-Length") == "3");
        CHECK(rs[0].body == "a,b");
    }
    SUBCASE("Connection: close from a handler closes after the response") {
        auto rs = parse_responses(c.read_to_close(100ms) + get(c, "/close"));
        REQUIRE(rs.size() == 1);
        c.read_to_close();
        CHECK(c.closed());
    }
}

// From the router unit tests: the one case there that needs the event loop.
TEST_CASE("router: end to end, HEAD and 405 through the event loop") {
    skiff_test::running_server<> srv([](skiff::server& app) {
        app.get("/users/:id", [](skiff::request& req, skiff::response& res) { res.text(req.param("id")); });
        app.route("PURGE", "/users/:id", [](skiff::request&, skiff::response& res) { res.end(); });
    });
    skiff_test::client c(srv.port());
    c.send("HEAD /users/a%20b HTTP/1.1\r\nHost: x\r\n\r\n"
           "DELETE /users/1 HTTP/1.1\r\nHost: x\r\n\r\n"
           "GET /users/a%20b HTTP/1.1\r\nHost: x\r\n\r\n");
    std::string all = c.read_until([](const std::string& s) { return s.find("\r\n\r\na b") != std::string::npos; });
    // The HEAD response has Content-Length 3 and no body, so the next status line follows
    // its blank line at once.
    auto head_end = all.find("\r\n\r\n");
    REQUIRE(head_end != std::string::npos);
    CHECK(all.substr(0, 15) == "HTTP/1.1 200 OK");
    CHECK(all.find("Content-Length: 3\r\n") < head_end);
    CHECK(all.substr(head_end + 4, 12) == "HTTP/1.1 405");
    auto rest = skiff_test::parse_responses(all.substr(head_end + 4));
    REQUIRE(rest.size() == 2);
    CHECK(rest[0].header("Allow") == "GET, HEAD, OPTIONS, PURGE");
    CHECK(rest[1].status == 200);
    CHECK(rest[1].body == "a b");
}
