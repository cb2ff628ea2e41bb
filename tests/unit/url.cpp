// Percent-decoding of path parameters (strict), query strings and form bodies (WHATWG
// application/x-www-form-urlencoded: '+' is a space, a bad '%' stays as it is), and the
// request helpers built on them: param(), query(), queries(), form(), form_pairs().
// Only the part under test (a unit test compiles in about a second); the single-header
// configuration has no parts on its include path, so there it takes the whole file.
#ifdef SKIFF_TEST_SINGLE_HEADER
#include <skiff/skiff.hpp>
#else
#include <skiff/http/url.hpp>
#include <skiff/http/request.hpp>
#endif

#include <doctest/doctest.h>

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

using skiff::detail::request_access;

struct decode_case {
    std::string_view name;
    std::string_view in;
    std::string_view path;  // percent_decode(); "<invalid>" when it must fail
    std::string_view form;  // form_decode()
};

using namespace std::string_view_literals;

constexpr std::array<decode_case, 24> decode_cases{{
    // name                     in                 path (strict)        form (lenient)
    {"empty",                   "",                "",                  ""},
    {"plain",                   "abc",             "abc",               "abc"},
    {"upper hex",               "%4A",             "J",                 "J"},
    {"lower hex",               "%4a",             "J",                 "J"},
    {"escaped slash",           "a%2Fb",           "a/b",               "a/b"},
    {"escaped percent",         "100%25",          "100%",              "100%"},
    {"escaped plus",            "%2B",             "+",                 "+"},
    {"plus",                    "a+b",             "a+b",               "a b"},
    {"only plus",               "+++",             "+++",               "   "},
    {"UTF-8",                   "%E2%82%AC",       "\xE2\x82\xAC",      "\xE2\x82\xAC"},
    {"NUL byte",                "a%00b",           "a\0b"sv,            "a\0b"sv},
    {"byte 0xFF",               "%ff",             "\xFF",              "\xFF"},
    {"lone percent",            "%",               "<invalid>",         "%"},
    {"percent at the end",      "100%",            "<invalid>",         "100%"},
    {"one digit at the end",    "a%4",             "<invalid>",         "a%4"},
    {"bad first digit",         "%G1",             "<invalid>",         "%G1"},
    {"bad second digit",        "%1G",             "<invalid>",         "%1G"},
    {"percent percent hex",     "%%41",            "<invalid>",         "%A"},
    {"space is not hex",        "% 1",             "<invalid>",         "% 1"},
    {"sign is not hex",         "%-1",             "<invalid>",         "%-1"},
    {"escape then bad",         "%41%zz",          "<invalid>",         "A%zz"},
    {"bad then escape",         "%zz%41",          "<invalid>",         "%zzA"},
    {"adjacent escapes",        "%41%42%43",       "ABC",               "ABC"},
    {"escape not re-decoded",   "%2541",           "%41",               "%41"},
}};

} // namespace

TEST_CASE("url: percent_decode and form_decode") {
    for (const decode_case& c : decode_cases) {
        CAPTURE(c.name);
        std::string out(c.in.size() + 1, '#');  // one spare byte must stay untouched
        std::optional<std::size_t> n = skiff::percent_decode(c.in, out.data());
        if (c.path == "<invalid>") {
            CHECK_FALSE(n.has_value());
        } else {
            REQUIRE(n.has_value());  // an empty result is a length of 0, not a failure
            CHECK(std::string_view(out.data(), *n) == c.path);
        }
        CHECK(out.back() == '#');
        std::string fout(c.in.size() + 1, '#');
        std::size_t m = skiff::form_decode(c.in, fout.data());
        CHECK(std::string_view(fout.data(), m) == c.form);
        CHECK(fout.back() == '#');
    }
}

namespace {

struct pairs_case {
    std::string_view name;
    std::string_view in;
    std::string_view raw;  // "key=value|key=value" as for_each_pair yields them (undecoded)
};

constexpr std::array<pairs_case, 11> pairs_cases{{
    // name                      in                      raw pairs
    {"empty",                    "",                     ""},
    {"one",                      "a=1",                  "a=1"},
    {"two",                      "a=1&b=2",              "a=1|b=2"},
    {"empty elements skipped",   "&&a=1&&b=2&",          "a=1|b=2"},
    {"no equals: empty value",   "flag&a=1",             "flag=|a=1"},
    {"empty value",              "a=",                   "a="},
    {"empty key",                "=1",                   "=1"},
    {"first equals splits",      "a=1=2",                "a=1=2"},
    {"only equals",              "=",                    "="},
    {"semicolon is not a separator", "a=1;b=2",          "a=1;b=2"},
    {"escapes stay raw",         "a%3D=b%26c",           "a%3D=b%26c"},
}};

} // namespace

TEST_CASE("url: for_each_pair splits on & and the first =") {
    for (const pairs_case& c : pairs_cases) {
        CAPTURE(c.name);
        std::string got;
        skiff::for_each_pair(c.in, [&](std::string_view k, std::string_view v) {
            if (!got.empty()) got += '|';
            got += std::string(k) + "=" + std::string(v);
        });
        CHECK(got == c.raw);
    }
}

namespace {

// A request as the loop leaves it after parsing: head views into `target` and `body`.
struct fake_request {
    skiff::request req;
    std::string target, body;

