// router::serve(): the answer a request gets, from bytes parsed as the loop parses them to the
// bytes of the response. Handlers answer "<route> <params>" so each case shows who ran and
// with which decoded parameters.

// Only the router and what it serves into; the single-header configuration has no parts on
// its include path, so there it takes the whole file.
#ifdef SKIFF_TEST_SINGLE_HEADER
#include <skiff/skiff.hpp>
#else
#include <skiff/http/message_parser.hpp>
#include <skiff/http/response_access.hpp>
#include <skiff/router/router.hpp>
#endif

#include "support/responses.hpp"

#include <doctest/doctest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>
#include <string_view>
#include <vector>

// Counts this thread's calls to the global operator new, for the test that lookups allocate
// nothing. The array and nothrow forms of libstdc++ call these; aligned forms are not
// replaced and not counted (nothing in the router over-aligns). ThreadSanitizer's runtime
// defines operator new itself, so the count and its test are left out of that build.
#if !defined(SKIFF_TEST_TSAN)
namespace {
thread_local std::uint64_t allocations_here = 0;
}

void* operator new(std::size_t n) {
    ++allocations_here;
    if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
    throw std::bad_alloc();
}
// g++ 12 at -O3 inlines these into std::function's manager and then takes the malloc behind
// the replaced operator new and the free behind this delete for a mismatched pair: a false
// positive of -Wmismatched-new-delete, silenced for these two definitions only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif // SKIFF_TEST_TSAN

namespace {

using skiff::detail::request_access;
using skiff::detail::response_access;

// "<route> id=7 path=a/b": which handler ran, with the decoded parameters.
skiff::handler answer(std::string route) {
    return [route](skiff::request& req, skiff::response& res) {
        std::string body = route;
        for (std::size_t i = 0; i < req.params().count; ++i)
            body += " " + std::string(req.params().items[i].name) + "=" + std::string(req.params().items[i].value);
        res.text(body);
    };
}

void add(skiff::router& r, std::string_view method, std::string_view pattern) {
    std::string err = r.try_add(method, pattern, answer(std::string(method) + " " + std::string(pattern)));
    REQUIRE_MESSAGE(err.empty(), err);
}

skiff::router sample_router() {
    skiff::router r;
    add(r, "GET", "/");
    add(r, "GET", "/users/:id");
    add(r, "PUT", "/users/:id");
    add(r, "DELETE", "/users/:id");
    add(r, "LINK", "/users/:id");
    add(r, "GET", "/users/new");
    add(r, "POST", "/users");
    add(r, "GET", "/files/*path");
    add(r, "PATCH", "/items/:id");
    add(r, "PURGE", "/cache/*key");
    add(r, "GET", "/cors");
    add(r, "OPTIONS", "/cors");
    add(r, "HEAD", "/only-head");
    add(r, "POST", "/post-only");
    add(r, "TRACE", "/trace");
    add(r, "CONNECT", "/connect");
    r.add("GET", "/search", [](skiff::request& req, skiff::response& res) {
        res.text("q=" + std::string(req.query("q")) + " page=" + std::string(req.query("page")));
    });
    return r;
}

// One request through the parser, the router and the response, as the loop does it.
struct exchange {
    skiff::request req;
    skiff::response res;
    skiff::detail::byte_buffer out;
    skiff::detail::date_cache date;
    skiff::message_parser parser;
    skiff::parse_limits limits;
    std::string raw;

    exchange() {
        request_access::init(req, limits.max_headers, limits.max_request_line);
        date.update(784111777);
    }

