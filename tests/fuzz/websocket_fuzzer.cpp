// Fuzz target for the WebSocket frame reader and message reader (websocket/frame_reader.hpp,
// websocket/message_reader.hpp): the bytes a client sends after the handshake. Input: one
// byte that picks the message limit (bits 0-2) and seeds the cut points, then the stream.
//
// Properties asserted (abort with a message on failure), beyond no crash under ASan/UBSan:
//  - delivered whole, the stream gives the same events fed whole, cut at two input-chosen
//    points and (when short) byte by byte;
//  - what the application is handed keeps the RFC's promises: a message is at most the limit,
//    text is UTF-8 (checked here by a decoder written another way), a ping's payload at most
//    125 bytes, a close code one an endpoint may send (or 1005) with a UTF-8 reason of at most
//    123 bytes, and a failure's code is 1002, 1007 or 1009;
//  - delivered as pieces, the same stream gives the same events once each message's pieces
//    are joined (a message cut short by a failure is handed out in part before it);
//  - the messages delivered, framed again as client frames fragmented at input-chosen sizes,
//    read back as the same messages.
// websocket/ is not in the single header yet, so there is no single-header variant.
#include <skiff/websocket/message_reader.hpp>

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint8_t, std::uint64_t
#include <cstdio>       // std::fprintf for property failures
#include <cstdlib>      // std::abort
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::swap
#include <vector>       // std::vector of events and cut points

