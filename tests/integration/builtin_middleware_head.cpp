// The built-ins' fields in the head: kept aside and appended to the pre-composed 200 head, or
// put after the general head's own fields; in the order added, each once, with a handler's
// own fields, on every kind of answer; and the chain composed at start-up (a built-in last
// joined with its handler, built-ins between other middleware, a built-in called as a
// std::function). Exact bytes where the order is the point.
#include "support/loopback.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace skiff_test;

namespace {

using skiff::next;
using skiff::request;
using reply = skiff_test::response;

std::string request_of(const std::string& path, const std::string& fields = "") {
    return "GET " + path + " HTTP/1.1\r\nHost: x\r\n" + fields + "\r\n";
}

// How many field lines of the head are named `name` (case as sent).
std::size_t lines_named(const std::string& head, const std::string& name) {
    std::size_t n = 0;
    for (std::size_t at = head.find("\r\n" + name + ": "); at != std::string::npos;
         at = head.find("\r\n" + name + ": ", at + 1))
        ++n;
    return n;
}

const std::string security_lines =
    "X-Content-Type-Options: nosniff\r\nX-Frame-Options: DENY\r\nReferrer-Policy: no-referrer\r\n";

template <class Policy>
void head_app(skiff::basic_server<Policy>& app) {
    skiff::cors_options o;
    o.origins = {"https://app.example"};
    app.use(skiff::request_id());
    app.use(skiff::security_headers());
    app.use(skiff::cors(o));
    app.get("/plain", [](request&, skiff::response& res) { res.text("hi"); });
    app.get("/own", [](request&, skiff::response& res) { res.header("X-Own", "1").text("hi"); });
    app.get("/created", [](request&, skiff::response& res) { res.status(201).json("{}"); });
    app.get("/typed", [](request&, skiff::response& res) { res.body("<b/>", "image/svg+xml"); });
    app.get("/none", [](request&, skiff::response& res) { res.status(204).end(); });
}

} // namespace

TEST_CASE_TEMPLATE("built-in fields on a 200: after the pre-composed head, in the order added", Policy,
                   SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(head_app<Policy>);
    client c(srv.port());
    c.send(request_of("/plain", "X-Request-Id: abc-1\r\nOrigin: https://app.example\r\n"));
    const std::string expected = "HTTP/1.1 200 OK\r\nDate: <date>\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n"
                                 "X-Request-Id: abc-1\r\n" +
                                 security_lines + "Vary: Origin\r\nAccess-Control-Allow-Origin: https://app.example\r\n\r\nhi";
    CHECK(mask_date(c.read_until([&](const std::string& s) { return mask_date(s).size() >= expected.size(); })) ==
          expected);
}

TEST_CASE_TEMPLATE("built-in fields with a handler's own: each once, the built-ins' first", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(head_app<Policy>);
    client c(srv.port());
    c.send(request_of("/own", "X-Request-Id: abc-2\r\n"));
    const std::string expected = "HTTP/1.1 200 OK\r\nDate: <date>\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n"
                                 "X-Request-Id: abc-2\r\n" +
                                 security_lines + "Vary: Origin\r\nX-Own: 1\r\n\r\nhi";
    CHECK(mask_date(c.read_until([&](const std::string& s) { return mask_date(s).size() >= expected.size(); })) ==
          expected);
}

TEST_CASE("built-in fields on other answers: a status, a type, no content, HEAD, HTTP/1.0, close") {
    running_server<skiff::single> srv(head_app<skiff::single>);
    struct row {
        std::string request;
        int status;
        std::string length;
    };
    const std::vector<row> rows = {
        {request_of("/created"), 201, "2"},
        {request_of("/typed"), 200, "4"},
        {request_of("/none"), 204, ""},
        {request_of("/missing"), 404, "10"},
        {"HEAD /plain HTTP/1.1\r\nHost: x\r\n\r\n", 200, "2"},
        {"GET /plain HTTP/1.0\r\nHost: x\r\n\r\n", 200, "2"},
        {request_of("/plain", "Connection: close\r\n"), 200, "2"},
    };
    for (const row& r : rows) {
        CAPTURE(r.request);
        client c(srv.port());
        c.send(r.request);
        std::string raw = c.read_until([](const std::string& s) { return s.find("\r\n\r\n") != std::string::npos; });
        std::string head = raw.substr(0, raw.find("\r\n\r\n") + 2);
        CHECK(std::stoi(head.substr(9, 3)) == r.status);
        for (const char* name : {"X-Request-Id", "X-Content-Type-Options", "X-Frame-Options", "Referrer-Policy", "Vary",
                                 "Date", "Content-Length"})
            CHECK(lines_named(head, name) == (std::string(name) == "Content-Length" && r.length.empty() ? 0u : 1u));
        if (!r.length.empty()) CHECK(head.find("\r\nContent-Length: " + r.length + "\r\n") != std::string::npos);
    }
}

TEST_CASE("fields beyond the response's room are sent whole, once, in order") {
    const std::string origin = "https://" + std::string(180, 'o') + ".example";
    running_server<skiff::single> srv([&](skiff::server& app) {
        skiff::cors_options o;
        o.origins = {origin};
        app.use(skiff::request_id());
        app.use(skiff::cors(o));
        app.use(skiff::security_headers());
        app.get("/", [](request&, skiff::response& res) { res.text("ok"); });
    });
    const std::string id(200, 'i');
    reply r = one_response(srv.port(), request_of("/", "X-Request-Id: " + id + "\r\nOrigin: " + origin + "\r\n"));
    CHECK(r.body == "ok");
    CHECK(r.header("X-Request-Id") == id);
    CHECK(r.header("Access-Control-Allow-Origin") == origin);
    CHECK(r.header("X-Frame-Options") == "DENY");
    std::size_t at_id = r.head.find("X-Request-Id"), at_vary = r.head.find("Vary"),
                at_allow = r.head.find("Access-Control-Allow-Origin"), at_sec = r.head.find("X-Content-Type-Options");
    CHECK(at_id < at_vary);
    CHECK(at_vary < at_allow);
    CHECK(at_allow < at_sec);
    for (const char* name : {"X-Request-Id", "Vary", "Access-Control-Allow-Origin", "X-Content-Type-Options"})
        CHECK(lines_named(r.head, name) == 1);
}

