// Base64 (websocket/base64.hpp): RFC 4648 §10's test vectors both ways, and the strict decoding
// the handshake relies on to say whether a Sec-WebSocket-Key is 16 bytes: bad characters,
// padding in the wrong place, bad lengths, non-canonical bits under the padding, no room.
#include <skiff/websocket/base64.hpp>

#include <doctest/doctest.h>

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint8_t
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::pair

namespace {

std::string encode(std::string_view s) {
    std::string out(skiff::detail::base64_size(s.size()), '?');
    std::size_t n = skiff::detail::base64_encode(reinterpret_cast<const std::uint8_t*>(s.data()), s.size(), out.data());
    CHECK(n == out.size());
    return out;
}

// The decoded bytes, or "<invalid>".
std::string decode(std::string_view s, std::size_t room = 64) {
    std::uint8_t out[64];
    std::size_t n = 0;
    if (!skiff::detail::base64_decode(s, out, room, n)) return "<invalid>";
    return std::string(reinterpret_cast<const char*>(out), n);
}

} // namespace

TEST_CASE("websocket base64: RFC 4648 §10 vectors, both ways") {
    const std::pair<std::string_view, std::string_view> vectors[] = {
        {"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"}, {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"},
    };
    for (const auto& v : vectors) {
        CAPTURE(v.first);
        CHECK(encode(v.first) == v.second);
        CHECK(decode(v.second) == v.first);
    }
}

TEST_CASE("websocket base64: every byte value and the two characters past the letters and digits") {
    std::string all;
    for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
    CHECK(decode(encode(all)) == "<invalid>");  // 256 bytes do not fit the 64 of room
    std::string first48 = all.substr(0, 48);
    CHECK(decode(encode(first48)) == first48);
    CHECK(encode("\xfb\xff") == "+/8=");
    CHECK(decode("+/8=") == "\xfb\xff");
}

TEST_CASE("websocket base64: strict decoding rejects what has more than one spelling") {
    CHECK(decode("Zg=") == "<invalid>");     // length not a multiple of 4
    CHECK(decode("Zg") == "<invalid>");      // no padding
    CHECK(decode("Z===") == "<invalid>");    // three pads
    CHECK(decode("Zg==Zg==") == "<invalid>");// padding inside
    CHECK(decode("Zh==") == "<invalid>");    // bits under the padding not zero (RFC 4648 §3.5)
    CHECK(decode("Zm9=") == "<invalid>");
    CHECK(decode("Zm8=") == "fo");
    CHECK(decode("Zm 9v") == "<invalid>");   // whitespace
    CHECK(decode("Zm9v\r\n") == "<invalid>");
    CHECK(decode("Zm-_") == "<invalid>");    // the URL-safe alphabet is another encoding
    CHECK(decode("Zm9vYmFy", 5) == "<invalid>");  // six bytes, room for five
    CHECK(decode("Zm9vYmFy", 6) == "foobar");
}
