// WebSocket connections over real sockets, as a client sees them: the upgrade accepted or
// refused through a route, messages echoed whole and fragmented, pings, the close handshake,
// bytes sent right behind the handshake, the reader's failures (1009, 1007), sends from another
// thread (during on_open too) and after the client went, and stop() closing with 1001. The
// client is written here, by hand, with masked frames (support/websocket_frames.hpp), not with
// skiff's own writer.
// Every case runs under each policy; under shared the hub serves each WebSocket (taker_hub.hpp).
#include "support/loopback.hpp"
#include "support/websocket_frames.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <sys/mman.h>
#include <sys/socket.h>
#include <thread>
#include <vector>

using namespace skiff_test;
namespace wsk = skiff::websocket;


namespace {

// RFC 6455 §1.3's example: this key is answered with that accept value.
constexpr const char* ws_sample_key = "dGhlIHNhbXBsZSBub25jZQ==";
constexpr const char* ws_sample_accept = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";

std::string ws_upgrade_request(const std::string& path, const std::string& extra = {}, const char* version = "13") {
    return "GET " + path + " HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           "Sec-WebSocket-Key: " + std::string(ws_sample_key) + "\r\nSec-WebSocket-Version: " + version + "\r\n" + extra + "\r\n";
}

// A frame the server sent (never masked).
struct ws_server_frame {
    int op = -1;  // -1: none arrived
    bool fin = false;
    std::string payload;
    std::uint16_t code() const {
        return payload.size() < 2 ? 0 : static_cast<std::uint16_t>((std::uint8_t(payload[0]) << 8) | std::uint8_t(payload[1]));
    }
};

// Cuts one frame off the front of buf; false while it is incomplete.
bool ws_cut_frame(std::string& buf, ws_server_frame& f) {
    if (buf.size() < 2) return false;
    std::uint64_t len = std::uint8_t(buf[1]) & 0x7f;
    std::size_t at = 2;
    if (len >= 126) {
        std::size_t width = len == 126 ? 2 : 8;
        if (buf.size() < 2 + width) return false;
        len = 0;
        for (std::size_t i = 0; i < width; ++i) len = (len << 8) | std::uint8_t(buf[2 + i]);
        at += width;
    }
    if (buf.size() < at + len) return false;
    f.op = std::uint8_t(buf[0]) & 0x0f;
    f.fin = (std::uint8_t(buf[0]) & 0x80) != 0;
    f.payload = buf.substr(at, static_cast<std::size_t>(len));
    buf.erase(0, at + static_cast<std::size_t>(len));
    return true;
}

// A WebSocket client over a loopback socket.
class ws_client {
public:
    explicit ws_client(std::uint16_t port) : c_(port) {}

    // Sends the handshake (and `behind`, in the same write) and reads the answer's head.
    response open(const std::string& path, const std::string& behind = {}, const std::string& extra = {}) {
        c_.send(ws_upgrade_request(path, extra) + behind);
        return read_head();
    }

    // The answer's head (and what came behind it, kept for next()).
    response read_head() {
        std::string all = c_.read_until([](const std::string& s) { return s.find("\r\n\r\n") != std::string::npos; });
        std::size_t end = all.find("\r\n\r\n");
        response r;
        if (end == std::string::npos) return r;
        r.head = all.substr(0, end + 2);
        r.status = std::atoi(r.head.c_str() + 9);
        buf_ = all.substr(end + 4);
        return r;
    }

    void send(const std::string& bytes) { c_.send(bytes); }

    ws_server_frame next(std::chrono::milliseconds limit = 3000ms) {
        ws_server_frame f;
        if (ws_cut_frame(buf_, f)) return f;
        auto end = std::chrono::steady_clock::now() + limit;
        while (!c_.closed() && std::chrono::steady_clock::now() < end) {
            buf_ += c_.read_some(100ms);
            if (ws_cut_frame(buf_, f)) return f;
        }
        return f;
    }

    // Whether the server closed the connection (EOF) within the limit.
    bool sees_eof(std::chrono::milliseconds limit = 3000ms) {
        auto end = std::chrono::steady_clock::now() + limit;
        while (!c_.closed() && std::chrono::steady_clock::now() < end) buf_ += c_.read_some(100ms);
        return c_.closed();
    }

    client& raw() { return c_; }

private:
    client c_;
    std::string buf_;
};

wsk::handlers ws_echo_handlers(std::uint64_t max_message = 1024 * 1024) {
    wsk::handlers h;
    h.max_message = max_message;
    h.on_message = [](wsk::peer& p, std::string_view data, wsk::kind k) { p.send(data, k); };
    return h;
}

template <class Policy>
void ws_echo_routes(skiff::basic_server<Policy>& app) {
    app.get("/echo", wsk::upgrade(ws_echo_handlers(1024)));
    app.get("/plain", [](skiff::request&, skiff::response& res) { res.text("plain"); });
}

// What the server's callbacks saw, for a test thread to wait on.
struct ws_seen {
    std::mutex m;
    std::condition_variable cv;
    std::vector<wsk::peer> opened;
    std::vector<std::pair<int, std::string>> closed;

    template <class Pred>
    bool wait(Pred p, std::chrono::milliseconds limit = 3000ms) {
        std::unique_lock<std::mutex> g(m);
        return cv.wait_for(g, limit, p);
    }
    wsk::handlers handlers() {
        wsk::handlers h;
        h.on_open = [this](wsk::peer& p) {
            std::lock_guard<std::mutex> g(m);
            opened.push_back(p);
            cv.notify_all();
        };
        h.on_close = [this](wsk::peer&, wsk::close_code code, std::string_view reason) {
            std::lock_guard<std::mutex> g(m);
            closed.emplace_back(static_cast<int>(code), std::string(reason));
            cv.notify_all();
        };
        return h;
    }
};

} // namespace

