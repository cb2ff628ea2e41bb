// The character tables of detail/ascii.hpp and the scanners of detail/scan.hpp, checked for
// every byte 0..255 against the grammar, restated here another way (by what each class
// excludes from VCHAR) so that a slip in one formulation shows up against the other.
#include "support/guard_page.hpp"

// Only the part under test (a unit test compiles in about a second); the single-header
// configuration has no parts on its include path, so there it takes the whole file.
#ifdef SKIFF_TEST_SINGLE_HEADER
#include <skiff/skiff.hpp>
#else
#include <skiff/detail/ascii.hpp>
#include <skiff/detail/scan.hpp>
#include <skiff/http/crlf.hpp>
#endif

#include <doctest/doctest.h>

#include <cctype>       // std::isalpha, std::isdigit, std::isxdigit, std::tolower (C locale)
#include <string>       // std::string buffers for the scanners
#include <string_view>  // std::string_view

namespace d = skiff::detail;

namespace {

bool vchar(unsigned c) { return c >= 0x21 && c <= 0x7e; }  // RFC 5234 B.1
bool in(std::string_view set, unsigned c) { return set.find(static_cast<char>(c)) != std::string_view::npos; }

// RFC 9110 §5.6.2: tokens are VCHARs other than the delimiters DQUOTE and "(),/:;<=>?@[\]{}".
bool grammar_tchar(unsigned c) { return vchar(c) && !in("\"(),/:;<=>?@[\\]{}", c); }
// RFC 9110 §5.5: field-vchar = VCHAR / obs-text; SP and HTAB may appear inside a value.
bool grammar_field(unsigned c) { return vchar(c) || c >= 0x80 || c == ' ' || c == '\t'; }
// The request-target bytes skiff accepts: VCHAR without '#' (RFC 9110 §7.1, RFC 3986 §2.1).
bool grammar_target(unsigned c) { return vchar(c) && c != '#'; }
bool grammar_path(unsigned c) { return grammar_target(c) && c != '?'; }  // RFC 3986 §3.3: the path ends at "?"
// RFC 3986 §3.2.2 reg-name without pct-encoded: unreserved / sub-delims, that is, VCHAR
// without the gen-delims ":/?#[]@", '%', and DQUOTE "<>\^`{|}".
bool grammar_reg_name(unsigned c) { return vchar(c) && !in("\":/?#[]@%<>\\^`{|}", c); }

char byte(unsigned c) { return static_cast<char>(static_cast<unsigned char>(c)); }

} // namespace

TEST_CASE("ascii: every byte's classes match RFC 9110 §5.5 and §5.6.2 and RFC 3986 §3.2") {
    for (unsigned c = 0; c < 256; ++c) {
        CAPTURE(c);
        CHECK(d::is_tchar(byte(c)) == grammar_tchar(c));
        CHECK(d::is_field_char(byte(c)) == grammar_field(c));
        CHECK(d::is_target_char(byte(c)) == grammar_target(c));
        CHECK(d::is_reg_name_char(byte(c)) == grammar_reg_name(c));
        CHECK(d::is_digit(c) == (std::isdigit(static_cast<int>(c)) != 0));
        CHECK(d::is_alpha(c) == (std::isalpha(static_cast<int>(c)) != 0));
    }
}

TEST_CASE("ascii: the classes have the sizes the grammar gives them") {
    int tchar = 0, field = 0, target = 0, reg_name = 0;
    for (unsigned c = 0; c < 256; ++c) {
        tchar += d::is_tchar(byte(c));
        field += d::is_field_char(byte(c));
        target += d::is_target_char(byte(c));
        reg_name += d::is_reg_name_char(byte(c));
    }
    CHECK(tchar == 15 + 10 + 52);       // 15 symbols, DIGIT, ALPHA
    CHECK(field == 94 + 128 + 2);       // VCHAR, obs-text, SP and HTAB
    CHECK(target == 93);                // VCHAR but '#'
    CHECK(reg_name == 4 + 11 + 10 + 52);  // "-._~", sub-delims, DIGIT, ALPHA
}

TEST_CASE("ascii: to_lower folds A-Z only, hex_value reads HEXDIG only (RFC 5234 B.1)") {
    for (unsigned c = 0; c < 256; ++c) {
        CAPTURE(c);
        char want = c < 128 ? static_cast<char>(std::tolower(static_cast<int>(c))) : byte(c);
        CHECK(d::to_lower(byte(c)) == want);
        int hex = std::isxdigit(static_cast<int>(c)) ? static_cast<int>(std::stoi(std::string(1, byte(c)), nullptr, 16)) : -1;
        CHECK(d::hex_value(byte(c)) == hex);
    }
}

