// Text messages through the message reader (websocket/message_reader.hpp), the Autobahn
// testsuite's case group 6 at the message level: valid text whole and fragmented, a
// character split between fragments (and between reads), and invalid text failing with 1007
// as soon as the bad byte is read, before the message ends (6.4: fail fast), also when a
// message ends inside a character. Binary messages are never checked.
#include "support/websocket_feed.hpp"

#include <skiff/websocket/message_reader.hpp>

#include <doctest/doctest.h>

#include <cstddef>      // std::size_t
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector of events

using namespace skiff_test::ws;
using ev = std::vector<event>;

namespace {
const std::string kosme = "\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5";  // κόσμε
}

TEST_CASE("websocket text (Autobahn 6.1-6.2): empty and valid text, whole and fragmented") {
    CHECK(events(text("")) == ev{text_msg("")});
    CHECK(events(text("", false) + cont("", false) + cont("")) == ev{text_msg("")});
    std::string hello = "Hello-\xc2\xb5@\xc3\x9f\xc3\xb6\xc3\xa4\xc3\xbc\xc3\xa0\xc3\xa1-UTF-8!!";
    CHECK(events(text(hello)) == ev{text_msg(hello)});
}

TEST_CASE("websocket text (Autobahn 6.2.3-6.2.4, 6.3.2): a character split between fragments at every point") {
    for (std::size_t at = 0; at <= kosme.size(); ++at) {
        CAPTURE(at);
        CHECK(events(text(kosme.substr(0, at), false) + cont(kosme.substr(at))) == ev{text_msg(kosme)});
    }
    // One byte a fragment.
    std::string stream = text(kosme.substr(0, 1), false);
    for (std::size_t i = 1; i < kosme.size(); ++i) stream += cont(kosme.substr(i, 1), i + 1 == kosme.size());
    CHECK(events(stream) == ev{text_msg(kosme)});
}

TEST_CASE("websocket text (Autobahn 6.3-6.21): invalid text fails with 1007, whole or fragmented") {
    const std::string bad[] = {
        kosme + "\xed\xa0\x80" + "edited",  // 6.3.1: a surrogate
        "\xf4\x90\x80\x80",                 // past U+10FFFF
        "\xc0\xaf", "\xe0\x80\xaf",         // overlong
        "\x80", "\xfe", "\xff",
        "\xce\xba\xe1\xbd",                 // ends inside a character
    };
    for (const std::string& s : bad) {
        CAPTURE(s);
        CHECK(events(text(s)) == ev{failed(close_code::invalid_payload)});
        std::string stream;  // one byte a fragment
        for (std::size_t i = 0; i < s.size(); ++i) stream += i == 0 ? text(s.substr(0, 1), s.size() == 1) : cont(s.substr(i, 1), i + 1 == s.size());
        CHECK(events(stream) == ev{failed(close_code::invalid_payload)});
    }
}

TEST_CASE("websocket text (Autobahn 6.4.1-6.4.2): the failure comes before the rest of the message is read") {
    // κόσμε then F4 90 in the first fragment; the second fragment is never needed.
    std::string first = text(kosme + "\xf4\x90", false);
    skiff::websocket::message_reader r;
    CHECK(feed(r, first, {}) == ev{failed(close_code::invalid_payload)});
    // Within one frame too: the bad byte fails the message while the frame is still open.
    std::string frame_bytes = text(kosme + "\xf4\x90\x80\x80" + std::string(1000, 'x'));
    skiff::websocket::message_reader r2;
    std::size_t header = 4 + 4;  // 16-bit length form and the key
    CHECK(feed(r2, frame_bytes.substr(0, header + kosme.size() + 2), {}) == ev{failed(close_code::invalid_payload)});
}

TEST_CASE("websocket text (Autobahn 6.4.3-6.4.4): a message that ends inside a character fails at its end") {
    CHECK(events(text("abc\xe2\x82", false) + cont("")) == ev{failed(close_code::invalid_payload)});
    CHECK(events(text("abc\xe2\x82", false) + cont("\xac")) == ev{text_msg("abc\xe2\x82\xac")});  // €
}

TEST_CASE("websocket text: pings between fragments do not disturb a character split around them") {
    CHECK(events(text("\xe2", false) + ping("\xff") + cont("\x82", false) + ping("") + cont("\xac")) ==
          ev{ping_msg("\xff"), ping_msg(""), text_msg("\xe2\x82\xac")});
}

TEST_CASE("websocket text: binary messages are not text, any bytes go") {
    CHECK(events(binary("\xff\xfe\xc0\xaf")) == ev{binary_msg("\xff\xfe\xc0\xaf")});
}

TEST_CASE("websocket text: as pieces, invalid text still fails at its first bad byte") {
    skiff::websocket::message_limits limits;
    limits.delivery = skiff::websocket::delivery::pieces;
    skiff::websocket::message_reader r(limits);
    CHECK(feed(r, text("good", false) + cont("\xff"), {}) ==
          ev{msg(message_step::text, "good", false), failed(close_code::invalid_payload)});
}
