// A WebSocket conversation through the test client (testing/test_client.hpp): the upgrade is
// sent on the client's connection, then frames go in masked, as a browser's do, and what the
// server sends comes back frame by frame, on the calling thread and the test clock.
//
//   skiff::testing::test_client client([](skiff::server& app) { add_routes(app); });
//   skiff::testing::test_websocket ws(client, "/echo");
//   REQUIRE(ws.upgraded());                   // the server answered 101
//   ws.send_text("hi");                       // serves until idle, as every send does
//   auto m = ws.next_frame();                 // the server's next frame, or none (false) yet
//   CHECK(m.op == skiff::websocket::opcode::text);
//   CHECK(m.payload == "hi");
//   ws.close(skiff::websocket::close_code::normal);
//   CHECK(ws.next_frame().code == 1000);       // the server's close echoes it
//
// Frames are sent exactly as asked (send_frame: any opcode, FIN or not, reserved bits), so a
// test can send fragments, or break the protocol on purpose and see the close that follows.
// An upgrade decided later (websocket::accept_later) is driven as a user's thread would: keep
// the pending_upgrade, check that nothing was answered (handshake().status is 0), decide,
// client.run(), and the answer is there; frames sent before it are kept by the server.
// Frames come back one by one, fragments as they were sent, not gathered into messages.
//
// It does not: negotiate extensions or subprotocols for the test (add the fields to the
// upgrade), or hold more than one conversation per client (a test_client has one connection;
// reconnect() ends this conversation). It is a checker's reader: it reads what skiff writes
// (unmasked frames), and calls anything else malformed.
#ifndef SKIFF_TESTING_TEST_WEBSOCKET_HPP
#define SKIFF_TESTING_TEST_WEBSOCKET_HPP

#include "skiff/testing/test_client.hpp"
#include "skiff/testing/test_response.hpp"
#include "skiff/websocket/frame.hpp"
#include "skiff/websocket/frame_writer.hpp"  // the head: the server's, with MASK set

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint8_t, std::uint16_t, std::uint64_t
#include <string>       // frames, built and read
#include <string_view>  // std::string_view

namespace skiff::testing {

// One frame the server sent. `state` says whether there was one: a whole frame, none yet, or
// bytes that are no frame a server may send (masked, or a length past what was written).
struct test_frame {
    enum class state : std::uint8_t { none, whole, malformed };
    state got = state::none;
    websocket::opcode op = websocket::opcode::continuation;
    bool fin = false;
    std::string payload;  // a close frame's: the code's two bytes, then the reason
    std::uint16_t code = 0;  // a close frame's code; 0 when it carries none
    std::string_view reason() const noexcept {
        return payload.size() > 2 ? std::string_view(payload).substr(2) : std::string_view();
    }

