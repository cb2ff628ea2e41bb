// The frame reader (websocket/frame_reader.hpp) on its own, RFC 6455 §5.2: the header's
// fields for each length form (7, 16 and 64 bits, non-minimal ones accepted), unmasking at
// every length and phase, feeding one byte at a time, and each rule that fails the connection
// (Autobahn groups 1-4 at the frame level: reserved bits, reserved opcodes, unmasked frames,
// fragmented or long control frames, a 64-bit length with its top bit set, the size limit).
#include "support/websocket_frames.hpp"

#include <skiff/websocket/frame_reader.hpp>

#include <doctest/doctest.h>

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector of pieces

using namespace skiff_test::ws;
using skiff::websocket::close_code;
using skiff::websocket::frame_reader;
using skiff::websocket::frame_step;

namespace {

// What the reader made of one stream: the headers it saw, the payload (all pieces joined)
// and how it ended.
struct read_out {
    std::vector<skiff::websocket::frame_header> headers;
    std::string payload;
    std::size_t frames_ended = 0;
    frame_step last = frame_step::need_more;
    close_code error = close_code::normal;
};

// Feeds `stream` in pieces of `piece` bytes (0: whole), each its own exact-size buffer.
read_out read(std::string stream, std::size_t piece = 0, std::uint64_t max = 1 << 20) {
    frame_reader r(max);
    read_out out;
    if (piece == 0) piece = stream.size() ? stream.size() : 1;
    for (std::size_t from = 0; from < stream.size() || from == 0; from += piece) {
        std::string chunk = stream.substr(from, piece);
        std::size_t off = 0;
        for (;;) {
            std::size_t used = 0;
            auto e = r.next(chunk.data() + off, chunk.size() - off, used);
            off += used;
            out.last = e.step;
            if (e.step == frame_step::header) out.headers.push_back(r.header());
            if (e.step == frame_step::payload) out.payload.append(e.data), out.frames_ended += e.frame_end;
            if (e.step == frame_step::failed) return out.error = r.error(), out;
            if (e.step == frame_step::need_more) break;
        }
        if (stream.empty()) break;
    }
    return out;
}

std::string pattern(std::size_t n) {
    std::string s(n, '\0');
    for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>(i * 7 + 3);
    return s;
}

} // namespace

TEST_CASE("websocket frame reader (Autobahn 1.1, 1.2): lengths in each form, unmasked in place") {
    for (std::size_t n : {0u, 1u, 125u, 126u, 127u, 128u, 65535u, 65536u, 70000u}) {
        CAPTURE(n);
        std::string payload = pattern(n);
        read_out out = read(frame(opcode::binary, payload));
        REQUIRE(out.headers.size() == 1);
        CHECK(out.headers[0].op == opcode::binary);
        CHECK(out.headers[0].fin);
        CHECK(out.headers[0].length == n);
        CHECK(out.payload == payload);
        CHECK(out.frames_ended == 1);
        CHECK(out.last == frame_step::need_more);
    }
}

TEST_CASE("websocket frame reader: lengths need not be minimal (RFC 6455 §5.2 binds the sender only)") {
    for (length_form form : {length_form::with_16, length_form::with_64}) {
        frame_spec s;
        s.first = fin | 0x1;
        s.form = form;
        read_out out = read(client_frame(s, "Hello"));
        REQUIRE(out.headers.size() == 1);
        CHECK(out.headers[0].length == 5);
        CHECK(out.payload == "Hello");
    }
}

TEST_CASE("websocket frame reader: RFC 6455 §5.7's masked \"Hello\"") {
    const std::string bytes = "\x81\x85\x37\xfa\x21\x3d\x7f\x9f\x4d\x51\x58";
    read_out out = read(bytes);
    REQUIRE(out.headers.size() == 1);
    CHECK(out.headers[0].op == opcode::text);
    CHECK(out.payload == "Hello");
}

TEST_CASE("websocket frame reader: any piece size gives the same frames, the mask's phase carried across pieces") {
    std::string stream;
    std::string all;
    for (std::size_t n = 0; n < 40; ++n) {
        std::string p = pattern(n);
        stream += frame(opcode::binary, p);
        all += p;
    }
    for (std::size_t piece : {1u, 2u, 3u, 5u, 7u, 8u, 9u, 13u, 64u, 0u}) {
        CAPTURE(piece);
        read_out out = read(stream, piece);
        CHECK(out.headers.size() == 40);
        CHECK(out.frames_ended == 40);
        CHECK(out.payload == all);
    }
}

