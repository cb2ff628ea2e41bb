// Message framing (RFC 9112 §6): Content-Length, Transfer-Encoding, the smuggling
// signatures, the body limit and pipelined messages. Each row runs whole, at every split
// point and byte by byte, against a guard page (check_case in support/split_feed.hpp).
#include "support/split_feed.hpp"

#include <doctest/doctest.h>

#include <string>  // the requests of the body_hold case
#include <vector>  // its header fields

using namespace std::literals;
using skiff_test::parse_case;
using skiff_test::tight;
using namespace skiff_test::statuses;

namespace {

constexpr parse_case framing_cases[] = {
    // Content-Length = 1*DIGIT (RFC 9110 §8.6)
    {"9110§8.6 a Content-Length body", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello"sv, ok, "body=hello framing=length length=5 end=52"},
    {"9110§8.6 Content-Length: 0 is an empty body", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n"sv, ok, "body= framing=length length=0"},
    {"9110§8.6 leading zeros are decimal", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 007\r\n\r\n0123456"sv, ok, "body=0123456 length=7"},
    {"9112§5.1 OWS around Content-Length is trimmed", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: \t3 \t\r\n\r\nabc"sv, ok, "body=abc"},
    {"9112§6.3 a GET with Content-Length has a body", "GET / HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nxy"sv, ok, "body=xy method=GET"},
    {"9112§6.3 no Content-Length and no Transfer-Encoding: no body", "POST / HTTP/1.1\r\nHost: h\r\n\r\n"sv, ok, "framing=none body="},
    {"9112§6.3 bytes after a bodiless request start the next request", "POST / HTTP/1.1\r\nHost: h\r\n\r\nhello"sv, more, "msgs=1 body="},
    {"9112§6.3 identical duplicate Content-Length fields are accepted", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc"sv, ok, "body=abc"},
    {"9112§6.3 duplicates with the same value spelt differently agree", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 003\r\n\r\nabc"sv, ok, "body=abc"},
    {"9112§6.3 differing duplicate Content-Length fields are 400", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd"sv, bad},
    {"9112§6.3 differing duplicates are 400 whichever is larger", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\nContent-Length: 0\r\n\r\nabcd"sv, bad},
    {"9112§6.3 a Content-Length list is 400", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3, 3\r\n\r\nabc"sv, bad},
    {"9112§6.3 a Content-Length list without spaces is 400", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3,3\r\n\r\nabc"sv, bad},
    {"9110§8.6 an empty Content-Length is 400", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length:\r\n\r\n"sv, bad},
    {"9110§8.6 a Content-Length of whitespace is 400", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: \t \r\n\r\n"sv, bad},
    {"9110§8.6 a signed Content-Length (+) is 400", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: +3\r\n\r\nabc"sv, bad},
    {"9110§8.6 a negative Content-Length is 400", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -3\r\n\r\nabc"sv, bad},
    {"9110§8.6 a hexadecimal Content-Length is 400", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0x3\r\n\r\nabc"sv, bad},
    {"9110§8.6 a fractional Content-Length is 400", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3.0\r\n\r\nabc"sv, bad},
    {"9110§8.6 an exponent in Content-Length is 400", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1e1\r\n\r\n0123456789"sv, bad},
    {"9110§8.6 digits split by a space are 400", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1 2\r\n\r\n0123456789ab"sv, bad},
    {"9110§8.6 a word for a Content-Length is 400", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: three\r\n\r\nabc"sv, bad},
    {"9110§8.6 a Content-Length of 2^64 overflows: 400", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 18446744073709551616\r\n\r\n"sv, bad},
    {"9110§8.6 a 30-digit Content-Length overflows: 400", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 999999999999999999999999999999\r\n\r\n"sv, bad},
    {"9110§15.5.14 a Content-Length of 2^64-1 is 413", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 18446744073709551615\r\n\r\n"sv, r413},
    // The framing fields are recognised by length and word compares, in any letter case
    {"9110§5.1 CONTENT-LENGTH in capitals", "POST / HTTP/1.1\r\nHost: h\r\nCONTENT-LENGTH: 1\r\n\r\nx"sv, ok, "framing=length body=x"},
    {"9110§5.1 TRANSFER-ENCODING in capitals", "POST / HTTP/1.1\r\nHOST: h\r\nTRANSFER-ENCODING: chunked\r\n\r\n0\r\n\r\n"sv, ok, "framing=chunked"},
    {"9110§5.1 CONNECTION and EXPECT in capitals", "GET / HTTP/1.1\r\nHost: h\r\nCONNECTION: close\r\nEXPECT: 100-continue\r\n\r\n"sv, ok, "keep=0 expect=1"},
    {"9110§5.6.2 Content_Length is not Content-Length", "POST / HTTP/1.1\r\nHost: h\r\nContent_Length: 5\r\n\r\n"sv, ok, "framing=none"},
    {"9110§5.1 a name one letter off Content-Length is not it", "POST / HTTP/1.1\r\nHost: h\r\nContent-Lfngth: 5\r\n\r\n"sv, ok, "framing=none"},
    {"9110§5.1 a name off Transfer-Encoding in its last letter is not it", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encodinx: chunked\r\n\r\n"sv, ok, "framing=none"},
    {"9110§5.1 a name off Transfer-Encoding in its ninth letter is not it", "POST / HTTP/1.1\r\nHost: h\r\nTransfer_Encoding: chunked\r\n\r\n"sv, ok, "framing=none"},
    {"9110§5.1 a name off Connection in its fifth letter is not it", "GET / HTTP/1.1\r\nHost: h\r\nConneXtion: close\r\n\r\n"sv, ok, "keep=1"},
    // What one message sets, the next must not inherit (the head is reused between messages)
    {"9112§6.3 a length is not inherited by a bodiless request", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n\r\nzPOST / HTTP/1.1\r\nHost: h\r\n\r\n"sv, ok, "msgs=2 bodies=z,"},
    {"9112§3.2.4 OPTIONS * after a query has no query", "GET /a?q HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n\r\nzOPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n"sv, ok, "msgs=2 paths=/a,* queries=q,"},
    {"9112§3.2.3 CONNECT after a path has none", "GET /a?q HTTP/1.1\r\nHost: h\r\n\r\nCONNECT ex:443 HTTP/1.1\r\nHost: ex:443\r\n\r\n"sv, ok, "msgs=2 paths=/a, queries=q, hosts=h,ex:443"},
    {"9112§3.2 a Host is not inherited by a request without one", "GET / HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.0\r\n\r\n"sv, ok, "msgs=2 hosts=a,"},
    {"9110§8.6 a field named Content-Lengths is not Content-Length", "POST / HTTP/1.1\r\nHost: h\r\nContent-Lengths: 3\r\n\r\n"sv, ok, "framing=none"},
    // Transfer-Encoding (RFC 9112 §6.1, §7): exactly one final "chunked"
    {"9112§6.1 chunked framing", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"sv, ok, "framing=chunked body=abc end=69"},
    {"9112§7 transfer codings are case-insensitive", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: ChUnKeD\r\n\r\n0\r\n\r\n"sv, ok, "framing=chunked body="},
    {"9110§5.6.1 empty list elements before chunked are ignored", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: , chunked ,\r\n\r\n0\r\n\r\n"sv, ok, "framing=chunked"},
    {"9112§6.1 Transfer-Encoding with Content-Length is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n"sv, bad},
    {"9112§6.1 Content-Length before Transfer-Encoding is 400", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nX"sv, bad},
    {"9112§6.1 Content-Length: 0 with chunked is 400", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"sv, bad},
    {"9112§6.1 Transfer-Encoding in HTTP/1.0 is 400", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"sv, bad},
    {"9112§6.3 an unknown coding alone is 400: chunked is not final", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n"sv, bad},
    {"9112§6.3 identity alone is 400: chunked is not final", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: identity\r\n\r\n"sv, bad},
    {"9112§6.1 a coding before chunked is 501", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n"sv, r501},
    {"9112§6.3 chunked that is not final is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n"sv, bad},
    {"9112§7.1 chunked twice is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n"sv, bad},
    {"9112§7.1 chunked in two fields is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"sv, bad},
    {"9112§6.1 gzip then chunked in two fields is 501", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"sv, r501},
    {"9112§7 chunked with a parameter is not chunked: 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked;q=1\r\n\r\n0\r\n\r\n"sv, bad},
    {"9112§6.1 an empty Transfer-Encoding is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding:\r\n\r\n"sv, bad},
    {"9112§6.1 a Transfer-Encoding of commas is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: , ,\r\n\r\n"sv, bad},
    {"9112§7 a quoted coding is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: \"chunked\"\r\n\r\n0\r\n\r\n"sv, bad},
    {"9112§7 two words for one coding are 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked x\r\n\r\n0\r\n\r\n"sv, bad},
    {"9112§7 a coding with a bad separator is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked/1\r\n\r\n0\r\n\r\n"sv, bad},
    {"9112§6.3 'xchunked' is not chunked: 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n"sv, bad},
    {"9112§6.1 a field named Transfer-Encodings is not Transfer-Encoding", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encodings: chunked\r\nContent-Length: 1\r\n\r\nx"sv, ok, "framing=length body=x"},
    // The body limit: 413 (RFC 9110 §15.5.14) from the declared length alone
    {"9110§15.5.14 a body at the limit is accepted", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 16\r\n\r\n0123456789abcdef"sv, ok, "body=0123456789abcdef", tight},
    {"9110§15.5.14 a declared body one byte over the limit is 413", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 17\r\n\r\n0123456789abcdefg"sv, r413, "", tight},
    {"9110§15.5.14 413 is answered from the head, before any body byte", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 17\r\n\r\n"sv, r413, "", tight},
    {"9110§10.1.1 Expect: 100-continue over the limit is 413, body unread", "POST / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 99\r\n\r\n"sv, r413, "", tight},
    {"9110§15.5.14 the default limit is 1 MiB: at it, the head is in", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1048576\r\n\r\n"sv, more, "head=1 length=1048576"},
    {"9110§15.5.14 the default limit is 1 MiB: one byte over is 413", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1048577\r\n\r\n"sv, r413},
    {"9112§6.3 a body still arriving is incomplete, with its head reported", "PUT /f HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nhalf"sv, more, "head=1 msgs=0 path=/f framing=length"},
    // Pipelined messages: bodies stay with their requests, in order (RFC 9112 §9.3.2)
    {"9112§9.3.2 pipelined requests with bodies stay in order", "POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabcPOST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nxyGET /c HTTP/1.1\r\nHost: h\r\n\r\n"sv, ok, "msgs=3 paths=/a,/b,/c bodies=abc,xy,"},
    {"9112§9.3.2 chunked and Content-Length bodies pipelined stay in order", "POST /a HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n1\r\nc\r\n0\r\n\r\nPOST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nde"sv, ok, "msgs=2 paths=/a,/b bodies=abc,de"},
    {"9112§9.3.2 two chunked bodies pipelined stay in order", "POST /a HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\nPOST /b HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nyz\r\n0\r\n\r\n"sv, ok, "msgs=2 bodies=x,yz"},
    {"9112§2.2 empty lines between pipelined requests are skipped", "GET /a HTTP/1.1\r\nHost: h\r\n\r\n\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\n"sv, ok, "msgs=2 paths=/a,/b"},
    {"9112§6.3 a request inside a body is body, not a request", "POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 28\r\n\r\nGET /admin HTTP/1.1\r\nHost: h"sv, ok, "msgs=1 paths=/a body='GET /admin HTTP/1.1\r\nHost: h'"},
    {"9112§9.3.2 a bad request stops the stream: nothing after it is parsed", "GET /a HTTP/1.1\r\nHost: h\r\n\r\nGET /b HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\nGET /c HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad, "msgs=1 paths=/a"},
    {"9112§11.2 CL.TE smuggling: the second request is never seen", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 13\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nSMUGGLED"sv, bad, "msgs=0"},
    {"9112§11.2 TE.CL smuggling: the second request is never seen", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n8\r\nSMUGGLED\r\n0\r\n\r\n"sv, bad, "msgs=0"},
    {"9112§11.2 TE.TE smuggling with an obfuscated coding is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: x\r\n\r\n0\r\n\r\nGET /s HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad, "msgs=0"},
    {"9112§11.2 a Content-Length hidden behind a space is 400", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length : 30\r\n\r\nGET /s HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad, "msgs=0"},
};

} // namespace

TEST_CASE("framing: table, fed whole, at every split and byte by byte, against a guard page") {
    for (const parse_case& c : framing_cases) {
        CAPTURE(c.name);
        CHECK(skiff_test::check_case(c) == "");
    }
}

TEST_CASE("framing: http_status names a status for each error, and none otherwise") {
    using skiff::parse_status;
    CHECK_FALSE(skiff::http_status(parse_status::complete).has_value());
    CHECK_FALSE(skiff::http_status(parse_status::incomplete).has_value());
    CHECK(skiff::http_status(parse_status::bad_request) == 400);
    CHECK(skiff::http_status(parse_status::content_too_large) == 413);
    CHECK(skiff::http_status(parse_status::uri_too_long) == 414);
    CHECK(skiff::http_status(parse_status::expectation_failed) == 417);
    CHECK(skiff::http_status(parse_status::fields_too_large) == 431);
    CHECK(skiff::http_status(parse_status::not_implemented) == 501);
    CHECK(skiff::http_status(parse_status::version_not_supported) == 505);
    static_assert(*skiff::http_status(parse_status::bad_request) == 400);
}

TEST_CASE("framing: body_hold::ask stops after a head that declares a body, and goes on buffering after") {
    using skiff::parse_status;
    skiff::parse_limits limits;
    limits.hold_bodies = skiff::body_hold::ask;
    limits.max_body = 4;
    std::vector<skiff::header_field> fields(limits.max_headers);
    skiff::request_head h;
    std::string get = "GET / HTTP/1.1\r\nHost: h\r\n\r\n";
    skiff::message_parser p;
    CHECK(p.parse(get.data(), get.size(), h, fields.data(), limits).status == parse_status::complete);  // no body: no stop
    std::string post = "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello";
    p.reset();
    skiff::parse_result r = p.parse(post.data(), post.size(), h, fields.data(), limits);
    CHECK(r.status == parse_status::body_follows);
    CHECK(r.consumed == post.size() - 5);  // the head
    CHECK(p.declares_more_than(4));        // the caller's check now: max_body was not applied
    CHECK_FALSE(p.declares_more_than(5));
    r = p.parse(post.data(), post.size(), h, fields.data(), limits);
    CHECK(r.status == parse_status::complete);
    CHECK(h.body == "hello");
    CHECK_FALSE(skiff::http_status(parse_status::body_follows).has_value());
}