TEST_CASE_TEMPLATE("a route upgrades: 101 with the accept key, then frames", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv([](skiff::basic_server<Policy>& app) { ws_echo_routes(app); });
    ws_client c(srv.port());
    response r = c.open("/echo");
    CHECK(r.status == 101);
    CHECK(r.header("Upgrade") == "websocket");
    CHECK(r.header("Connection") == "Upgrade");
    CHECK(r.header("Sec-WebSocket-Accept") == ws_sample_accept);
    CHECK(r.header("Sec-WebSocket-Extensions").empty());  // every extension declined
    c.send(ws::text("hello"));
    ws_server_frame f = c.next();
    CHECK(f.op == 1);
    CHECK(f.fin);
    CHECK(f.payload == "hello");
}

TEST_CASE_TEMPLATE("a handler picks a subprotocol, or refuses the upgrade with any status", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv([](skiff::basic_server<Policy>& app) {
        auto h = std::make_shared<const wsk::handlers>(ws_echo_handlers());
        app.get("/chat", [h](skiff::request& req, skiff::response& res) {
            if (req.header("authorization") != "Bearer ok") return res.status(401).text("no\n");
            const char* supported[] = {"chat.v2", "chat.v1"};
            wsk::accept(req, res, h, wsk::choose_protocol(req, supported));
        });
    });
    ws_client ok(srv.port());
    response r = ok.open("/chat", {}, "Authorization: Bearer ok\r\nSec-WebSocket-Protocol: chat.v1, chat.v2\r\n");
    CHECK(r.status == 101);
    CHECK(r.header("Sec-WebSocket-Protocol") == "chat.v2");

    client no(srv.port());
    no.send(ws_upgrade_request("/chat"));
    auto rs = read_responses(no, 1);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == 401);
    no.send("GET /chat HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ok\r\n\r\n");  // the connection goes on
    rs = read_responses(no, 1);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == 400);  // not an upgrade at all
}

TEST_CASE_TEMPLATE("a bad handshake is refused: 426 with the version for a bad version, 400 for a bad key", Policy,
                   SKIFF_TEST_POLICIES) {
    running_server<Policy> srv([](skiff::basic_server<Policy>& app) { ws_echo_routes(app); });
    response r = one_response(srv.port(), ws_upgrade_request("/echo", {}, "8"));
    CHECK(r.status == 426);
    CHECK(r.header("Sec-WebSocket-Version") == "13");
    CHECK(r.header("Upgrade") == "websocket");  // RFC 9110 §15.5.22, with its connection option (§7.8)
    CHECK(r.header("Connection") == "upgrade");
    std::string bad_key = ws_upgrade_request("/echo");
    bad_key.replace(bad_key.find(ws_sample_key), 4, "!!!!");
    CHECK(one_response(srv.port(), bad_key).status == 400);
    CHECK(one_response(srv.port(), "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n").status == 400);
    // A HEAD gets its GET's answer without the body, never 405 (its Allow would say HEAD is).
    client c(srv.port());
    c.send("HEAD /echo HTTP/1.1\r\nHost: x\r\n\r\nGET /echo HTTP/1.1\r\nHost: x\r\n\r\n");
    std::string both = c.read_until([](const std::string& s) { return s.find("HTTP/1.1", 1) != std::string::npos &&
                                                                      s.rfind("Bad Request\n") != std::string::npos; },
                                    std::chrono::milliseconds(3000));
    CHECK(both.rfind("HTTP/1.1 400 ", 0) == 0);
    CHECK(both.find("HTTP/1.1 400 ", 1) != std::string::npos);  // the GET behind it, on the same connection
    CHECK(both.find("Bad Request\n") == both.rfind("Bad Request\n"));  // one body: the GET's
}

TEST_CASE_TEMPLATE("messages come back whole with their type, fragmented or not", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv([](skiff::basic_server<Policy>& app) { ws_echo_routes(app); });
    ws_client c(srv.port());
    REQUIRE(c.open("/echo").status == 101);
    c.send(ws::binary(std::string("\x00\x01\xff", 3)));
    ws_server_frame f = c.next();
    CHECK(f.op == 2);
    CHECK(f.payload == std::string("\x00\x01\xff", 3));
    c.send(ws::text("frag", false) + ws::ping("mid") + ws::cont("men", false));
    c.send(ws::cont("ted"));
    f = c.next();
    CHECK(f.op == 10);  // the pong answers at once, between the fragments
    CHECK(f.payload == "mid");
    f = c.next();
    CHECK(f.op == 1);
    CHECK(f.payload == "fragmented");
    std::string big(600, 'x');  // a 16-bit length
    c.send(ws::binary(big));
    f = c.next();
    CHECK(f.op == 2);
    CHECK(f.payload == big);
}

TEST_CASE_TEMPLATE("a close is echoed with its code, and the connection closes after it", Policy, SKIFF_TEST_POLICIES) {
    ws_seen s;
    running_server<Policy> srv([&s](skiff::basic_server<Policy>& app) { app.get("/ws", wsk::upgrade(s.handlers())); });
    ws_client c(srv.port());
    REQUIRE(c.open("/ws").status == 101);
    c.send(ws::close_frame(4000, "bye"));
    ws_server_frame f = c.next();
    CHECK(f.op == 8);
    CHECK(f.code() == 4000);
    CHECK(c.sees_eof());
    REQUIRE(s.wait([&] { return !s.closed.empty(); }));
    CHECK(s.closed[0].first == 4000);
    CHECK(s.closed[0].second == "bye");
}