TEST_CASE("websocket frame reader: an empty frame ends without needing another byte") {
    frame_reader r(100);
    std::string f = frame(opcode::text, "");
    std::size_t used = 0;
    CHECK(r.next(f.data(), f.size(), used).step == frame_step::header);
    CHECK(used == f.size());
    auto e = r.next(f.data() + used, 0, used);
    CHECK(e.step == frame_step::payload);
    CHECK(e.frame_end);
    CHECK(e.data.empty());
    CHECK(r.next(f.data(), 0, used).step == frame_step::need_more);
}

TEST_CASE("websocket frame reader (Autobahn 3.1-3.7): any reserved bit fails with 1002") {
    for (std::uint8_t rsv : {rsv1, rsv2, rsv3, std::uint8_t(rsv1 | rsv2 | rsv3)}) {
        frame_spec s;
        s.first = fin | rsv | 0x1;
        read_out out = read(client_frame(s, "Hello"));
        CHECK(out.last == frame_step::failed);
        CHECK(out.error == close_code::protocol_error);
        CHECK(out.headers.empty());
    }
}

TEST_CASE("websocket frame reader (Autobahn 4.1-4.2): reserved opcodes fail with 1002") {
    for (std::uint8_t op : {3, 4, 5, 6, 7, 11, 12, 13, 14, 15}) {
        CAPTURE(int(op));
        frame_spec s;
        s.first = fin | op;
        read_out out = read(client_frame(s, "x"));
        CHECK(out.last == frame_step::failed);
        CHECK(out.error == close_code::protocol_error);
    }
}

TEST_CASE("websocket frame reader: an unmasked client frame fails with 1002 (RFC 6455 §5.1)") {
    frame_spec s;
    s.first = fin | 0x1;
    s.mask = masking::unmasked;
    read_out out = read(client_frame(s, "Hello"));
    CHECK(out.last == frame_step::failed);
    CHECK(out.error == close_code::protocol_error);
}

TEST_CASE("websocket frame reader (Autobahn 2.5, 5.1-5.2): control frames are short and whole") {
    // 126 bytes of ping: §5.5 allows 125.
    read_out long_ping = read(frame(opcode::ping, std::string(126, 'p')));
    CHECK(long_ping.last == frame_step::failed);
    CHECK(long_ping.error == close_code::protocol_error);
    CHECK(read(frame(opcode::ping, std::string(125, 'p'))).payload == std::string(125, 'p'));
    // A ping or a pong with FIN clear: control frames are never fragmented.
    for (opcode op : {opcode::ping, opcode::pong, opcode::close}) {
        read_out out = read(frame(op, "", false));
        CHECK(out.last == frame_step::failed);
        CHECK(out.error == close_code::protocol_error);
    }
    // A short length written in 16 bits is still a long form for a control frame.
    frame_spec s;
    s.first = fin | 0x9;
    s.form = length_form::with_16;
    CHECK(read(client_frame(s, "x")).error == close_code::protocol_error);
}

TEST_CASE("websocket frame reader: a 64-bit length with its top bit set fails with 1002") {
    const std::string f("\x82\xff\x80\x00\x00\x00\x00\x00\x00\x01\x01\x02\x03\x04", 14);
    read_out out = read(f, 0, ~std::uint64_t{0});
    CHECK(out.last == frame_step::failed);
    CHECK(out.error == close_code::protocol_error);
    CHECK(out.headers.empty());
}

TEST_CASE("websocket frame reader: a frame over the limit fails with 1009 from its header alone") {
    std::string f = frame(opcode::binary, std::string(1001, 'b'));
    read_out out = read(f.substr(0, 4), 0, 1000);  // header only: 2 bytes + 16-bit length
    CHECK(out.last == frame_step::failed);
    CHECK(out.error == close_code::message_too_big);
    CHECK(read(frame(opcode::binary, std::string(1000, 'b')), 0, 1000).payload.size() == 1000);
}

TEST_CASE("websocket frame reader: once failed, it uses nothing and stays failed") {
    frame_reader r(100);
    std::string bad = "\xf1\x80";  // RSV bits
    std::size_t used = 0;
    CHECK(r.next(bad.data(), bad.size(), used).step == frame_step::failed);
    std::string good = frame(opcode::text, "ok");
    CHECK(r.next(good.data(), good.size(), used).step == frame_step::failed);
    CHECK(used == 0);
}