    explicit operator bool() const noexcept { return got == state::whole; }
};

namespace detail {

// RFC 6455 §5.2: FIN, reserved bits and opcode; then MASK and the length (7 bits, 16 or 64);
// then the mask key; then the payload masked with it.
inline std::string masked_frame(websocket::opcode op, bool fin, std::string_view payload, std::uint8_t rsv) {
    static constexpr unsigned char key[4] = {0x37, 0xfa, 0x21, 0x3d};  // §5.7's example key
    websocket::frame_head head =
        websocket::make_frame_head(op, fin ? websocket::fin_bit::final : websocket::fin_bit::more, payload.size());
    head.bytes[0] = static_cast<char>(head.bytes[0] | ((rsv & 0x7) << 4));
    head.bytes[1] = static_cast<char>(head.bytes[1] | 0x80);  // MASK: a client's frames are masked (§5.3)
    std::string f(head.view());
    f.append(reinterpret_cast<const char*>(key), 4);
    for (std::size_t i = 0; i < payload.size(); ++i) f += static_cast<char>(payload[i] ^ key[i % 4]);
    return f;
}

// The server frame at the front of `in`, and how many bytes it took (0: none whole yet).
inline test_frame read_server_frame(std::string_view in, std::size_t& used) {
    used = 0;
    test_frame f;
    if (in.size() < 2) return f;
    auto byte = [&](std::size_t i) { return static_cast<std::uint8_t>(in[i]); };
    std::size_t at = 2;
    std::uint64_t n = byte(1) & 0x7f;
    std::size_t extra = n == 126 ? 2 : n == 127 ? 8 : 0;
    if (in.size() < at + extra) return f;
    if (extra != 0) n = 0;
    for (std::size_t i = 0; i < extra; ++i) n = (n << 8) | byte(at + i);
    at += extra;
    if ((byte(1) & 0x80) != 0) {  // a server never masks (§5.1)
        f.got = test_frame::state::malformed;
        return f;
    }
    if (in.size() - at < n) return f;
    f.got = test_frame::state::whole;
    f.fin = (byte(0) & 0x80) != 0;
    f.op = static_cast<websocket::opcode>(byte(0) & 0x0f);
    f.payload.assign(in.substr(at, static_cast<std::size_t>(n)));
    if (f.op == websocket::opcode::close && f.payload.size() >= 2)
        f.code = static_cast<std::uint16_t>((static_cast<std::uint8_t>(f.payload[0]) << 8) | static_cast<std::uint8_t>(f.payload[1]));
    used = at + static_cast<std::size_t>(n);
    return f;
}

} // namespace detail

template <class Policy = single>
class basic_test_websocket {
public:
    // Sends the upgrade for `target` (with `fields`, each line ending "\r\n", e.g. a cookie or
    // Sec-WebSocket-Protocol) and reads the answer: 101 when upgraded, else the refusal.
    basic_test_websocket(basic_test_client<Policy>& client, std::string_view target, std::string_view fields = {})
        : client_(client) {
        std::string req = "GET ";
        req.append(target);
        req += " HTTP/1.1\r\nHost: test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n";  // §1.3's sample key
        req.append(fields);
        req += "\r\n";
        client_.send(req);
        (void)handshake();  // the answer, when the route gave it at once
    }

    // The server's answer to the upgrade: 101 with Sec-WebSocket-Accept, or a refusal. Status
    // 0 while none has come: an upgrade decided later (websocket::accept_later) is answered
    // once decided and served (client.run() or advance()), and is read when asked for then.
    const test_response& handshake() const {
        if (handshake_.status == 0) handshake_ = client_.next_response();
        return handshake_;
    }
    bool upgraded() const { return handshake().status == 101; }

    // ---- sending: masked, as a client must; each serves until idle afterwards ---------------

    void send_text(std::string_view text) { send_frame(websocket::opcode::text, true, text); }
    void send_binary(std::string_view bytes) { send_frame(websocket::opcode::binary, true, bytes); }
    void ping(std::string_view payload = {}) { send_frame(websocket::opcode::ping, true, payload); }
    // A close frame with `code` and `reason` (no code at all: close_empty()).
    void close(websocket::close_code code, std::string_view reason = {}) {
        auto c = static_cast<std::uint16_t>(code);
        std::string payload{static_cast<char>(c >> 8), static_cast<char>(c & 0xff)};
        payload.append(reason);
        send_frame(websocket::opcode::close, true, payload);
    }
    void close_empty() { send_frame(websocket::opcode::close, true, {}); }
    // Any frame, exactly as asked: a fragment (fin false, then continuations), a reserved bit
    // (rsv 1-7), a reserved opcode (cast from its number), an oversized control frame.
    void send_frame(websocket::opcode op, bool fin, std::string_view payload, std::uint8_t rsv = 0) {
        client_.send(detail::masked_frame(op, fin, payload, rsv));
    }

    // ---- what came back -----------------------------------------------------------------

    // The server's next frame not yet returned; none (false) when no whole frame is there, or
    // before the 101.
    test_frame next_frame() {
        if (!upgraded()) return {};
        std::size_t used = 0;
        test_frame f = detail::read_server_frame(client_.unread(), used);
        client_.take(used);
        return f;
    }
    // The server closed the connection (after its close frame, or without one).
    bool closed() const noexcept { return client_.closed(); }

private:
    basic_test_client<Policy>& client_;
    mutable test_response handshake_;  // read on demand while none has come (handshake())
};

using test_websocket = basic_test_websocket<single>;

} // namespace skiff::testing

#endif // SKIFF_TESTING_TEST_WEBSOCKET_HPP
