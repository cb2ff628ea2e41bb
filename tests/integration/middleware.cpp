// Middleware end to end: order, early answers, code after next(), headers added after the
// handler ran (plain and pipelined, so the late insertion moves only this response's bytes),
// route groups by prefix, and app-wide middleware on 404, 405, 501 and a bad parameter's 400.
#include "support/loopback.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace skiff_test;

namespace {

using skiff::next;
using skiff::request;
using reply = skiff_test::response;

void app_with_middleware(skiff::server& app) {
    app.use([](request&, skiff::response& res, const next& go) {
        res.header("X-Before", "1");
        go();
        res.header("X-Final-Status", std::to_string(res.status()));  // after the handler sent
    });
    app.use("/api", [](request& req, skiff::response& res, const next& go) {
        if (req.header("authorization") != "Bearer secret") {
            res.status(401).header("WWW-Authenticate", "Bearer").text("unauthorized\n");
            return;  // next() not called: the handler does not run
        }
        go();
    });
    app.get("/hello", [](request&, skiff::response& res) { res.text("Hello, World!"); });
    app.get("/api/data", [](request&, skiff::response& res) { res.json("{\"ok\":true}"); });
    app.get("/apis", [](request&, skiff::response& res) { res.text("not under /api"); });
    app.get("/users/:id", [](request& req, skiff::response& res) { res.text(req.param("id")); });
    app.post("/echo", [](request& req, skiff::response& res) { res.body(req.body(), req.header("content-type")); });
}

} // namespace

TEST_CASE("app middleware runs before and after the handler, and adds headers late") {
    running_server<skiff::single> srv(app_with_middleware);
    reply r = one_response(srv.port(), "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(r.status == 200);
    CHECK(r.body == "Hello, World!");
    CHECK(r.header("X-Before") == "1");
    CHECK(r.header("X-Final-Status") == "200");
    CHECK(r.header("Content-Length") == "13");
}

TEST_CASE("a group middleware answers early, and the handler does not run") {
    running_server<skiff::single> srv(app_with_middleware);
    reply r = one_response(srv.port(), "GET /api/data HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(r.status == 401);
    CHECK(r.header("WWW-Authenticate") == "Bearer");
    CHECK(r.body == "unauthorized\n");
    CHECK(r.header("X-Final-Status") == "401");  // the app middleware saw the final status

    reply ok = one_response(srv.port(), "GET /api/data HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer secret\r\n\r\n");
    CHECK(ok.status == 200);
    CHECK(ok.body == "{\"ok\":true}");
}

TEST_CASE("a prefix covers its own segments only") {
    running_server<skiff::single> srv(app_with_middleware);
    reply r = one_response(srv.port(), "GET /apis HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(r.status == 200);
    CHECK(r.body == "not under /api");
}

TEST_CASE("app middleware wraps the 404, 405 and 501 answers") {
    running_server<skiff::single> srv(app_with_middleware);
    reply nf = one_response(srv.port(), "GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(nf.status == 404);
    CHECK(nf.body == "Not Found\n");
    CHECK(nf.header("X-Final-Status") == "404");
    reply na = one_response(srv.port(), "DELETE /hello HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(na.status == 405);
    CHECK(na.header("Allow").find("GET") != std::string::npos);
    CHECK(na.header("X-Final-Status") == "405");
    reply ni = one_response(srv.port(), "BREW /hello HTTP/1.1\r\nHost: x\r\n\r\n");  // a method no route takes
    CHECK(ni.status == 501);
    CHECK(ni.body == "Not Implemented\n");
    CHECK(ni.header("X-Final-Status") == "501");
}

TEST_CASE("app middleware wraps the 400 for a route parameter that does not decode") {
    running_server<skiff::single> srv(app_with_middleware);
    for (const char* id : {"%zz", "a%2Fb", "a%00b"}) {
        CAPTURE(id);
        reply r = one_response(srv.port(), std::string("GET /users/") + id + " HTTP/1.1\r\nHost: x\r\n\r\n");
        CHECK(r.status == 400);
        CHECK(r.body == "Bad Request\n");
        CHECK(r.header("X-Before") == "1");
        CHECK(r.header("X-Final-Status") == "400");
    }
    CHECK(one_response(srv.port(), "GET /users/a%20b HTTP/1.1\r\nHost: x\r\n\r\n").body == "a b");
}

TEST_CASE("late headers keep pipelined responses and bodies intact") {
    running_server<skiff::single> srv(app_with_middleware);
    client c(srv.port());
    c.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: text/x-a\r\nContent-Length: 5\r\n\r\nfirst"
           "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n"
           "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\n\r\nsecond");
    auto rs = read_responses(c, 3);
    REQUIRE(rs.size() == 3);
    CHECK(rs[0].body == "first");
    CHECK(rs[0].header("Content-Type") == "text/x-a");
    CHECK(rs[1].body == "Hello, World!");
    CHECK(rs[2].body == "second");
    for (const auto& r : rs) CHECK(r.header("X-Final-Status") == "200");
}

TEST_CASE("a late header cannot change framing, and a HEAD answer gets it too") {
    running_server<skiff::single> srv([](skiff::server& app) {
        app.use([](request&, skiff::response& res, const next& go) {
            go();
            res.header("Content-Length", "999");  // dropped: skiff frames the body
            res.header("X-Late", "yes");
        });
        app.get("/", [](request&, skiff::response& res) { res.text("abc"); });
    });
    reply r = one_response(srv.port(), "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(r.header("Content-Length") == "3");
    CHECK(r.header("X-Late") == "yes");
    CHECK(r.body == "abc");
    client c(srv.port());
    c.send("HEAD / HTTP/1.1\r\nHost: x\r\n\r\n");
    std::string got = c.read_until([](const std::string& s) { return s.find("\r\n\r\n") != std::string::npos; });
    CHECK(got.find("X-Late: yes\r\n") != std::string::npos);
}

TEST_CASE("routes registered before use() are not wrapped") {
    running_server<skiff::single> srv([](skiff::server& app) {
        app.get("/before", [](request&, skiff::response& res) { res.text("b"); });
        app.use([](request&, skiff::response& res, const next& go) {
            go();
            res.header("X-Mw", "1");
        });
        app.get("/after", [](request&, skiff::response& res) { res.text("a"); });
    });
    CHECK(one_response(srv.port(), "GET /before HTTP/1.1\r\nHost: x\r\n\r\n").header("X-Mw").empty());
    CHECK(one_response(srv.port(), "GET /after HTTP/1.1\r\nHost: x\r\n\r\n").header("X-Mw") == "1");
}

TEST_CASE_TEMPLATE("middleware works under every policy", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv([](skiff::basic_server<Policy>& app) {
        app.use([](request&, skiff::response& res, const next& go) {
            go();
            res.header("X-Mw", "1");
        });
        app.get("/", [](request&, skiff::response& res) { res.text("x"); });
    });
    reply r = one_response(srv.port(), "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(r.header("X-Mw") == "1");
    CHECK(r.body == "x");
}