    explicit fake_request(std::string t, std::string b = {}, bool init = true) : target(std::move(t)), body(std::move(b)) {
        if (init) request_access::init(req, 8, 1024);
        request_access::reset(req);
        skiff::request_head& h = request_access::head(req);
        h.method_name = "GET";
        h.verb = skiff::method::get;
        h.target = target;
        std::size_t q = target.find('?');
        h.path = std::string_view(target).substr(0, q);
        h.query = q == std::string::npos ? std::string_view() : std::string_view(target).substr(q + 1);
        h.body = body;
    }
};

std::string format_pairs(const std::vector<skiff::query_pair>& pairs) {
    std::string s;
    for (const skiff::query_pair& p : pairs) {
        if (!s.empty()) s += '|';
        s += std::string(p.key) + "=" + std::string(p.value);
    }
    return s;
}

struct query_case {
    std::string_view name;
    std::string_view query;
    std::string_view pairs;  // decoded, in order
    std::string_view key;    // looked up with query()
    std::string_view value;
};

constexpr std::array<query_case, 12> query_cases{{
    // name                      query                      decoded pairs               key        value
    {"none",                     "",                        "",                         "a",       ""},
    {"simple",                   "a=1&b=2",                 "a=1|b=2",                  "b",       "2"},
    {"plus is space",            "q=red+boat",              "q=red boat",               "q",       "red boat"},
    {"escaped plus stays",       "q=1%2B1",                 "q=1+1",                    "q",       "1+1"},
    {"key decoded",              "first+name=Ada&a%62=2",   "first name=Ada|ab=2",      "ab",      "2"},
    {"first of duplicates",      "k=1&k=2",                 "k=1|k=2",                  "k",       "1"},
    {"bad escape kept",          "p=100%&q=%zz%41",         "p=100%|q=%zzA",            "q",       "%zzA"},
    {"escaped separators",       "a=b%26c%3Dd",             "a=b&c=d",                  "a",       "b&c=d"},
    {"flag without value",       "debug&x=1",               "debug=|x=1",               "debug",   ""},
    {"UTF-8",                    "name=J%C3%B6rg",          "name=J\xC3\xB6rg",         "name",    "J\xC3\xB6rg"},
    {"absent key",               "a=1",                     "a=1",                      "b",       ""},
    {"raw key does not match",   "a%20b=1",                 "a b=1",                    "a%20b",   ""},
}};

} // namespace

TEST_CASE("request: query(), has_query() and queries() decode the query string") {
    for (const query_case& c : query_cases) {
        CAPTURE(c.name);
        for (bool init : {true, false}) {
            CAPTURE(init);
            fake_request f("/p?" + std::string(c.query), {}, init);
            CHECK(f.req.query_string() == c.query);
            CHECK(format_pairs(f.req.queries()) == c.pairs);
            CHECK(f.req.query(c.key) == c.value);
            bool listed = ("|" + std::string(c.pairs)).find("|" + std::string(c.key) + "=") != std::string::npos;
            CHECK(f.req.has_query(c.key) == listed);
        }
    }
}

TEST_CASE("request: form() and form_pairs() decode an urlencoded body") {
    for (const query_case& c : query_cases) {
        CAPTURE(c.name);
        fake_request f("/form?ignored=1", std::string(c.query));
        CHECK(format_pairs(f.req.form_pairs()) == c.pairs);
        CHECK(f.req.form(c.key) == c.value);
        CHECK(f.req.body() == c.query);  // body() stays as sent
        CHECK(f.req.query("ignored") == "1");  // and the query is its own
    }
}

TEST_CASE("request: decoded parameters, query and form values stay valid together") {
    // Without init() the arenas start empty: growing one must not move what earlier views
    // point at (ASan would see it; the values would too).
    for (bool init : {true, false}) {
        CAPTURE(init);
        std::string long_query;
        for (int i = 0; i < 64; ++i) long_query += "k" + std::to_string(i) + "=v%20" + std::to_string(i) + "&";
        fake_request f("/u/a%20b/c%2Fd?" + long_query, "x=%41+b&" + long_query, init);
        skiff::route_params& p = request_access::params(f.req);
        p.items[0] = {"first", "a%20b"};
        p.items[1] = {"second", "c%2Fd", skiff::param_kind::rest};  // a wildcard may hold a decoded slash
        p.count = 2;
        REQUIRE(request_access::decode_params(f.req));
        CHECK(f.req.param("first") == "a b");
        CHECK(f.req.param("second") == "c/d");
        CHECK(f.req.query("k63") == "v 63");
        CHECK(f.req.queries().size() == 64);
        CHECK(f.req.form("x") == "A b");
        CHECK(f.req.form("k0") == "v 0");
        CHECK(f.req.form_pairs().size() == 65);
        CHECK(f.req.param("first") == "a b");
        CHECK(f.req.param("second") == "c/d");
        CHECK(f.req.query("k0") == "v 0");
        CHECK(f.req.param("third").empty());
    }
}

TEST_CASE("request: decode_params refuses an invalid escape and keeps raw values without %") {
    fake_request f("/x");
    skiff::route_params& p = request_access::params(f.req);
    p.items[0] = {"a", "plain+text"};
    p.items[1] = {"b", "bad%4"};
    p.count = 2;
    CHECK_FALSE(request_access::decode_params(f.req));
    CHECK(f.req.param("a") == "plain+text");
    CHECK(f.req.param("a").data() == p.items[0].value.data());  // not copied: no escape in it
}

TEST_CASE("request: reset() forgets the last request's query and form") {
    fake_request f("/p?a=1", "b=2");
    CHECK(f.req.query("a") == "1");
    CHECK(f.req.form("b") == "2");
    std::string next_target = "/p?a=3";
    std::string next_body = "b=4";
    request_access::reset(f.req);
    skiff::request_head& h = request_access::head(f.req);
    h.target = next_target;
    h.path = std::string_view(next_target).substr(0, 2);
    h.query = std::string_view(next_target).substr(3);
    h.body = next_body;
    CHECK(f.req.query("a") == "3");
    CHECK(f.req.form("b") == "4");
    CHECK(f.req.params().count == 0);
}