    // Parses raw (REQUIREs a complete request) and serves it; returns the response bytes.
    std::string serve(const skiff::router& r, std::string request_bytes) {
        raw = std::move(request_bytes);
        parser.reset();
        skiff::parse_result p = parser.parse(raw.data(), raw.size(), request_access::head(req),
                                             request_access::fields(req), limits);
        REQUIRE(p.status == skiff::parse_status::complete);
        request_access::reset(req);
        out.clear();
        response_access::start(res, out, date, req.verb() == skiff::method::head, false);
        r.serve(req, res);
        if (!res.sent()) res.end();
        return std::string(out.data(), out.size());
    }
};

skiff_test::response one_response(const std::string& bytes, bool head) {
    auto rs = skiff_test::parse_responses(bytes, head);
    REQUIRE(rs.size() == 1);
    return rs[0];
}

struct serve_case {
    std::string_view name;
    std::string_view line;    // request line without " HTTP/1.1"
    int status;
    std::string_view allow;   // expected Allow value; "-" when there must be none
    std::string_view body;
};

// Allow for /users/:id: its registered methods in method order, HEAD beside GET, OPTIONS
// always (the router answers it), then extension methods in registration order.
constexpr std::string_view users_allow = "GET, HEAD, PUT, DELETE, OPTIONS, LINK";

constexpr std::array<serve_case, 60> serve_cases{{
    // name                                 request line                        status allow              body
    {"root",                                "GET /",                            200, "-",                 "GET /"},
    {"param",                               "GET /users/7",                     200, "-",                 "GET /users/:id id=7"},
    {"static beats param",                  "GET /users/new",                   200, "-",                 "GET /users/new"},
    {"PUT",                                 "PUT /users/7",                     200, "-",                 "PUT /users/:id id=7"},
    {"DELETE",                              "DELETE /users/7",                  200, "-",                 "DELETE /users/:id id=7"},
    {"POST",                                "POST /users",                      200, "-",                 "POST /users"},
    {"PATCH",                               "PATCH /items/3",                   200, "-",                 "PATCH /items/:id id=3"},
    {"TRACE",                               "TRACE /trace",                     200, "-",                 "TRACE /trace"},
    {"extension method",                    "LINK /users/7",                    200, "-",                 "LINK /users/:id id=7"},
    {"extension with wildcard",             "PURGE /cache/a/b",                 200, "-",                 "PURGE /cache/*key key=a/b"},
    {"wildcard decoded",                    "GET /files/a%20b/c%2Fd",           200, "-",                 "GET /files/*path path=a b/c/d"},
    {"param with a decoded '/' is 400",     "GET /users/a%2Fb",                 400, "-",                 "Bad Request\n"},
    {"param that is only %2f is 400",       "GET /users/%2f",                   400, "-",                 "Bad Request\n"},
    {"param with a decoded NUL is 400",     "GET /users/%00",                   400, "-",                 "Bad Request\n"},
    {"param NUL inside is 400",             "GET /users/a%00b",                 400, "-",                 "Bad Request\n"},
    {"param %2e%2e is 400",                 "GET /users/%2e%2e",                400, "-",                 "Bad Request\n"},
    {"param raw .. is 400",                 "GET /users/..",                    400, "-",                 "Bad Request\n"},
    {"param ... is a name",                 "GET /users/...",                   200, "-",                 "GET /users/:id id=..."},
    {"param %2e is a dot",                  "GET /users/%2e",                   200, "-",                 "GET /users/:id id=."},
    {"wildcard %2e%2e segment is 400",      "GET /files/%2e%2e/secret",         400, "-",                 "Bad Request\n"},
    {"wildcard %2E%2e at the end is 400",   "GET /files/a/%2E%2e",              400, "-",                 "Bad Request\n"},
    {"wildcard .%2e is 400",                "GET /files/a/.%2e/b",              400, "-",                 "Bad Request\n"},
    {"wildcard ..%2f is 400",               "GET /files/..%2fsecret",           400, "-",                 "Bad Request\n"},
    {"wildcard raw .. is 400",              "GET /files/a/../secret",           400, "-",                 "Bad Request\n"},
    {"wildcard with a decoded NUL is 400",  "GET /files/a%00.txt",              400, "-",                 "Bad Request\n"},
    {"wildcard a..b is a name",             "GET /files/a..b/c",                200, "-",                 "GET /files/*path path=a..b/c"},
    {"wildcard %2e%2e inside a name",       "GET /files/x%2e%2ey",              200, "-",                 "GET /files/*path path=x..y"},
    {"param decoded UTF-8",                 "GET /users/%E2%82%ac",             200, "-",                 "GET /users/:id id=\xE2\x82\xAC"},
    {"plus is a plus in a path",            "GET /users/a+b",                   200, "-",                 "GET /users/:id id=a+b"},
    {"percent-encoded percent",             "GET /users/100%25",                200, "-",                 "GET /users/:id id=100%"},
    {"invalid escape is 400",               "GET /users/bad%zz",                400, "-",                 "Bad Request\n"},
    {"truncated escape is 400",             "GET /users/bad%2",                 400, "-",                 "Bad Request\n"},
    {"lone percent is 400",                 "GET /files/a/%",                   400, "-",                 "Bad Request\n"},
    {"escape matched raw, not decoded",     "GET /users%2Fnew",                 404, "-",                 "Not Found\n"},
    {"query is not part of the match",      "GET /users/7?id=8&x",              200, "-",                 "GET /users/:id id=7"},
    {"query on a static path",              "GET /users/new?",                  200, "-",                 "GET /users/new"},
    {"query decoded for the handler",       "GET /search?q=red+boat%21&page=2", 200, "-",                 "q=red boat! page=2"},
    {"query invalid escape kept",           "GET /search?q=100%&page=%zz",      200, "-",                 "q=100% page=%zz"},
    {"absolute-form target",                "GET http://example.com/users/9?a", 200, "-",                 "GET /users/:id id=9"},
    {"trailing slash is another path",      "GET /users/7/",                    404, "-",                 "Not Found\n"},
    {"unknown path",                        "GET /nowhere",                     404, "-",                 "Not Found\n"},
    {"unknown deeper path",                 "GET /users/7/x",                   404, "-",                 "Not Found\n"},
    {"405 with Allow",                      "POST /users/7",                    405, users_allow,         "Method Not Allowed\n"},
    {"405 unions static and param routes",  "PATCH /users/new",                 405, users_allow,         "Method Not Allowed\n"},
    {"405 lists extension methods",         "GET /cache/x",                     405, "OPTIONS, PURGE",    "Method Not Allowed\n"},
    {"RFC 9110 §9.1: unrouted method 501",  "UNLINK /users/7",                  501, "-",                 "Not Implemented\n"},
    {"methods are case-sensitive: 501",     "get /users/7",                     501, "-",                 "Not Implemented\n"},
    {"unrouted method on unknown path",     "UNLINK /nowhere",                  501, "-",                 "Not Implemented\n"},
    {"a routed extension elsewhere: 405",   "LINK /files/x",                    405, "GET, HEAD, OPTIONS", "Method Not Allowed\n"},
    {"DELETE on a path without it: 405",    "DELETE /trace",                    405, "OPTIONS, TRACE",    "Method Not Allowed\n"},
    {"GET where only HEAD is",              "GET /only-head",                   405, "HEAD, OPTIONS",     "Method Not Allowed\n"},
    {"405 without GET lists no HEAD",       "GET /post-only",                   405, "POST, OPTIONS",     "Method Not Allowed\n"},
    {"TRACE listed",                        "GET /trace",                       405, "OPTIONS, TRACE",    "Method Not Allowed\n"},
    {"OPTIONS answered with Allow",         "OPTIONS /users/7",                 204, users_allow,         ""},
    {"OPTIONS on an extension-only path",   "OPTIONS /cache/a",                 204, "OPTIONS, PURGE",    ""},
    {"user OPTIONS handler wins",           "OPTIONS /cors",                    200, "-",                 "OPTIONS /cors"},
    {"OPTIONS on unknown path is 404",      "OPTIONS /nowhere",                 404, "-",                 "Not Found\n"},
    {"OPTIONS * lists every method",        "OPTIONS *",                        204,
     "GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS, CONNECT, TRACE, LINK, PURGE",                     ""},
    {"explicit HEAD route",                 "HEAD /only-head",                  200, "-",                 ""},
    {"HEAD on unknown path",                "HEAD /nowhere",                    404, "-",                 ""},
}};

} // namespace

