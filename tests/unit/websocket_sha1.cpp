// SHA-1 (websocket/sha1.hpp) against the test vectors of FIPS 180-4's examples (the
// one-block "abc", the two-block 448-bit message, a million 'a') and the padding edges where
// the length no longer fits the last block (55, 56 and 64 bytes).
#include <skiff/websocket/sha1.hpp>

#include <doctest/doctest.h>

#include <algorithm>    // std::min
#include <cstddef>      // std::size_t
#include <cstdio>       // std::snprintf for the hex digest
#include <string>       // std::string
#include <string_view>  // std::string_view

namespace {

std::string hex(const skiff::detail::sha1::digest& d) {
    std::string out;
    char two[3];
    for (auto b : d) {
        std::snprintf(two, sizeof two, "%02x", b);
        out += two;
    }
    return out;
}

std::string sha1_of(std::string_view s) {
    skiff::detail::sha1 h;
    h.update(s);
    return hex(h.finish());
}

} // namespace

TEST_CASE("websocket sha1: FIPS 180-4 example vectors") {
    CHECK(sha1_of("abc") == "a9993e364706816aba3e25717850c26c9cd0d89d");
    CHECK(sha1_of("") == "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    CHECK(sha1_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
          "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
    CHECK(sha1_of("The quick brown fox jumps over the lazy dog") == "2fd4e1c67a2d28fced849ee1bb76e7391b93eb12");
}

TEST_CASE("websocket sha1: a million 'a', fed in uneven pieces, as one update") {
    skiff::detail::sha1 pieces;
    std::string block(1000, 'a');
    for (std::size_t fed = 0, step = 1; fed < 1000000; fed += step, step = step % 997 + 1)
        pieces.update(std::string_view(block).substr(0, std::min(step, 1000000 - fed)));
    CHECK(hex(pieces.finish()) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
    CHECK(sha1_of(std::string(1000000, 'a')) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}

TEST_CASE("websocket sha1: lengths around the padding boundary") {
    // 55 bytes leave room for the 0x80 and the length in one block; 56 do not; 64 fill one.
    CHECK(sha1_of(std::string(55, 'a')) == "c1c8bbdc22796e28c0e15163d20899b65621d65a");
    CHECK(sha1_of(std::string(56, 'a')) == "c2db330f6083854c99d4b5bfb6e8f29f201be699");
    CHECK(sha1_of(std::string(64, 'a')) == "0098ba824b5c16427bd7a1122a5a442a25ec644d");
}
