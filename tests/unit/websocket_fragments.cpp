// Fragmented messages (websocket/message_reader.hpp), the Autobahn testsuite's case group 5:
// fragments reassembled into one message, control frames answered between them, and the
// order rules of RFC 6455 §5.4 (a continuation needs a message open, a new text or binary
// frame needs none); then delivery as pieces, where each piece comes as it arrives.
#include "support/websocket_feed.hpp"

#include <skiff/websocket/message_reader.hpp>

#include <doctest/doctest.h>

#include <string>  // std::string
#include <vector>  // std::vector of events

using namespace skiff_test::ws;
using ev = std::vector<event>;

TEST_CASE("websocket fragments (Autobahn 5.1-5.2): a fragmented ping or pong fails with 1002") {
    CHECK(events(frame(opcode::ping, "frag", false) + cont("ment")) == ev{failed(close_code::protocol_error)});
    CHECK(events(frame(opcode::pong, "frag", false) + cont("ment")) == ev{failed(close_code::protocol_error)});
}

TEST_CASE("websocket fragments (Autobahn 5.3-5.5, 5.8): a text message in two fragments is one message") {
    CHECK(events(text("frag", false) + cont("ment")) == ev{text_msg("fragment")});
    CHECK(events(binary("frag", false) + cont("ment")) == ev{binary_msg("fragment")});
}

TEST_CASE("websocket fragments: many fragments, empty ones included") {
    CHECK(events(text("", false) + cont("a", false) + cont("", false) + cont("bc", false) + cont("")) == ev{text_msg("abc")});
    CHECK(events(binary("", false) + cont("")) == ev{binary_msg("")});
}

TEST_CASE("websocket fragments (Autobahn 5.6-5.8, 5.19-5.20): pings between fragments are answered first") {
    CHECK(events(text("frag", false) + ping("between") + cont("ment")) == ev{ping_msg("between"), text_msg("fragment")});
    CHECK(events(text("a", false) + ping("1") + cont("b", false) + pong("x") + ping("2") + cont("c")) ==
          ev{ping_msg("1"), ping_msg("2"), text_msg("abc")});
}

TEST_CASE("websocket fragments (Autobahn 5.9-5.14): a continuation with no message open fails with 1002") {
    CHECK(events(cont("fragment") + text("hello")) == ev{failed(close_code::protocol_error)});
    CHECK(events(cont("fragment", false) + text("hello")) == ev{failed(close_code::protocol_error)});
    CHECK(events(text("whole") + cont("late")) == ev{text_msg("whole"), failed(close_code::protocol_error)});
}

TEST_CASE("websocket fragments (Autobahn 5.15-5.18): a new message inside an open one fails with 1002") {
    CHECK(events(text("frag", false) + text("new")) == ev{failed(close_code::protocol_error)});
    CHECK(events(text("frag", false) + binary("new", false)) == ev{failed(close_code::protocol_error)});
    CHECK(events(text("f1", false) + cont("f2") + cont("f3", false) + text("f4")) ==
          ev{text_msg("f1f2"), failed(close_code::protocol_error)});
}

TEST_CASE("websocket fragments: as pieces, each piece comes as it arrives and the last one says so") {
    skiff::websocket::message_limits limits;
    limits.delivery = skiff::websocket::delivery::pieces;
    skiff::websocket::message_reader r(limits);
    std::string stream = text("one ", false) + ping("p") + cont("two ", false) + cont("", false) + cont("three") + binary("b");
    ev got = feed(r, stream, {});
    CHECK(got == ev{msg(message_step::text, "one ", false), ping_msg("p"), msg(message_step::text, "two ", false),
                    msg(message_step::text, "three", true), binary_msg("b")});
}

TEST_CASE("websocket fragments: as pieces, a frame split over reads comes in the reads' pieces, joined it is the message") {
    skiff::websocket::message_limits limits;
    limits.delivery = skiff::websocket::delivery::pieces;
    std::string message(1000, 'm');
    std::string stream = binary(message.substr(0, 600), false) + cont(message.substr(600));
    for (unsigned seed = 1; seed < 6; ++seed) {
        skiff::websocket::message_reader r(limits);
        ev got = feed(r, stream, random_cuts(stream.size(), seed, 97));
        std::string joined;
        std::size_t lasts = 0;
        for (const event& e : got) {
            CHECK(e.step == message_step::binary);
            CHECK_FALSE(e.data.empty());  // nothing to hand out but the end: only the last may be empty
            joined += e.data;
            lasts += e.last;
        }
        CHECK(joined == message);
        CHECK(lasts == 1);
        REQUIRE_FALSE(got.empty());
        CHECK(got.back().last);
    }
}

TEST_CASE("websocket fragments: as pieces, an empty message is one empty last piece") {
    skiff::websocket::message_limits limits;
    limits.delivery = skiff::websocket::delivery::pieces;
    skiff::websocket::message_reader r(limits);
    CHECK(feed(r, text(""), {}) == ev{msg(message_step::text, "", true)});
}