TEST_CASE("router: status, Allow and handler for each request") {
    const skiff::router r = sample_router();
    exchange x;
    for (const serve_case& c : serve_cases) {
        CAPTURE(c.name);
        std::string bytes = x.serve(r, std::string(c.line) + " HTTP/1.1\r\nHost: h\r\n\r\n");
        bool head = c.line.substr(0, 5) == "HEAD ";
        skiff_test::response got = one_response(bytes, head);
        CHECK(got.status == c.status);
        std::string allow = got.header("Allow");
        CHECK(allow == (c.allow == "-" ? std::string() : std::string(c.allow)));
        if (c.allow != "-") CHECK(got.head.find("Allow:") == got.head.rfind("Allow:"));  // once
        CHECK(got.body == c.body);
        if (c.status == 204) CHECK(got.header("Content-Length").empty());
    }
}

TEST_CASE("router: HEAD is the GET response without its body") {
    const skiff::router r = sample_router();
    const std::array<std::string_view, 6> paths{"/", "/users/7", "/users/new", "/files/x/y", "/nowhere",
                                                "/cache/x"};
    exchange x;
    for (std::string_view path : paths) {
        CAPTURE(path);
        std::string get = x.serve(r, "GET " + std::string(path) + " HTTP/1.1\r\nHost: h\r\n\r\n");
        std::string head = x.serve(r, "HEAD " + std::string(path) + " HTTP/1.1\r\nHost: h\r\n\r\n");
        skiff_test::response g = one_response(get, false), h = one_response(head, true);
        CHECK(h.head == g.head);  // same status, same Content-Length, same Allow
        CHECK_FALSE(g.header("Content-Length").empty());
        CHECK(head.size() + g.body.size() == get.size());  // nothing after the blank line
    }
}