TEST_CASE_TEMPLATE("frames sent in the same write as the handshake are read", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv([](skiff::basic_server<Policy>& app) { ws_echo_routes(app); });
    ws_client c(srv.port());
    REQUIRE(c.open("/echo", ws::text("early") + ws::ping("p") + ws::text("bird")).status == 101);
    CHECK(c.next().payload == "early");
    ws_server_frame f = c.next();
    CHECK(f.op == 10);
    CHECK(c.next().payload == "bird");
}

// An idle WebSocket keeps no message reader: a read borrows the loop's spare one, and only a
// frame or message left open across reads keeps a reader of its own (taker_frames.hpp). Connections
// whose frames stop halfway, in turn with others on other routes, each get their own message
// whole and under their own route's limit.
TEST_CASE_TEMPLATE("frames left halfway on several connections at once each finish whole, under their route's limit",
                   Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv([](skiff::basic_server<Policy>& app) {
        ws_echo_routes(app);  // /echo: at most 1024 bytes
        app.get("/big", wsk::upgrade(ws_echo_handlers(1u << 20)));
    });
    ws_client small(srv.port()), big(srv.port()), other(srv.port());
    REQUIRE(small.open("/echo").status == 101);
    REQUIRE(big.open("/big").status == 101);
    REQUIRE(other.open("/big").status == 101);
    std::string half_header = ws::binary(std::string(3000, 'b'));  // a 16-bit length: cut inside it
    std::string fragmented = ws::text("one ", false) + ws::cont("two ", false) + ws::cont("three");
    big.send(half_header.substr(0, 3));
    small.send(fragmented.substr(0, 9));  // inside the message's first frame
    std::this_thread::sleep_for(50ms);    // each read is its own event
    other.send(ws::text("whole"));
    CHECK(other.next().payload == "whole");
    small.send(fragmented.substr(9));
    big.send(half_header.substr(3));
    ws_server_frame f = small.next();
    CHECK(f.op == 1);
    CHECK(f.payload == "one two three");
    f = big.next();
    CHECK(f.op == 2);
    CHECK(f.payload == std::string(3000, 'b'));  // /big's limit, not /echo's, though /echo read last
    other.send(ws::binary(std::string(2000, 'o')));  // over /echo's limit, within /big's
    CHECK(other.next().payload.size() == 2000);
    small.send(ws::binary(std::string(2000, 's')));
    f = small.next();
    CHECK(f.op == 8);
    CHECK(f.code() == 1009);
}

TEST_CASE_TEMPLATE("a message over the route's limit is closed with 1009, invalid UTF-8 with 1007", Policy,
                   SKIFF_TEST_POLICIES) {
    ws_seen s;
    running_server<Policy> srv([&s](skiff::basic_server<Policy>& app) {
        ws_echo_routes(app);
        wsk::handlers h = s.handlers();
        app.get("/seen", wsk::upgrade(h));
    });
    {
        ws_client c(srv.port());
        REQUIRE(c.open("/echo").status == 101);
        c.send(ws::binary(std::string(2000, 'x')));  // the limit is 1024
        ws_server_frame f = c.next();
        CHECK(f.op == 8);
        CHECK(f.code() == 1009);
        CHECK(c.sees_eof());
    }
    ws_client c(srv.port());
    REQUIRE(c.open("/seen").status == 101);
    c.send(ws::text("ok \xc3\x28 not"));
    ws_server_frame f = c.next();
    CHECK(f.op == 8);
    CHECK(f.code() == 1007);
    CHECK(c.sees_eof());
    REQUIRE(s.wait([&] { return !s.closed.empty(); }));
    CHECK(s.closed[0].first == 1007);
}

TEST_CASE_TEMPLATE("a peer sends from another thread, and a send after the client went is dropped", Policy,
                   SKIFF_TEST_POLICIES) {
    ws_seen s;
    running_server<Policy> srv([&s](skiff::basic_server<Policy>& app) { app.get("/ws", wsk::upgrade(s.handlers())); });
    wsk::peer p;
    {
        ws_client c(srv.port());
        REQUIRE(c.open("/ws").status == 101);
        REQUIRE(s.wait([&] { return !s.opened.empty(); }));
        {
            std::lock_guard<std::mutex> g(s.m);
            p = s.opened[0];
        }
        wsk::send_status sent = wsk::send_status::dropped;
        std::thread([&] { sent = p.send("from a thread"); }).join();
        CHECK(sent == wsk::send_status::queued);
        ws_server_frame f = c.next();
        CHECK(f.op == 1);
        CHECK(f.payload == "from a thread");
        CHECK(p.close(wsk::close_code::normal, "done") == wsk::send_status::queued);
        f = c.next();
        CHECK(f.op == 8);
        CHECK(f.code() == 1000);
        CHECK(f.payload.substr(2) == "done");
        c.send(ws::close_frame(1000));
        CHECK(c.sees_eof());
    }
    REQUIRE(s.wait([&] { return !s.closed.empty(); }));
    CHECK(!p.is_open());
    CHECK(p.send("too late") == wsk::send_status::dropped);
    s.opened.clear();
    {
        ws_client gone(srv.port());  // a client that goes without a close frame
        REQUIRE(gone.open("/ws").status == 101);
        REQUIRE(s.wait([&] { return !s.opened.empty(); }));
    }
    REQUIRE(s.wait([&] { return s.closed.size() == 2; }));
    CHECK(s.closed[1].first == 1006);
    std::lock_guard<std::mutex> g(s.m);
    CHECK(s.opened[0].send("nobody") == wsk::send_status::dropped);
}

