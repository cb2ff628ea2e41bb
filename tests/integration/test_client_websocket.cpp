// The test client's WebSocket conversation (testing/test_websocket.hpp): what a user checks of
// a WebSocket route without a real client or a thread: the upgrade and its refusal, echoes
// whole and fragmented, ping and pong, the close handshake, a broken frame's 1002, the
// message limit's 1009, the idle deadline and keepalive ping on the test clock, and an upgrade
// decided later: accepted, refused, or left past deferred_timeout.
#include <skiff/testing.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace {

namespace ws = skiff::websocket;
using skiff::testing::test_frame;
using skiff::testing::test_websocket;
using namespace std::chrono_literals;

// /echo echoes each message with its type; /private upgrades only with the session cookie
// (401 otherwise); /small takes messages up to 8 bytes; /quiet closes after 1 s of silence,
// pinging at half of it.
void websocket_test_routes(skiff::server& app) {
    ws::handlers echo;
    echo.on_message = [](ws::peer& p, std::string_view data, ws::kind k) { p.send(data, k); };
    app.get("/echo", ws::upgrade(echo));
    auto shared_echo = std::make_shared<const ws::handlers>(echo);
    app.get("/private", [shared_echo](skiff::request& req, skiff::response& res) {
        if (req.header("Cookie") == "session=ok") ws::accept(req, res, shared_echo);
        else res.status(401).text("who are you?\n");
    });
    ws::handlers small = echo;
    small.max_message = 8;
    app.get("/small", ws::upgrade(small));
    ws::handlers quiet = echo;
    quiet.idle_timeout = 1000ms;
    app.get("/quiet", ws::upgrade(quiet));
}

bool is(const test_frame& f, ws::opcode op, std::string_view payload) {
    return f && f.fin && f.op == op && f.payload == payload;
}

} // namespace