TEST_CASE("ascii: case-insensitive comparison is ASCII-only (RFC 9110 §5.1)") {
    CHECK(d::iequals("Content-Length", "content-LENGTH"));
    CHECK(d::iequals_lower("TRANSFER-encoding", "transfer-encoding"));
    CHECK_FALSE(d::iequals("chunked", "chunkeD "));
    CHECK_FALSE(d::iequals("\xc3\x89", "\xc3\xa9"));  // no Unicode folding
    CHECK_FALSE(d::iequals_lower("Host", "hosts"));
    CHECK(d::iequals("", ""));
}

// Each scanner stops at the first byte outside its class. Every byte value is tried at every
// position of a 40-byte run (so both the 16-byte vector steps and the byte-by-byte tail meet
// it), with the run ending at a guard page.
TEST_CASE("scan: the scanners stop exactly where their class ends, never reading past the end") {
    struct scanner {
        const char* name;
        const char* (*scan)(const char*, const char*);
        bool (*grammar)(unsigned);
        char filler;
    };
    const scanner scanners[] = {
        {"tchars", d::scan_tchars, grammar_tchar, 'a'},
        {"field chars", d::scan_field_chars, grammar_field, 'a'},
        {"field chars with tabs", d::scan_field_chars, grammar_field, '\t'},
        {"target chars", d::scan_target_chars, grammar_target, '/'},
        {"target chars after '?'", d::scan_target_chars, grammar_target, '?'},
        {"path chars (a target up to '?')", d::scan_path_chars, grammar_path, '/'},
        {"reg-name chars", d::scan_reg_name_chars, grammar_reg_name, 'a'},
        {"reg-name chars after '!'", d::scan_reg_name_chars, grammar_reg_name, '!'},
    };
    skiff_test::guarded_region region(64);
    for (const scanner& s : scanners) {
        CAPTURE(s.name);
        for (std::size_t len = 0; len <= 40; ++len) {
            std::string run(len, s.filler);
            const char* p = region.place_at_end(run.data(), len);
            CHECK(s.scan(p, p + len) == p + len);
            for (std::size_t at = 0; at < len; ++at) {
                for (unsigned c = 0; c < 256; ++c) {
                    run[at] = byte(c);
                    p = region.place_at_end(run.data(), len);
                    const char* stop = s.scan(p, p + len);
                    if (stop != p + (s.grammar(c) ? len : at)) FAIL_CHECK("len " << len << " at " << at << " byte " << c);
                }
                run[at] = s.filler;
            }
        }
    }
}

TEST_CASE("scan: CRLF checks, OWS trimming and limit windows") {
    const char crlf[] = "\r\nX";
    const char* p = crlf;
    CHECK(d::expect_crlf(p, crlf + 3) == skiff::parse_status::complete);
    CHECK(p == crlf + 2);
    p = crlf;
    CHECK(d::expect_crlf(p, crlf + 1) == skiff::parse_status::incomplete);  // RFC 9112 §2.2: wait for LF
    CHECK(p == crlf);
    const char lf[] = "\nX";
    p = lf;
    CHECK(d::expect_crlf(p, lf + 2) == skiff::parse_status::bad_request);  // bare LF: strict
    const char cr[] = "\rX";
    p = cr;
    CHECK(d::expect_crlf(p, cr + 2) == skiff::parse_status::bad_request);  // bare CR
    CHECK(d::trim_ows(" \t a b\t ") == "a b");  // RFC 9110 §5.6.3 OWS
    CHECK(d::trim_ows(" \t ").empty());
    CHECK(d::trim_ows("\va\v") == "\va\v");  // only SP and HTAB are whitespace
    const char ten[] = "0123456789";
    CHECK(d::cap(ten, ten + 10, 4) == ten + 4);
    CHECK(d::cap(ten, ten + 10, 10) == ten + 10);
    CHECK(d::cap(ten, ten + 10, 11) == ten + 10);
    CHECK(d::saturating_add(static_cast<std::size_t>(-2), 2) == static_cast<std::size_t>(-1));
    CHECK(d::saturating_add(3, 2) == 5);
}