namespace {

using skiff::websocket::close_code;
using skiff::websocket::message_step;

struct event {
    message_step step;
    std::string data;
    close_code code;
    bool operator==(const event& o) const { return step == o.step && data == o.data && code == o.code; }
};

[[noreturn]] void fail(const char* property, std::string_view input) {
    std::fprintf(stderr, "property failed: %s\ninput: %zu bytes\n", property, input.size());
    std::abort();
}

// Feeds stream cut at `cuts`; in pieces delivery, joins each message's pieces into one event
// (and drops the pieces of a message a failure cut short).
std::vector<event> feed(std::string_view stream, skiff::websocket::message_limits limits, const std::vector<std::size_t>& cuts) {
    skiff::websocket::message_reader r(limits);
    std::vector<event> out;
    std::string open;  // pieces of the message being joined
    std::size_t from = 0;
    for (std::size_t k = 0; k <= cuts.size(); ++k) {
        std::size_t to = k < cuts.size() ? cuts[k] : stream.size();
        std::string piece(stream.substr(from, to - from));
        std::size_t off = 0;
        for (;;) {
            std::size_t used = 0;
            auto e = r.next(piece.data() + off, piece.size() - off, used);
            off += used;
            if (e.step == message_step::need_more) break;
            bool data = e.step == message_step::text || e.step == message_step::binary;
            if (data && !e.last) {
                open.append(e.data);
                continue;
            }
            out.push_back({e.step, data ? open.append(e.data) : std::string(e.data), e.code});
            if (data) open.clear();
            if (e.step == message_step::failed) return out;
        }
        from = to;
    }
    return out;
}

// RFC 3629 read another way than utf8.hpp: decode, then check the code point's range.
bool utf8(std::string_view s) {
    for (std::size_t i = 0; i < s.size();) {
        auto b = static_cast<unsigned char>(s[i]);
        std::size_t n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
        if (n == 0 || i + n > s.size()) return false;
        std::uint32_t cp = n == 1 ? b : b & (0xff >> (n + 1));
        for (std::size_t k = 1; k < n; ++k) {
            auto c = static_cast<unsigned char>(s[i + k]);
            if ((c >> 6) != 2) return false;
            cp = cp << 6 | (c & 0x3f);
        }
        const std::uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < least[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
        i += n;
    }
    return true;
}

void check_promises(const std::vector<event>& events, std::uint64_t limit, std::string_view input) {
    for (const event& e : events) {
        if ((e.step == message_step::text || e.step == message_step::binary) && e.data.size() > limit)
            fail("a message is at most the limit", input);
        if (e.step == message_step::text && !utf8(e.data)) fail("text is UTF-8", input);
        if (e.step == message_step::ping && e.data.size() > 125) fail("a ping carries at most 125 bytes", input);
        if (e.step == message_step::close) {
            auto c = static_cast<std::uint16_t>(e.code);
            if (c != 1005 && !skiff::websocket::is_valid_close_code(c)) fail("a close code is sendable", input);
            if (e.data.size() > 123 || !utf8(e.data)) fail("a close reason is UTF-8 of at most 123 bytes", input);
        }
        auto c = static_cast<std::uint16_t>(e.code);
        if (e.step == message_step::failed && c != 1002 && c != 1007 && c != 1009)
            fail("a failure is 1002, 1007 or 1009", input);
    }
}

// A masked client frame (RFC 6455 §5.2), written here independently of the server's writer.
void client_frame(std::string& out, std::uint8_t first, std::string_view payload, std::size_t seed) {
    out += static_cast<char>(first);
    std::uint64_t n = payload.size();
    if (n < 126) out += static_cast<char>(0x80 | n);
    int width = n < 126 ? 0 : n <= 0xffff ? 2 : 8;
    if (width) out += static_cast<char>(width == 2 ? 0xfe : 0xff);
    for (int i = width - 1; i >= 0; --i) out += static_cast<char>(n >> (8 * i));
    char key[4] = {static_cast<char>(seed), static_cast<char>(seed >> 8), static_cast<char>(seed >> 16), 0x5a};
    out.append(key, 4);
    for (std::size_t i = 0; i < payload.size(); ++i) out += static_cast<char>(payload[i] ^ key[i % 4]);
}

// The data messages of `events` as client frames, each fragmented at seed-chosen sizes.
std::string frame_again(const std::vector<event>& events, std::size_t seed, std::vector<event>& messages) {
    std::string out;
    for (const event& e : events) {
        if (e.step != message_step::text && e.step != message_step::binary) continue;
        messages.push_back(e);
        std::uint8_t op = e.step == message_step::text ? 1 : 2;
        // Fragments of seed-chosen sizes, empty ones included; the first carries the opcode.
        for (std::size_t at = 0, frames = 0;; ++frames) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            std::size_t n = (seed >> 33) % (e.data.size() + 2);
            if (n > e.data.size() - at) n = e.data.size() - at;
            bool last = at + n == e.data.size();
            auto first = static_cast<std::uint8_t>((last ? 0x80 : 0) | (frames == 0 ? op : 0));
            client_frame(out, first, std::string_view(e.data).substr(at, n), seed);
            at += n;
            if (last) break;
        }
    }
    return out;
}

std::vector<std::size_t> two_cuts(std::size_t size, std::size_t seed) {
    std::size_t a = 1 + seed % (size - 1), b = 1 + (seed >> 16) % (size - 1);
    if (a > b) std::swap(a, b);
    return a == b ? std::vector<std::size_t>{a} : std::vector<std::size_t>{a, b};
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    static const std::uint64_t limits[] = {0, 1, 16, 125, 126, 1000, 65536, 1 << 20};
    skiff::websocket::message_limits whole_limits;
    whole_limits.max_message = limits[data[0] & 7];
    std::size_t seed = static_cast<std::size_t>(data[0] >> 3) * 2654435761u + size;
    std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);

    std::vector<event> whole = feed(input, whole_limits, {});
    check_promises(whole, whole_limits.max_message, input);
    if (input.size() >= 2 && !(feed(input, whole_limits, two_cuts(input.size(), seed)) == whole))
        fail("cuts give the same events", input);
    if (input.size() >= 2 && input.size() <= 300) {
        std::vector<std::size_t> every;
        for (std::size_t k = 1; k < input.size(); ++k) every.push_back(k);
        if (!(feed(input, whole_limits, every) == whole)) fail("byte by byte gives the same events", input);
    }
    skiff::websocket::message_limits piece_limits = whole_limits;
    piece_limits.delivery = skiff::websocket::delivery::pieces;
    if (input.size() >= 2 && !(feed(input, piece_limits, two_cuts(input.size(), seed >> 3)) == whole))
        fail("pieces joined give the same events", input);

    std::vector<event> messages;
    std::string again = frame_again(whole, seed, messages);
    if (!(feed(again, whole_limits, {}) == messages)) fail("messages framed again read back the same", input);
    return 0;
}
