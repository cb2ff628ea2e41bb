// Incremental UTF-8 validation (websocket/utf8.hpp), the Autobahn testsuite's case group 6 at
// the validator: the boundary cases of Markus Kuhn's stress test (first and last code points of
// each length, U+D7FF/U+E000/U+FFFD/U+10FFFF, noncharacters allowed; overlong forms,
// surrogates, past U+10FFFF, lone and missing continuation bytes, bytes FE/FF refused), that a
// failure is seen at the first byte that makes the text invalid, and every 1-, 2- and 3-byte
// string against a reference written from RFC 3629 another way (decode, then check the range).
#include <skiff/websocket/utf8.hpp>

#include <doctest/doctest.h>

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint32_t
#include <string>       // std::string
#include <string_view>  // std::string_view

namespace {

bool valid(std::string_view s) {
    skiff::detail::utf8_validator v;
    return v.feed(s.data(), s.size()) && v.complete();
}

// Valid when fed one byte at a time, too (the state carries across every split).
bool valid_bytewise(std::string_view s) {
    skiff::detail::utf8_validator v;
    for (char c : s)
        if (!v.feed(&c, 1)) return false;
    return v.complete();
}

// The index of the byte at which feeding one at a time first fails, or npos.
std::size_t fails_at(std::string_view s) {
    skiff::detail::utf8_validator v;
    for (std::size_t i = 0; i < s.size(); ++i)
        if (!v.feed(s.data() + i, 1)) return i;
    return std::string_view::npos;
}

// RFC 3629 read another way: the sequence length from the lead's high bits, continuation
// bytes 10xxxxxx, then the decoded code point must need exactly that length and be a scalar
// value (no surrogate, at most U+10FFFF).
bool reference_valid(std::string_view s) {
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

} // namespace

TEST_CASE("websocket utf8 (Autobahn 6.2-6.3, 6.5, 6.22-6.23): valid text, boundaries included") {
    const std::string_view good[] = {
        "", "Hello-\xc2\xb5@\xc3\x9f\xc3\xb6\xc3\xa4\xc3\xbc\xc3\xa0\xc3\xa1-UTF-8!!",
        "\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5",  // κόσμε
        std::string_view("\x00", 1), "\xc2\x80", "\xe0\xa0\x80", "\xf0\x90\x80\x80",  // first of each length
        "\x7f", "\xdf\xbf", "\xef\xbf\xbf", "\xf4\x8f\xbf\xbf",                      // last of each length
        "\xed\x9f\xbf", "\xee\x80\x80", "\xef\xbf\xbd",                              // around the surrogates
        "\xef\xbf\xbe", "\xf0\x9f\xbf\xbf",                                          // noncharacters are text
    };
    for (std::string_view s : good) {
        CAPTURE(s);
        CHECK(valid(s));
        CHECK(valid_bytewise(s));
    }
}

TEST_CASE("websocket utf8 (Autobahn 6.6-6.21): invalid text") {
    const std::string_view bad[] = {
        "\xf4\x90\x80\x80",          // U+110000
        "\xf8\x88\x80\x80\x80",      // five bytes
        "\xfc\x84\x80\x80\x80\x80",  // six bytes
        "\x80", "\xbf", "\x80\xbf\x80",  // lone continuation bytes
        "\xc0 ", "\xe0\x80 ", "\xdf",    // a start with a space or nothing after it
        "\xc0\xaf", "\xe0\x80\xaf", "\xf0\x80\x80\xaf", "\xc1\xbf", "\xe0\x9f\xbf", "\xf0\x8f\xbf\xbf",  // overlong
        "\xed\xa0\x80", "\xed\xbf\xbf", "\xed\xa0\x80\xed\xb0\x80",  // surrogates, single and paired
        "\xfe", "\xff", "\xfe\xfe\xff\xff",
        "\xce\xba\xe1\xbd",  // ends inside a character
    };
    for (std::string_view s : bad) {
        CAPTURE(s);
        CHECK_FALSE(valid(s));
        CHECK_FALSE(valid_bytewise(s));
    }
}

TEST_CASE("websocket utf8 (Autobahn 6.4): a failure is seen at the first byte that makes the text invalid") {
    // κόσμε, then U+110000's first two bytes: no text continues F4 90.
    CHECK(fails_at("\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xf4\x90\x80\x80\x65\x64\x69\x74\x65\x64") == 12);
    CHECK(fails_at("abc\xed\xa0\x80") == 4);  // ED A0 is a surrogate's start
    CHECK(fails_at("abc\xc0\xaf") == 3);      // C0 never starts a character
    CHECK(fails_at("\xce\xba\xe1\xbd") == std::string_view::npos);  // no bad byte, only unfinished
    skiff::detail::utf8_validator v;
    CHECK_FALSE(v.feed("\xff", 1));
    CHECK_FALSE(v.feed("a", 1));  // stays failed
    CHECK(v.failed());
}

TEST_CASE("websocket utf8: the ASCII fast path stops at a multibyte character at any offset") {
    for (std::size_t at = 0; at < 20; ++at) {
        std::string s(24, 'a');
        s.replace(at, 2, "\xc3\xa9");
        CHECK(valid(s));
        s[at + 1] = 'x';  // the lead left without its continuation byte
        CAPTURE(at);
        CHECK_FALSE(valid(s));
        CHECK(fails_at(s) == at + 1);
    }
}

TEST_CASE("websocket utf8: every string of 1 and 2 bytes, and of 3 bytes from E0-FF, against the reference") {
    std::string s;
    for (int a = 0; a < 256; ++a) {
        s.assign(1, static_cast<char>(a));
        CHECK(valid(s) == reference_valid(s));
        for (int b = 0; b < 256; ++b) {
            s.assign({static_cast<char>(a), static_cast<char>(b)});
            if (valid(s) != reference_valid(s)) FAIL_CHECK("two bytes " << a << " " << b);
        }
    }
    std::size_t disagree = 0;
    for (int a = 0xe0; a < 256; ++a)
        for (int b = 0x80 - 16; b < 0xc0 + 16; ++b)
            for (int c = 0; c < 256; ++c) {
                s.assign({static_cast<char>(a), static_cast<char>(b), static_cast<char>(c)});
                disagree += valid(s) != reference_valid(s);
            }
    CHECK(disagree == 0);
}

TEST_CASE("websocket utf8: every code point, encoded, is valid unless it is a surrogate") {
    std::size_t wrong = 0;
    for (std::uint32_t cp = 0; cp <= 0x10ffff; ++cp) {
        std::string s;
        if (cp < 0x80) s += static_cast<char>(cp);
        else if (cp < 0x800) s += {static_cast<char>(0xc0 | cp >> 6), static_cast<char>(0x80 | (cp & 0x3f))};
        else if (cp < 0x10000)
            s += {static_cast<char>(0xe0 | cp >> 12), static_cast<char>(0x80 | ((cp >> 6) & 0x3f)),
                  static_cast<char>(0x80 | (cp & 0x3f))};
        else
            s += {static_cast<char>(0xf0 | cp >> 18), static_cast<char>(0x80 | ((cp >> 12) & 0x3f)),
                  static_cast<char>(0x80 | ((cp >> 6) & 0x3f)), static_cast<char>(0x80 | (cp & 0x3f))};
        bool surrogate = cp >= 0xd800 && cp <= 0xdfff;
        wrong += valid(s) == surrogate;
    }
    CHECK(wrong == 0);
}
