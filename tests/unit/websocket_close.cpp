// Close frames through the message reader (websocket/message_reader.hpp), the Autobahn
// testsuite's case group 7: the peer's code and reason, a close in the middle of a fragmented
// message, what comes after a close (dropped), and the payloads that fail the connection: one
// byte (1002), a code an endpoint may not send (1002: 7.9 and 7.13), a reason that is not
// UTF-8 (1007: 7.5), more than 125 bytes (1002: 7.3.6).
#include "support/websocket_feed.hpp"

#include <skiff/websocket/message_reader.hpp>

#include <doctest/doctest.h>

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint16_t
#include <string>       // std::string
#include <vector>       // std::vector of events

using namespace skiff_test::ws;
using ev = std::vector<event>;

TEST_CASE("websocket close (Autobahn 7.1.1, 7.3.3-7.3.5): the peer's code and reason") {
    CHECK(events(text("Hello") + close_frame(1000)) == ev{text_msg("Hello"), closed(close_code::normal)});
    CHECK(events(close_frame(1001, "going")) == ev{closed(close_code::going_away, "going")});
    std::string reason(123, 'r');
    CHECK(events(close_frame(1000, reason)) == ev{closed(close_code::normal, reason)});
    CHECK(events(close_frame(1000, "\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5")) ==
          ev{closed(close_code::normal, "\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5")});
}

TEST_CASE("websocket close (Autobahn 7.3.1): an empty close frame reads as 1005, no status") {
    CHECK(events(frame(opcode::close, "")) == ev{closed(close_code::no_status)});
}

TEST_CASE("websocket close (Autobahn 7.3.2): a close payload of one byte fails with 1002") {
    CHECK(events(frame(opcode::close, "\x03")) == ev{failed(close_code::protocol_error)});
    // Even when the byte after it would complete a valid code (03 E8 is 1000).
    CHECK(events(frame(opcode::close, "\x03") + "\xe8") == ev{failed(close_code::protocol_error)});
    // Or when the byte a code would need is left over from an earlier control frame.
    CHECK(events(ping("\x03\xe8") + frame(opcode::close, "\x03")) == ev{ping_msg("\x03\xe8"), failed(close_code::protocol_error)});
}

TEST_CASE("websocket close (Autobahn 7.3.6): a close frame of 126 bytes fails with 1002") {
    CHECK(events(close_frame(1000, std::string(124, 'r'))) == ev{failed(close_code::protocol_error)});
}

TEST_CASE("websocket close (Autobahn 7.1.2-7.1.4): what comes after the close is dropped") {
    skiff::websocket::message_reader r;
    std::string after = close_frame(1000) + ping("late") + text("late");
    CHECK(feed(r, close_frame(1000) + after, {}) == ev{closed(close_code::normal)});
    std::string more = text("still later");
    std::size_t used = 0;
    CHECK(r.next(more.data(), more.size(), used).step == message_step::need_more);
    CHECK(used == more.size());  // taken and dropped, so a caller's loop ends
    CHECK(events(close_frame(1000) + "\xff\xff garbage") == ev{closed(close_code::normal)});
}

TEST_CASE("websocket close (Autobahn 7.1.5): a close inside a fragmented message ends it undelivered") {
    CHECK(events(text("frag", false) + close_frame(1000) + cont("ment")) == ev{closed(close_code::normal)});
    // The open message's UTF-8 state is its own: a character left open does not spoil the reason.
    CHECK(events(text("\xe2\x82", false) + close_frame(1000, "ok")) == ev{closed(close_code::normal, "ok")});
}

TEST_CASE("websocket close (Autobahn 7.5.1): a close reason that is not UTF-8 fails with 1007") {
    CHECK(events(close_frame(1000, "\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xed\xa0\x80\x65\x64\x69\x74\x65\x64")) ==
          ev{failed(close_code::invalid_payload)});
    CHECK(events(close_frame(1000, "\xce")) == ev{failed(close_code::invalid_payload)});  // ends inside a character
}

TEST_CASE("websocket close (Autobahn 7.7): codes an endpoint may send are accepted") {
    for (std::uint16_t code : {1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 3999, 4000, 4999}) {
        CAPTURE(code);
        CHECK(events(close_frame(code)) == ev{closed(static_cast<close_code>(code))});
    }
}

TEST_CASE("websocket close (Autobahn 7.9, 7.13): codes an endpoint may not send fail with 1002") {
    // 1004 reserved; 1005, 1006 and 1015 never on the wire; 1016-2999 unassigned; 5000 and up
    // outside the range (7.13.1-2: closing with 1002 is one of the accepted behaviours).
    for (std::uint16_t code : {0, 1, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535}) {
        CAPTURE(code);
        CHECK(events(close_frame(code)) == ev{failed(close_code::protocol_error)});
    }
}

TEST_CASE("websocket close: every code from 0 to 65535, against RFC 6455 §7.4's ranges") {
    std::size_t wrong = 0;
    for (std::uint32_t code = 0; code <= 0xffff; ++code) {
        bool registered = (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014);
        bool private_use = code >= 3000 && code <= 4999;
        wrong += skiff::websocket::is_valid_close_code(static_cast<std::uint16_t>(code)) != (registered || private_use);
    }
    CHECK(wrong == 0);
}