TEST_CASE("router: custom 404 and 405 handlers see the status and Allow already set") {
    skiff::router r;
    add(r, "GET", "/a");
    add(r, "PUT", "/a");
    r.on_not_found([](skiff::request& req, skiff::response& res) {
        res.text("custom " + std::to_string(res.status()) + " " + std::string(req.path()));
    });
    r.on_method_not_allowed([](skiff::request& req, skiff::response& res) {
        res.header("X-Seen", req.method());
        res.text("custom " + std::to_string(res.status()));
    });
    exchange x;
    auto nf = one_response(x.serve(r, "GET /b?x=1 HTTP/1.1\r\nHost: h\r\n\r\n"), false);
    CHECK(nf.status == 404);
    CHECK(nf.body == "custom 404 /b");

    auto na = one_response(x.serve(r, "DELETE /a HTTP/1.1\r\nHost: h\r\n\r\n"), false);
    CHECK(na.status == 405);
    CHECK(na.header("Allow") == "GET, HEAD, PUT, OPTIONS");
    CHECK(na.header("X-Seen") == "DELETE");
    CHECK(na.body == "custom 405");

    // The automatic OPTIONS answer is not a 405: the custom handler does not run.
    auto opt = one_response(x.serve(r, "OPTIONS /a HTTP/1.1\r\nHost: h\r\n\r\n"), false);
    CHECK(opt.status == 204);
    CHECK(opt.header("X-Seen").empty());

    // A custom handler may change the status.
    r.on_not_found([](skiff::request&, skiff::response& res) { res.status(410).text("gone"); });
    auto gone = one_response(x.serve(r, "GET /b HTTP/1.1\r\nHost: h\r\n\r\n"), false);
    CHECK(gone.status == 410);
    CHECK(gone.body == "gone");
}

TEST_CASE("router: with no routes every path is 404 and OPTIONS * allows OPTIONS") {
    skiff::router r;
    exchange x;
    CHECK(one_response(x.serve(r, "GET / HTTP/1.1\r\nHost: h\r\n\r\n"), false).status == 404);
    auto star = one_response(x.serve(r, "OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n"), false);
    CHECK(star.status == 204);
    CHECK(star.header("Allow") == "OPTIONS");
}

