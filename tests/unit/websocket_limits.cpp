// Limits and large messages through the message reader (websocket/message_reader.hpp), the
// Autobahn testsuite's case groups 9 and 10: messages up to 16 MiB whole and fragmented, fed
// in random-sized pieces as reads would bring them; the message limit (1009), decided from
// frame headers before the payload is read, for one frame and for fragments together, whole
// or as pieces; and that bytes read before a failure were not lost.
#include "support/websocket_feed.hpp"

#include <skiff/websocket/message_reader.hpp>

#include <doctest/doctest.h>

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t
#include <string>       // std::string
#include <vector>       // std::vector of events

using namespace skiff_test::ws;
using ev = std::vector<event>;

namespace {

constexpr std::uint64_t mib = 1024 * 1024;

skiff::websocket::message_limits limit(std::uint64_t max, skiff::websocket::delivery d = skiff::websocket::delivery::whole) {
    skiff::websocket::message_limits l;
    l.max_message = max;
    l.delivery = d;
    return l;
}

// UTF-8 text of n bytes whose characters (1 to 4 bytes) straddle every kind of cut.
std::string long_text(std::size_t n) {
    const std::string unit = "a\xc2\xb5\xe2\x82\xac\xf0\x9f\x98\x80 ";  // a µ € 😀 space: 11 bytes
    std::string s;
    s.reserve(n + unit.size());
    while (s.size() + unit.size() <= n) s += unit;
    s.append(n - s.size(), 'z');
    return s;
}

} // namespace

TEST_CASE("websocket limits (Autobahn 9.1, 9.2): text and binary of 64 KiB to 16 MiB in random pieces") {
    for (std::uint64_t size : {mib / 16, mib / 4, mib, 4 * mib, 16 * mib}) {
        CAPTURE(size);
        std::string t = long_text(size);
        skiff::websocket::message_reader r(limit(16 * mib));
        ev got = feed(r, text(t), random_cuts(t.size() + 14, static_cast<unsigned>(size), 65536));
        REQUIRE(got.size() == 1);
        CHECK(got[0].step == message_step::text);
        CHECK(got[0].data == t);
    }
    std::string b(16 * mib, '\0');
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<char>(i * 131 >> 3);
    skiff::websocket::message_reader r(limit(16 * mib));
    CHECK(feed(r, binary(b), random_cuts(b.size() + 14, 3, 200000)) == ev{binary_msg(b)});
}

TEST_CASE("websocket limits (Autobahn 9.3, 9.4): 4 MiB fragmented in frames of 64 bytes to 4 MiB") {
    std::string t = long_text(4 * mib);
    for (std::size_t fragment : {64u, 4096u, 65536u, 1048576u, 4194304u}) {
        CAPTURE(fragment);
        std::string stream;
        for (std::size_t at = 0; at < t.size(); at += fragment) {
            std::string part = t.substr(at, fragment);
            bool last = at + fragment >= t.size();
            stream += at == 0 ? text(part, last) : cont(part, last);
        }
        skiff::websocket::message_reader r(limit(4 * mib));
        ev got = feed(r, stream, random_cuts(stream.size(), static_cast<unsigned>(fragment), 70000));
        REQUIRE(got.size() == 1);
        CHECK(got[0].data == t);
    }
}

TEST_CASE("websocket limits (Autobahn 9.5, 9.6): 1 MiB fed in chops of 64 to 4096 bytes") {
    std::string t = long_text(1 * mib);
    std::string stream = text(t);
    for (std::size_t chop : {64u, 128u, 256u, 512u, 1024u, 2048u, 4096u}) {
        std::vector<std::size_t> cuts;
        for (std::size_t at = chop; at < stream.size(); at += chop) cuts.push_back(at);
        skiff::websocket::message_reader r(limit(1 * mib));
        ev got = feed(r, stream, cuts);
        REQUIRE(got.size() == 1);
        CHECK(got[0].data == t);
    }
}

TEST_CASE("websocket limits (Autobahn 10.1): 64 KiB in fragments of 1300 bytes, with pings between") {
    std::string t = long_text(65536);
    std::string stream;
    ev want;
    for (std::size_t at = 0; at < t.size(); at += 1300) {
        bool last = at + 1300 >= t.size();
        stream += at == 0 ? text(t.substr(at, 1300), last) : cont(t.substr(at, 1300), last);
        if (!last && at % 13000 == 0) {
            stream += ping(std::to_string(at));
            want.push_back(ping_msg(std::to_string(at)));
        }
    }
    want.push_back(text_msg(t));
    skiff::websocket::message_reader r;
    CHECK(feed(r, stream, random_cuts(stream.size(), 10, 3000)) == want);
}

TEST_CASE("websocket limits: one frame over the limit fails with 1009 from its header, before its payload") {
    std::string big = binary(std::string(1001, 'b'));
    CHECK(events(big.substr(0, 4), limit(1000)) == ev{failed(close_code::message_too_big)});
    CHECK(events(binary(std::string(1000, 'b')), limit(1000)) == ev{binary_msg(std::string(1000, 'b'))});
}

