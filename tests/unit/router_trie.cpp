// The route trie alone: which route matches (method, path), with which raw parameters;
// precedence whatever the order of registration; conflicts and bad patterns at insert.
#include "support/guard_page.hpp"

// Only the part under test (a unit test compiles in about a second); the single-header
// configuration has no parts on its include path, so there it takes the whole file.
#ifdef SKIFF_TEST_SINGLE_HEADER
#include <skiff/skiff.hpp>
#else
#include <skiff/router/trie.hpp>
#endif

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace {

using skiff::detail::route_id;
using skiff::detail::route_trie;

// "GET /a; POST /b/:id" -> {"GET /a", "POST /b/:id"}
std::vector<std::string> split_routes(std::string_view s) {
    std::vector<std::string> out;
    while (!s.empty()) {
        std::size_t semi = s.find(';');
        std::string_view r = s.substr(0, semi);
        while (!r.empty() && r.front() == ' ') r.remove_prefix(1);
        if (!r.empty()) out.emplace_back(r);
        if (semi == std::string_view::npos) break;
        s.remove_prefix(semi + 1);
    }
    return out;
}

std::string_view method_of(std::string_view route) { return route.substr(0, route.find(' ')); }
std::string_view pattern_of(std::string_view route) { return route.substr(route.find(' ') + 1); }

// Inserts routes in order; index i is routes[i]. Returns the first error ("" if none).
std::string build(route_trie& t, const std::vector<std::string>& routes) {
    for (std::size_t i = 0; i < routes.size(); ++i) {
        std::string err = t.insert(method_of(routes[i]), pattern_of(routes[i]), static_cast<std::uint32_t>(i));
        if (!err.empty()) return err;
    }
    return {};
}

// "id=7 rest=a/b": the parameters of the match, in order.
std::string format_params(const skiff::route_params& p) {
    std::string s;
    for (std::size_t i = 0; i < p.count; ++i) {
        if (!s.empty()) s += ' ';
        s += std::string(p.items[i].name) + "=" + std::string(p.items[i].value);
    }
    return s;
}

// "GET POST other": the registered methods in an allowed mask.
std::string format_mask(skiff::detail::method_mask m) {
    std::string s;
    for (std::size_t i = 0; i < skiff::known_method_count; ++i)
        if ((m >> i) & 1u) s += (s.empty() ? "" : " ") + std::string(skiff::method_names[i]);
    if (m & skiff::detail::other_bit) s += s.empty() ? "other" : " other";
    return s;
}

struct outcome {
    std::string route;    // the route that serves it, "" for none
    std::string params;   // only meaningful with a route
    std::string allowed;  // only meaningful without one
};

outcome lookup(const std::vector<std::string>& routes, std::string_view method, std::string_view path) {
    route_trie t;
    std::string err = build(t, routes);
    REQUIRE_MESSAGE(err.empty(), err);
    skiff::route_params params;
    auto m = t.search(skiff::method_from(method), method, path, params);
    if (!m.handler) return {"", "", format_mask(m.allowed)};
    return {routes[m.handler.index()], format_params(params), ""};
}

struct match_case {
    std::string_view name;
    std::string_view routes;  // registered in this order, then again in reverse
    std::string_view method;
    std::string_view path;
    std::string_view route;   // expected winner, "" for none
    std::string_view params;  // expected raw parameters (with a winner) or allowed methods (without)
};

constexpr std::array<match_case, 52> match_cases{{
    // name                              routes                                             method   path                  route                 params / allowed
    {"root",                             "GET /",                                           "GET",   "/",                  "GET /",              ""},
    {"root is not empty path",           "GET /",                                           "GET",   "",                   "",                   ""},
    {"static one segment",               "GET /users; GET /orders",                         "GET",   "/orders",            "GET /orders",        ""},
    {"static two segments",              "GET /a/b; GET /a/c",                              "GET",   "/a/c",               "GET /a/c",           ""},
    {"static prefix is not a match",     "GET /users",                                      "GET",   "/use",               "",                   ""},
    {"static longer is not a match",     "GET /users",                                      "GET",   "/usersx",            "",                   ""},
    {"inner node without handler",       "GET /a/b",                                        "GET",   "/a",                 "",                   ""},
    {"param",                            "GET /users/:id",                                  "GET",   "/users/42",          "GET /users/:id",     "id=42"},
    {"param never empty",                "GET /users/:id",                                  "GET",   "/users/",            "",                   ""},
    {"param is one segment",             "GET /users/:id",                                  "GET",   "/users/4/2",         "",                   ""},
    {"param keeps dots and colons",      "GET /v/:file",                                    "GET",   "/v/a.b:c",           "GET /v/:file",       "file=a.b:c"},
    {"three params",                     "GET /:a/:b/:c",                                   "GET",   "/1/2/3",             "GET /:a/:b/:c",      "a=1 b=2 c=3"},
    {"param then static",                "GET /u/:id/posts",                                "GET",   "/u/7/posts",         "GET /u/:id/posts",   "id=7"},
    {"wildcard",                         "GET /files/*path",                                "GET",   "/files/a/b.txt",     "GET /files/*path",   "path=a/b.txt"},
    {"wildcard may be empty",            "GET /files/*path",                                "GET",   "/files/",            "GET /files/*path",   "path="},
    {"wildcard needs its slash",         "GET /files/*path",                                "GET",   "/files",             "",                   ""},
    {"wildcard keeps trailing slash",    "GET /files/*path",                                "GET",   "/files/a/",          "GET /files/*path",   "path=a/"},
    {"root wildcard on root",            "GET /*all",                                       "GET",   "/",                  "GET /*all",          "all="},
    {"root wildcard deep",               "GET /*all",                                       "GET",   "/a/b/c",             "GET /*all",          "all=a/b/c"},
    {"param then wildcard",              "GET /u/:id/*rest",                                "GET",   "/u/7/x/y",           "GET /u/:id/*rest",   "id=7 rest=x/y"},
    {"static beats param",               "GET /users/:id; GET /users/new",                  "GET",   "/users/new",         "GET /users/new",     ""},
    {"param where static differs",       "GET /users/:id; GET /users/new",                  "GET",   "/users/newer",       "GET /users/:id",     "id=newer"},
    {"static beats wildcard",            "GET /f/*rest; GET /f/x",                          "GET",   "/f/x",               "GET /f/x",           ""},
    {"param beats wildcard",             "GET /f/*rest; GET /f/:name",                      "GET",   "/f/a",               "GET /f/:name",       "name=a"},
    {"wildcard past the param",          "GET /f/*rest; GET /f/:name",                      "GET",   "/f/a/b",             "GET /f/*rest",       "rest=a/b"},
    {"backtrack static to param",        "GET /a/b/c; GET /a/:x/d",                         "GET",   "/a/b/d",             "GET /a/:x/d",        "x=b"},
    {"backtrack static to wildcard",     "GET /a/b/c; GET /a/*rest",                        "GET",   "/a/b/x",             "GET /a/*rest",       "rest=b/x"},
    {"backtrack param to wildcard",      "GET /a/:x/d; GET /a/*rest",                       "GET",   "/a/b/e",             "GET /a/*rest",       "rest=b/e"},
    {"backtrack two levels",             "GET /a/b/c/d; GET /a/:x/c/e; GET /:y/b/c/f",      "GET",   "/a/b/c/f",           "GET /:y/b/c/f",      "y=a"},
    {"backtrack drops stale params",     "GET /:a/:b/x; GET /:a/*rest",                     "GET",   "/1/2/y",             "GET /:a/*rest",      "a=1 rest=2/y"},
    {"backtrack to deeper static",       "GET /:a/x/:b; GET /s/x/y",                        "GET",   "/s/x/z",             "GET /:a/x/:b",       "a=s b=z"},
    {"backtrack on method",              "GET /users/new; POST /users/:id",                 "POST",  "/users/new",         "POST /users/:id",    "id=new"},
    {"static wins for its method",       "GET /users/new; POST /users/:id",                 "GET",   "/users/new",         "GET /users/new",     ""},
    {"405 unions every matching route",  "GET /users/new; POST /users/:id",                 "PUT",   "/users/new",         "",                   "GET POST"},
    {"405 lists the path's methods",     "GET /a; DELETE /a; PUT /b",                       "POST",  "/a",                 "",                   "GET DELETE"},
    {"trailing slash is another path",   "GET /a",                                          "GET",   "/a/",                "",                   ""},
    {"and the other way",                "GET /a/",                                         "GET",   "/a",                 "",                   ""},
    {"both registered",                  "GET /a; GET /a/",                                 "GET",   "/a/",                "GET /a/",            ""},
    {"empty segments are segments",      "GET /a//b",                                       "GET",   "/a//b",              "GET /a//b",          ""},
    {"double slash is not one",          "GET /a/b",                                        "GET",   "/a//b",              "",                   ""},
    {"raw path: %2F does not split",     "GET /:x; GET /a/b",                               "GET",   "/a%2Fb",             "GET /:x",            "x=a%2Fb"},
    {"raw path: static with escape",     "GET /a%20b; GET /:x",                             "GET",   "/a%20b",             "GET /a%20b",         ""},
    {"params are raw in the trie",       "GET /u/:id",                                      "GET",   "/u/a%20b+c",         "GET /u/:id",         "id=a%20b+c"},
    {"HEAD falls back to GET",           "GET /a",                                          "HEAD",  "/a",                 "GET /a",             ""},
    {"explicit HEAD wins",               "GET /a; HEAD /a",                                 "HEAD",  "/a",                 "HEAD /a",            ""},
    {"HEAD takes GET of the static",     "GET /u/new; HEAD /u/:id",                         "HEAD",  "/u/new",             "GET /u/new",         ""},
    {"GET does not fall back to HEAD",   "HEAD /a",                                         "GET",   "/a",                 "",                   "HEAD"},
    {"extension method",                 "PURGE /cache/*key",                               "PURGE", "/cache/a/b",         "PURGE /cache/*key",  "key=a/b"},
    {"other extension method",           "PURGE /c; LINK /c",                               "LINK",  "/c",                 "LINK /c",            ""},
    {"extension allowed bit",            "PURGE /c",                                        "GET",   "/c",                 "",                   "other"},
    {"methods are case-sensitive",       "GET /a",                                          "get",   "/a",                 "",                   "GET"},
    {"asterisk is not a path",           "OPTIONS /; GET /*all",                            "OPTIONS", "*",                "",                   ""},
}};

} // namespace

