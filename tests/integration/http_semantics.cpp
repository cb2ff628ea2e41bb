// What only a running server shows about the parser's decisions (RFC 9110, RFC 9112):
// Expect: 100-continue answered before the body is sent, limits answered before the bytes
// that pass them, HEAD without body bytes, Connection token lists, and error answers that
// arrive before the close with nothing after them read as a request.
#include "support/loopback.hpp"

#include <doctest/doctest.h>

#include <string>
#include <string_view>

using namespace skiff_test;

namespace {

// Small limits so that each is passed by a short request.
skiff::options small_limits() {
    skiff::options opt;
    opt.max_request_line = 64;
    opt.max_header_bytes = 128;
    opt.max_headers = 4;
    opt.max_body = 16;
    return opt;
}

template <class Policy>
void http_semantics_routes(skiff::basic_server<Policy>& app) {
    app.get("/doc", [](skiff::request&, skiff::response& res) { res.text("0123456789"); });
    app.post("/echo", [](skiff::request& req, skiff::response& res) { res.text(req.body()); });
}

const std::string smuggled = "GET /doc HTTP/1.1\r\nHost: x\r\n\r\n";

} // namespace

TEST_CASE_TEMPLATE("RFC 9110 §10.1.1: Expect: 100-continue gets 100 before the body is sent, then the answer",
                   Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(http_semantics_routes<Policy>, small_limits());
    client c(srv.port());
    c.send("POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");
    std::string interim = c.read_until([](const std::string& s) { return s.find("\r\n\r\n") != std::string::npos; });
    CHECK(interim == "HTTP/1.1 100 Continue\r\n\r\n");
    c.send("hello");
    auto rs = read_responses(c, 1);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == 200);
    CHECK(rs[0].body == "hello");
    // The connection goes on: the next request is answered.
    c.send(smuggled);
    rs = read_responses(c, 1);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].body == "0123456789");
}

TEST_CASE_TEMPLATE("RFC 9110 §10.1.1: Expect: 100-continue with its body already sent gets no 100", Policy,
                   SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(http_semantics_routes<Policy>, small_limits());
    client c(srv.port());
    c.send("POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhi");
    std::string all = c.read_until([](const std::string& s) { return parse_responses(s).size() == 1; });
    CHECK(all.compare(0, 15, "HTTP/1.1 200 OK") == 0);
    CHECK(parse_responses(all).at(0).body == "hi");
}

TEST_CASE_TEMPLATE("RFC 9110 §10.1.1: Expect with a body over the limit gets 413 and no 100, unread", Policy,
                   SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(http_semantics_routes<Policy>, small_limits());
    client c(srv.port());
    c.send("POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 1000\r\n\r\n");
    std::string all = c.read_to_close();
    auto rs = parse_responses(all);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == 413);
    CHECK(all.find("100 Continue") == std::string::npos);
    CHECK(rs[0].header("Connection") == "close");
    CHECK(c.closed());
}

TEST_CASE_TEMPLATE("RFC 9110 §10.1.1: Expect on a path with no route gets 404 at once, without 100, closing", Policy,
                   SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(http_semantics_routes<Policy>, small_limits());
    client c(srv.port());
    c.send("POST /nowhere HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");
    std::string all = c.read_until([](const std::string& s) { return parse_responses(s).size() == 1; });
    auto rs = parse_responses(all);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == 404);
    CHECK(all.find("100 Continue") == std::string::npos);
    CHECK(rs[0].header("Connection") == "close");  // the unsent body would be read as a request
}

TEST_CASE_TEMPLATE("RFC 9110 §10.1.1: an unknown expectation gets 417", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(http_semantics_routes<Policy>, small_limits());
    client c(srv.port());
    c.send("POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nContent-Length: 5\r\n\r\nhello" + smuggled);
    auto rs = parse_responses(c.read_to_close());
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == 417);
    CHECK(c.closed());
}

TEST_CASE_TEMPLATE("RFC 9110 §10.1.1: Expect in HTTP/1.0 is ignored: no 100, the body is awaited", Policy,
                   SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(http_semantics_routes<Policy>, small_limits());
    client c(srv.port());
    c.send("POST /echo HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n");
    CHECK(c.read_some(300ms).empty());  // nothing until the body arrives
    c.send("abc");
    auto rs = parse_responses(c.read_to_close());
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].body == "abc");
}