TEST_CASE("router: registration errors") {
    struct add_case {
        std::string_view name, method, pattern, error;
    };
    const std::array<add_case, 7> cases{{
        {"empty method", "", "/a", "empty method name"},
        {"method with a space", "GE T", "/a", "invalid method name 'GE T'"},
        {"method with a slash", "GET/", "/a", "invalid method name 'GET/'"},
        {"duplicate", "GET", "/a", "route GET '/a' conflicts with GET '/a'"},
        {"param names", "GET", "/u/:uid", "'/u/:uid' conflicts with '/u/:id'"},
        {"bad pattern", "GET", "a", "must start with '/'"},
        {"extension duplicate", "PURGE", "/p", "route PURGE '/p' conflicts with PURGE '/p'"},
    }};
    skiff::router r;
    add(r, "GET", "/a");
    add(r, "GET", "/u/:id");
    add(r, "PURGE", "/p");
    for (const add_case& c : cases) {
        CAPTURE(c.name);
        std::string err = r.try_add(c.method, c.pattern, answer("x"));
        CHECK(err.find(c.error) != std::string::npos);
        CHECK(r.size() == 3);
    }
#if SKIFF_HAS_EXCEPTIONS
    CHECK_THROWS_AS(r.add("GET", "/a", answer("x")), skiff::route_error);
    CHECK_THROWS_WITH(r.add("GET", "/u/:uid", answer("x")),
                      doctest::Contains("'/u/:uid' conflicts with '/u/:id'"));
#endif
    CHECK(r.size() == 3);
}

TEST_CASE("router: match() and has_route() agree with serve()") {
    const skiff::router r = sample_router();
    skiff::route_params p;
    const skiff::handler* h = r.match(skiff::method::get, "GET", "/users/7", p);
    REQUIRE(h != nullptr);
    REQUIRE(p.count == 1);
    CHECK(p.items[0].name == "id");
    CHECK(p.items[0].value == "7");
    CHECK(r.match(skiff::method::head, "HEAD", "/users/7", p) == h);
    CHECK(r.match(skiff::method::post, "POST", "/users/7", p) == nullptr);
    CHECK(r.match(skiff::method::get, "GET", "/nowhere", p) == nullptr);
    CHECK(r.has_route(skiff::method::other, "PURGE", "/cache/k"));
    CHECK_FALSE(r.has_route(skiff::method::other, "PURGE", "/cache"));
    CHECK_FALSE(r.has_route(skiff::method::options, "OPTIONS", "/users/7"));  // answered, not routed
}

#if !defined(SKIFF_TEST_TSAN)
TEST_CASE("router: serving allocates nothing once the buffers are warm") {
    const skiff::router r = sample_router();
    // Request lines the router answers without a user handler that itself allocates; the
    // sample handlers build strings, so these go to a router whose handlers do not.
    skiff::router quiet;
    for (std::string_view p : {"/", "/users/:id", "/users/new", "/files/*path", "/a/:b/c/:d"})
        quiet.add("GET", p, [](skiff::request& req, skiff::response& res) {
            res.text(req.param("id").empty() ? req.param("path") : req.param("id"));
        });
    quiet.add("PURGE", "/users/:id", [](skiff::request&, skiff::response&) {});
    quiet.add("GET", "/search", [](skiff::request& req, skiff::response& res) {
        std::size_t n = 0;
        for (const skiff::query_pair& q : req.queries()) n += q.key.size() + q.value.size();
        res.status(n == 0 ? 500 : 200).text(req.query("q"));
    });
    const std::array<std::string_view, 14> lines{
        "GET /",
        "GET /users/42",
        "GET /users/new",
        "GET /users/a%2Fb%20c",
        "GET /files/a/b/c.txt",
        "GET /a/1/c/2",
        "HEAD /users/42",
        "GET /search?q=red+boat&x=%41%42&y&&z=1",
        "PURGE /users/9",
        "DELETE /users/42",           // 405 with Allow
        "PURGE /files/x",             // 405 with an extension method in Allow
        "OPTIONS /users/42",          // 204 with Allow
        "GET /nowhere/at/all",        // 404
        "GET /users/bad%zz",          // 400
    };
    exchange x;
    std::vector<std::string> requests;
    for (std::string_view l : lines) requests.push_back(std::string(l) + " HTTP/1.1\r\nHost: h\r\n\r\n");

    // The counter must see an allocation made by library code in this binary, or a zero
    // below would prove nothing.
    std::uint64_t before = allocations_here;
    skiff::router probe;
    probe.add("GET", "/some/long/pattern/to/allocate/:with/params", answer("probe"));
    CHECK(allocations_here > before);

    for (int round = 0; round < 2; ++round) {  // the first round grows buffers once
        for (std::size_t i = 0; i < requests.size(); ++i) {
            CAPTURE(lines[i]);
            std::string& raw = requests[i];
            request_access::reset(x.req);
            x.parser.reset();
            skiff::parse_result p = x.parser.parse(raw.data(), raw.size(), request_access::head(x.req),
                                                   request_access::fields(x.req), x.limits);
            REQUIRE(p.status == skiff::parse_status::complete);
            x.out.clear();
            std::uint64_t start = allocations_here;
            response_access::start(x.res, x.out, x.date, x.req.verb() == skiff::method::head, false);
            quiet.serve(x.req, x.res);
            if (!x.res.sent()) x.res.end();
            std::uint64_t used = allocations_here - start;
            CHECK(x.res.sent());
            if (round == 1) CHECK(used == 0);
        }
    }
}
#endif // SKIFF_TEST_TSAN