TEST_CASE("test_websocket: the upgrade is answered 101 with the accept key of RFC 6455's sample") {
    skiff::testing::test_client client(websocket_test_routes);
    test_websocket conv(client, "/echo");
    REQUIRE(conv.upgraded());
    CHECK(conv.handshake().header("Sec-WebSocket-Accept") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
    CHECK(conv.handshake().header("Upgrade") == "websocket");
    CHECK_FALSE(conv.next_frame());  // nothing sent yet
}

TEST_CASE("test_websocket: messages come back whole with their type, fragments gathered by the server") {
    skiff::testing::test_client client(websocket_test_routes);
    test_websocket conv(client, "/echo");
    REQUIRE(conv.upgraded());
    conv.send_text("hello");
    CHECK(is(conv.next_frame(), ws::opcode::text, "hello"));
    conv.send_binary(std::string("\0\1\2", 3));
    CHECK(is(conv.next_frame(), ws::opcode::binary, std::string("\0\1\2", 3)));
    conv.send_frame(ws::opcode::text, false, "frag");
    CHECK_FALSE(conv.next_frame());  // not whole yet: nothing echoed
    conv.send_frame(ws::opcode::continuation, true, "ments");
    CHECK(is(conv.next_frame(), ws::opcode::text, "fragments"));
    std::string big(70'000, 'x');  // past 65,535 bytes: a 64-bit length each way
    conv.send_binary(big);
    CHECK(is(conv.next_frame(), ws::opcode::binary, big));
}

TEST_CASE("test_websocket: a ping is answered with a pong carrying its payload") {
    skiff::testing::test_client client(websocket_test_routes);
    test_websocket conv(client, "/echo");
    REQUIRE(conv.upgraded());
    conv.ping("are you there");
    CHECK(is(conv.next_frame(), ws::opcode::pong, "are you there"));
}

TEST_CASE("test_websocket: the close handshake: the code is echoed, then the server closes") {
    skiff::testing::test_client client(websocket_test_routes);
    test_websocket conv(client, "/echo");
    REQUIRE(conv.upgraded());
    conv.close(ws::close_code::normal, "bye");
    test_frame f = conv.next_frame();
    REQUIRE(f);
    CHECK(f.op == ws::opcode::close);
    CHECK(f.code == 1000);
    CHECK(conv.closed());
}

TEST_CASE("test_websocket: a route refuses the upgrade as any answer, and accepts with the cookie") {
    skiff::testing::test_client client(websocket_test_routes);
    test_websocket refused(client, "/private");
    CHECK_FALSE(refused.upgraded());
    CHECK(refused.handshake().status == 401);
    CHECK(refused.handshake().body == "who are you?\n");
    client.reconnect();
    test_websocket let_in(client, "/private", "Cookie: session=ok\r\n");
    REQUIRE(let_in.upgraded());
    let_in.send_text("in");
    CHECK(is(let_in.next_frame(), ws::opcode::text, "in"));
}

TEST_CASE("test_websocket: a reserved bit fails the connection with 1002, a message past the limit with 1009") {
    skiff::testing::test_client client(websocket_test_routes);
    SUBCASE("reserved bit") {
        test_websocket conv(client, "/echo");
        REQUIRE(conv.upgraded());
        conv.send_frame(ws::opcode::text, true, "x", 4);  // RSV1, with no extension agreed
        test_frame f = conv.next_frame();
        REQUIRE(f);
        CHECK(f.op == ws::opcode::close);
        CHECK(f.code == 1002);
    }
    SUBCASE("message limit") {
        test_websocket conv(client, "/small");
        REQUIRE(conv.upgraded());
        conv.send_text("12345678");  // at the limit: echoed
        CHECK(is(conv.next_frame(), ws::opcode::text, "12345678"));
        conv.send_text("123456789");
        test_frame f = conv.next_frame();
        REQUIRE(f);
        CHECK(f.op == ws::opcode::close);
        CHECK(f.code == 1009);
    }
}

TEST_CASE("test_websocket: a quiet client is pinged at half the idle timeout and closed at it, on the test clock") {
    skiff::testing::test_client client(websocket_test_routes);
    test_websocket conv(client, "/quiet");
    REQUIRE(conv.upgraded());
    client.advance(400ms);
    CHECK_FALSE(conv.next_frame());
    client.advance(400ms);  // past 500 ms (and the tick after it): the keepalive ping
    CHECK(is(conv.next_frame(), ws::opcode::ping, ""));
    client.advance(500ms);  // past 1 s without a word from the client: closed as idle
    test_frame f = conv.next_frame();
    REQUIRE(f);
    CHECK(f.op == ws::opcode::close);
    CHECK(f.code == 1000);
    CHECK(f.reason() == "idle");
}

namespace {

// /later hands each upgrade to the test as a pending_upgrade, as a route does that asks a
// database or another service before it lets a client in; the test plays that thread.
struct decided_later {
    std::optional<ws::pending_upgrade> pending;
    std::shared_ptr<const ws::handlers> echo = std::make_shared<const ws::handlers>([] {
        ws::handlers h;
        h.on_message = [](ws::peer& p, std::string_view data, ws::kind k) { p.send(data, k); };
        return h;
    }());

    auto routes() {
        return [this](skiff::server& app) {
            app.get("/later", [this](skiff::request& req, skiff::response& res) {
                pending.emplace(ws::accept_later(req, res, echo));
            });
        };
    }
};

} // namespace

TEST_CASE("test_websocket: an upgrade decided later is answered once decided, with the frames sent meanwhile") {
    decided_later later;
    skiff::testing::test_client client(later.routes());
    test_websocket conv(client, "/later");
    REQUIRE(later.pending.has_value());
    CHECK(conv.handshake().status == 0);  // nothing answered before the decision
    conv.send_text("early");              // kept by the server until then
    CHECK(conv.handshake().status == 0);
    CHECK_FALSE(conv.next_frame());
    later.pending->accept();
    client.run();
    REQUIRE(conv.upgraded());
    CHECK(conv.handshake().header("Sec-WebSocket-Accept") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
    CHECK(is(conv.next_frame(), ws::opcode::text, "early"));
    conv.send_text("late");
    CHECK(is(conv.next_frame(), ws::opcode::text, "late"));
}

TEST_CASE("test_websocket: an upgrade refused later gets that status and the connection closes") {
    decided_later later;
    skiff::testing::test_client client(later.routes());
    test_websocket conv(client, "/later");
    REQUIRE(later.pending.has_value());
    later.pending->refuse(403, "not you\n");
    client.run();
    CHECK_FALSE(conv.upgraded());
    CHECK(conv.handshake().status == 403);
    CHECK(conv.handshake().body == "not you\n");
    CHECK(conv.closed());
}

TEST_CASE("test_websocket: an upgrade left undecided past deferred_timeout is refused with 503, on the test clock") {
    decided_later later;
    skiff::options opt;
    opt.deferred_timeout = std::chrono::seconds(5);
    skiff::testing::test_client client(later.routes(), opt);
    test_websocket conv(client, "/later");
    REQUIRE(later.pending.has_value());
    client.advance(std::chrono::seconds(4));
    CHECK(conv.handshake().status == 0);
    client.advance(std::chrono::seconds(2));
    CHECK(conv.handshake().status == 503);
    CHECK(conv.closed());
    later.pending->accept();  // too late: the loop has refused it, and nothing more is written
    client.run();
    CHECK(conv.handshake().status == 503);
    CHECK(client.unread().empty());
}
