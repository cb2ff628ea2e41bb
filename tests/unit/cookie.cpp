// Cookies: what a handler reads from the Cookie fields browsers send (tolerant), and the
// Set-Cookie values it may build (strict, with a reason for each refusal).
// Only the part under test (a unit test compiles in about a second); the single-header
// configuration has no parts on its include path, so there it takes the whole file.
#ifdef SKIFF_TEST_SINGLE_HEADER
#include <skiff/skiff.hpp>
#else
#include <skiff/http/cookie.hpp>
#include <skiff/http/response_access.hpp>
#endif

#include <doctest/doctest.h>

#include <array>
#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace {

using skiff::cookie_errc;
using skiff::detail::request_access;
using fields = std::vector<skiff::header_field>;

struct cookie_case {
    std::string_view name;
    std::string_view field;
    std::string_view pairs;  // "name=value|name=value"
};

constexpr std::array<cookie_case, 16> parse_cases{{
    // name                          Cookie field value                     pairs seen
    {"empty",                        "",                                    ""},
    {"one",                          "a=1",                                 "a=1"},
    {"browser form",                 "session=abc123; theme=dark",          "session=abc123|theme=dark"},
    {"no space after ;",             "a=1;b=2",                             "a=1|b=2"},
    {"spaces and tabs around",       "  a = 1 ;\tb=2\t",                    "a=1|b=2"},
    {"quoted value",                 "a=\"x y\"; b=2",                      "a=x y|b=2"},
    {"lone quote kept",              "a=\"x",                               "a=\"x"},
    {"empty value",                  "a=; b=2",                             "a=|b=2"},
    {"'=' inside the value",         "token=abc==; x=1",                    "token=abc==|x=1"},
    {"empty items skipped",          ";; a=1;;",                            "a=1"},
    {"item without '=' skipped",     "flag; a=1",                           "a=1"},
    {"empty name skipped",           "=v; a=1",                             "a=1"},
    {"duplicates kept in order",     "a=1; a=2",                            "a=1|a=2"},
    {"trailing semicolon",           "a=1;",                                "a=1"},
    {"UTF-8 value as sent",          "n=caf\xC3\xA9",                       "n=caf\xC3\xA9"},
    {"percent not decoded",          "n=a%20b",                             "n=a%20b"},
}};

std::string pairs_of(std::string_view field) {
    std::string s;
    skiff::for_each_cookie(field, [&](std::string_view n, std::string_view v) {
        if (!s.empty()) s += '|';
        s += std::string(n) + "=" + std::string(v);
    });
    return s;
}

// A request whose fields are the given (name, value) pairs.
struct fake_request {
    skiff::request req;
    fields storage;

    explicit fake_request(fields f) : storage(std::move(f)) {
        request_access::reset(req);
        skiff::request_head& h = request_access::head(req);
        h.fields = storage.data();
        h.field_count = static_cast<std::uint32_t>(storage.size());
    }
};

std::string headers_of(const skiff::set_cookie& c) {
    skiff::detail::byte_buffer out;
    skiff::detail::date_cache date;
    date.update(784111777);
    skiff::response res;
    skiff::detail::response_access::start(res, out, date, false, false, false);
    std::error_code ec = skiff::add_cookie(res, c);
    res.end();
    std::string all(out.data(), out.size());
    return ec ? "refused: " + ec.message() : all;
}

} // namespace

TEST_CASE("for_each_cookie: the pairs a Cookie field holds") {
    for (const cookie_case& c : parse_cases) {
        CAPTURE(c.name);
        CHECK(pairs_of(c.field) == c.pairs);
    }
}

TEST_CASE("cookie(req, name): the first match over every Cookie field, nullopt when absent") {
    fake_request f(fields{{"Host", "x"}, {"Cookie", "a=1; session=s1"}, {"cookie", "session=s2; b=\"q\""}});
    CHECK(skiff::cookie(f.req, "session") == "s1");
    CHECK(skiff::cookie(f.req, "b") == "q");
    CHECK(skiff::cookie(f.req, "a") == "1");
    CHECK_FALSE(skiff::cookie(f.req, "Session"));  // names are case-sensitive
    CHECK_FALSE(skiff::cookie(f.req, "missing"));
    fake_request empty_value(fields{{"Cookie", "e="}});
    REQUIRE(skiff::cookie(empty_value.req, "e"));
    CHECK(skiff::cookie(empty_value.req, "e")->empty());
    fake_request none(fields{{"Host", "x"}});
    CHECK_FALSE(skiff::cookie(none.req, "a"));
}