TEST_CASE("trie: the route that matches, in either registration order") {
    for (const match_case& c : match_cases) {
        CAPTURE(c.name);
        std::vector<std::string> routes = split_routes(c.routes);
        for (int pass = 0; pass < 2; ++pass) {
            CAPTURE(pass);
            outcome o = lookup(routes, c.method, c.path);
            CHECK(o.route == c.route);
            CHECK((c.route.empty() ? o.allowed : o.params) == c.params);
            routes = std::vector<std::string>(routes.rbegin(), routes.rend());
        }
    }
}

TEST_CASE("trie: the search reads only within the path (guard pages on both sides)") {
    // The segment scan and label compare load eight bytes at a time; placed against a
    // PROT_NONE page, any read past either end of the path faults.
    skiff_test::guarded_region region(4096);
    for (const match_case& c : match_cases) {
        CAPTURE(c.name);
        std::vector<std::string> routes = split_routes(c.routes);
        route_trie t;
        REQUIRE(build(t, routes).empty());
        for (int side = 0; side < 2; ++side) {
            const char* p = side == 0 ? region.place_at_end(c.path.data(), c.path.size())
                                      : region.place_at_start(c.path.data(), c.path.size());
            skiff::route_params params;
            auto m = t.search(skiff::method_from(c.method), c.method, {p, c.path.size()}, params);
            CHECK((m.handler ? routes[m.handler.index()] : std::string()) == c.route);
        }
    }
}

