// skiff::json_escape / json_quote: what a handler building JSON by hand gets back, byte for
// byte: quote, backslash and control characters escaped, valid UTF-8 kept, stray bytes
// replaced so the result is always valid JSON.
// Only the part under test (a unit test compiles in about a second); the single-header
// configuration has no parts on its include path, so there it takes the whole file.
#ifdef SKIFF_TEST_SINGLE_HEADER
#include <skiff/skiff.hpp>
#else
#include <skiff/http/json_escape.hpp>
#endif

#include <doctest/doctest.h>

#include <array>
#include <string>
#include <string_view>

namespace {

using namespace std::string_view_literals;

struct escape_case {
    std::string_view name;
    std::string_view in;
    std::string_view out;
};

constexpr std::array<escape_case, 27> escape_cases{{
    // name                          in                          escaped
    {"empty",                        "",                         ""},
    {"plain ASCII",                  "Hello, World!",            "Hello, World!"},
    {"quote",                        "say \"hi\"",               "say \\\"hi\\\""},
    {"backslash",                    "C:\\dir",                  "C:\\\\dir"},
    {"slash is kept",                "a/b",                      "a/b"},
    {"newline",                      "a\nb",                     "a\\nb"},
    {"carriage return and tab",      "\r\t",                     "\\r\\t"},
    {"backspace and form feed",      "\b\f",                     "\\b\\f"},
    {"NUL",                          "a\0b"sv,                   "a\\u0000b"},
    {"other control",                "\x01\x1f",                 "\\u0001\\u001f"},
    {"escape char",                  "\x1b[0m",                  "\\u001b[0m"},
    {"DEL is kept",                  "\x7f",                     "\x7f"},
    {"two-byte UTF-8",               "caf\xC3\xA9",              "caf\xC3\xA9"},
    {"three-byte UTF-8",             "\xE2\x82\xAC",             "\xE2\x82\xAC"},
    {"four-byte UTF-8",              "\xF0\x9F\x98\x80",         "\xF0\x9F\x98\x80"},
    {"U+2028 kept",                  "\xE2\x80\xA8",             "\xE2\x80\xA8"},
    {"highest code point",           "\xF4\x8F\xBF\xBF",         "\xF4\x8F\xBF\xBF"},
    {"lone continuation byte",       "a\x80z",                   "a\\ufffdz"},
    {"truncated two-byte",           "a\xC3",                    "a\\ufffd"},
    {"truncated three-byte",         "\xE2\x82z",                "\\ufffd\\ufffdz"},
    {"overlong two-byte",            "\xC0\xAF",                 "\\ufffd\\ufffd"},
    {"overlong three-byte",          "\xE0\x80\xAF",             "\\ufffd\\ufffd\\ufffd"},
    {"surrogate",                    "\xED\xA0\x80",             "\\ufffd\\ufffd\\ufffd"},
    {"above U+10FFFF",               "\xF4\x90\x80\x80",         "\\ufffd\\ufffd\\ufffd\\ufffd"},
    {"FF byte",                      "\xFF",                     "\\ufffd"},
    {"mixed",                        "\"\xC3\xA9\n\x80\"",       "\\\"\xC3\xA9\\n\\ufffd\\\""},
    {"quote at the very end",        "x\"",                      "x\\\""},
}};

} // namespace

TEST_CASE("json_escape: each input escaped as the inside of a JSON string") {
    for (const escape_case& c : escape_cases) {
        CAPTURE(c.name);
        CHECK(skiff::json_escape(c.in) == c.out);
        CHECK(skiff::json_quote(c.in) == "\"" + std::string(c.out) + "\"");
    }
}

TEST_CASE("append_json_escaped appends after what is already there") {
    std::string out = "{\"name\":\"";
    skiff::append_json_escaped(out, "a\"b");
    out += "\"}";
    CHECK(out == "{\"name\":\"a\\\"b\"}");
}

TEST_CASE("json_escape: every byte value gives valid JSON string content") {
    // No output byte below 0x20, and every '"' is escaped: a JSON parser would accept it.
    for (int b = 0; b < 256; ++b) {
        CAPTURE(b);
        std::string in(1, static_cast<char>(b));
        std::string out = skiff::json_escape(in);
        for (char ch : out) CHECK(static_cast<unsigned char>(ch) >= 0x20);
        if (b == '"' || b == '\\') CHECK(out.size() == 2);
        else if (b < 0x20 || b >= 0x80) CHECK(out.front() == '\\');
        else CHECK(out == in);
    }
}
