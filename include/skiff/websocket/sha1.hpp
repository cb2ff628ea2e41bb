// SHA-1 (FIPS 180-4 §6.1), for the WebSocket handshake's Sec-WebSocket-Accept alone
// (RFC 6455 §4.2.2): written from the standard, not a security primitive here. RFC 6455 uses
// it to show that the server read the key, not to protect anything, so the speed and the
// side channels of a general-purpose hash do not matter.
//
// Not here: HMAC, streaming over more than 2^61 bytes (the bit count is 64 bits), other hashes.
// Invariant: block_ holds used_ < 64 bytes of the message not yet compressed; total_ counts
// every byte given to update().
#ifndef SKIFF_WEBSOCKET_SHA1_HPP
#define SKIFF_WEBSOCKET_SHA1_HPP

#include <array>        // std::array for the digest
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint32_t, std::uint64_t, std::uint8_t
#include <string_view>  // std::string_view

namespace skiff::detail {

class sha1 {
public:
    using digest = std::array<std::uint8_t, 20>;

    void update(std::string_view bytes) noexcept {
        for (char c : bytes) {
            block_[used_++] = static_cast<std::uint8_t>(c);
            if (used_ == 64) compress();
        }
        total_ += bytes.size();
    }

    // The digest of everything given to update(); the object is spent afterwards.
    digest finish() noexcept {
        // §5.1.1: a 1 bit, zeros up to 56 bytes mod 64, then the length in bits, big-endian.
        std::uint64_t bits = total_ * 8;
        block_[used_++] = 0x80;
        if (used_ > 56) {
            while (used_ < 64) block_[used_++] = 0;
            compress();
        }
        while (used_ < 56) block_[used_++] = 0;
        for (int i = 7; i >= 0; --i) block_[used_++] = static_cast<std::uint8_t>(bits >> (8 * i));
        compress();
        digest out{};
        for (std::size_t i = 0; i < 20; ++i) out[i] = static_cast<std::uint8_t>(h_[i / 4] >> (24 - 8 * (i % 4)));
        return out;
    }

private:
    static constexpr std::uint32_t rotl(std::uint32_t x, int n) noexcept { return (x << n) | (x >> (32 - n)); }

    // §4.1.1 f_t and §4.2.1 K_t for round t.
    static std::uint32_t round_f(int t, std::uint32_t b, std::uint32_t c, std::uint32_t d) noexcept {
        if (t < 20) return (b & c) ^ (~b & d);               // Ch
        if (t >= 40 && t < 60) return (b & c) ^ (b & d) ^ (c & d);  // Maj
        return b ^ c ^ d;                                    // Parity
    }
    static constexpr std::uint32_t round_k(int t) noexcept {
        return t < 20 ? 0x5a827999u : t < 40 ? 0x6ed9eba1u : t < 60 ? 0x8f1bbcdcu : 0xca62c1d6u;
    }

    // §6.1.2: one 512-bit block into the hash value.
    void compress() noexcept {
        std::uint32_t w[80];
        for (int t = 0; t < 16; ++t)
            w[t] = std::uint32_t{block_[4 * t]} << 24 | std::uint32_t{block_[4 * t + 1]} << 16 |
                   std::uint32_t{block_[4 * t + 2]} << 8 | std::uint32_t{block_[4 * t + 3]};
        for (int t = 16; t < 80; ++t) w[t] = rotl(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
        std::uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4];
        for (int t = 0; t < 80; ++t) {
            std::uint32_t temp = rotl(a, 5) + round_f(t, b, c, d) + e + round_k(t) + w[t];
            e = d;
            d = c;
            c = rotl(b, 30);
            b = a;
            a = temp;
        }
        h_[0] += a;
        h_[1] += b;
        h_[2] += c;
        h_[3] += d;
        h_[4] += e;
        used_ = 0;
    }

    // §5.3.1: the initial hash value.
    std::uint32_t h_[5] = {0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u, 0xc3d2e1f0u};
    std::uint8_t block_[64] = {};
    std::size_t used_ = 0;
    std::uint64_t total_ = 0;
};

} // namespace skiff::detail

#endif // SKIFF_WEBSOCKET_SHA1_HPP