TEST_CASE("trie: find_slash and same_bytes agree with the obvious loops at every length") {
    skiff_test::guarded_region region(4096);
    for (std::size_t n = 0; n <= 40; ++n) {
        for (std::size_t slash = 0; slash <= n; ++slash) {  // slash == n: none
            CAPTURE(n);
            CAPTURE(slash);
            std::string s(n, 'a');
            for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + i % 26);
            if (slash < n) s[slash] = '/';
            const char* p = region.place_at_end(s.data(), n);
            CHECK(skiff::detail::find_slash(p, p + n) == p + slash);
            std::string other = s;
            CHECK(skiff::detail::same_bytes(p, other.data(), n));
            if (slash < n) {
                other[slash] = '.';  // differs in one byte, at each position in turn
                CHECK_FALSE(skiff::detail::same_bytes(p, other.data(), n));
            }
        }
    }
}

TEST_CASE("trie: precedence holds in every registration order") {
    // Every permutation of four overlapping routes, each path answered by the same route.
    std::vector<std::string> routes{"GET /a/b", "GET /a/:x", "GET /a/*rest", "GET /:y/b"};
    struct probe {
        std::string_view path, route, params;
    };
    const std::array<probe, 5> probes{{
        {"/a/b", "GET /a/b", ""},
        {"/a/c", "GET /a/:x", "x=c"},
        {"/a/c/d", "GET /a/*rest", "rest=c/d"},
        {"/z/b", "GET /:y/b", "y=z"},
        {"/z/c", "", ""},
    }};
    std::array<std::size_t, 4> order{0, 1, 2, 3};
    int permutations = 0;
    do {
        std::vector<std::string> shuffled;
        for (std::size_t i : order) shuffled.push_back(routes[i]);
        for (const probe& p : probes) {
            CAPTURE(p.path);
            CAPTURE(permutations);
            outcome o = lookup(shuffled, "GET", p.path);
            CHECK(o.route == p.route);
            if (!p.route.empty()) CHECK(o.params == p.params);
        }
        ++permutations;
    } while (std::next_permutation(order.begin(), order.end()));
    CHECK(permutations == 24);
}