TEST_CASE("websocket limits: fragments over the limit together fail with 1009 at the frame that passes it") {
    std::string ok = binary(std::string(600, 'a'), false);
    std::string over = cont(std::string(401, 'b'));
    // The second header (2 bytes, a 16-bit length, the key) is enough: its payload is never read.
    CHECK(events(ok + over.substr(0, 8), limit(1000)) == ev{failed(close_code::message_too_big)});
    CHECK(events(ok + cont(std::string(400, 'b')), limit(1000)) == ev{binary_msg(std::string(600, 'a') + std::string(400, 'b'))});
}

TEST_CASE("websocket limits: the limit is per message, not per connection") {
    std::string stream;
    for (int i = 0; i < 5; ++i) stream += text(std::string(800, 'x'), false) + cont(std::string(200, 'y'));
    skiff::websocket::message_reader r(limit(1000));
    CHECK(feed(r, stream, {}).size() == 5);
}

TEST_CASE("websocket limits: as pieces, the limit holds for the message too") {
    auto pieces = skiff::websocket::delivery::pieces;
    skiff::websocket::message_reader r(limit(1000, pieces));
    ev got = feed(r, binary(std::string(600, 'a'), false) + cont(std::string(401, 'b')), {});
    CHECK(got == ev{msg(message_step::binary, std::string(600, 'a'), false), failed(close_code::message_too_big)});
}

TEST_CASE("websocket limits: control frames count against no message's limit") {
    CHECK(events(text("0123456789", false) + ping(std::string(125, 'p')) + cont(""), limit(10)) ==
          ev{ping_msg(std::string(125, 'p')), text_msg("0123456789")});
}

TEST_CASE("websocket limits: a message gathered over reads gives its memory back once handed out") {
    skiff::websocket::message_reader r(limit(2 * mib));
    std::string m(mib, 'm');
    std::string stream = binary(m.substr(0, mib / 2), false) + cont(m.substr(mib / 2));
    CHECK(r.held() == 0);
    CHECK(feed(r, stream.substr(0, stream.size() - 1), random_cuts(stream.size() - 1, 5, 50000)).empty());
    CHECK(r.held() >= mib - 1);  // gathered so far
    std::string last = stream.substr(stream.size() - 1);
    std::size_t used = 0;
    auto e = r.next(last.data(), last.size(), used);
    CHECK(e.data == m);
    CHECK(r.held() >= mib);  // the event's bytes are the reader's until the next call
    CHECK(r.next(last.data(), 0, used).step == message_step::need_more);
    CHECK(r.held() == 0);
    // A control frame split inside its payload: 125 bytes, kept.
    CHECK(feed(r, ping("split"), {8}) == ev{ping_msg("split")});
    CHECK(r.held() == skiff::websocket::max_control_payload);
}

// What the WebSocket taker relies on to lend one reader per thread (websocket/taker_frames.hpp): a
// reader is at rest exactly between frames of no open message, and one at rest takes another
// connection's limits and reads its stream as a fresh reader would.
TEST_CASE("websocket limits: a reader at rest between messages serves another limit as a fresh one would") {
    skiff::websocket::message_reader r(limit(10));
    CHECK(r.at_rest());
    std::string stream = text("0123456789");
    std::size_t used = 0;
    CHECK(r.next(stream.data(), 3, used).step == message_step::need_more);  // inside the header
    CHECK_FALSE(r.at_rest());
    CHECK(feed(r, std::string_view(stream).substr(3), {}) == ev{text_msg("0123456789")});
    CHECK(r.at_rest());
    CHECK(feed(r, text("ab", false), {}).empty());  // a message open
    CHECK_FALSE(r.at_rest());
    CHECK(feed(r, cont("c"), {}) == ev{text_msg("abc")});
    CHECK(r.at_rest());
    r.limit(limit(2 * mib, skiff::websocket::delivery::pieces));
    std::string big(mib, 'b');
    CHECK(feed(r, binary(big), {}) == ev{binary_msg(big)});  // 1 MiB under the new limit, one piece
    r.limit(limit(4));
    CHECK(feed(r, binary("12345"), {}) == ev{failed(close_code::message_too_big)});
    CHECK_FALSE(r.at_rest());  // failed: never lent again
}

TEST_CASE("websocket limits: a message gathered in one read goes back at once when asked") {
    skiff::websocket::message_reader r(limit(mib));
    std::string stream = text(std::string(1000, 'a'), false) + cont(std::string(1000, 'b'));
    std::size_t used = 0;
    auto e = r.next(stream.data(), stream.size(), used);
    CHECK(e.data == std::string(1000, 'a') + std::string(1000, 'b'));
    CHECK(r.held() >= 2000);  // the event's bytes, until the next call
    r.release_delivered();
    CHECK(r.held() == 0);
    CHECK(r.at_rest());
}

TEST_CASE("websocket limits: a message cut short by a close gives its memory back too") {
    skiff::websocket::message_reader r;
    CHECK(feed(r, text(std::string(5000, 't'), false), {100}).empty());
    CHECK(r.held() >= 5000);
    CHECK(feed(r, close_frame(1000), {}) == ev{closed(close_code::normal)});
    std::string after = "x";
    std::size_t used = 0;
    r.next(after.data(), after.size(), used);
    CHECK(r.held() == 0);
}
