// The request line (RFC 9112 §2-§3): method, request-target forms, version, leading empty
// lines and the request-line limit. Each row runs whole, at every split point and byte by
// byte, against a guard page (check_case in support/split_feed.hpp).
#include "support/split_feed.hpp"

#include <doctest/doctest.h>

#include <string>  // std::string for the generated limit request_line_cases

using namespace std::literals;
using skiff_test::parse_case;
using skiff_test::tight;
using namespace skiff_test::statuses;

namespace {

constexpr parse_case request_line_cases[] = {
    // method SP request-target SP HTTP-version CRLF
    {"9112§3 a minimal GET", "GET / HTTP/1.1\r\nHost: h\r\n\r\n"sv, ok, "method=GET target=/ path=/ query= version=1.1 host=h framing=none keep=1 fields=1 end=27 msgs=1"},
    {"9112§3 extension method", "PURGE /x HTTP/1.1\r\nHost: h\r\n\r\n"sv, ok, "method=PURGE path=/x"},
    {"9110§9.1 GETX is an extension method, not GET", "GETX / HTTP/1.1\r\nHost: h\r\n\r\n"sv, ok, "method=GETX"},
    {"9112§3 GET followed by a tab is 400", "GET\t/ HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad},
    {"9110§9.1 methods are case-sensitive: get is an extension method", "get / HTTP/1.1\r\nHost: h\r\n\r\n"sv, ok, "method=get"},
    {"9110§5.6.2 a method may use every tchar", "!#$%&'*+-.^_`|~09azAZ / HTTP/1.1\r\nHost: h\r\n\r\n"sv, ok, "method=!#$%&'*+-.^_`|~09azAZ"},
    {"9110§5.6.2 '(' in a method is 400", "GE(T / HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad},
    {"9110§5.6.2 '@' in a method is 400", "G@T / HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad},
    {"9110§5.6.2 NUL in a method is 400", "GE\0T / HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad},
    {"9110§5.6.2 a byte above 0x7f in a method is 400", "G\xc9T / HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad},
    {"9112§3 an empty method (line starts with SP) is 400", " / HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad},
    {"9112§3 two spaces after the method are 400", "GET  / HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad},
    {"9112§3 two spaces before the version are 400", "GET /  HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad},
    {"9112§3 HTAB as a separator is 400", "GET\t/ HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad},
    {"9112§3 HTAB before the version is 400", "GET /\tHTTP/1.1\r\nHost: h\r\n\r\n"sv, bad},
    {"9112§3 a space after the version is 400", "GET / HTTP/1.1 \r\nHost: h\r\n\r\n"sv, bad},
    {"9112§3 a request line without a version is 400", "GET /\r\nHost: h\r\n\r\n"sv, bad},
    {"9112§3 a request line of a method alone is 400", "GET\r\nHost: h\r\n\r\n"sv, bad},
    {"9112§3 a request line without a target is 400", "GET HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad},
    // HTTP-version = HTTP-name "/" DIGIT "." DIGIT
    {"9112§2.3 HTTP/1.0 needs no Host and closes by default", "GET / HTTP/1.0\r\n\r\n"sv, ok, "version=1.0 keep=0 host= fields=0"},
    {"9112§2.3 HTTP/1.2 is treated as 1.1", "GET / HTTP/1.2\r\nHost: h\r\n\r\n"sv, ok, "version=1.1 keep=1"},
    {"9112§2.3 HTTP/1.9 is treated as 1.1", "GET / HTTP/1.9\r\nHost: h\r\n\r\n"sv, ok, "version=1.1"},
    {"9112§2.3 HTTP/1.9 needs Host like 1.1", "GET / HTTP/1.9\r\n\r\n"sv, bad},
    {"9112§2.3 HTTP/2.0 is 505", "GET / HTTP/2.0\r\nHost: h\r\n\r\n"sv, r505},
    {"9112§2.3 HTTP/0.9 is 505", "GET / HTTP/0.9\r\n\r\n"sv, r505},
    {"9112§2.3 HTTP/3.1 is 505", "GET / HTTP/3.1\r\nHost: h\r\n\r\n"sv, r505},
    {"9112§2.3 HTTP/9.9 is 505 as soon as its line ends", "GET / HTTP/9.9\r\n"sv, r505},
    {"9112§2.3 a two-digit major version is 400", "GET / HTTP/10.0\r\nHost: h\r\n\r\n"sv, bad},
    {"9112§2.3 a two-digit minor version is 400", "GET / HTTP/1.10\r\nHost: h\r\n\r\n"sv, bad},
    {"9112§2.3 a version without a minor is 400", "GET / HTTP/1\r\nHost: h\r\n\r\n"sv, bad},
    {"9112§2.3 a version without a dot is 400", "GET / HTTP/11\r\nHost: h\r\n\r\n"sv, bad},
    {"9112§2.3 letters for digits are 400", "GET / HTTP/a.b\r\nHost: h\r\n\r\n"sv, bad},
    {"9112§2.3 HTTP-name is case-sensitive: http/1.1 is 400", "GET / http/1.1\r\nHost: h\r\n\r\n"sv, bad},
    {"9112§2.3 a wrong protocol name is 400 before its line ends", "GET / HTTX"sv, bad},
    {"9112§2.3 the HTTP/2 preface is 505", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"sv, r505},
    // Line ends (bare LF is rejected: the strict choice RFC 9112 §2.2 allows)
    {"9112§2.2 bare LF after the request line is 400", "GET / HTTP/1.1\nHost: h\r\n\r\n"sv, bad},
    {"9112§2.2 bare LF everywhere is 400", "GET / HTTP/1.1\nHost: h\n\n"sv, bad},
    {"9112§2.2 bare CR after the request line is 400", "GET / HTTP/1.1\rHost: h\r\n\r\n"sv, bad},
    {"9112§2.2 CR CR LF after the request line is 400", "GET / HTTP/1.1\r\r\nHost: h\r\n\r\n"sv, bad},
    {"9112§2.2 one empty line before the request line is skipped", "\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n"sv, ok, "path=/ end=29"},
    {"9112§2.2 several empty lines before the request line are skipped", "\r\n\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n"sv, ok, "end=33"},
    {"9112§2.2 a bare LF before the request line is 400", "\nGET / HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad},
    {"9112§2.2 a bare CR before the request line is 400", "\rGET / HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad},
    {"9112§2.2 empty lines alone are incomplete", "\r\n\r\n\r\n"sv, more, "msgs=0"},
    {"9112§2.2 whitespace is not an empty line", " \r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad},
    // request-target forms (§3.2)
    {"9112§3.2.1 origin-form splits path and query", "GET /a/b?x=1&y HTTP/1.1\r\nHost: h\r\n\r\n"sv, ok, "target=/a/b?x=1&y path=/a/b query=x=1&y"},
    {"9112§3.2.1 an empty query after '?'", "GET /a? HTTP/1.1\r\nHost: h\r\n\r\n"sv, ok, "path=/a query="},
    {"9112§3.2.1 a second '?' belongs to the query", "GET /a?b?c HTTP/1.1\r\nHost: h\r\n\r\n"sv, ok, "path=/a query=b?c"},
    {"9112§3.2.1 '//' starts an origin-form path", "GET //x HTTP/1.1\r\nHost: h\r\n\r\n"sv, ok, "path=//x"},
    {"9112§3.2 every allowed target byte", "GET /!$&'()*+,-./:;<=>?@[\\]^_`{|}~\"%41 HTTP/1.1\r\nHost: h\r\n\r\n"sv, ok, "path=/!$&'()*+,-./:;<=> query=@[\\]^_`{|}~\"%41"},
    {"9110§7.1 '#' in a target is 400 (fragments are never sent)", "GET /a#b HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad},
    {"9112§3.2 NUL in a target is 400", "GET /a\0b HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad},
    {"9112§3.2 DEL in a target is 400", "GET /a\x7f HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad},
    {"RFC3986§2.1 a raw byte 0x80 in a target is 400", "GET /\x80 HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad},
    {"RFC3986§2.1 a raw byte 0xff in a target is 400", "GET /\xff HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad},
    {"9112§3.2 HTAB in a target is 400", "GET /a\tb HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad},
    {"9112§3.2 a bare CR in a target is 400", "GET /a\rb HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad},
    {"9112§3.2 a bad byte after 16 good ones is 400 (vector scan)", "GET /0123456789abcdef0123\x01 HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad},
    {"9112§3.2 a bad byte at offset 31 of a long target is 400", "GET /0123456789abcdef0123456789abcd\x80 HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad},
    {"9112§3.2 a 40-byte target passes the vector scan", "GET /0123456789abcdef0123456789abcdef012 HTTP/1.1\r\nHost: h\r\n\r\n"sv, ok, "path=/0123456789abcdef0123456789abcdef012"},
    {"9112§3.2 a relative target is 400", "GET a/b HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad},
    {"9112§3.2.2 absolute-form: its authority is the host, not the Host field", "GET http://example.com/p?q HTTP/1.1\r\nHost: other\r\n\r\n"sv, ok, "host=example.com path=/p query=q target=http://example.com/p?q"},
    {"9112§3.2.2 absolute-form without a path has path /", "GET http://example.com HTTP/1.1\r\nHost: h\r\n\r\n"sv, ok, "host=example.com path=/ query="},
    {"9112§3.2.2 absolute-form with a port and a query but no path", "GET http://ex:8080?a=1 HTTP/1.1\r\nHost: h\r\n\r\n"sv, ok, "host=ex:8080 path=/ query=a=1"},
    {"9112§3.2.2 absolute-form with https", "GET https://ex/x HTTP/1.1\r\nHost: h\r\n\r\n"sv, ok, "host=ex path=/x"},
    {"RFC3986§3.1 absolute-form scheme is case-insensitive", "GET HtTp://EX/ HTTP/1.1\r\nHost: h\r\n\r\n"sv, ok, "host=EX path=/"},
    {"9112§3.2.2 absolute-form with an IPv6 literal", "GET http://[::1]:80/ HTTP/1.1\r\nHost: h\r\n\r\n"sv, ok, "host=[::1]:80 path=/"},
    {"9112§3.2.2 HTTP/1.0 absolute-form needs no Host", "GET http://ex/y HTTP/1.0\r\n\r\n"sv, ok, "host=ex path=/y"},
    {"9112§3.2 HTTP/1.1 absolute-form still needs a Host field", "GET http://ex/ HTTP/1.1\r\n\r\n"sv, bad},
    {"9112§3.2 absolute-form does not excuse a second Host field", "GET http://ex/ HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n"sv, bad},
    {"9110§4.2.1 absolute-form with an empty authority is 400", "GET http:///p HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad},
    {"9110§4.2.4 absolute-form with userinfo is 400", "GET http://u@ex/ HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad},
    {"9112§3.2.2 a scheme other than http(s) is 400", "GET ftp://ex/ HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad},
    {"9112§3.2.2 'http:' without '//' is 400", "GET http:ex/ HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad},
    {"9112§3.2.4 asterisk-form for OPTIONS", "OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n"sv, ok, "method=OPTIONS target=* path=* query="},
    {"9112§3.2.4 asterisk-form for GET is 400", "GET * HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad},
    {"9112§3.2.4 '*x' is not asterisk-form", "OPTIONS *x HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad},
    {"9112§3.2.3 authority-form for CONNECT, which closes after its answer", "CONNECT ex:443 HTTP/1.1\r\nHost: ex:443\r\n\r\n"sv, ok, "method=CONNECT target=ex:443 path= host=ex:443 keep=0 framing=none"},
    {"9112§3.2 a HEAD whose target is no target is 400 (found by fuzzing: its answer has no body)", "HEAD GET htt\xff://;y/ HTTP/0.1\r\n\r\n"sv, bad},
    {"9112§3.2.3 CONNECT to an origin-form path is 400", "CONNECT /connect HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad},
    {"9110§9.3.6 CONNECT with a body length is 400", "CONNECT ex:443 HTTP/1.1\r\nHost: ex:443\r\nContent-Length: 5\r\n\r\nhello"sv, bad},
    {"9110§9.3.6 CONNECT with chunked is 400", "CONNECT ex:443 HTTP/1.1\r\nHost: ex:443\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"sv, bad},
    {"9110§9.3.6 CONNECT with Content-Length: 0 has no body", "CONNECT ex:443 HTTP/1.1\r\nHost: ex:443\r\nContent-Length: 0\r\n\r\n"sv, ok, "keep=0 framing=none"},
    {"9110§9.3.6 CONNECT asking keep-alive still closes", "CONNECT ex:443 HTTP/1.1\r\nHost: ex:443\r\nConnection: keep-alive\r\n\r\n"sv, ok, "keep=0"},
    {"9112§3.2.3 authority-form for GET is 400", "GET ex:443 HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad},
    {"9112§3.2.3 CONNECT to a target with '/' is 400", "CONNECT ex/a HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad},
    {"9110§9.3.6 CONNECT without a port is 400", "CONNECT ex HTTP/1.1\r\nHost: ex\r\n\r\n"sv, bad},
    {"9110§9.3.6 CONNECT to an IPv6 literal and port", "CONNECT [::1]:443 HTTP/1.1\r\nHost: h\r\n\r\n"sv, ok, "target=[::1]:443 path="},
    {"3986§3.2.3 absolute-form with a port that is not digits is 400", "GET http://ex:8x/ HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad},
    {"9110§4.2.1 absolute-form with an empty host is 400", "GET http://:80/ HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad},
    // Incomplete request lines: every prefix of a valid line waits for more
    {"9112§3 a method alone is incomplete", "GET"sv, more, "msgs=0 head=0"},
    {"9112§3 a method and target are incomplete", "GET /index.html"sv, more},
    {"9112§2.3 a partial version is incomplete", "GET / HTTP/1."sv, more},
    {"9112§2.2 a request line without its LF is incomplete", "GET / HTTP/1.1\r"sv, more},
    {"9112§2.2 a head without its empty line is incomplete", "GET / HTTP/1.1\r\nHost: h\r\n"sv, more},
    {"9112§2.2 a head whose last line lacks its LF is incomplete", "GET / HTTP/1.1\r\nHost: h\r\n\r"sv, more},
    // The request-line limit: 414 (RFC 9112 §3; 9110 §15.5.15). Leading empty lines count.
    {"9110§15.5.15 a request line at the limit is accepted", "GET /aaaaaaaaaaaaaaaaaa HTTP/1.1\r\nHost: h\r\n\r\n"sv, ok, "path=/aaaaaaaaaaaaaaaaaa", tight},
    {"9110§15.5.15 a request line one byte over the limit is 414", "GET /aaaaaaaaaaaaaaaaaaa HTTP/1.1\r\nHost: h\r\n\r\n"sv, r414, "", tight},
    {"9110§15.5.15 a line at the limit waiting for its LF is incomplete", "GET /aaaaaaaaaaaaaaaaaa HTTP/1.1\r"sv, more, "", tight},
    {"9110§15.5.15 a line at the limit without its CRLF is incomplete", "GET /aaaaaaaaaaaaaaaaaa HTTP/1.1"sv, more, "", tight},
    {"9110§15.5.15 a line over the limit is 414 before it ends", "GET /aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"sv, r414, "", tight},
    {"9110§15.5.15 a bad byte past the limit is still 414", "GET /aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa#b HTTP/1.1\r\nHost: h\r\n\r\n"sv, r414, "", tight},
    {"9110§15.5.15 a bad byte inside the limit is 400", "GET /a#aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa HTTP/1.1\r\nHost: h\r\n\r\n"sv, bad, "", tight},
    {"9112§2.2 leading empty lines count toward the limit: at it", "\r\nGET /aaaaaaaaaaaaaaaa HTTP/1.1\r\nHost: h\r\n\r\n"sv, ok, "end=45", tight},
    {"9112§2.2 leading empty lines count toward the limit: one over", "\r\nGET /aaaaaaaaaaaaaaaaa HTTP/1.1\r\nHost: h\r\n\r\n"sv, r414, "", tight},
    {"9112§2.2 endless empty lines are 400: no request line, so no URI too long", "\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n\r\n"sv, bad, "", tight},
    {"9112§3 a method that fills the limit is 501: longer than any implemented", "GETGETGETGETGETGETGETGETGETGETGETGET / HTTP/1.1\r\n\r\n"sv, r501, "", tight},
    {"9112§3 a method that fills the limit after an empty line is 501", "\r\nGETGETGETGETGETGETGETGETGETGETGET"sv, r501, "", tight},
    {"9110§15.5.15 a method, then a target over the limit, is 414", "GETGETGETGETGETGET /aaaaaaaaaaaaaaaaaaaa"sv, r414, "", tight},
    {"9112§2.3 a wrong version at the limit is still 505", "GET /aaaaaaaaaaaaaaaaaa HTTP/2.0\r\nHost: h\r\n\r\n"sv, r505, "", tight},
};

} // namespace

TEST_CASE("request line: table, fed whole, at every split and byte by byte, against a guard page") {
    for (const parse_case& c : request_line_cases) {
        CAPTURE(c.name);
        CHECK(skiff_test::check_case(c) == "");
    }
}

TEST_CASE("request line: the default limit is 8 KiB, and one byte more is 414 (RFC 9110 §15.5.15)") {
    skiff::parse_limits defaults;
    const std::string tail = " HTTP/1.1\r\nHost: h\r\n\r\n";
    std::string at = "GET /" + std::string(defaults.max_request_line - 14, 'a') + tail;
    std::string over = "GET /" + std::string(defaults.max_request_line - 13, 'a') + tail;
    CHECK(at.find('\r') == defaults.max_request_line);
    CHECK(skiff_test::check_case({"at the default limit", at, ok, "msgs=1"}) == "");
    CHECK(skiff_test::check_case({"one over the default limit", over, r414}) == "");
}