TEST_CASE("trie: many static children (hashed) still match exactly") {
    // Past the linear-scan threshold the children are hashed; every label must still be found,
    // near misses must not be, and a miss must fall through to the parameter.
    std::vector<std::string> routes{"GET /:fallback"};
    for (int i = 0; i < 40; ++i) routes.push_back("GET /r" + std::to_string(i));
    routes.push_back("GET /");
    routes.push_back("GET /r1x");
    for (const std::string& r : routes) {
        if (r == "GET /:fallback") continue;
        CAPTURE(r);
        outcome o = lookup(routes, "GET", pattern_of(r));
        CHECK(o.route == r);
    }
    const std::array<std::string_view, 5> misses{"/r40", "/r", "/R1", "/r1y", "/rr1"};
    for (std::string_view m : misses) {
        CAPTURE(m);
        outcome o = lookup(routes, "GET", m);
        CHECK(o.route == "GET /:fallback");
        CHECK(o.params == "fallback=" + std::string(m.substr(1)));
    }
}

TEST_CASE("trie: whole static paths, short and long, found exactly") {
    // Static routes are also looked up by their whole path (one hash): lengths under and
    // over the eight-byte step and the 63-byte length filter, near misses of the same length,
    // and a static route without the method falling back to the walk.
    std::vector<std::string> routes{"GET /:p", "GET /*rest", "POST /x/:y"};
    const std::array<std::string_view, 7> statics{
        "/a", "/abcdefg", "/abcdefgh", "/abcdefghi",
        "/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u/v/w/x/y/z/0/1/2/3",         // 61 bytes
        "/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u/v/w/x/y/z/0/1/2/3/45",      // 64 bytes
        "/x/abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123",  // 72 bytes
    };
    for (std::string_view p : statics) routes.push_back("GET " + std::string(p));
    for (std::string_view p : statics) {
        CAPTURE(p);
        CHECK(lookup(routes, "GET", p).route == "GET " + std::string(p));
        CHECK(lookup(routes, "HEAD", p).route == "GET " + std::string(p));
        std::string near(p);
        near.back() = near.back() == 'z' ? 'y' : 'z';  // same length, last byte differs
        CHECK(lookup(routes, "GET", near).route != "GET " + std::string(p));
        near = std::string(p);
        near[1] = near[1] == 'a' ? 'b' : 'a';  // same length, an early byte differs
        CHECK(lookup(routes, "GET", near).route != "GET " + std::string(p));
    }
    // The static "/x/abc...123" has GET only: POST goes on to "/x/:y".
    outcome o = lookup(routes, "POST", statics[6]);
    CHECK(o.route == "POST /x/:y");
    CHECK(o.params == "y=" + std::string(statics[6].substr(3)));
    CHECK(lookup(routes, "DELETE", "/a").allowed == "GET");

    // One params reused across searches, as a request reuses its own: a static match after a
    // parameter match reports no parameters.
    route_trie t;
    REQUIRE(build(t, routes).empty());
    skiff::route_params p;
    REQUIRE(t.search(skiff::method::post, "POST", "/x/1", p).handler);
    REQUIRE(p.count == 1);
    REQUIRE(t.search(skiff::method::get, "GET", "/abcdefgh", p).handler);
    CHECK(p.count == 0);
}