TEST_CASE_TEMPLATE("sends from another thread during on_open go out after on_open's own, in order", Policy,
                   SKIFF_TEST_POLICIES) {
    // Under shared the thread posts before the hub holds the connection: its sends wait for it.
    running_server<Policy> srv([](skiff::basic_server<Policy>& app) {
        wsk::handlers h;
        h.on_open = [](wsk::peer& p) {
            p.send("direct");
            std::thread([p]() mutable {
                p.send("posted 1");
                p.send("posted 2");
                p.close(wsk::close_code::normal, "bye");
            }).join();
        };
        app.get("/early", wsk::upgrade(h));
    });
    ws_client c(srv.port());
    REQUIRE(c.open("/early").status == 101);
    CHECK(c.next().payload == "direct");
    CHECK(c.next().payload == "posted 1");
    CHECK(c.next().payload == "posted 2");
    ws_server_frame f = c.next();
    CHECK(f.op == 8);
    CHECK(f.code() == 1000);
    c.send(ws::close_frame(1000));
    CHECK(c.sees_eof());
}

TEST_CASE_TEMPLATE("several threads send to several clients while they talk: nothing lost, each sender's order kept",
                   Policy, SKIFF_TEST_POLICIES) {
    constexpr int clients = 6, threads = 3, per_thread = 40, per_client = 20;
    ws_seen s;
    running_server<Policy> srv([&s](skiff::basic_server<Policy>& app) {
        wsk::handlers h = s.handlers();
        h.on_message = [](wsk::peer& p, std::string_view data, wsk::kind k) { p.send(data, k); };
        app.get("/ws", wsk::upgrade(h));
    });
    std::vector<std::unique_ptr<ws_client>> cs;
    for (int i = 0; i < clients; ++i) {
        cs.push_back(std::make_unique<ws_client>(srv.port()));
        REQUIRE(cs.back()->open("/ws").status == 101);
    }
    REQUIRE(s.wait([&] { return s.opened.size() == clients; }));
    std::vector<wsk::peer> peers;
    {
        std::lock_guard<std::mutex> g(s.m);
        peers = s.opened;
    }
    std::vector<std::thread> senders;
    for (int t = 0; t < threads; ++t)
        senders.emplace_back([&peers, t] {
            for (int i = 0; i < per_thread; ++i)
                for (wsk::peer& p : peers) p.send("t" + std::to_string(t) + "-" + std::to_string(i));
        });
    for (int i = 0; i < per_client; ++i)
        for (auto& c : cs) c->send(ws::text("c" + std::to_string(i)));
    for (auto& t : senders) t.join();
    for (auto& c : cs) {
        std::vector<int> next(threads, 0);
        int echoed = 0;
        for (int n = 0; n < threads * per_thread + per_client; ++n) {
            ws_server_frame f = c->next();
            REQUIRE(f.op == 1);
            if (f.payload[0] == 'c') {
                CHECK(f.payload == "c" + std::to_string(echoed++));
                continue;
            }
            int t = f.payload[1] - '0';
            CHECK(f.payload == "t" + std::to_string(t) + "-" + std::to_string(next[t]++));
        }
        CHECK(echoed == per_client);
    }
}

