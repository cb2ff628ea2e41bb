// Fuzz target for the chunked decoder (http/chunked.hpp) on its own: the bytes after a head
// that said "Transfer-Encoding: chunked". Input: one byte that picks the limits (odd: a
// 64-byte max_body and header section, so small inputs reach both; even: the defaults) and
// seeds the cut points, then the stream.
//
// Properties asserted (abort with a message on failure), beyond no crash under ASan/UBSan:
//  - the stream gives the same status, body and end fed whole, cut at two input-chosen
//    points, and (when short) byte by byte, following the decoder's kept() protocol (keep
//    the decoded bytes, append the next raw bytes after them) exactly as the parser does;
//  - a complete body fits max_body and ends inside the input;
//  - the decoded body, encoded again in chunks of input-chosen sizes with extensions of
//    every shape the grammar allows, decodes to itself and ends where its encoding ends.
// Only the parts it drives; the single-header configuration has no parts on its include
// path, so there it takes the whole file.
#ifdef SKIFF_TEST_SINGLE_HEADER
#include <skiff/skiff.hpp>
#else
#include <skiff/http/chunked.hpp>
#endif

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint8_t
#include <cstdio>       // std::fprintf for property failures
#include <cstdlib>      // std::abort
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector of cut points

namespace {

struct decoded {
    skiff::parse_status status = skiff::parse_status::incomplete;
    std::string body;
    std::size_t end = 0;  // in the stream, when complete
    bool operator==(const decoded& o) const { return status == o.status && body == o.body && end == o.end; }
};

[[noreturn]] void fail(const char* property, std::string_view input) {
    std::fprintf(stderr, "property failed: %s\ninput (%zu bytes): %.*s\n", property, input.size(),
                 static_cast<int>(input.size() < 400 ? input.size() : 400), input.data());
    std::abort();
}

// Feeds `stream` in the pieces `cuts` makes, as message_parser does across reads.
decoded feed(std::string_view stream, const skiff::parse_limits& limits, const std::vector<std::size_t>& cuts) {
    skiff::chunked_decoder d;
    std::string region;
    std::size_t fed = 0;  // stream bytes handed to the decoder so far
    decoded out;
    std::size_t from = 0;
    for (std::size_t k = 0; k <= cuts.size(); ++k) {
        std::size_t to = k < cuts.size() ? cuts[k] : stream.size();
        region.resize(d.size());  // kept(): the decoded bytes
        std::size_t before = region.size();
        region.append(stream.substr(from, to - from));
        std::size_t consumed = 0;
        out.status = d.decode(region.data(), region.size(), limits, consumed);
        if (out.status != skiff::parse_status::incomplete) {
            if (out.status == skiff::parse_status::complete) {
                out.body.assign(region.data(), d.size());
                out.end = fed + (consumed - before);
            }
            return out;
        }
        fed += to - from;
        from = to;
    }
    return out;
}

std::string hex(std::size_t n) {
    static const char digits[] = "0123456789abcdef";
    std::string s;
    do s.insert(s.begin(), digits[n % 16]); while ((n /= 16) != 0);
    return s;
}

// body as chunks of sizes drawn from seed, each size line with one of the extension shapes.
std::string encode(std::string_view body, std::size_t seed) {
    static const char* const extensions[] = {"", ";a", "; a = b", " ;a=\"q \\\" s\"", ";a;b=c\t;d"};
    std::string s;
    for (std::size_t at = 0; at < body.size();) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        std::size_t n = 1 + (seed >> 33) % 17;
        if (n > body.size() - at) n = body.size() - at;
        s += hex(n) + extensions[(seed >> 20) % 5] + "\r\n" + std::string(body.substr(at, n)) + "\r\n";
        at += n;
    }
    return s + "0;end\r\nTrailer: x\r\n\r\n";
}

std::vector<std::size_t> two_cuts(std::size_t size, std::size_t seed) {
    std::size_t a = 1 + seed % (size - 1), b = 1 + (seed >> 16) % (size - 1);
    if (a > b) std::swap(a, b);
    return a == b ? std::vector<std::size_t>{a} : std::vector<std::size_t>{a, b};
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    skiff::parse_limits limits;
    if (data[0] & 1) limits.max_body = limits.max_header_bytes = 64;
    std::size_t seed = static_cast<std::size_t>(data[0] >> 1) * 2654435761u + size;
    std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);

    decoded whole = feed(input, limits, {});
    if (whole.status == skiff::parse_status::complete) {
        if (whole.body.size() > limits.max_body) fail("a complete body fits max_body", input);
        if (whole.end == 0 || whole.end > input.size()) fail("a body ends inside the input", input);
    }
    if (input.size() >= 2 && !(feed(input, limits, two_cuts(input.size(), seed)) == whole))
        fail("cuts give the same result", input);
    if (input.size() >= 2 && input.size() <= 200) {
        std::vector<std::size_t> every;
        for (std::size_t k = 1; k < input.size(); ++k) every.push_back(k);
        if (!(feed(input, limits, every) == whole)) fail("byte by byte gives the same result", input);
    }
    if (whole.status == skiff::parse_status::complete) {
        std::string again = encode(whole.body, seed);
        decoded re = feed(again, limits, {});
        if (re.status != skiff::parse_status::complete || re.body != whole.body || re.end != again.size())
            fail("a body encoded again decodes to itself", input);
    }
    return 0;
}
