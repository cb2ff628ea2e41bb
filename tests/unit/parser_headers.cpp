// The header section (RFC 9112 §5, RFC 9110 §5): field syntax, hostile bytes, Host,
// Connection, Expect and the section limits. Each row runs whole, at every split point and
// byte by byte, against a guard page (check_case in support/split_feed.hpp).
#include "support/split_feed.hpp"

#include <doctest/doctest.h>

#include <string>  // std::string for the generated limit header_cases

using namespace std::literals;
using skiff_test::parse_case;
using skiff_test::tight;
using namespace skiff_test::statuses;

namespace {

constexpr parse_case header_cases[] = {
    // field-line = field-name ":" OWS field-value OWS
    {"9112§5.1 OWS around a value is trimmed, inner whitespace kept", "GET / HTTP/1.1\r\nHost: h\r\nX:  \t a \t b \t \r\n\r\n"sv, ok, "h:x='a \t b' fields=2"},
    {"9112§5.1 no space after the colon", "GET / HTTP/1.1\r\nHost:h\r\nX:a\r\n\r\n"sv, ok, "host=h h:x=a"},
    {"9112§5.1 an empty value", "GET / HTTP/1.1\r\nHost: h\r\nX:\r\n\r\n"sv, ok, "h:x= fields=2"},
    {"9112§5.1 a value of whitespace only is empty", "GET / HTTP/1.1\r\nHost: h\r\nX: \t \r\n\r\n"sv, ok, "h:x="},
    {"9110§5.1 field names are case-insensitive", "GET / HTTP/1.1\r\nhOsT: h\r\nCONTENT-length: 0\r\n\r\n"sv, ok, "host=h framing=length"},
    {"9110§5.3 repeated names are kept in order", "GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nA: 2\r\nB: 3\r\n\r\n"sv, ok, "fields=4 h:a=1 h:b=3"},
    {"9110§5.6.2 a field name may use every tchar", "GET / HTTP/1.1\r\nHost: h\r\n!#$%&'*+-.^_`|~09azAZ: v\r\n\r\n"sv, ok, "h:!#$%&'*+-.^_`|~09azAZ=v"},
    {"9110§5.5 obs-text in a value is kept", "GET / HTTP/1.1\r\nHost: h\r\nX: caf\xc3\xa9 \xff\r\n\r\n"sv, ok, "h:x='caf\xc3\xa9 \xff'"},
    {"9110§5.5 every VCHAR in a value", "GET / HTTP/1.1\r\nHost: h\r\nX: !\"#$%&'()*+,-./09:;<=>?@AZ[\\]^_`az{|}~\r\n\r\n"sv, ok, "h:x=!\"#$%&'()*+,-./09:;<=>?@AZ[\\]^_`az{|}~"},
    {"9110§5.5 a long value passes the vector scan with tabs inside", "GET / HTTP/1.1\r\nHost: h\r\nX: 0123456789\tabcdef0123456789\tabcdef\r\n\r\n"sv, ok, "h:x=0123456789\tabcdef0123456789\tabcdef"},
    {"9112§5 a head with no fields (HTTP/1.0)", "GET / HTTP/1.0\r\n\r\n"sv, ok, "fields=0"},
    // Hostile bytes in field lines: each is a known smuggling or desync tool
    {"9112§5.1 whitespace between name and colon is 400", "GET / HTTP/1.1\r\nHost : h\r\n\r\n"sv, bad},
    {"9112§5.1 HTAB between name and colon is 400", "GET / HTTP/1.1\r\nHost: h\r\nContent-Length\t: 5\r\n\r\nhello"sv, bad},
    {"9112§5.2 obs-fold is 400", "GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n b\r\n\r\n"sv, bad},
    {"9112§5.2 obs-fold with HTAB is 400", "GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n\tb\r\n\r\n"sv, bad},
    {"9112§5.2 a folded Transfer-Encoding is 400", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n"sv, bad},
    {"9112§2.2 whitespace before the first field line is 400", "GET / HTTP/1.1\r\n Host: h\r\n\r\n"sv, bad},
    {"9112§5.1 an empty field name is 400", "GET / HTTP/1.1\r\nHost: h\r\n: v\r\n\r\n"sv, bad},
    {"9112§5.1 a line without a colon is 400, not the end of the head", "GET / HTTP/1.1\r\nHost: h\r\nNoColon\r\n\r\n"sv, bad},
    {"9112§5.1 a line of a name and a space is 400", "GET / HTTP/1.1\r\nHost: h\r\nX y\r\n\r\n"sv, bad},
    {"9110§5.6.2 '(' in a field name is 400", "GET / HTTP/1.1\r\nHost: h\r\nX(: v\r\n\r\n"sv, bad},
    {"9110§5.6.2 '/' in a field name is 400", "GET / HTTP/1.1\r\nHost: h\r\nX/Y: v\r\n\r\n"sv, bad},
    {"9110§5.6.2 '\"' in a field name is 400", "GET / HTTP/1.1\r\nHost: h\r\n\"X\": v\r\n\r\n"sv, bad},
    {"9110§5.6.2 '@' in a field name is 400", "GET / HTTP/1.1\r\nHost: h\r\nX@: v\r\n\r\n"sv, bad},
    {"9110§5.6.2 NUL in a field name is 400", "GET / HTTP/1.1\r\nHost: h\r\nX\0Y: v\r\n\r\n"sv, bad},
    {"9110§5.6.2 DEL in a field name is 400", "GET / HTTP/1.1\r\nHost: h\r\nX\x7fY: v\r\n\r\n"sv, bad},
    {"9110§5.6.2 a byte above 0x7f in a field name is 400", "GET / HTTP/1.1\r\nHost: h\r\nX\xc3\xa9: v\r\n\r\n"sv, bad},
    {"9110§5.5 NUL in a value is 400", "GET / HTTP/1.1\r\nHost: h\r\nX: a\0b\r\n\r\n"sv, bad},
    {"9110§5.5 NUL after 16 value bytes is 400 (vector scan)", "GET / HTTP/1.1\r\nHost: h\r\nX: 0123456789abcdef01\0\r\n\r\n"sv, bad},
    {"9110§5.5 SOH in a value is 400", "GET / HTTP/1.1\r\nHost: h\r\nX: a\x01\r\n\r\n"sv, bad},
    {"9110§5.5 VT in a value is 400", "GET / HTTP/1.1\r\nHost: h\r\nX: a\vb\r\n\r\n"sv, bad},
    {"9110§5.5 FF in a value is 400", "GET / HTTP/1.1\r\nHost: h\r\nX: a\fb\r\n\r\n"sv, bad},
    {"9110§5.5 ESC in a value is 400", "GET / HTTP/1.1\r\nHost: h\r\nX: \x1b[0m\r\n\r\n"sv, bad},
    {"9110§5.5 US (0x1f) in a value is 400", "GET / HTTP/1.1\r\nHost: h\r\nX: a\x1f\r\n\r\n"sv, bad},
    {"9110§5.5 DEL in a value is 400", "GET / HTTP/1.1\r\nHost: h\r\nX: a\x7f\r\n\r\n"sv, bad},
    {"9110§5.5 a CTL right after a tab in one 16-byte block is 400", "GET / HTTP/1.1\r\nHost: h\r\nX: 0123\t\x02" "456789abcdef\r\n\r\n"sv, bad},
    {"9112§2.2 a bare CR inside a value is 400", "GET / HTTP/1.1\r\nHost: h\r\nX: a\rb\r\n\r\n"sv, bad},
    {"9112§2.2 a bare LF ending a field line is 400", "GET / HTTP/1.1\r\nHost: h\nX: a\r\n\r\n"sv, bad},
    {"9112§2.2 a bare LF inside a value is 400", "GET / HTTP/1.1\r\nHost: h\r\nX: a\nb\r\n\r\n"sv, bad},
    {"9112§2.2 a bare LF ending the head is 400", "GET / HTTP/1.1\r\nHost: h\r\n\n"sv, bad},
    {"9112§2.2 a bare CR ending the head is 400", "GET / HTTP/1.1\r\nHost: h\r\n\rX"sv, bad},
    {"9112§2.2 CR CR LF ending a field line is 400", "GET / HTTP/1.1\r\nHost: h\r\r\n\r\n"sv, bad},
    // Host (RFC 9112 §3.2)
    {"9112§3.2 HTTP/1.1 without Host is 400", "GET / HTTP/1.1\r\nX: y\r\n\r\n"sv, bad},
    {"9112§3.2 two Host fields are 400", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"sv, bad},
    {"9112§3.2 two identical Host fields are 400", "GET / HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n"sv, bad},
    {"9112§3.2 HTTP/1.0 with two Host fields is 400", "GET / HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n"sv, bad},
    {"9110§7.2 an empty Host is allowed", "GET / HTTP/1.1\r\nHost:\r\n\r\n"sv, ok, "host="},
    {"9110§7.2 Host with a port", "GET / HTTP/1.1\r\nHost: example.com:8080\r\n\r\n"sv, ok, "host=example.com:8080"},
    {"9110§7.2 Host with an IPv6 literal", "GET / HTTP/1.1\r\nHost: [2001:db8::1]:443\r\n\r\n"sv, ok, "host=[2001:db8::1]:443"},
    {"9110§7.2 Host with a space inside is 400", "GET / HTTP/1.1\r\nHost: a b\r\n\r\n"sv, bad},
    {"9110§7.2 Host with userinfo is 400", "GET / HTTP/1.1\r\nHost: user@h\r\n\r\n"sv, bad},
    {"9110§7.2 Host with a path is 400", "GET / HTTP/1.1\r\nHost: h/x\r\n\r\n"sv, bad},
    {"9110§7.2 Host with obs-text is 400", "GET / HTTP/1.1\r\nHost: h\xc3\xa9\r\n\r\n"sv, bad},
    {"9112§3.2 an invalid Host is 400 even with an absolute-form target", "GET http://ex/ HTTP/1.1\r\nHost: a b\r\n\r\n"sv, bad},
    // Host structure: uri-host [ ":" port ] (RFC 9112 §3.2 MUST, RFC 3986 §3.2.2-§3.2.3)
    {"3986§3.2.2 Host as an IPv4 address with a port", "GET / HTTP/1.1\r\nHost: 192.0.2.1:80\r\n\r\n"sv, ok, "host=192.0.2.1:80"},
    {"3986§3.2.2 Host with sub-delims and pct-encoding", "GET / HTTP/1.1\r\nHost: a!b%41\r\n\r\n"sv, ok, "host=a!b%41"},
    {"3986§3.2.3 Host with an empty port", "GET / HTTP/1.1\r\nHost: h:\r\n\r\n"sv, ok, "host=h:"},
    {"3986§3.2.2 Host as an IPv6 literal with an IPv4 tail", "GET / HTTP/1.1\r\nHost: [::ffff:192.0.2.1]\r\n\r\n"sv, ok, "host=[::ffff:192.0.2.1]"},
    {"3986§3.2.2 Host as an IPvFuture literal", "GET / HTTP/1.1\r\nHost: [v1.x:y]\r\n\r\n"sv, ok, "host=[v1.x:y]"},
    {"3986§3.2.2 Host as a full IPv6 literal", "GET / HTTP/1.1\r\nHost: [2001:db8:0:0:0:0:2:1]:8080\r\n\r\n"sv, ok, "host=[2001:db8:0:0:0:0:2:1]:8080"},
    {"9112§3.2 Host with two ports is 400", "GET / HTTP/1.1\r\nHost: h:80:81\r\n\r\n"sv, bad},
    {"9112§3.2 Host with a port that is not digits is 400", "GET / HTTP/1.1\r\nHost: h:8x\r\n\r\n"sv, bad},
    {"9112§3.2 Host with an IPv6 address outside brackets is 400", "GET / HTTP/1.1\r\nHost: 2001:db8::1\r\n\r\n"sv, bad},
    {"9112§3.2 Host with an unclosed bracket is 400", "GET / HTTP/1.1\r\nHost: [2001:db8::1\r\n\r\n"sv, bad},
    {"9112§3.2 Host with a bracket inside a name is 400", "GET / HTTP/1.1\r\nHost: a[b]\r\n\r\n"sv, bad},
    {"9112§3.2 Host with text after the literal is 400", "GET / HTTP/1.1\r\nHost: [::1]x\r\n\r\n"sv, bad},
    {"9112§3.2 Host with a bad IPv6 literal is 400", "GET / HTTP/1.1\r\nHost: [1::2::3]\r\n\r\n"sv, bad},
    {"9112§3.2 Host with too many IPv6 groups is 400", "GET / HTTP/1.1\r\nHost: [1:2:3:4:5:6:7:8:9]\r\n\r\n"sv, bad},
    {"9112§3.2 Host with a bad IPv4 tail is 400", "GET / HTTP/1.1\r\nHost: [::1.2.3.256]\r\n\r\n"sv, bad},
    {"9112§3.2 Host with a bad pct-encoding is 400", "GET / HTTP/1.1\r\nHost: a%4\r\n\r\n"sv, bad},
    {"9112§3.2 Host with a non-hex pct-encoding is 400", "GET / HTTP/1.1\r\nHost: a%zz\r\n\r\n"sv, bad},
    {"9112§3.2 Host of brackets alone is 400", "GET / HTTP/1.1\r\nHost: []\r\n\r\n"sv, bad},
    // Host is recognised by length and a word compare, and validated while its value is scanned
    {"9110§5.1 HOST in capitals is Host", "GET / HTTP/1.1\r\nHOST: h\r\n\r\n"sv, ok, "host=h"},
    {"9112§5.1 OWS around a Host value is trimmed", "GET / HTTP/1.1\r\nHost: \t h \t\r\n\r\n"sv, ok, "host=h"},
    {"9112§3.2 a second Host in other letter case is 400", "GET / HTTP/1.1\r\nHost: a\r\nhOST: a\r\n\r\n"sv, bad},
    {"9110§7.2 Host with a tab inside is 400", "GET / HTTP/1.1\r\nHost: a\tb\r\n\r\n"sv, bad},
    {"9110§7.2 Host with a CTL is 400", "GET / HTTP/1.1\r\nHost: a\x01\r\n\r\n"sv, bad},
    {"9110§7.2 Host with '@' after inner whitespace is 400", "GET / HTTP/1.1\r\nHost: h @\r\n\r\n"sv, bad},
    {"9110§7.2 Host of obs-text after extra OWS is 400", "GET / HTTP/1.1\r\nHost:  \xc3\xa9\r\n\r\n"sv, bad},
    {"9110§7.2 a long Host value passes the Host scan", "GET / HTTP/1.1\r\nHost: www.a-rather-long-host-name.example.com:8443\r\n\r\n"sv, ok, "host=www.a-rather-long-host-name.example.com:8443"},
    {"9110§5.1 a field named Hosts is not Host", "GET / HTTP/1.0\r\nHosts: a b\r\n\r\n"sv, ok, "host= h:hosts='a b'"},
    {"9110§5.1 a four-letter name other than Host is not Host", "GET / HTTP/1.0\r\nHist: a b\r\n\r\n"sv, ok, "host= h:hist='a b'"},
    {"9112§3.2 HTTP/1.0 without Host is fine", "GET /x HTTP/1.0\r\nX: y\r\n\r\n"sv, ok, "host= path=/x"},
    // Connection (RFC 9112 §9.3, RFC 9110 §7.6.1)
    {"9112§9.3 HTTP/1.1 stays open by default", "GET / HTTP/1.1\r\nHost: h\r\n\r\n"sv, ok, "keep=1"},
    {"9112§9.6 HTTP/1.1 with Connection: close closes", "GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"sv, ok, "keep=0"},
    {"9110§7.6.1 connection options are case-insensitive", "GET / HTTP/1.1\r\nHost: h\r\nConnection: CLOSE\r\n\r\n"sv, ok, "keep=0"},
    {"9110§7.6.1 close anywhere in the token list closes", "GET / HTTP/1.1\r\nHost: h\r\nConnection: upgrade, close\r\n\r\n"sv, ok, "keep=0"},
    {"9110§5.6.1 empty list elements and OWS are ignored", "GET / HTTP/1.1\r\nHost: h\r\nConnection: ,, \t close ,\r\n\r\n"sv, ok, "keep=0"},
    {"9110§7.6.1 'closed' is not 'close'", "GET / HTTP/1.1\r\nHost: h\r\nConnection: closed\r\n\r\n"sv, ok, "keep=1"},
    {"9110§7.6.1 'close' inside another token does not count", "GET / HTTP/1.1\r\nHost: h\r\nConnection: x-close\r\n\r\n"sv, ok, "keep=1"},
    {"9110§7.6.1 Connection fields combine as one list", "GET / HTTP/1.1\r\nHost: h\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n"sv, ok, "keep=0"},
    {"9112§9.3 HTTP/1.1 with keep-alive stays open", "GET / HTTP/1.1\r\nHost: h\r\nConnection: keep-alive\r\n\r\n"sv, ok, "keep=1"},
    {"9112§9.3 HTTP/1.0 closes by default", "GET / HTTP/1.0\r\n\r\n"sv, ok, "keep=0"},
    {"9112§9.3 HTTP/1.0 with keep-alive stays open", "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"sv, ok, "keep=1"},
    {"9112§9.3 HTTP/1.0 Keep-Alive is case-insensitive", "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"sv, ok, "keep=1"},
    {"9112§9.3 HTTP/1.0 keep-alive in a token list", "GET / HTTP/1.0\r\nConnection: foo, keep-alive\r\n\r\n"sv, ok, "keep=1"},
    {"9112§9.3 HTTP/1.0 keep-alive and close: close wins", "GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n"sv, ok, "keep=0"},
    {"9112§9.3 HTTP/1.0 with an unrelated Connection option closes", "GET / HTTP/1.0\r\nConnection: upgrade\r\n\r\n"sv, ok, "keep=0"},
    {"9112§9.3 HTTP/1.0 keep-alive in a Keep-Alive field does not count", "GET / HTTP/1.0\r\nKeep-Alive: timeout=5\r\n\r\n"sv, ok, "keep=0"},
    // Expect (RFC 9110 §10.1.1)
    {"9110§10.1.1 Expect: 100-continue is reported with the head, before the body", "POST /u HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"sv, more, "head=1 expect=1 path=/u msgs=0 length=5"},
    {"9110§10.1.1 the expectation is case-insensitive", "POST / HTTP/1.1\r\nHost: h\r\nExpect: 100-Continue\r\nContent-Length: 1\r\n\r\n"sv, more, "head=1 expect=1"},
    {"9110§10.1.1 Expect: 100-continue with its body already sent completes", "POST / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhi"sv, ok, "expect=1 body=hi"},
    {"9110§10.1.1 Expect: 100-continue without a body completes", "GET / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n\r\n"sv, ok, "expect=1 framing=none"},
    {"9110§10.1.1 another expectation is 417", "POST / HTTP/1.1\r\nHost: h\r\nExpect: 200-ok\r\nContent-Length: 1\r\n\r\nx"sv, r417},
    {"9110§10.1.1 100-continue with another expectation is 417", "POST / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue, x\r\n\r\n"sv, r417},
    {"9110§10.1.1 a second Expect field with another expectation is 417", "GET / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nExpect: x\r\n\r\n"sv, r417},
    {"9110§5.6.1 an empty Expect asks for nothing", "GET / HTTP/1.1\r\nHost: h\r\nExpect:\r\n\r\n"sv, ok, "expect=0"},
    {"9110§10.1.1 Expect in HTTP/1.0 is ignored", "POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nx"sv, ok, "expect=0 body=x"},
    {"9110§10.1.1 an unknown expectation in HTTP/1.0 is ignored", "GET / HTTP/1.0\r\nExpect: x\r\n\r\n"sv, ok, "expect=0"},
    // Limits: 431 for the header section (RFC 9110 §15.5.20, RFC 6585 §5), tight = 64 bytes, 4 lines
    {"6585§5 a header section at the limit is accepted", "GET / HTTP/1.1\r\nHost: h\r\nX: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n"sv, ok, "fields=2 end=80", tight},
    {"6585§5 a header section one byte over the limit is 431", "GET / HTTP/1.1\r\nHost: h\r\nX: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n"sv, r431, "", tight},
    {"6585§5 a section at the limit waiting for its last LF is incomplete", "GET / HTTP/1.1\r\nHost: h\r\nX: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r"sv, more, "", tight},
    {"6585§5 a section over the limit is 431 before it ends", "GET / HTTP/1.1\r\nHost: h\r\nX: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"sv, r431, "", tight},
    {"6585§5 a bad byte past the limit is still 431", "GET / HTTP/1.1\r\nHost: h\r\nX: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\0\r\n\r\n"sv, r431, "", tight},
    {"6585§5 a bad byte inside the limit is 400", "GET / HTTP/1.1\r\nHost: h\r\nX: a\0aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n"sv, bad, "", tight},
    {"6585§5 the body does not count toward the header limit", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 16\r\n\r\n0123456789abcdef"sv, ok, "body=0123456789abcdef", tight},
    {"6585§5 as many field lines as the limit are accepted", "GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n"sv, ok, "fields=4", tight},
    {"6585§5 one field line over the limit is 431", "GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n"sv, r431, "", tight},
    {"6585§5 the line over the count limit is 431 even when malformed", "GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\nC: 3\r\n D\r\n\r\n"sv, r431, "", tight},
    {"6585§5 a line starting with LF past the count limit is 400, not 431", "GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\nC: 3\r\n\n"sv, bad, "", tight},
    {"6585§5 the count limit is 431 as soon as the extra line starts", "GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\nC: 3\r\nD"sv, r431, "", tight},
};

} // namespace

TEST_CASE("header section: table, fed whole, at every split and byte by byte, against a guard page") {
    for (const parse_case& c : header_cases) {
        CAPTURE(c.name);
        CHECK(skiff_test::check_case(c) == "");
    }
}

TEST_CASE("header section: the default limits are 8 KiB and 64 lines, one more is 431 (RFC 6585 §5)") {
    skiff::parse_limits defaults;
    const std::string line = "GET / HTTP/1.1\r\nHost: h\r\nX: ";  // 16 bytes of request line, then the section
    std::string at = line + std::string(defaults.max_header_bytes - 16, 'v') + "\r\n\r\n";
    std::string over = line + std::string(defaults.max_header_bytes - 15, 'v') + "\r\n\r\n";
    CHECK(at.size() - 16 == defaults.max_header_bytes);
    CHECK(skiff_test::check_case({"section at the default limit", at, ok, "fields=2"}) == "");
    CHECK(skiff_test::check_case({"section one over the default limit", over, r431}) == "");

    std::string fields = "GET / HTTP/1.1\r\nHost: h\r\n";
    for (std::size_t i = 1; i < defaults.max_headers; ++i) fields += "F" + std::to_string(i) + ": v\r\n";
    CHECK(defaults.max_headers == 100);  // proxies and tracing add fields; hyper allows 100 too
    CHECK(skiff_test::check_case({"100 field lines", fields + "\r\n", ok, "fields=100"}) == "");
    CHECK(skiff_test::check_case({"101 field lines", fields + "F: v\r\n\r\n", r431}) == "");
}
