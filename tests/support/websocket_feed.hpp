// A feeder that hands a byte stream to a websocket::message_reader in pieces, as reads
// would, recording every event as a comparable value. Each piece is a fresh allocation of
// exactly its size, so that ASan sees any read or write past the bytes the reader was given.
#ifndef SKIFF_TESTS_SUPPORT_WEBSOCKET_FEED_HPP
#define SKIFF_TESTS_SUPPORT_WEBSOCKET_FEED_HPP

#include "support/websocket_frames.hpp"

#include <skiff/websocket/message_reader.hpp>

#include <doctest/doctest.h>

#include <algorithm>    // std::copy into each piece
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint8_t, std::uint64_t
#include <memory>       // std::unique_ptr for exact-size pieces
#include <ostream>      // std::ostream for doctest's messages
#include <random>       // std::mt19937 for random piece sizes
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <tuple>        // std::tie
#include <vector>       // std::vector

namespace skiff_test::ws {

using skiff::websocket::close_code;
using skiff::websocket::message_step;

// One event as a value (data copied out of the reader's views).
struct event {
    message_step step;
    std::string data;
    bool last;
    close_code code;
    bool operator==(const event& o) const {
        return std::tie(step, data, last, code) == std::tie(o.step, o.data, o.last, o.code);
    }
};

inline event msg(message_step s, std::string data, bool last = true) { return {s, std::move(data), last, close_code::normal}; }
inline event text_msg(std::string data) { return msg(message_step::text, std::move(data)); }
inline event binary_msg(std::string data) { return msg(message_step::binary, std::move(data)); }
inline event ping_msg(std::string data) { return msg(message_step::ping, std::move(data)); }
inline event closed(close_code c, std::string reason = {}) { return {message_step::close, std::move(reason), true, c}; }
inline event failed(close_code c) { return {message_step::failed, {}, true, c}; }

inline std::ostream& operator<<(std::ostream& os, const event& e) {
    return os << "{step " << int(e.step) << ", " << e.data.size() << " bytes, last " << e.last << ", code "
              << int(e.code) << "}";
}

// Feeds stream cut at `cuts` (ascending offsets) to r; every event until the input ends or
// the reader fails.
inline std::vector<event> feed(skiff::websocket::message_reader& r, std::string_view stream,
                               const std::vector<std::size_t>& cuts) {
    std::vector<event> out;
    std::size_t from = 0;
    for (std::size_t k = 0; k <= cuts.size(); ++k) {
        std::size_t to = k < cuts.size() ? cuts[k] : stream.size();
        std::size_t n = to - from;
        std::unique_ptr<char[]> piece(new char[n ? n : 1]);
        std::copy(stream.begin() + static_cast<std::ptrdiff_t>(from), stream.begin() + static_cast<std::ptrdiff_t>(to), piece.get());
        std::size_t off = 0;
        for (;;) {
            std::size_t used = 0;
            skiff::websocket::message_event e = r.next(piece.get() + off, n - off, used);
            off += used;
            if (e.step == message_step::need_more) break;
            out.push_back({e.step, std::string(e.data), e.last, e.code});
            if (e.step == message_step::failed) return out;
        }
        from = to;
    }
    return out;
}

inline std::vector<std::size_t> every_byte(std::size_t n) {
    std::vector<std::size_t> cuts;
    for (std::size_t i = 1; i < n; ++i) cuts.push_back(i);
    return cuts;
}

inline std::vector<std::size_t> random_cuts(std::size_t n, unsigned seed, std::size_t max_piece) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<std::size_t> size(1, max_piece);
    std::vector<std::size_t> cuts;
    for (std::size_t at = size(rng); at < n; at += size(rng)) cuts.push_back(at);
    return cuts;
}

// The events of `stream` delivered whole, fed whole. Checks that feeding it byte by byte, cut
// at every single point (when short) and in random pieces gives the same events (it must,
// when messages are delivered whole), each with a fresh reader.
inline std::vector<event> events(std::string_view stream, skiff::websocket::message_limits limits = {}) {
    auto run = [&](const std::vector<std::size_t>& cuts) {
        skiff::websocket::message_reader r(limits);
        return feed(r, stream, cuts);
    };
    std::vector<event> whole = run({});
    bool agree = run(every_byte(stream.size())) == whole && run(random_cuts(stream.size(), 7, 13)) == whole;
    for (std::size_t at = 1; agree && at < stream.size() && stream.size() <= 300; ++at) agree = run({at}) == whole;
    CHECK_MESSAGE(agree, "a split of the stream changed the events");
    return whole;
}

} // namespace skiff_test::ws

#endif // SKIFF_TESTS_SUPPORT_WEBSOCKET_FEED_HPP