TEST_CASE("trie: parameters and depth at their limits") {
    std::string pattern, path, params;
    for (std::size_t i = 0; i < skiff::max_route_params; ++i) {
        pattern += "/:p" + std::to_string(i);
        path += "/v" + std::to_string(i);
        params += (i ? " p" : "p") + std::to_string(i) + "=v" + std::to_string(i);
    }
    outcome o = lookup({"GET " + pattern}, "GET", path);
    CHECK(o.route == "GET " + pattern);
    CHECK(o.params == params);

    std::string deep_pattern, deep_path;
    for (std::size_t i = 0; i < skiff::max_route_depth; ++i) deep_pattern += "/s";
    deep_path = deep_pattern;
    CHECK(lookup({"GET " + deep_pattern}, "GET", deep_path).route == "GET " + deep_pattern);
    // A path deeper than any route is still searched without overflow: the wildcard takes it.
    std::string long_path;
    for (int i = 0; i < 200; ++i) long_path += "/x";
    CHECK(lookup({"GET /x/*rest", "GET /x/x"}, "GET", long_path).route == "GET /x/*rest");
    CHECK(lookup({"GET " + deep_pattern}, "GET", deep_path + "/s").route.empty());
}

namespace {

struct insert_case {
    std::string_view name;
    std::string_view routes;  // the last one is expected to fail (or all succeed)
    std::string_view first;   // text the error must contain ("" when none is expected)
    std::string_view second;  // more text it must contain
};

constexpr std::array<insert_case, 23> insert_cases{{
    // name                                routes                                    first                     second
    {"distinct methods share a path",      "GET /a; POST /a; PURGE /a",               "",                       ""},
    {"param and wildcard at one position", "GET /a/:x; GET /a/*y",                    "",                       ""},
    {"static and param at one position",   "GET /a/b; GET /a/:x",                     "",                       ""},
    {"same param name, other branches",    "GET /u/:id; GET /u/:id/x; POST /u/:id",   "",                       ""},
    {"explicit HEAD beside GET",           "GET /a; HEAD /a",                         "",                       ""},
    {"same route twice",                   "GET /a; GET /a",                          "route GET '/a'",         "with GET '/a'"},
    {"same param route twice",             "GET /u/:id; GET /u/:id",                  "route GET '/u/:id'",     "with GET '/u/:id'"},
    {"same extension route twice",         "PURGE /a; PURGE /a",                      "route PURGE '/a'",       "with PURGE '/a'"},
    {"two param names at one position",    "GET /u/:id; GET /u/:uid/x",               "'/u/:uid/x'",            "'/u/:id'"},
    {"param names differ deeper",          "GET /u/:id/x/:a; GET /u/:id/x/:b",        "'/u/:id/x/:b'",          "'/u/:id/x/:a'"},
    {"two wildcard names",                 "GET /f/*a; POST /f/*b",                   "'/f/*b'",                "'/f/*a'"},
    {"empty pattern",                      "GET ",                                    "must start with '/'",    ""},
    {"relative pattern",                   "GET users",                               "must start with '/'",    "'users'"},
    {"param without name",                 "GET /u/:",                                "without a name",         "'/u/:'"},
    {"wildcard without name",              "GET /f/*",                                "without a name",         "'/f/*'"},
    {"wildcard not last",                  "GET /f/*rest/x",                          "wildcard must be the last", "'/f/*rest/x'"},
    {"wildcard before empty segment",      "GET /f/*rest/",                           "wildcard must be the last", "'/f/*rest/'"},
    {"param name twice",                   "GET /:a/:a",                              "'a' appears twice",      "'/:a/:a'"},
    {"param and wildcard share a name",    "GET /:a/*a",                              "'a' appears twice",      "'/:a/*a'"},
    {"too many params",                    "GET /:a/:b/:c/:d/:e/:f/:g/:h/:i/:j/:k/:l/:m/:n/:o/:p/:q", "more than 16 parameters", ""},
    {"sixteen params are fine",            "GET /:a/:b/:c/:d/:e/:f/:g/:h/:i/:j/:k/:l/:m/:n/:o/:p", "", ""},
    {"too deep",                           "GET /1/2/3/4/5/6/7/8/9/10/11/12/13/14/15/16/17/18/19/20/21/22/23/24/25/26/27/28/29/30/31/32/33",
                                                                                      "more than 32 segments",  ""},
    {"thirty-two segments are fine",       "GET /1/2/3/4/5/6/7/8/9/10/11/12/13/14/15/16/17/18/19/20/21/22/23/24/25/26/27/28/29/30/31/32",
                                                                                      "",                       ""},
}};

} // namespace