TEST_CASE_TEMPLATE("RFC 9110 §9.3.2: HEAD gets GET's headers, Content-Length included, and no body bytes", Policy,
                   SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(http_semantics_routes<Policy>, small_limits());
    client c(srv.port());
    c.send("HEAD /doc HTTP/1.1\r\nHost: x\r\n\r\n" + smuggled);
    std::string all = c.read_until([](const std::string& s) { return s.find("0123456789") != std::string::npos; });
    std::size_t head_end = all.find("\r\n\r\n");
    REQUIRE(head_end != std::string::npos);
    auto head = parse_responses(all.substr(0, head_end + 4), true);
    REQUIRE(head.size() == 1);
    CHECK(head[0].status == 200);
    CHECK(head[0].header("Content-Length") == "10");
    CHECK(head[0].header("Content-Type") == "text/plain");
    // The next bytes are the GET's answer: the HEAD answer carried no body.
    auto rest = parse_responses(all.substr(head_end + 4));
    REQUIRE(rest.size() == 1);
    CHECK(rest[0].body == "0123456789");
}

TEST_CASE_TEMPLATE("RFC 9110 §7.6.1: close anywhere in a Connection token list closes after the answer", Policy,
                   SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(http_semantics_routes<Policy>, small_limits());
    client c(srv.port());
    c.send("GET /doc HTTP/1.1\r\nHost: x\r\nConnection: te, Close\r\n\r\n" + smuggled);
    auto rs = parse_responses(c.read_to_close());
    REQUIRE(rs.size() == 1);  // the pipelined request after it is not answered
    CHECK(rs[0].header("Connection") == "close");
    CHECK(c.closed());
}

// A handler reads a list field split over lines as one list: header_values() gives every line
// of the name, in order, whatever the case of the name; header() keeps giving the first.
TEST_CASE_TEMPLATE("RFC 9110 §5.3: field lines of one name are one field, read with header_values()", Policy,
                   SKIFF_TEST_POLICIES) {
    running_server<Policy> srv([](skiff::basic_server<Policy>& app) {
        app.get("/list", [](skiff::request& req, skiff::response& res) {
            std::string all;
            for (std::string_view line : req.header_values("x-list")) all += (all.empty() ? "" : ", ") + std::string(line);
            res.text(all + "|" + std::string(req.header("x-list")) + "|" +
                     (req.header_values("x-none").empty() ? "none" : "some"));
        });
    });
    client c(srv.port());
    c.send("GET /list HTTP/1.1\r\nHost: x\r\nX-List: a, b\r\nAccept: */*\r\nx-list: c\r\nX-LIST: d\r\n\r\n");
    auto rs = read_responses(c, 1);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].body == "a, b, c, d|a, b|none");
}

TEST_CASE_TEMPLATE("RFC 9112 §9.3: HTTP/1.0 keep-alive serves pipelined requests, and without it only one", Policy,
                   SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(http_semantics_routes<Policy>, small_limits());
    client keep(srv.port());
    keep.send("GET /doc HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /doc HTTP/1.0\r\n\r\nGET /doc HTTP/1.0\r\n\r\n");
    auto rs = parse_responses(keep.read_to_close());
    CHECK(rs.size() == 2);  // the second has no keep-alive: the connection ends after it
    CHECK(keep.closed());
}

