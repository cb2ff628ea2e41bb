// Server frames (websocket/frame_writer.hpp), RFC 6455 §5.2: never masked, the minimal length
// form at each boundary (125/126, 65535/65536), FIN and opcode bits for whole messages and
// fragments, pongs that carry the ping's payload, and close frames: the code in network order,
// a reason cut to 123 bytes at a character boundary, and 1005/1006 never written. The bytes
// are checked against the RFC's layout and its own examples (§5.7).
#include <skiff/websocket/frame_writer.hpp>

#include <doctest/doctest.h>

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint8_t, std::uint64_t
#include <string>       // std::string
#include <string_view>  // std::string_view

using skiff::websocket::close_code;
using skiff::websocket::fin_bit;
using skiff::websocket::opcode;

namespace {

std::uint8_t byte(const std::string& s, std::size_t i) { return static_cast<std::uint8_t>(s.at(i)); }

} // namespace

TEST_CASE("websocket frame writer: RFC 6455 §5.7's examples, unmasked") {
    std::string out;
    skiff::websocket::append_frame(out, opcode::text, "Hello");
    CHECK(out == "\x81\x05Hello");
    out.clear();
    skiff::websocket::append_frame(out, opcode::text, "Hel", fin_bit::more);
    skiff::websocket::append_frame(out, opcode::continuation, "lo");
    CHECK(out == "\x01\x03Hel\x80\x02lo");
    out.clear();
    skiff::websocket::append_pong(out, "Hello");
    CHECK(out == "\x8a\x05Hello");
    out.clear();
    skiff::websocket::append_frame(out, opcode::binary, std::string(256, 'b'));
    CHECK(out.substr(0, 4) == std::string("\x82\x7e\x01\x00", 4));
    CHECK(out.size() == 4 + 256);
    out.clear();
    skiff::websocket::append_frame(out, opcode::binary, std::string(65536, 'b'));
    CHECK(out.substr(0, 10) == std::string("\x82\x7f\x00\x00\x00\x00\x00\x01\x00\x00", 10));
}

TEST_CASE("websocket frame writer: the minimal length form at each boundary, never the mask bit") {
    struct row {
        std::uint64_t length;
        std::size_t head;
    };
    for (row r : {row{0, 2}, row{125, 2}, row{126, 4}, row{65535, 4}, row{65536, 10}, row{std::uint64_t{1} << 40, 10}}) {
        CAPTURE(r.length);
        auto h = skiff::websocket::make_frame_head(opcode::binary, fin_bit::final, r.length);
        std::string s(h.view());
        CHECK(s.size() == r.head);
        CHECK((byte(s, 1) & 0x80) == 0);  // §5.1: a server never masks
        std::uint64_t read = byte(s, 1) & 0x7f;
        if (r.head > 2) {
            read = 0;
            for (std::size_t i = 2; i < r.head; ++i) read = read << 8 | byte(s, i);
        }
        CHECK(read == r.length);
    }
}

TEST_CASE("websocket frame writer: a ping's and a pong's payload is cut to 125 bytes") {
    std::string out;
    skiff::websocket::append_ping(out, std::string(200, 'p'));
    CHECK(out == "\x89\x7d" + std::string(125, 'p'));
}

TEST_CASE("websocket frame writer: close frames carry the code in network order and a reason") {
    std::string out;
    skiff::websocket::append_close(out, close_code::normal);
    CHECK(out == std::string("\x88\x02\x03\xe8", 4));
    out.clear();
    skiff::websocket::append_close(out, close_code::message_too_big, "too big");
    CHECK(out == std::string("\x88\x09\x03\xf1too big", 11));
    out.clear();
    skiff::websocket::append_close(out, static_cast<close_code>(4000), "app");
    CHECK(out == std::string("\x88\x05\x0f\xa0" "app", 7));
}

TEST_CASE("websocket frame writer: 1005 and 1006 are never written: an empty close instead") {
    for (close_code c : {close_code::no_status, close_code::abnormal}) {
        std::string out;
        skiff::websocket::append_close(out, c, "reason");
        CHECK(out == std::string("\x88\x00", 2));
    }
}

TEST_CASE("websocket frame writer: a long reason is cut to 123 bytes, never inside a character") {
    std::string out;
    skiff::websocket::append_close(out, close_code::normal, std::string(200, 'r'));
    CHECK(out.size() == 2 + 125);
    CHECK(byte(out, 1) == 125);
    // 122 ASCII bytes then a 2-byte character: the character would end at byte 124 of the reason.
    out.clear();
    skiff::websocket::append_close(out, close_code::normal, std::string(122, 'r') + "\xc3\xa9");
    CHECK(byte(out, 1) == 2 + 122);
    CHECK(out.substr(4) == std::string(122, 'r'));
    out.clear();
    skiff::websocket::append_close(out, close_code::normal, std::string(121, 'r') + "\xc3\xa9");
    CHECK(out.substr(4) == std::string(121, 'r') + "\xc3\xa9");  // exactly 123: kept whole
}
