// The chunked transfer coding (RFC 9112 §7.1): sizes, extensions, trailers (parsed, bounded
// by max_header_bytes, then dropped), the body limit mid-stream, and in-place decoding. Each
// row runs through message_parser whole, at every split point and byte by byte, against a
// guard page (check_case in support/split_feed.hpp).
#include "support/split_feed.hpp"

// Only the part under test (a unit test compiles in about a second); the single-header
// configuration has no parts on its include path, so there it takes the whole file.
#ifdef SKIFF_TEST_SINGLE_HEADER
#include <skiff/skiff.hpp>
#else
#include <skiff/http/chunked.hpp>
#endif

#include <doctest/doctest.h>

#include <cstring>  // std::memcpy
#include <string>   // std::string for the generated limit chunked_cases

using namespace std::literals;
using skiff_test::parse_case;
using skiff_test::tight;
using namespace skiff_test::statuses;

namespace {

// Every row's head is "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n" (56 bytes).
constexpr parse_case chunked_cases[] = {
    // chunked-body = *chunk last-chunk trailer-section CRLF
    {"9112§7.1 one chunk", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"sv, ok, "body=hello framing=chunked end=71 fields=2"},
    {"9112§7.1 several chunks are joined", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n1\r\n \r\n5\r\nworld\r\n0\r\n\r\n"sv, ok, "body='hello world'"},
    {"9112§7.1 the last chunk alone is an empty body", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"sv, ok, "body= framing=chunked end=61"},
    {"9112§7.1 lower-case hex sizes", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\na\r\n0123456789\r\n0\r\n\r\n"sv, ok, "body=0123456789"},
    {"9112§7.1 upper-case hex sizes", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nB\r\n0123456789a\r\n0\r\n\r\n"sv, ok, "body=0123456789a"},
    {"9112§7.1 leading zeros in a size", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0005\r\nhello\r\n000\r\n\r\n"sv, ok, "body=hello"},
    {"9112§7.1 twenty digits of a small size are fine", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n00000000000000000001\r\nx\r\n0\r\n\r\n"sv, ok, "body=x"},
    {"9112§7.1 chunk data may hold CR and LF", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n\r\n\r\n\r\n0\r\n\r\n"sv, ok, "body=\r\n\r\n"},
    {"9112§7.1 chunk data that looks like a last chunk is data", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n0\r\n\r\n\r\n0\r\n\r\n"sv, ok, "body=0\r\n\r\n"},
    {"9112§7.1.1 a chunk extension is ignored", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5;name=value\r\nhello\r\n0\r\n\r\n"sv, ok, "body=hello"},
    {"9112§7.1.1 several extensions, one quoted with a space", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5;a=\"b c\";d\r\nhello\r\n0\r\n\r\n"sv, ok, "body=hello"},
    {"9112§7.1.1 an extension on the last chunk", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0;end=1\r\n\r\n"sv, ok, "body="},
    {"9112§7.1.2 a trailer field is parsed and dropped", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-T: v\r\n\r\n"sv, ok, "body=abc fields=2 h:x-t=<absent>"},
    {"9112§7.1.2 several trailer fields", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nA: 1\r\nB: 2\r\n\r\n"sv, ok, "body= fields=2"},
    {"9112§7.1.2 a trailer with an empty value", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX:\r\n\r\n"sv, ok, "body="},
    {"9112§7.1.2 a trailer with OWS and obs-text", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: \t v\xff \t\r\n\r\n"sv, ok, "body="},
    {"9110§6.5.1 a Content-Length trailer does not frame anything", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nContent-Length: 5\r\n\r\n"sv, ok, "msgs=1 body="},
    // Hostile trailers
    {"9112§5.2 obs-fold in a trailer is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: a\r\n b\r\n\r\n"sv, bad},
    {"9112§5.1 whitespace before a trailer's colon is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX : a\r\n\r\n"sv, bad},
    {"9112§5.1 a trailer line without a colon is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX\r\n\r\n"sv, bad},
    {"9112§5.1 a trailer with an empty name is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n: v\r\n\r\n"sv, bad},
    {"9110§5.5 NUL in a trailer value is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: a\0\r\n\r\n"sv, bad},
    {"9110§5.6.2 DEL in a trailer name is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX\x7f: a\r\n\r\n"sv, bad},
    {"9112§2.2 a bare LF ending a trailer is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: v\n\r\n"sv, bad},
    {"9112§2.2 a bare CR inside a trailer value is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: a\rb\r\n\r\n"sv, bad},
    {"9112§7.1 a bare LF for the final CRLF is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\n"sv, bad},
    {"9112§7.1 CR then a byte other than LF for the final CRLF is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\rX"sv, bad},
    {"9112§7.1 a body without its final CRLF is incomplete", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: v\r\n"sv, more, "head=1 msgs=0"},
    // chunk-size = 1*HEXDIG, nothing else
    {"9112§7.1 a size that is not hex is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\ng\r\n0\r\n\r\n"sv, bad},
    {"9112§7.1 a 0x prefix is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0x5\r\nhello\r\n0\r\n\r\n"sv, bad},
    {"9112§7.1 whitespace before a size is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n 5\r\nhello\r\n0\r\n\r\n"sv, bad},
    {"9112§7.1 whitespace after a size is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5 \r\nhello\r\n0\r\n\r\n"sv, bad},
    {"9112§7.1.1 BWS before ';' is allowed", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5 \t;a\r\nhello\r\n0\r\n\r\n"sv, ok, "body=hello"},
    {"9112§7.1.1 BWS after ';' and around '=' is allowed", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5; a \t= b\r\nhello\r\n0\r\n\r\n"sv, ok, "body=hello"},
    {"9112§7.1.1 BWS between extensions is allowed", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5;a=b ;c = \"d\" ;e\r\nhello\r\n0\r\n\r\n"sv, ok, "body=hello"},
    {"9110§5.6.4 a quoted-pair and obs-text in a quoted value", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5;a=\"x\\\"y\xff\"\r\nhello\r\n0\r\n\r\n"sv, ok, "body=hello"},
    {"9112§7.1 whitespace after the size without ';' is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5 \r\nhello\r\n0\r\n\r\n"sv, bad},
    {"9112§7.1.1 whitespace before the CRLF after a name is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5;a \r\nhello\r\n0\r\n\r\n"sv, bad},
    {"9112§7.1.1 whitespace before the CRLF after a value is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5;a=b \r\nhello\r\n0\r\n\r\n"sv, bad},
    {"9112§7.1.1 an empty extension name is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5;=b\r\nhello\r\n0\r\n\r\n"sv, bad},
    {"9112§7.1.1 ';' alone is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5;\r\nhello\r\n0\r\n\r\n"sv, bad},
    {"9112§7.1.1 a name that is not a token is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5;a/b\r\nhello\r\n0\r\n\r\n"sv, bad},
    {"9112§7.1.1 '=' without a value is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5;a=\r\nhello\r\n0\r\n\r\n"sv, bad},
    {"9112§7.1.1 a value that is not a token is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5;a=b@c\r\nhello\r\n0\r\n\r\n"sv, bad},
    {"9112§7.1.1 an unclosed quoted value is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5;a=\"b\r\nhello\r\n0\r\n\r\n"sv, bad},
    {"9110§5.6.4 a CR inside a quoted value is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5;a=\"b\rc\"\r\nhello\r\n0\r\n\r\n"sv, bad},
    {"9110§5.6.4 a quoted-pair of LF is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5;a=\"b\\\nc\"\r\nhello\r\n0\r\n\r\n"sv, bad},
    {"9112§7.1.1 text right after a closing quote is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5;a=\"b\"c\r\nhello\r\n0\r\n\r\n"sv, bad},
    {"9112§7.1.1 two '=' are 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5;a=b=c\r\nhello\r\n0\r\n\r\n"sv, bad},
    {"9112§7.1 HTAB after a size is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\t\r\nhello\r\n0\r\n\r\n"sv, bad},
    {"9112§7.1 a negative size is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n"sv, bad},
    {"9112§7.1 a signed size is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n+5\r\nhello\r\n0\r\n\r\n"sv, bad},
    {"9112§7.1 an empty size line is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n\r\nhello\r\n0\r\n\r\n"sv, bad},
    {"9112§7.1 an extension without a size is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n;a\r\n0\r\n\r\n"sv, bad},
    {"9112§7.1 a size of 2^64 overflows: 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000000\r\n"sv, bad},
    {"9112§7.1 seventeen f digits overflow: 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffff\r\n"sv, bad},
    {"9110§15.5.14 a size of 2^64-1 is 413", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFffffffff\r\n"sv, r413},
    {"9112§7.1 a bare LF ending a size line is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\nhello\r\n0\r\n\r\n"sv, bad},
    {"9112§7.1 a bare CR ending a size line is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\rhello\r\n0\r\n\r\n"sv, bad},
    {"9112§7.1.1 a bare LF inside an extension is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5;a\nhello\r\n0\r\n\r\n"sv, bad},
    {"9112§7.1.1 NUL in an extension is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5;a\0\r\nhello\r\n0\r\n\r\n"sv, bad},
    {"9112§7.1.1 DEL in an extension is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5;\x7f\r\nhello\r\n0\r\n\r\n"sv, bad},
    // chunk = chunk-size [ chunk-ext ] CRLF chunk-data CRLF
    {"9112§7.1 data not followed by CRLF is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloX\r\n0\r\n\r\n"sv, bad},
    {"9112§7.1 data followed by a bare LF is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\n0\r\n\r\n"sv, bad},
    {"9112§7.1 data followed by a bare CR is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r0\r\n\r\n"sv, bad},
    {"9112§7.1 more data than the size is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhello\r\n0\r\n\r\n"sv, bad},
    {"9112§7.1 less data than the size swallows the framing: 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhi\r\n0\r\n\r\n"sv, bad},
    {"9112§7.1 a body stopped inside a chunk is incomplete", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel"sv, more, "head=1 framing=chunked msgs=0"},
    {"9112§7.1 a body stopped after a chunk is incomplete", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n"sv, more, "head=1"},
    // The body limit, decided from each chunk's size before its data (tight: 16 bytes)
    {"9110§15.5.14 a chunked body at the limit is accepted", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n0123456789abcdef\r\n0\r\n\r\n"sv, ok, "body=0123456789abcdef", tight},
    {"9110§15.5.14 two chunks adding up to the limit are accepted", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n01234567\r\n8\r\n89abcdef\r\n0\r\n\r\n"sv, ok, "body=0123456789abcdef", tight},
    {"9110§15.5.14 one chunk one byte over the limit is 413", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n11\r\n0123456789abcdefg\r\n0\r\n\r\n"sv, r413, "", tight},
    {"9110§15.5.14 a second chunk passing the limit is 413", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n01234567\r\n9\r\n89abcdefg\r\n0\r\n\r\n"sv, r413, "", tight},
    {"9110§15.5.14 413 comes from the size line, before the data", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n01234567\r\n9\r\n"sv, r413, "", tight},
    {"9110§15.5.14 a huge size is 413 mid-stream", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n7fffffff\r\n"sv, r413, "", tight},
    // The trailer section limit: max_header_bytes (tight: 64), its final CRLF included
    {"6585§5 a trailer section at the limit is accepted", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n"sv, ok, "body=", tight},
    {"6585§5 a trailer section one byte over the limit is 431", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n"sv, r431, "", tight},
    {"6585§5 a trailer section over the limit is 431 before it ends", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"sv, r431, "", tight},
    {"6585§5 many small trailers over the limit are 431", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nA:1\r\nB:2\r\nC:3\r\nD:4\r\nE:5\r\nF:6\r\nG:7\r\nH:8\r\nI:9\r\nJ:0\r\nK:1\r\nL:2\r\nM:3\r\n\r\n"sv, r431, "", tight},
    // What follows the last chunk is the next message
    {"9112§9.3.2 a request after a chunked one is the next message", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\nGET /n HTTP/1.1\r\nHost: h\r\n\r\n"sv, ok, "msgs=2 paths=/,/n bodies=x,"},
    {"9112§7.1 a chunk after the last chunk is a new (bad) request", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n5\r\nhello\r\n0\r\n\r\n"sv, bad, "msgs=1 body="},
};

std::string chunked_head() { return "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"; }

} // namespace

TEST_CASE("chunked: table, fed whole, at every split and byte by byte, against a guard page") {
    for (const parse_case& c : chunked_cases) {
        CAPTURE(c.name);
        CHECK(skiff_test::check_case(c) == "");
    }
}

TEST_CASE("chunked: a size line (digits and extensions) may be 4096 bytes, not one more (RFC 9112 §7.1.1)") {
    std::string at = chunked_head() + "1;" + std::string(4094, 'e') + "\r\nx\r\n0\r\n\r\n";
    std::string over = chunked_head() + "1;" + std::string(4095, 'e') + "\r\nx\r\n0\r\n\r\n";
    CHECK(skiff_test::check_case({"size line at 4096", at, ok, "body=x"}) == "");
    CHECK(skiff_test::check_case({"size line at 4097", over, bad}) == "");
}

TEST_CASE("chunked: trailers are bounded by the default max_header_bytes, 8 KiB (RFC 6585 §5)") {
    skiff::parse_limits defaults;
    std::string value(defaults.max_header_bytes - 7, 'v');  // "X: " value CRLF CRLF
    CHECK(skiff_test::check_case({"trailers at 8 KiB", chunked_head() + "0\r\nX: " + value + "\r\n\r\n", ok}) == "");
    CHECK(skiff_test::check_case({"trailers at 8 KiB + 1", chunked_head() + "0\r\nX: v" + value + "\r\n\r\n", r431}) ==
          "");
}

TEST_CASE("chunked: the decoder works in place and keeps only decoded bytes between reads") {
    skiff::chunked_decoder d;
    skiff::parse_limits limits;
    char region[64];
    std::size_t consumed = 0;
    const char first[] = "3\r\nabc\r\n4;x\r\nde";  // the first read: a whole chunk and part of one
    std::memcpy(region, first, sizeof first - 1);
    CHECK(d.decode(region, sizeof first - 1, limits, consumed) == more);
    CHECK(d.size() == 5);  // the caller keeps region[0, 5) and appends the next read after it
    CHECK(std::string(region, d.size()) == "abcde");
    const char second[] = "fg\r\n0\r\n\r\nNEXT";
    std::memcpy(region + d.size(), second, sizeof second - 1);
    CHECK(d.decode(region, d.size() + sizeof second - 1, limits, consumed) == ok);
    CHECK(std::string(region, d.size()) == "abcdefg");
    CHECK(std::string(region + consumed, 4) == "NEXT");  // what follows the message is untouched
}

TEST_CASE("chunked: take() hands the decoded bytes over, for a caller that streams the body") {
    skiff::chunked_decoder d;
    skiff::parse_limits limits;
    limits.max_body = 10;  // bounds each call's chunks, not the total, once the caller takes the bytes
    char region[64];
    std::size_t consumed = 0;
    const char first[] = "6\r\nabcdef\r\n3\r\ngh";
    std::memcpy(region, first, sizeof first - 1);
    CHECK(d.decode(region, sizeof first - 1, limits, consumed) == more);
    CHECK(std::string(region, d.take()) == "abcdefgh");
    CHECK(d.size() == 0);
    const char second[] = "i\r\n5\r\njklmn\r\n0\r\n\r\n";  // 14 bytes in all: past max_body, and fine
    std::memcpy(region, second, sizeof second - 1);
    CHECK(d.decode(region, sizeof second - 1, limits, consumed) == ok);
    CHECK(std::string(region, d.take()) == "ijklmn");
    CHECK(consumed == sizeof second - 1);
    skiff::chunked_decoder big;
    const char large[] = "b\r\n";  // 11
    std::memcpy(region, large, sizeof large - 1);
    CHECK(big.decode(region, sizeof large - 1, limits, consumed) == skiff::parse_status::content_too_large);
}
