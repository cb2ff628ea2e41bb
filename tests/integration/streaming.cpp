// Streamed bodies (response::stream): framing, order behind pipelined requests, failures, and
// memory that stays bounded however slowly the client reads.
#include "support/dechunk.hpp"
#include "support/loopback.hpp"

#include <doctest/doctest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

using namespace skiff_test;

namespace {

// A source of `total` bytes of a repeating pattern, in pieces of at most `piece`.
skiff::body_source pattern_source(std::size_t total, std::size_t piece = 1000) {
    auto sent = std::make_shared<std::size_t>(0);
    return [=](char* buf, std::size_t cap) {
        std::size_t n = std::min({cap, piece, total - *sent});
        for (std::size_t i = 0; i < n; ++i) buf[i] = static_cast<char>('a' + (*sent + i) % 26);
        *sent += n;
        return n;
    };
}

std::string expected_pattern(std::size_t total) {
    std::string s(total, ' ');
    for (std::size_t i = 0; i < total; ++i) s[i] = static_cast<char>('a' + i % 26);
    return s;
}

template <class Policy>
void streaming_routes(skiff::basic_server<Policy>& app) {
    app.get("/sized/:n", [](skiff::request& req, skiff::response& res) {
        std::size_t n = std::stoul(std::string(req.param("n")));
        res.stream("text/plain", pattern_source(n), n);
    });
    app.get("/chunked/:n", [](skiff::request& req, skiff::response& res) {
        res.stream("text/plain", pattern_source(std::stoul(std::string(req.param("n")))));
    });
    app.get("/short", [](skiff::request&, skiff::response& res) { res.stream("text/plain", pattern_source(10), 20); });
    app.get("/throws", [](skiff::request&, skiff::response& res) {
        auto calls = std::make_shared<int>(0);
        res.stream("text/plain", [calls](char* buf, std::size_t) -> std::size_t {
            if (++*calls > 2) throw std::runtime_error("source failed");
            buf[0] = 'x';
            return 1;
        });
    });
    app.get("/n/:n", [](skiff::request& req, skiff::response& res) { res.text(req.param("n")); });
}

} // namespace

TEST_CASE_TEMPLATE("a stream with a length is sent with Content-Length", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(streaming_routes<Policy>);
    client c(srv.port());
    c.send("GET /sized/300000 HTTP/1.1\r\nHost: x\r\n\r\n");
    auto rs = read_responses(c, 1, 5000ms);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].header("Content-Length") == "300000");
    CHECK(rs[0].header("Transfer-Encoding").empty());
    CHECK(rs[0].body == expected_pattern(300000));
}

TEST_CASE_TEMPLATE("a stream without a length is chunked, and pipelined requests behind it wait their turn", Policy,
                   SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(streaming_routes<Policy>);
    client c(srv.port());
    c.send("GET /chunked/200000 HTTP/1.1\r\nHost: x\r\n\r\nGET /n/2 HTTP/1.1\r\nHost: x\r\n\r\n");
    std::string all = c.read_until([](const std::string& s) { return s.find("\r\n\r\n2") != std::string::npos; }, 5000ms);
    std::size_t head_end = all.find("\r\n\r\n");
    REQUIRE(head_end != std::string::npos);
    CHECK(all.substr(0, head_end).find("Transfer-Encoding: chunked") != std::string::npos);
    std::size_t next = all.find("HTTP/1.1 200", head_end);
    REQUIRE(next != std::string::npos);
    std::string body;
    CHECK(dechunk(all.substr(head_end + 4, next - head_end - 4), body));
    CHECK(body == expected_pattern(200000));
    auto second = parse_responses(all.substr(next));
    REQUIRE(second.size() == 1);
    CHECK(second[0].body == "2");
}