TEST_CASE("set_cookie: each attribute as written") {
    using namespace std::chrono;
    struct build_case {
        const char* name;
        skiff::set_cookie cookie;
        const char* value;
    };
    const std::vector<build_case> cases = {
        {"plain", skiff::set_cookie("id", "42"), "id=42"},
        {"empty value", skiff::set_cookie("id", ""), "id="},
        {"quoted value", skiff::set_cookie("id", "\"a-b\""), "id=\"a-b\""},
        {"Max-Age", skiff::set_cookie("id", "1").max_age(hours(1)), "id=1; Max-Age=3600"},
        {"negative Max-Age is 0", skiff::set_cookie("id", "1").max_age(seconds(-5)), "id=1; Max-Age=0"},
        {"Expires", skiff::set_cookie("id", "1").expires(system_clock::from_time_t(784111777)),
         "id=1; Expires=Sun, 06 Nov 1994 08:49:37 GMT"},
        {"Domain and Path", skiff::set_cookie("id", "1").domain("example.com").path("/app"),
         "id=1; Domain=example.com; Path=/app"},
        {"flags", skiff::set_cookie("id", "1").secure().http_only(), "id=1; Secure; HttpOnly"},
        {"SameSite=Strict", skiff::set_cookie("id", "1").same_site(skiff::same_site::strict), "id=1; SameSite=Strict"},
        {"SameSite=Lax", skiff::set_cookie("id", "1").same_site(skiff::same_site::lax), "id=1; SameSite=Lax"},
        {"SameSite=None with Secure", skiff::set_cookie("id", "1").secure().same_site(skiff::same_site::none),
         "id=1; Secure; SameSite=None"},
        {"Partitioned", skiff::set_cookie("id", "1").secure().partitioned(), "id=1; Secure; Partitioned"},
        {"everything",
         skiff::set_cookie("s", "v").max_age(seconds(60)).domain(".example.com").path("/").secure().http_only()
             .same_site(skiff::same_site::none).partitioned(),
         "s=v; Max-Age=60; Domain=.example.com; Path=/; Secure; HttpOnly; SameSite=None; Partitioned"},
        {"__Secure- with Secure", skiff::set_cookie("__Secure-id", "1").secure(), "__Secure-id=1; Secure"},
        {"__Host- with its rules", skiff::set_cookie("__Host-id", "1").secure().path("/"), "__Host-id=1; Path=/; Secure"},
        {"removal", skiff::set_cookie::removal("id").path("/"),
         "id=; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Path=/"},
    };
    for (const build_case& c : cases) {
        CAPTURE(c.name);
        CHECK(!c.cookie.check());
        CHECK(c.cookie.to_string() == c.value);
    }
}

TEST_CASE("set_cookie: what browsers would drop or split is refused, with the reason") {
    struct bad_case {
        const char* name;
        skiff::set_cookie cookie;
        cookie_errc why;
    };
    const std::vector<bad_case> cases = {
        {"empty name", skiff::set_cookie("", "1"), cookie_errc::invalid_name},
        {"space in name", skiff::set_cookie("a b", "1"), cookie_errc::invalid_name},
        {"'=' in name", skiff::set_cookie("a=b", "1"), cookie_errc::invalid_name},
        {"';' in name", skiff::set_cookie("a;", "1"), cookie_errc::invalid_name},
        {"space in value", skiff::set_cookie("a", "x y"), cookie_errc::invalid_value},
        {"';' in value", skiff::set_cookie("a", "x;Domain=evil"), cookie_errc::invalid_value},
        {"',' in value", skiff::set_cookie("a", "x,y"), cookie_errc::invalid_value},
        {"'\"' inside value", skiff::set_cookie("a", "x\"y"), cookie_errc::invalid_value},
        {"backslash in value", skiff::set_cookie("a", "x\\y"), cookie_errc::invalid_value},
        {"CR LF in value", skiff::set_cookie("a", "x\r\nSet-Cookie: b=2"), cookie_errc::invalid_value},
        {"NUL in value", skiff::set_cookie("a", std::string_view("x\0y", 3)), cookie_errc::invalid_value},
        {"non-ASCII value", skiff::set_cookie("a", "caf\xC3\xA9"), cookie_errc::invalid_value},
        {"empty Domain", skiff::set_cookie("a", "1").domain(""), cookie_errc::invalid_domain},
        {"';' in Domain", skiff::set_cookie("a", "1").domain("x.com; Secure"), cookie_errc::invalid_domain},
        {"Path without '/'", skiff::set_cookie("a", "1").path("app"), cookie_errc::invalid_path},
        {"';' in Path", skiff::set_cookie("a", "1").path("/a;b"), cookie_errc::invalid_path},
        {"CR in Path", skiff::set_cookie("a", "1").path("/a\r"), cookie_errc::invalid_path},
        {"SameSite=None without Secure", skiff::set_cookie("a", "1").same_site(skiff::same_site::none),
         cookie_errc::none_without_secure},
        {"Partitioned without Secure", skiff::set_cookie("a", "1").partitioned(), cookie_errc::partitioned_without_secure},
        {"__Secure- without Secure", skiff::set_cookie("__Secure-a", "1"), cookie_errc::prefix_rules},
        {"__Host- with a Domain", skiff::set_cookie("__Host-a", "1").secure().path("/").domain("x.com"),
         cookie_errc::prefix_rules},
        {"__Host- without Path=/", skiff::set_cookie("__Host-a", "1").secure().path("/app"), cookie_errc::prefix_rules},
    };
    for (const bad_case& c : cases) {
        CAPTURE(c.name);
        std::error_code ec = c.cookie.check();
        CHECK(ec.value() == static_cast<int>(c.why));
        CHECK(ec.category().name() == std::string("skiff.cookie"));
        CHECK_FALSE(ec.message().empty());
        CHECK(c.cookie.to_string().empty());
        CHECK(headers_of(c.cookie) == "refused: " + ec.message());
    }
}

TEST_CASE("add_cookie: one Set-Cookie field per cookie in the response head") {
    skiff::detail::byte_buffer out;
    skiff::detail::date_cache date;
    date.update(784111777);
    skiff::response res;
    skiff::detail::response_access::start(res, out, date, false, false, false);
    CHECK(!skiff::add_cookie(res, skiff::set_cookie("a", "1").http_only()));
    CHECK(!skiff::add_cookie(res, skiff::set_cookie("b", "2")));
    res.text("ok");
    std::string all(out.data(), out.size());
    CHECK(all.find("\r\nSet-Cookie: a=1; HttpOnly\r\n") != std::string::npos);
    CHECK(all.find("\r\nSet-Cookie: b=2\r\n") != std::string::npos);
    CHECK(headers_of(skiff::set_cookie("c", "3")).find("Set-Cookie: c=3\r\n") != std::string::npos);
}