TEST_CASE("router: trailing_slash::either registers both spellings at start-up") {
    skiff::router r;
    r.set_trailing_slash(skiff::trailing_slash::either);
    add(r, "GET", "/");
    add(r, "GET", "/a");
    add(r, "GET", "/b/");
    add(r, "GET", "/u/:id");
    add(r, "GET", "/files/*p");
    add(r, "PURGE", "/c");
    struct slash_case {
        std::string_view line;
        int status;
        std::string_view body;
    };
    const std::array<slash_case, 13> cases{{
        {"GET /", 200, "GET /"},
        {"GET //", 404, "Not Found\n"},
        {"GET /a", 200, "GET /a"},
        {"GET /a/", 200, "GET /a"},
        {"GET /a//", 404, "Not Found\n"},
        {"GET /b", 200, "GET /b/"},
        {"GET /b/", 200, "GET /b/"},
        {"GET /u/7/", 200, "GET /u/:id id=7"},
        {"GET /u/7", 200, "GET /u/:id id=7"},
        {"GET /files/", 200, "GET /files/*p p="},
        {"GET /files", 404, "Not Found\n"},  // a wildcard route is registered as it is
        {"PURGE /c/", 200, "PURGE /c"},
        {"POST /a/", 405, "Method Not Allowed\n"},
    }};
    exchange x;
    for (const slash_case& c : cases) {
        CAPTURE(c.line);
        auto got = one_response(x.serve(r, std::string(c.line) + " HTTP/1.1\r\nHost: h\r\n\r\n"), false);
        CHECK(got.status == c.status);
        CHECK(got.body == c.body);
    }
    CHECK(r.size() == 6);  // one handler per route, whatever the spellings

    // The other spelling conflicts like a route of its own; a refused pair leaves nothing.
    skiff::route_params p;
    std::string err = r.try_add("GET", "/a/", answer("x"));
    CHECK(err.find("'/a/'") != std::string::npos);
    CHECK(err.find("'/a'") != std::string::npos);
    err = r.try_add("GET", "/b", answer("x"));
    CHECK(err.find("route GET '/b' conflicts with GET '/b/'") != std::string::npos);
    // When only the other spelling fails, the message names both spellings.
    std::string deep;
    for (int i = 0; i < 32; ++i) deep += "/s";
    err = r.try_add("GET", deep, answer("x"));
    CHECK(err.find("more than 32 segments: '" + deep + "/'") != std::string::npos);
    CHECK(err.find("with trailing_slash::either, '" + deep + "' is also '" + deep + "/'") != std::string::npos);
    CHECK(r.match(skiff::method::get, "GET", deep, p) == nullptr);
    err = r.try_add("POST", "/d/:x", answer("x"));
    REQUIRE(err.empty());
    err = r.try_add("DELETE", "/d/:y/", answer("x"));
    CHECK(err.find("'/d/:y/' conflicts with '/d/:x'") != std::string::npos);
    CHECK(r.match(skiff::method::delete_, "DELETE", "/d/1", p) == nullptr);
    CHECK(r.size() == 7);
#if SKIFF_HAS_EXCEPTIONS
    CHECK_THROWS_AS(r.set_trailing_slash(skiff::trailing_slash::distinct), skiff::route_error);
#endif
}