TEST_CASE_TEMPLATE("an HTTP/1.0 stream without a length ends with the connection", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(streaming_routes<Policy>);
    client c(srv.port());
    c.send("GET /chunked/5000 HTTP/1.0\r\n\r\n");
    std::string all = c.read_to_close(5000ms);
    std::size_t head_end = all.find("\r\n\r\n");
    REQUIRE(head_end != std::string::npos);
    CHECK(all.substr(0, head_end).find("Transfer-Encoding") == std::string::npos);
    CHECK(all.substr(0, head_end).find("Connection: close") != std::string::npos);
    CHECK(all.substr(head_end + 4) == expected_pattern(5000));
    CHECK(c.closed());
}

TEST_CASE_TEMPLATE("a stream that fails or ends short closes the connection, and the server goes on", Policy,
                   SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(streaming_routes<Policy>);
    for (const char* path : {"/throws", "/short"}) {
        CAPTURE(path);
        client c(srv.port());
        c.send(std::string("GET ") + path + " HTTP/1.1\r\nHost: x\r\n\r\n");
        c.read_to_close(3000ms);
        CHECK(c.closed());
    }
    client c(srv.port());
    c.send("GET /n/7 HTTP/1.1\r\nHost: x\r\n\r\n");
    auto rs = read_responses(c, 1);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].body == "7");
}

TEST_CASE_TEMPLATE("HEAD on a streamed route sends the head only", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(streaming_routes<Policy>);
    client c(srv.port());
    c.send("HEAD /sized/1000 HTTP/1.1\r\nHost: x\r\n\r\nGET /n/3 HTTP/1.1\r\nHost: x\r\n\r\n");
    std::string all = c.read_until([](const std::string& s) { return s.find("\r\n\r\n3") != std::string::npos; });
    CHECK(mask_date(all).rfind("HTTP/1.1 200 OK\r\nDate: <date>\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\n"
                               "HTTP/1.1 200 OK",
                               0) == 0);
}

TEST_CASE_TEMPLATE("a slow reader of a 50 MB stream holds server memory bounded", Policy, SKIFF_TEST_POLICIES) {
    const std::size_t total = 50u << 20;
    running_server<Policy> srv([&](skiff::basic_server<Policy>& app) {
        app.get("/big", [&](skiff::request&, skiff::response& res) { res.stream("application/octet-stream", pattern_source(total, 1u << 16), total); });
    });
    client c(srv.port());
    int small = 64 * 1024;
    ::setsockopt(c.fd(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    c.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
    long before = resident_bytes();
    long peak = before;
    std::size_t got = 0;
    auto start = std::chrono::steady_clock::now();
    while (got < total + 100 && std::chrono::steady_clock::now() - start < 60s) {
        std::string piece = c.read_some(2000ms);
        if (piece.empty()) break;
        got += piece.size();
        if ((got / piece.size()) % 64 == 0) {
            std::this_thread::sleep_for(1ms);  // read slowly
            long now = resident_bytes();
            if (now > peak) peak = now;
        }
    }
    CHECK(got >= total);
    MESSAGE("resident growth while streaming 50 MB: " << (peak - before) / 1024 << " KiB");
    if (!sanitized) CHECK(peak - before < 8L * 1024 * 1024);
}

TEST_CASE_TEMPLATE("stop() during a stream lets the stream finish, then closes", Policy, SKIFF_TEST_POLICIES) {
    const std::size_t total = 8u << 20;
    running_server<Policy> srv([&](skiff::basic_server<Policy>& app) {
        app.get("/paced", [&](skiff::request&, skiff::response& res) {
            auto inner = pattern_source(total, 1u << 16);
            res.stream("application/octet-stream", [inner](char* buf, std::size_t cap) {
                std::this_thread::sleep_for(2ms);  // about 0.3 s in all: stop() lands mid-stream
                return inner(buf, cap);
            }, total);
        });
    });
    client c(srv.port());
    c.send("GET /paced HTTP/1.1\r\nHost: x\r\n\r\n");
    std::string got;
    while (got.size() < (1u << 20)) {
        std::string piece = c.read_some(2000ms);
        REQUIRE_FALSE(piece.empty());
        got += piece;
    }
    std::thread stopper([&] { srv.stop(); });
    got += c.read_to_close(10000ms);
    stopper.join();
    auto rs = parse_responses(got);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].body.size() == total);
    CHECK(c.closed());
}