TEST_CASE_TEMPLATE("sends past the backlog limit are dropped, past write_high_water say backpressure", Policy,
                   SKIFF_TEST_POLICIES) {
    std::vector<wsk::send_status> results;
    skiff::options opt;
    opt.write_high_water = 64 * 1024;
    running_server<Policy> srv(
        [&results](skiff::basic_server<Policy>& app) {
            wsk::handlers h;
            h.max_backlog = 256 * 1024;
            h.on_message = [&results](wsk::peer& p, std::string_view, wsk::kind) {
                std::string chunk(32 * 1024, 'z');
                for (int i = 0; i < 200; ++i) results.push_back(p.send(chunk, wsk::kind::binary));  // the client does not read
            };
            app.get("/flood", wsk::upgrade(h));
        },
        opt);
    {
        ws_client c(srv.port());
        int buf = 4096;
        ::setsockopt(c.raw().fd(), SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
        REQUIRE(c.open("/flood").status == 101);
        c.send(ws::text("go"));
        std::this_thread::sleep_for(300ms);  // lets the handler run (its results are read after the stop)
    }  // the client goes without reading: the server's write fails and it closes
    srv.stop();
    REQUIRE(results.size() == 200);
    CHECK(results.front() == wsk::send_status::queued);
    CHECK(std::count(results.begin(), results.end(), wsk::send_status::backpressure) > 0);
    CHECK(results.back() == wsk::send_status::dropped);
}

TEST_CASE_TEMPLATE("a message over 1 GiB is dropped when sent, and the connection carries on", Policy,
                   SKIFF_TEST_POLICIES) {
    // Address space only: pages of an anonymous map that nothing reads cost no memory.
    const std::size_t huge = (std::size_t{1} << 30) + 1;
    void* map = ::mmap(nullptr, huge, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    REQUIRE(map != MAP_FAILED);
    std::vector<wsk::send_status> results;
    running_server<Policy> srv([&](skiff::basic_server<Policy>& app) {
        wsk::handlers h;
        h.on_message = [&](wsk::peer& p, std::string_view, wsk::kind) {
            results.push_back(p.send(std::string_view(static_cast<const char*>(map), huge), wsk::kind::binary));
            results.push_back(p.send("after"));
        };
        app.get("/big", wsk::upgrade(h));
    });
    ws_client c(srv.port());
    REQUIRE(c.open("/big").status == 101);
    c.send(ws::text("go"));
    ws_server_frame f = c.next();
    CHECK(f.op == 1);
    CHECK(f.payload == "after");
    srv.stop();
    ::munmap(map, huge);
    REQUIRE(results.size() == 2);
    CHECK(results[0] == wsk::send_status::dropped);
    CHECK(results[1] == wsk::send_status::queued);
}

TEST_CASE_TEMPLATE("stop() closes every WebSocket with 1001", Policy, SKIFF_TEST_POLICIES) {
    ws_seen s;
    running_server<Policy> srv([&s](skiff::basic_server<Policy>& app) { app.get("/ws", wsk::upgrade(s.handlers())); });
    ws_client a(srv.port()), b(srv.port());
    REQUIRE(a.open("/ws").status == 101);
    REQUIRE(b.open("/ws").status == 101);
    std::thread stopper([&] { srv.stop(); });
    ws_server_frame fa = a.next(), fb = b.next();
    CHECK(fa.op == 8);
    CHECK(fa.code() == 1001);
    CHECK(fb.code() == 1001);
    a.send(ws::close_frame(1001));
    b.send(ws::close_frame(1001));
    CHECK(a.sees_eof());
    CHECK(b.sees_eof());
    stopper.join();
    CHECK(s.closed.size() == 2);
}

TEST_CASE_TEMPLATE("delivery in pieces hands each piece as it comes, the last one marked", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv([](skiff::basic_server<Policy>& app) {
        wsk::handlers h;
        h.delivery = wsk::delivery::pieces;
        h.max_message = 64;
        h.on_piece = [](wsk::peer& p, std::string_view data, wsk::kind, bool last) {
            p.send(std::string(data) + (last ? "|last" : "|more"));
        };
        app.get("/pieces", wsk::upgrade(h));
    });
    ws_client c(srv.port());
    REQUIRE(c.open("/pieces").status == 101);
    c.send(ws::binary("ab", false));
    CHECK(c.next().payload == "ab|more");
    c.send(ws::cont("cd"));
    CHECK(c.next().payload == "cd|last");
    c.send(ws::binary(std::string(100, 'x')));  // over the limit, in pieces too
    CHECK(c.next().code() == 1009);
}

TEST_CASE_TEMPLATE("a quiet client is pinged at half the idle timeout, and closed with 1000 if it does not answer",
                   Policy, SKIFF_TEST_POLICIES) {
    skiff::options opt;
    opt.idle_timeout = 400ms;
    running_server<Policy> srv([](skiff::basic_server<Policy>& app) { ws_echo_routes(app); }, opt);
    ws_client c(srv.port());
    REQUIRE(c.open("/echo").status == 101);
    auto began = std::chrono::steady_clock::now();
    ws_server_frame f = c.next();
    CHECK(f.op == 9);  // the keepalive ping
    CHECK(std::chrono::steady_clock::now() - began >= 150ms);
    f = c.next();  // not answered
    CHECK(f.op == 8);
    CHECK(f.code() == 1000);
    CHECK(std::chrono::steady_clock::now() - began >= 350ms);
    c.send(ws::close_frame(1000));
    CHECK(c.sees_eof());
}

// A client busy taking a long answer is not idle: the idle deadline counts from the last
// output it took too. It was closed with 1000 "idle" the moment it had read a message that
// took longer than idle_timeout to read.
TEST_CASE_TEMPLATE("a client reading a long message slowly is not closed as idle", Policy, SKIFF_TEST_POLICIES) {
    skiff::options opt;
    opt.idle_timeout = 1000ms;  // long beside a loaded machine's pauses in the client's sending
    running_server<Policy> srv(
        [](skiff::basic_server<Policy>& app) {
            wsk::handlers h = ws_echo_handlers(8 * 1024 * 1024);
            h.keepalive = wsk::keepalive::none;  // idleness alone decides
            app.get("/big", wsk::upgrade(h));
        },
        opt);
    ws_client c(srv.port());
    // Kernel buffers that hold a small part of the echo (and stay above loopback's 64 KiB
    // segment, so window updates are not held back): the echo waits on this reader.
    int small = 128 * 1024;
    ::setsockopt(c.raw().fd(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    REQUIRE(c.open("/big").status == 101);
    const std::string payload(2 * 1024 * 1024, 'm');
    c.send(ws::binary(payload));
    std::string got;
    auto began = std::chrono::steady_clock::now();
    while (got.size() < payload.size() + 10 && !c.raw().closed()) {
        std::this_thread::sleep_for(40ms);  // a slow reader: 32 reads or more, longer than idle_timeout
        got += c.raw().read_some(100ms);
    }
    REQUIRE(got.size() >= payload.size() + 10);
    CHECK(std::chrono::steady_clock::now() - began > 1000ms);  // (else the test proves nothing)
    std::this_thread::sleep_for(100ms);  // ticks pass: an idle close would be sent now
    c.send(ws::text("still here"));
    ws_server_frame f = c.next();
    CHECK(f.op == 1);
    CHECK(f.payload == "still here");
}

TEST_CASE_TEMPLATE("a quiet client that answers the keepalive pings stays open; without keepalive it is closed",
                   Policy, SKIFF_TEST_POLICIES) {
    skiff::options opt;
    opt.idle_timeout = 300ms;
    running_server<Policy> srv(
        [](skiff::basic_server<Policy>& app) {
            ws_echo_routes(app);
            wsk::handlers quiet = ws_echo_handlers();
            quiet.keepalive = wsk::keepalive::none;
            app.get("/quiet", wsk::upgrade(quiet));
        },
        opt);
    ws_client c(srv.port());
    REQUIRE(c.open("/echo").status == 101);
    for (int i = 0; i < 4; ++i) {  // 4 pings: 600 ms at least, twice the idle timeout
        ws_server_frame f = c.next();
        REQUIRE(f.op == 9);
        c.send(ws::pong(f.payload));
    }
    c.send(ws::text("still here"));
    ws_server_frame f = c.next();
    while (f.op == 9) f = c.next();
    CHECK(f.payload == "still here");

    ws_client q(srv.port());
    REQUIRE(q.open("/quiet").status == 101);
    f = q.next();
    CHECK(f.op == 8);  // no ping first
    CHECK(f.code() == 1000);
}

TEST_CASE_TEMPLATE("a callback that throws fails the connection with 1011", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv([](skiff::basic_server<Policy>& app) {
        wsk::handlers h;
        h.on_message = [](wsk::peer&, std::string_view, wsk::kind) { throw std::runtime_error("boom"); };
        app.get("/throws", wsk::upgrade(h));
    });
    ws_client c(srv.port());
    REQUIRE(c.open("/throws").status == 101);
    c.send(ws::text("x"));
    CHECK(c.next().code() == 1011);
    CHECK(c.sees_eof());
}

TEST_CASE_TEMPLATE("on_drain hears once a backlogged client has read", Policy, SKIFF_TEST_POLICIES) {
    skiff::options opt;
    opt.write_high_water = 64 * 1024;
    std::atomic<wsk::send_status> last{wsk::send_status::dropped};
    running_server<Policy> srv(
        [&last](skiff::basic_server<Policy>& app) {
            wsk::handlers h;
            h.on_message = [&last](wsk::peer& p, std::string_view, wsk::kind) {
                std::string chunk(32 * 1024, 'z');
                for (int i = 0; i < 8; ++i) last = p.send(chunk, wsk::kind::binary);
            };
            h.on_drain = [](wsk::peer& p) { p.send("drained"); };
            app.get("/drain", wsk::upgrade(h));
        },
        opt);
    ws_client c(srv.port());
    REQUIRE(c.open("/drain").status == 101);
    c.send(ws::text("go"));
    for (int i = 0; i < 8; ++i) {
        ws_server_frame f = c.next();
        REQUIRE(f.op == 2);
        CHECK(f.payload.size() == 32 * 1024);
    }
    ws_server_frame f = c.next();
    CHECK(f.op == 1);
    CHECK(f.payload == "drained");
    CHECK(last == wsk::send_status::backpressure);
}

TEST_CASE_TEMPLATE("a callback sends to another connection's peer (a room), on its loop or another", Policy,
                   SKIFF_TEST_POLICIES) {
    struct room {
        std::mutex m;
        std::vector<wsk::peer> members;
    } r;
    running_server<Policy> srv([&r](skiff::basic_server<Policy>& app) {
        wsk::handlers h;
        h.on_open = [&r](wsk::peer& p) {
            std::lock_guard<std::mutex> g(r.m);
            r.members.push_back(p);
        };
        h.on_message = [&r](wsk::peer& from, std::string_view data, wsk::kind) {
            std::vector<wsk::peer> now;
            {
                std::lock_guard<std::mutex> g(r.m);
                now = r.members;
            }
            for (wsk::peer& p : now)
                if (p != from) p.send(data);
        };
        app.get("/room", wsk::upgrade(h));
    });
    ws_client a(srv.port()), b(srv.port()), c(srv.port());
    REQUIRE(a.open("/room").status == 101);
    REQUIRE(b.open("/room").status == 101);
    REQUIRE(c.open("/room").status == 101);
    for (ws_client* x : {&a, &b, &c}) {  // a pong proves its on_open ran: it is in the room
        x->send(ws::ping("in?"));
        REQUIRE(x->next().op == 10);
    }
    a.send(ws::text("to all but a"));
    CHECK(b.next().payload == "to all but a");
    CHECK(c.next().payload == "to all but a");
    CHECK(a.next(200ms).op == -1);  // not to the sender
}

// broadcast(): one message to a room, from a callback (its own connection in the batch, the
// others through their hubs) and from another thread; every member gets it once, in order
// with what was sent to it before, and a member that went is not counted.
TEST_CASE_TEMPLATE("broadcast reaches every member once, from a callback or another thread, in order", Policy,
                   SKIFF_TEST_POLICIES) {
    struct room {
        std::mutex m;
        std::vector<wsk::peer> members;
        std::vector<wsk::peer> now() {
            std::lock_guard<std::mutex> g(m);
            return members;
        }
    } r;
    std::atomic<std::size_t> reached{0};
    running_server<Policy> srv([&](skiff::basic_server<Policy>& app) {
        wsk::handlers h;
        h.on_open = [&r](wsk::peer& p) {
            std::lock_guard<std::mutex> g(r.m);
            r.members.push_back(p);
        };
        h.on_message = [&](wsk::peer&, std::string_view data, wsk::kind k) { reached = wsk::broadcast(r.now(), data, k); };
        app.get("/room", wsk::upgrade(h));
    });
    ws_client a(srv.port()), b(srv.port()), c(srv.port());
    for (ws_client* x : {&a, &b, &c}) {
        REQUIRE(x->open("/room").status == 101);
        x->send(ws::ping("in?"));  // a pong proves its on_open ran: it is in the room
        REQUIRE(x->next().op == 10);
    }
    a.send(ws::text("from a callback"));
    for (ws_client* x : {&a, &b, &c}) {  // the sender too
        ws_server_frame f = x->next();
        CHECK(f.op == 1);
        CHECK(f.payload == "from a callback");
    }
    CHECK(reached == 3);
    std::vector<wsk::peer> members = r.now();
    std::size_t from_thread = 0;
    std::thread([&] {
        for (wsk::peer& p : members) p.send("first, alone");
        from_thread = wsk::broadcast(members, std::string(70'000, 'b'), wsk::kind::binary);
    }).join();
    CHECK(from_thread == 3);
    for (ws_client* x : {&a, &b, &c}) {
        ws_server_frame first = x->next();
        CHECK(first.payload == "first, alone");
        ws_server_frame second = x->next();
        CHECK(second.op == 2);
        CHECK(second.payload == std::string(70'000, 'b'));
    }
    c.send(ws::close_frame(1000));
    CHECK(c.next().op == 8);
    CHECK(c.sees_eof());
    // The server echoed c's close before c read it, and a closing peer takes no more.
    CHECK(wsk::broadcast(members, "two left") == 2);
    CHECK(a.next().payload == "two left");
    CHECK(b.next().payload == "two left");
}

// What WebSocket clients leave unread counts in the budget's line of pushed output, as a push
// stream's does (engine/push_ledger.hpp): past push output's share (half of max_buffered), the
// connection stalled longest is closed, so clients that never read cannot take the server's
// memory, however many there are, and a reading client goes on being served.
TEST_CASE_TEMPLATE("WebSocket clients that never read are shed past push output's share; a reading client is served",
                   Policy, SKIFF_TEST_POLICIES) {
    skiff::options opt;
    opt.workers = 2;
    opt.max_buffered = 1024 * 1024;  // push output's share: 512 KiB
    opt.write_timeout = std::chrono::milliseconds(60'000);  // no client is cut by its write deadline
    struct room {
        std::mutex m;
        std::vector<wsk::peer> members;
        std::vector<int> closes;
    } r;
    running_server<Policy> srv([&r](skiff::basic_server<Policy>& app) {
        wsk::handlers h;
        h.max_backlog = 64u << 20;  // no connection reaches its own bound: only the sum can cut them
        h.on_open = [&r](wsk::peer& p) {
            std::lock_guard<std::mutex> g(r.m);
            r.members.push_back(p);
        };
        h.on_close = [&r](wsk::peer&, wsk::close_code code, std::string_view) {
            std::lock_guard<std::mutex> g(r.m);
            r.closes.push_back(static_cast<int>(code));
        };
        app.get("/room", wsk::upgrade(h));
    }, opt);
    constexpr std::size_t silent = 12;  // they upgrade and never read again
    std::vector<std::unique_ptr<ws_client>> clients;
    for (std::size_t i = 0; i <= silent; ++i) {
        clients.push_back(std::make_unique<ws_client>(srv.port()));
        REQUIRE(clients.back()->open("/room").status == 101);
        clients.back()->send(ws::ping("in?"));  // a pong proves its on_open ran: it is in the room
        REQUIRE(clients.back()->next().op == 10);
    }
    ws_client& reading = *clients[silent];
    std::atomic<bool> done{false};
    std::atomic<std::size_t> received{0};
    std::thread reader([&] {
        while (!done.load()) {
            ws_server_frame f = reading.next(50ms);
            if (f.op == 2) received += f.payload.size();
            if (reading.raw().closed()) return;
        }
    });
    std::vector<wsk::peer> members;
    {
        std::lock_guard<std::mutex> g(r.m);
        members = r.members;
    }
    // 2 MiB to each, 26 MiB in all: far past the budget, each far under its own bound.
    std::string piece(16 * 1024, 'x');
    for (int round = 0; round < 128; ++round) {
        wsk::broadcast(members, piece, wsk::kind::binary);
        std::this_thread::sleep_for(1ms);  // let the loops apply and park them as they come
    }
    auto until = std::chrono::steady_clock::now() + 5s;  // the reading client gets every message
    while (received.load() < 128 * piece.size() && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(5ms);
    done = true;
    reader.join();
    CHECK(received.load() == 128 * piece.size());
    CHECK(members[silent].is_open());  // and is not shed
    std::size_t shed = 0;
    for (std::size_t i = 0; i < silent; ++i) shed += members[i].is_open() ? 0 : 1;
    CHECK(shed > 0);
    std::size_t ended = 0;
    for (std::size_t i = 0; i < silent; ++i)
        if (!members[i].is_open() && clients[i]->sees_eof(3000ms)) ++ended;
    CHECK(ended == shed);  // a shed connection is closed, not left open
    std::lock_guard<std::mutex> g(r.m);
    CHECK(r.closes.size() == shed);
    for (int code : r.closes) CHECK(code == 1006);  // gone without a close handshake
}

namespace {

// Upgrades put off by a route's handler (accept_later), for the test's thread to decide.
struct ws_decisions {
    std::mutex m;
    std::condition_variable cv;
    std::vector<wsk::pending_upgrade> waiting;

    template <class Policy>
    void route(skiff::basic_server<Policy>& app, wsk::handlers h) {
        app.get("/later", [this, shared = std::make_shared<const wsk::handlers>(std::move(h))](skiff::request& req,
                                                                                              skiff::response& res) {
            wsk::pending_upgrade up = wsk::accept_later(req, res, shared);
            if (!up) return;
            std::lock_guard<std::mutex> g(m);
            waiting.push_back(std::move(up));
            cv.notify_all();
        });
    }
    wsk::pending_upgrade take(std::chrono::milliseconds limit = 3000ms) {
        std::unique_lock<std::mutex> g(m);
        if (!cv.wait_for(g, limit, [this] { return !waiting.empty(); })) return {};
        wsk::pending_upgrade up = std::move(waiting.front());
        waiting.erase(waiting.begin());
        return up;
    }
};

} // namespace

TEST_CASE_TEMPLATE("an upgrade decided later on another thread: nothing is answered until it is accepted, then it opens",
                   Policy, SKIFF_TEST_POLICIES) {
    ws_decisions later;
    ws_seen seen;
    running_server<Policy> srv([&](skiff::basic_server<Policy>& app) {
        wsk::handlers h = seen.handlers();
        h.on_message = [](wsk::peer& p, std::string_view data, wsk::kind k) { p.send(data, k); };
        later.route(app, h);
    });
    ws_client c(srv.port());
    // Frames right behind the handshake, and more while the decision waits: none is lost.
    c.send(ws_upgrade_request("/later", "Sec-WebSocket-Protocol: chat.v1\r\n") + ws::text("early"));
    wsk::pending_upgrade up = later.take();
    REQUIRE(up);
    c.send(ws::text("meanwhile"));
    CHECK(c.raw().read_some(200ms).empty());  // no answer before the decision
    CHECK(seen.opened.empty());
    CHECK(up.accept("chat.v1"));
    CHECK_FALSE(up.accept());  // decided once
    response r = c.read_head();
    CHECK(r.status == 101);
    CHECK(r.header("Sec-WebSocket-Accept") == ws_sample_accept);
    CHECK(r.header("Sec-WebSocket-Protocol") == "chat.v1");
    CHECK(c.next().payload == "early");
    CHECK(c.next().payload == "meanwhile");
    c.send(ws::text("after"));
    CHECK(c.next().payload == "after");
    CHECK(seen.wait([&] { return seen.opened.size() == 1; }));
}

TEST_CASE_TEMPLATE("an upgrade refused later: its status and body with the chain's fields, then the connection closes",
                   Policy, SKIFF_TEST_POLICIES) {
    ws_decisions later;
    ws_seen seen;
    running_server<Policy> srv([&](skiff::basic_server<Policy>& app) {
        app.use([](skiff::request&, skiff::response& res, const skiff::next& next) {
            res.header("X-Seen-By", "middleware");
            next();
        });
        later.route(app, seen.handlers());
    });
    client c(srv.port());
    c.send(ws_upgrade_request("/later"));
    wsk::pending_upgrade up = later.take();
    REQUIRE(up);
    CHECK(up.refuse(403, "not you\n"));
    auto rs = read_responses(c, 1);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == 403);
    CHECK(rs[0].body == "not you\n");
    CHECK(rs[0].header("X-Seen-By") == "middleware");
    CHECK(rs[0].header("Connection") == "close");
    CHECK(c.read_some(1000ms).empty());
    CHECK(c.closed());
    CHECK(seen.opened.empty());
    CHECK(seen.closed.empty());  // it never opened: no on_close
}

TEST_CASE_TEMPLATE("an upgrade left undecided: 500 when its handle is dropped, 503 past deferred_timeout or at stop()",
                   Policy, SKIFF_TEST_POLICIES) {
    ws_decisions later;
    skiff::options opt;
    opt.deferred_timeout = 300ms;
    running_server<Policy> srv([&](skiff::basic_server<Policy>& app) { later.route(app, ws_echo_handlers()); }, opt);

    client dropped(srv.port());
    dropped.send(ws_upgrade_request("/later"));
    { wsk::pending_upgrade up = later.take(); }
    auto rs = read_responses(dropped, 1);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == 500);

    client waited(srv.port());
    waited.send(ws_upgrade_request("/later"));
    wsk::pending_upgrade kept = later.take();
    REQUIRE(kept);
    rs = read_responses(waited, 1);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == 503);

    client stopped(srv.port());
    stopped.send(ws_upgrade_request("/later"));
    wsk::pending_upgrade kept_too = later.take();
    REQUIRE(kept_too);
    std::thread stopper([&] { srv.stop(); });
    rs = read_responses(stopped, 1);
    stopper.join();
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == 503);
}

TEST_CASE_TEMPLATE("a client that sends more than 64 KiB while its upgrade is decided is closed", Policy,
                   SKIFF_TEST_POLICIES) {
    ws_decisions later;
    ws_seen seen;
    running_server<Policy> srv([&](skiff::basic_server<Policy>& app) { later.route(app, seen.handlers()); });
    client c(srv.port());
    c.send(ws_upgrade_request("/later"));
    wsk::pending_upgrade up = later.take();
    REQUIRE(up);
    std::string frame = ws::binary(std::string(16 * 1024, 'x'));
    try {
        for (int i = 0; i < 5; ++i) c.send(frame);  // 80 KiB before any 101
    } catch (const std::runtime_error&) {
        // the server closed before the last of it: as expected
    }
    CHECK(c.read_some(3000ms).empty());
    CHECK(c.closed());
    (void)up.accept();  // too late: nothing opens
    std::this_thread::sleep_for(100ms);
    CHECK(seen.opened.empty());
}