TEST_CASE("router: trailing_slash::either refuses a pair when only the second spelling conflicts") {
    skiff::router r;
    r.set_trailing_slash(skiff::trailing_slash::either);
    add(r, "GET", "/x/:id/");      // also /x/:id
    std::string err = r.try_add("GET", "/x/:id", answer("dup"));
    CHECK(err.find("route GET '/x/:id' conflicts with GET '/x/:id/'") != std::string::npos);
    err = r.try_add("PUT", "/y", answer("y"));
    REQUIRE(err.empty());
    err = r.try_add("PUT", "/y/", answer("y2"));
    CHECK_FALSE(err.empty());
    CHECK(r.size() == 2);
}

TEST_CASE("router: whole static paths first, the walk for everything they cannot answer") {
    // The router looks an all-static path up whole before the walk; it may answer only with a
    // handler for the request's method, so every other answer must be the walk's.
    skiff::router r;
    add(r, "GET", "/users");            // also the prefix of the parameter route below
    add(r, "GET", "/users/:id");
    add(r, "POST", "/users/:id");
    add(r, "GET", "/users/new");        // static beside a parameter, GET only
    add(r, "GET", "/get-only");
    add(r, "PURGE", "/cache");          // extension method on a static path
    add(r, "GET", "/a/b");
    add(r, "GET", "/a/:x/c");
    exchange x;
    struct row {
        std::string_view line;
        int status;
        std::string_view allow;  // "-": none
        std::string_view body;
    };
    const std::array<row, 13> rows{{
        {"GET /users", 200, "-", "GET /users"},
        {"HEAD /users", 200, "-", ""},
        {"GET /users/7", 200, "-", "GET /users/:id id=7"},
        {"GET /users/new", 200, "-", "GET /users/new"},
        {"POST /users/new", 200, "-", "POST /users/:id id=new"},  // the static route has no POST
        {"POST /users", 405, "GET, HEAD, OPTIONS", "Method Not Allowed\n"},
        {"POST /get-only", 405, "GET, HEAD, OPTIONS", "Method Not Allowed\n"},
        {"PURGE /get-only", 405, "GET, HEAD, OPTIONS", "Method Not Allowed\n"},  // PURGE is routed elsewhere
        {"PURGE /cache", 200, "-", "PURGE /cache"},
        {"GET /cache", 405, "OPTIONS, PURGE", "Method Not Allowed\n"},
        {"OPTIONS /get-only", 204, "GET, HEAD, OPTIONS", ""},
        {"GET /a/b/c", 200, "-", "GET /a/:x/c x=b"},  // "/a/b" is static, "/a/b/c" is not
        {"GET /users/", 404, "-", "Not Found\n"},
    }};
    for (const row& c : rows) {
        CAPTURE(c.line);
        std::string bytes = x.serve(r, std::string(c.line) + " HTTP/1.1\r\nHost: h\r\n\r\n");
        skiff_test::response got = one_response(bytes, c.line.substr(0, 5) == "HEAD ");
        CHECK(got.status == c.status);
        CHECK(got.header("Allow") == (c.allow == "-" ? std::string() : std::string(c.allow)));
        CHECK(got.body == c.body);
    }
    skiff::route_params p;
    REQUIRE(r.match(skiff::method::post, "POST", "/users/9", p) != nullptr);
    REQUIRE(p.count == 1);
    CHECK(r.match(skiff::method::get, "GET", "/users", p) != nullptr);
    CHECK(p.count == 0);  // a whole-path match reports no parameters left from before
}