TEST_CASE("trie: conflicts and bad patterns are refused, naming both patterns") {
    for (const insert_case& c : insert_cases) {
        CAPTURE(c.name);
        std::vector<std::string> routes = split_routes(c.routes);
        route_trie t;
        std::string err = build(t, routes);
        CAPTURE(err);
        if (c.first.empty()) {
            CHECK(err.empty());
            continue;
        }
        CHECK(err.find(c.first) != std::string::npos);
        CHECK(err.find(c.second) != std::string::npos);
    }
}

TEST_CASE("trie: a refused route leaves the trie as it was") {
    route_trie t;
    REQUIRE(t.insert("GET", "/u/:id", 0).empty());
    REQUIRE(t.insert("GET", "/u/:id/x", 1).empty());
    CHECK_FALSE(t.insert("GET", "/u/:uid/y", 2).empty());
    CHECK_FALSE(t.insert("GET", "/u/:id", 3).empty());
    CHECK_FALSE(t.insert("POST", "/f/*a/b", 4).empty());
    skiff::route_params p;
    CHECK(t.search(skiff::method::get, "GET", "/u/1/y", p).handler == route_id::none());
    CHECK(t.search(skiff::method::get, "GET", "/u/1/y", p).allowed == 0);
    CHECK(t.search(skiff::method::get, "GET", "/u/1", p).handler == route_id::of(0));
    CHECK(t.search(skiff::method::post, "POST", "/f/1/b", p).allowed == 0);
    CHECK(t.insert("GET", "/u/:id/y", 5).empty());
    CHECK(t.search(skiff::method::get, "GET", "/u/1/y", p).handler == route_id::of(5));
}

TEST_CASE("trie: route_id is none until given an index, and index 0 is not none") {
    route_id none;
    CHECK_FALSE(none);
    CHECK(none == route_id::none());
    std::array<route_id, 3> zero_filled{};  // a node's method slots start out like this
    for (route_id r : zero_filled) CHECK_FALSE(r);
    route_id first = route_id::of(0);
    CHECK(first);
    CHECK(first.index() == 0);
    CHECK(first != none);
    CHECK(route_id::of(41).index() == 41);
    CHECK(route_id::of(41) != first);
}