// Every error is answered with its status and Connection: close before the server closes,
// and the request pipelined behind the bad one is never answered (RFC 9112 §9.6, §11.2).
TEST_CASE_TEMPLATE("framing and limit errors are answered, then the connection closes unread", Policy,
                   SKIFF_TEST_POLICIES) {
    struct error_case {
        const char* name;
        std::string request;
        int status;
    };
    const error_case cases[] = {
        {"RFC 9112 §2.2 bare LF", "GET /doc HTTP/1.1\nHost: x\n\n", 400},
        {"RFC 9112 §5.2 obs-fold", "GET /doc HTTP/1.1\r\nHost: x\r\nX: a\r\n b\r\n\r\n", 400},
        {"RFC 9112 §5.1 space before colon", "GET /doc HTTP/1.1\r\nHost : x\r\n\r\n", 400},
        {"RFC 9112 §6.1 CL with TE", "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400},
        {"RFC 9112 §6.3 differing CL", "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400},
        {"RFC 9112 §3.2 no Host", "GET /doc HTTP/1.1\r\n\r\n", 400},
        {"RFC 9112 §7.1 bad chunk size", "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5 \r\nhello\r\n0\r\n\r\n", 400},
        {"RFC 9110 §15.5.14 declared body over the limit", "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 17\r\n\r\n", 413},
        {"RFC 9110 §15.5.14 chunk over the limit", "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n11\r\n", 413},
        {"RFC 9110 §15.5.15 request line over the limit", "GET /" + std::string(80, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n", 414},
        {"RFC 6585 §5 header section over the limit", "GET /doc HTTP/1.1\r\nHost: x\r\nX: " + std::string(130, 'v') + "\r\n\r\n", 431},
        {"RFC 6585 §5 too many field lines", "GET /doc HTTP/1.1\r\nHost: x\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n", 431},
        {"RFC 9112 §6.1 unknown transfer coding before chunked", "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501},
        {"RFC 9112 §6.3 chunked not the final coding", "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", 400},
        {"RFC 9112 §2.3 HTTP/2.0", "GET /doc HTTP/2.0\r\nHost: x\r\n\r\n", 505},
    };
    running_server<Policy> srv(http_semantics_routes<Policy>, small_limits());
    for (const error_case& e : cases) {
        CAPTURE(e.name);
        client c(srv.port());
        c.send(e.request + smuggled);
        std::string all = c.read_to_close();
        auto rs = parse_responses(all);
        REQUIRE(rs.size() == 1);
        CHECK(rs[0].status == e.status);
        CHECK(rs[0].header("Connection") == "close");
        CHECK(all.find("0123456789") == std::string::npos);  // the smuggled GET got no answer
        CHECK(c.closed());
        CHECK_FALSE(c.reset());
    }
}

// RFC 9110 §9.3.2: an error answer to a HEAD has no content either, even where the parse
// failed before the method was noted (414), and its Content-Length is GET's.
TEST_CASE_TEMPLATE("a HEAD refused for framing or limits gets its error without a body", Policy, SKIFF_TEST_POLICIES) {
    struct error_case {
        const char* name;
        std::string request;
        int status;
    };
    const error_case cases[] = {
        {"400 no Host", "HEAD /doc HTTP/1.1\r\n\r\n", 400},
        {"417 unknown expectation", "HEAD /doc HTTP/1.1\r\nHost: x\r\nExpect: foo\r\n\r\n", 417},
        {"414 request line over the limit", "\r\nHEAD /" + std::string(80, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n", 414},
        {"431 header section over the limit", "HEAD /doc HTTP/1.1\r\nHost: x\r\nX: " + std::string(130, 'v') + "\r\n\r\n", 431},
        {"505 HTTP/2.0", "HEAD /doc HTTP/2.0\r\nHost: x\r\n\r\n", 505},
    };
    running_server<Policy> srv(http_semantics_routes<Policy>, small_limits());
    for (const error_case& e : cases) {
        CAPTURE(e.name);
        client c(srv.port());
        c.send(e.request);
        std::string all = c.read_to_close();
        std::size_t head_end = all.find("\r\n\r\n");
        REQUIRE(head_end != std::string::npos);
        CHECK(all.compare(0, 13, "HTTP/1.1 " + std::to_string(e.status) + " ") == 0);
        CHECK(all.find("\r\nContent-Length: 0\r\n") == std::string::npos);  // GET's length, not the empty body's
        CHECK(all.size() == head_end + 4);  // nothing after the head
    }
}

TEST_CASE_TEMPLATE("limits are answered before the bytes that pass them are sent", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(http_semantics_routes<Policy>, small_limits());
    SUBCASE("RFC 9110 §15.5.14: 413 from Content-Length, the body never sent") {
        client c(srv.port());
        c.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n");
        auto rs = read_responses(c, 1);
        REQUIRE(rs.size() == 1);
        CHECK(rs[0].status == 413);
    }
    SUBCASE("RFC 9110 §15.5.14: 413 from a chunk size, its data never sent") {
        client c(srv.port());
        c.send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n01234567\r\n9\r\n");
        auto rs = read_responses(c, 1);
        REQUIRE(rs.size() == 1);
        CHECK(rs[0].status == 413);
    }
    SUBCASE("RFC 9110 §15.5.15: 414 while the request line is still arriving") {
        client c(srv.port());
        c.send("GET /" + std::string(100, 'a'));
        auto rs = read_responses(c, 1);
        REQUIRE(rs.size() == 1);
        CHECK(rs[0].status == 414);
    }
    SUBCASE("RFC 6585 §5: 431 while the header section is still arriving") {
        client c(srv.port());
        c.send("GET /doc HTTP/1.1\r\nHost: x\r\nX: " + std::string(200, 'v') + "\r\n");
        auto rs = read_responses(c, 1);
        REQUIRE(rs.size() == 1);
        CHECK(rs[0].status == 431);
    }
}
