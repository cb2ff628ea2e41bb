// Pipelining: every request of one read is answered, in order, and the answers leave in one
// write (design.md "Hot path mechanics").
#include "support/loopback.hpp"
#include "support/send_counter.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace skiff_test;

namespace {

template <class Policy>
void pipelined_echo_routes(skiff::basic_server<Policy>& app) {
    app.get("/n/:n", [](skiff::request& req, skiff::response& res) { res.text(req.param("n")); });
    app.post("/echo", [](skiff::request& req, skiff::response& res) { res.text(req.body()); });
}

std::uint16_t local_port_of(int fd) {
    sockaddr_in a{};
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    return ntohs(a.sin_port);
}

// 16 requests: GETs, Content-Length POSTs and chunked POSTs, each answered with a body that
// names its position.
std::string mixed_batch() {
    std::string batch;
    for (int i = 0; i < 16; ++i) {
        std::string n = std::to_string(i);
        if (i % 3 == 0) {
            batch += "GET /n/" + n + " HTTP/1.1\r\nHost: x\r\n\r\n";
        } else if (i % 3 == 1) {
            batch += "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(n.size()) + "\r\n\r\n" + n;
        } else {
            batch += "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
                     std::to_string(n.size()) + "\r\n" + n + "\r\n0\r\n\r\n";
        }
    }
    return batch;
}

} // namespace

TEST_CASE_TEMPLATE("a 16-deep pipeline of GET, Content-Length and chunked POST gets 16 ordered answers in one write",
                   Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(pipelined_echo_routes<Policy>);
    client c(srv.port());
    c.send("GET /n/warm-up HTTP/1.1\r\nHost: x\r\n\r\n");  // accepted and idle before counting
    REQUIRE(read_responses(c, 1).size() == 1);

    watch_writes_to(local_port_of(c.fd()));
    c.send(mixed_batch());  // one send: it arrives in one read on loopback
    auto rs = read_responses(c, 16);
    long writes = counted_writes();
    watch_writes_to(0);

    REQUIRE(rs.size() == 16);
    for (int i = 0; i < 16; ++i) {
        CAPTURE(i);
        CHECK(rs[static_cast<std::size_t>(i)].status == 200);
        CHECK(rs[static_cast<std::size_t>(i)].body == std::to_string(i));
    }
    CHECK(writes == 1);
}

TEST_CASE_TEMPLATE("requests split across reads are answered in order", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(pipelined_echo_routes<Policy>);
    client c(srv.port());
    std::string batch = mixed_batch();
    for (std::size_t at = 0; at < batch.size(); at += 7) {  // 7-byte pieces, each its own segment
        c.send(batch.substr(at, 7));
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    auto rs = read_responses(c, 16, 5000ms);
    REQUIRE(rs.size() == 16);
    for (int i = 0; i < 16; ++i) CHECK(rs[static_cast<std::size_t>(i)].body == std::to_string(i));
}
