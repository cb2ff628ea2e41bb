// Whole messages and control frames through the message reader (websocket/message_reader.hpp),
// organised by the Autobahn testsuite's case groups 1 (framing: text and binary of each
// length form), 2 (pings and pongs), 3 (reserved bits) and 4 (opcodes), as far as they
// concern the bytes a server reads: what the application would see for each client stream,
// the same whatever the reads' boundaries (support/websocket_feed.hpp checks every split).
#include "support/websocket_feed.hpp"

#include <skiff/websocket/message_reader.hpp>

#include <doctest/doctest.h>

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint8_t for frame bits
#include <string>       // std::string
#include <vector>       // std::vector of events

using namespace skiff_test::ws;
using ev = std::vector<event>;

TEST_CASE("websocket messages (Autobahn 1.1): text of each length form, whole") {
    for (std::size_t n : {0u, 125u, 126u, 127u, 128u, 65535u, 65536u}) {
        CAPTURE(n);
        std::string s(n, '*');
        std::string stream = text(s);
        if (n > 1000) {  // long: the byte-by-byte feeding is covered by the short ones
            skiff::websocket::message_reader r;
            CHECK(feed(r, stream, random_cuts(stream.size(), 1, 4000)) == ev{text_msg(s)});
            continue;
        }
        CHECK(events(stream) == ev{text_msg(s)});
    }
}

TEST_CASE("websocket messages (Autobahn 1.2): binary of each length form, every byte value") {
    std::string all;
    for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
    for (std::size_t n : {0u, 1u, 125u, 126u, 256u}) {
        std::string s = all.substr(0, n);
        CHECK(events(binary(s)) == ev{binary_msg(s)});
    }
}

TEST_CASE("websocket messages: several messages in one read come out one by one, in order") {
    std::string stream = text("one") + binary("two") + text("") + text("three");
    CHECK(events(stream) == ev{text_msg("one"), binary_msg("two"), text_msg(""), text_msg("three")});
}

TEST_CASE("websocket messages: a message whole in one read is handed out in place, not copied") {
    skiff::websocket::message_reader r;
    std::string stream = text("in place");
    std::size_t used = 0;
    auto e = r.next(stream.data(), stream.size(), used);
    CHECK(e.step == message_step::text);
    CHECK(e.data == "in place");
    CHECK(e.data.data() >= stream.data());
    CHECK(e.data.data() + e.data.size() <= stream.data() + stream.size());
}

TEST_CASE("websocket messages (Autobahn 2.1-2.4, 2.6): a ping hands out its payload for the pong") {
    CHECK(events(ping("")) == ev{ping_msg("")});
    CHECK(events(ping("Hello, world!")) == ev{ping_msg("Hello, world!")});
    const std::string bin("\x00\xff\xfe\xfd\xfc\xfb\x00\xff", 8);
    CHECK(events(ping(bin)) == ev{ping_msg(bin)});  // any bytes: a ping's payload is not text
    CHECK(events(ping(std::string(125, 'x'))) == ev{ping_msg(std::string(125, 'x'))});
}

TEST_CASE("websocket messages: a ping whole in one read is handed out in place; split, it is gathered") {
    skiff::websocket::message_reader r;
    std::string stream = ping("in place");
    std::size_t used = 0;
    auto e = r.next(stream.data(), stream.size(), used);
    CHECK(e.step == message_step::ping);
    CHECK(e.data == "in place");
    CHECK(e.data.data() >= stream.data());
    CHECK(e.data.data() + e.data.size() <= stream.data() + stream.size());
    // Split after its header and two payload bytes: the pong's payload is still whole.
    CHECK(feed(r, ping("gathered"), {8}) == ev{ping_msg("gathered")});
}

TEST_CASE("websocket messages (Autobahn 2.5): a ping of 126 bytes fails with 1002") {
    CHECK(events(ping(std::string(126, 'x'))) == ev{failed(close_code::protocol_error)});
}

TEST_CASE("websocket messages (Autobahn 2.7-2.8): pongs, solicited or not, are read and dropped") {
    CHECK(events(pong("")).empty());
    CHECK(events(pong("unsolicited") + text("after")) == ev{text_msg("after")});
}

TEST_CASE("websocket messages (Autobahn 2.10-2.11): ten pings in a row, each answered") {
    std::string stream;
    ev want;
    for (int i = 0; i < 10; ++i) {
        stream += ping("payload " + std::to_string(i));
        want.push_back(ping_msg("payload " + std::to_string(i)));
    }
    CHECK(events(stream) == want);
}

TEST_CASE("websocket messages (Autobahn 3.1-3.7): a reserved bit fails with 1002, after the messages before it") {
    for (std::uint8_t rsv : {rsv1, rsv2, rsv3}) {
        for (opcode op : {opcode::text, opcode::binary, opcode::ping, opcode::close}) {
            frame_spec s;
            s.first = static_cast<std::uint8_t>(fin | rsv | static_cast<std::uint8_t>(op));
            CHECK(events(text("before") + client_frame(s, "")) == ev{text_msg("before"), failed(close_code::protocol_error)});
        }
    }
}

TEST_CASE("websocket messages (Autobahn 4.1-4.2): a reserved opcode fails with 1002, with or without payload") {
    for (std::uint8_t op : {3, 4, 5, 6, 7, 11, 12, 13, 14, 15}) {
        CAPTURE(int(op));
        frame_spec s;
        s.first = static_cast<std::uint8_t>(fin | op);
        CHECK(events(text("before") + client_frame(s, "") + ping("after")) ==
              ev{text_msg("before"), failed(close_code::protocol_error)});
        CHECK(events(client_frame(s, "payload")) == ev{failed(close_code::protocol_error)});
    }
}

TEST_CASE("websocket messages: an unmasked client frame fails with 1002") {
    frame_spec s;
    s.first = fin | 0x1;
    s.mask = masking::unmasked;
    CHECK(events(client_frame(s, "Hello")) == ev{failed(close_code::protocol_error)});
}

TEST_CASE("websocket messages: once failed, the reader answers failed and uses nothing") {
    skiff::websocket::message_reader r;
    std::string bad = "\xf1\x80";
    std::size_t used = 0;
    CHECK(r.next(bad.data(), bad.size(), used).step == message_step::failed);
    std::string good = text("ok");
    auto e = r.next(good.data(), good.size(), used);
    CHECK(e.step == message_step::failed);
    CHECK(e.code == close_code::protocol_error);
    CHECK(used == 0);
}