TEST_CASE_TEMPLATE("late fields: the timer's and a middleware's own, pipelined, bodies intact", Policy,
                   SKIFF_TEST_POLICIES) {
    running_server<Policy> srv([](skiff::basic_server<Policy>& app) {
        app.use([](request&, skiff::response& res, const next& go) {
            go();
            res.header("X-After", "late");  // after the timer's: outermost, so last
        });
        app.use(skiff::response_timer());
        app.use(skiff::security_headers());
        app.get("/short", [](request&, skiff::response& res) { res.text("s"); });
        app.get("/long", [](request&, skiff::response& res) { res.text(std::string(100, 'L')); });
        app.get("/own", [](request&, skiff::response& res) { res.header("X-Own", "1").text(std::string(20, 'o')); });
    });
    client c(srv.port());
    c.send(request_of("/short") + request_of("/long") + request_of("/own") + request_of("/short"));
    auto rs = read_responses(c, 4);
    REQUIRE(rs.size() == 4);
    const std::vector<std::string> bodies = {"s", std::string(100, 'L'), std::string(20, 'o'), "s"};
    for (std::size_t i = 0; i < rs.size(); ++i) {
        CAPTURE(i);
        CHECK(rs[i].body == bodies[i]);
        CHECK(rs[i].header("X-After") == "late");
        CHECK(rs[i].header("X-Frame-Options") == "DENY");
        CHECK(lines_named(rs[i].head, "Server-Timing") == 1);
        CHECK(rs[i].head.find("Server-Timing") < rs[i].head.find("X-After"));
        CHECK(rs[i].head.size() - rs[i].head.rfind("X-After: late\r\n") == std::string("X-After: late\r\n").size());
    }
    CHECK(rs[2].header("X-Own") == "1");
}

TEST_CASE("the timer behind a middleware that answered before next(): its field still reaches that answer") {
    running_server<skiff::single> srv([](skiff::server& app) {
        app.use([](request&, skiff::response& res, const next& go) {
            res.text("early");  // answered here, and the rest of the chain runs all the same
            go();
        });
        app.use(skiff::response_timer(skiff::timer_field::response_time));
        app.get("/", [](request&, skiff::response& res) { res.text("from the handler, ignored"); });
    });
    client c(srv.port());
    c.send(request_of("/") + request_of("/"));
    auto rs = read_responses(c, 2);
    REQUIRE(rs.size() == 2);
    for (const reply& r : rs) {
        CHECK(r.body == "early");
        CHECK(lines_named(r.head, "X-Response-Time") == 1);
        CHECK(r.header("Content-Length") == "5");
    }
}

TEST_CASE("a late header on a plain answer, no built-in: found by its scan, body intact") {
    running_server<skiff::single> srv([](skiff::server& app) {
        app.use([](request&, skiff::response& res, const next& go) {
            go();
            res.header("X-One", "1");
            res.header("X-Two", "2");
        });
        app.get("/", [](request&, skiff::response& res) { res.text(std::string(40, 'b')); });
    });
    client c(srv.port());
    c.send(request_of("/") + request_of("/"));
    auto rs = read_responses(c, 2);
    REQUIRE(rs.size() == 2);
    for (const reply& r : rs) {
        CHECK(r.body == std::string(40, 'b'));
        CHECK(r.head.find("X-One: 1\r\nX-Two: 2\r\n") != std::string::npos);
    }
}

TEST_CASE_TEMPLATE("chains: a built-in last, between other middleware, and called as a std::function", Policy,
                   SKIFF_TEST_POLICIES) {
    running_server<Policy> srv([](skiff::basic_server<Policy>& app) {
        app.use("/mid", [](request&, skiff::response& res, const next& go) {
            res.header("X-First", "1");
            go();
        });
        app.use("/mid", skiff::request_id());
        app.use("/mid", [](request& req, skiff::response& res, const next& go) {
            res.header("X-Saw-Id", skiff::current_request_id(req).empty() ? "no" : "yes");
            go();
        });
        app.use("/two", skiff::security_headers());
        app.use("/two", skiff::request_id());
        skiff::middleware wrapped = skiff::security_headers();
        app.use("/fn", [wrapped](request& req, skiff::response& res, const next& go) { wrapped(req, res, go); });
        for (const char* path : {"/mid", "/two", "/fn"})
            app.get(path, [](request& req, skiff::response& res) { res.text(skiff::current_request_id(req)); });
    });
    reply mid = one_response(srv.port(), request_of("/mid", "X-Request-Id: m-1\r\n"));
    CHECK(mid.body == "m-1");
    CHECK(mid.header("X-Saw-Id") == "yes");
    CHECK(mid.head.find("X-First: 1\r\nX-Request-Id: m-1\r\nX-Saw-Id: yes\r\n") != std::string::npos);
    reply two = one_response(srv.port(), request_of("/two", "X-Request-Id: t-1\r\n"));
    CHECK(two.body == "t-1");
    CHECK(two.head.find(security_lines + "X-Request-Id: t-1\r\n") != std::string::npos);
    reply fn = one_response(srv.port(), request_of("/fn"));
    CHECK(fn.body.empty());
    CHECK(lines_named(fn.head, "X-Frame-Options") == 1);
}
