// Fuzz target for the router: a request line (method picked by the first byte, then the
// path) through the parser, router::serve() and the response, checked against a reference
// matcher written for clarity, not speed.
//
// The reference knows the rules trie.hpp states: patterns split on '/', a literal segment
// matches byte for byte on the raw path, ":name" one non-empty segment, "*name" the rest
// (possibly empty); among the patterns that match and have a handler for the method, the
// one whose segments rank highest, position by position (literal > parameter > wildcard),
// wins, because the trie's depth-first search tries them in that order and backtracks.
// Properties asserted (abort with a message on failure):
//  - 200 exactly when the reference finds a route, and it is the reference's route, with
//    each parameter its raw segment percent-decoded;
//  - otherwise 404 when no pattern matches the path for any method, 405 (with Allow) when
//    one does for another method, and 400 only for a parameter the request refuses (a bad
//    or refused escape, which needs a '%', or a ".." segment in a wildcard);
//  - nothing else, and no crash, leak or undefined behaviour (ASan and UBSan in the fuzzer).
// HEAD and OPTIONS are served too but only checked for a sane status (their answers follow
// other rules: GET's handler, 204 + Allow).
// Only the parts it drives; the single-header configuration has no parts on its include
// path, so there it takes the whole file.
#ifdef SKIFF_TEST_SINGLE_HEADER
#include <skiff/skiff.hpp>
#else
#include <skiff/http/message_parser.hpp>
#include <skiff/http/response_access.hpp>
#include <skiff/router/router.hpp>
#endif

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint8_t
#include <cstdio>       // std::fprintf for property failures
#include <cstdlib>      // std::abort
#include <optional>     // std::optional for the reference's answer
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

namespace {

using skiff::detail::request_access;
using skiff::detail::response_access;

struct route {
    const char* method;
    const char* pattern;
};

// Literals, parameters and wildcards at the same positions, so precedence and backtracking
// are exercised: "/users/new" beside "/users/:id", "/a/:x/c" beside "/a/b/:y", a wildcard
// under a parameter, and a deep static route.
const route routes[] = {
    {"GET", "/"},
    {"GET", "/users"},
    {"GET", "/users/"},
    {"GET", "/users/:id"},
    {"PUT", "/users/:id"},
    {"GET", "/users/new"},
    {"DELETE", "/users/:id/posts/:post"},
    {"GET", "/users/:id/posts/latest"},
    {"GET", "/files/*path"},
    {"POST", "/files/upload"},
    {"GET", "/a/b/c"},
    {"GET", "/a/:x/c"},
    {"GET", "/a/b/:y"},
    {"GET", "/:top/static"},
    {"POST", "/:top/*rest"},
    {"GET", "/deep/a/b/c/d/e/f/g/h"},
};

const char* const methods[] = {"GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"};

[[noreturn]] void fail(const char* property, std::string_view path, const std::string& response) {
    std::fprintf(stderr, "property failed: %s\npath: %.*s\nresponse:\n%s\n", property, static_cast<int>(path.size()),
                 path.data(), response.c_str());
    std::abort();
}

std::vector<std::string_view> split(std::string_view path) {  // after the leading '/'
    std::vector<std::string_view> out;
    path.remove_prefix(1);
    for (;;) {
        std::size_t slash = path.find('/');
        out.push_back(path.substr(0, slash));
        if (slash == std::string_view::npos) return out;
        path.remove_prefix(slash + 1);
    }
}

struct match {
    const route* r = nullptr;
    std::vector<int> rank;  // per pattern segment: 2 literal, 1 parameter, 0 wildcard
    std::vector<std::string> params;
};

// Does pattern match path? Fills the rank and the raw parameter values.
bool matches(const route& r, std::string_view path, match& m) {
    std::vector<std::string_view> want = split(r.pattern), have = split(path);
    m.r = &r;
    m.rank.clear();
    m.params.clear();
    for (std::size_t i = 0; i < want.size(); ++i) {
        std::string_view w = want[i];
        if (!w.empty() && w.front() == '*') {
            if (i >= have.size()) return false;
            std::string rest(have[i]);
            for (std::size_t j = i + 1; j < have.size(); ++j) rest += "/" + std::string(have[j]);
            m.rank.push_back(0);
            m.params.push_back(rest);
            return true;
        }
        if (i >= have.size()) return false;
        if (!w.empty() && w.front() == ':') {
            if (have[i].empty()) return false;
            m.rank.push_back(1);
            m.params.emplace_back(have[i]);
        } else {
            if (have[i] != w) return false;
            m.rank.push_back(2);
        }
    }
    return want.size() == have.size();
}

std::optional<match> reference(std::string_view method, std::string_view path, bool& any_method) {
    std::optional<match> best;
    any_method = false;
    for (const route& r : routes) {
        match m;
        if (!matches(r, path, m)) continue;
        any_method = true;
        if (method != r.method) continue;
        if (!best || m.rank > best->rank) best = m;
    }
    return best;
}

std::string decoded(const std::string& raw, bool& ok) {
    std::string out(raw.size(), '\0');
    std::optional<std::size_t> n = skiff::percent_decode(raw, out.data());
    ok = n.has_value();
    out.resize(ok ? *n : 0);
    return out;
}

skiff::router make_router() {
    skiff::router r;
    for (const route& rt : routes) {
        std::string name = std::string(rt.method) + " " + rt.pattern;
        r.add(rt.method, rt.pattern, [name](skiff::request& req, skiff::response& res) {
            std::string body = name;
            for (std::size_t i = 0; i < req.params().count; ++i) body += "\n" + std::string(req.params().items[i].value);
            res.text(body);
        });
    }
    return r;
}

struct served {
    int status = 0;
    bool has_allow = false;
    std::string body, bytes;
};

served serve(const skiff::router& router, std::string_view method, std::string_view path, bool& parsed) {
    static skiff::request req;
    static skiff::response res;
    static skiff::detail::byte_buffer out;
    static skiff::detail::date_cache date;
    static const skiff::parse_limits limits;
    static bool ready = false;
    if (!ready) {
        request_access::init(req, limits.max_headers, limits.max_request_line);
        date.update(784111777);
        ready = true;
    }
    std::string raw = std::string(method) + " " + std::string(path) + " HTTP/1.1\r\nHost: h\r\n\r\n";
    skiff::message_parser parser;
    skiff::parse_result p = parser.parse(raw.data(), raw.size(), request_access::head(req), request_access::fields(req), limits);
    // A path with a space and a line break in it can hold a whole request line of its own
    // ("/%41. HTTP/1.0\r\nAllow: ..."), which the parser rightly reads as the request; the
    // reference judges only a request whose target is the path it was given.
    parsed = p.status == skiff::parse_status::complete && request_access::head(req).target == path;
    served s;
    if (!parsed) return s;
    request_access::reset(req);
    out.clear();
    response_access::start(res, out, date, method == "HEAD", false);
    router.serve(req, res);
    if (!res.sent()) res.end();
    s.bytes.assign(out.data(), out.size());
    s.status = std::stoi(s.bytes.substr(9, 3));
    s.has_allow = s.bytes.find("\r\nAllow: ") != std::string::npos;
    std::size_t body = s.bytes.find("\r\n\r\n");
    s.body = body == std::string::npos ? "" : s.bytes.substr(body + 4);
    return s;
}

void check(std::string_view method, std::string_view path, const served& s) {
    if (method == "HEAD" || method == "OPTIONS") {
        if (s.status != 200 && s.status != 204 && s.status != 400 && s.status != 404 && s.status != 405)
            fail("HEAD and OPTIONS get 200, 204, 400, 404 or 405", path, s.bytes);
        return;
    }
    bool any_method = false;
    std::optional<match> want = reference(method, path, any_method);
    if (s.status == 400) {
        if (!want) fail("400 only when a route matched and its parameters did not decode", path, s.bytes);
        bool refusable = false;  // an escape, or a ".." segment a wildcard would hand over
        for (const std::string& p : want->params)
            refusable |= p.find('%') != std::string::npos || ("/" + p + "/").find("/../") != std::string::npos;
        if (!refusable) fail("400 only for a parameter with an escape or a '..' segment", path, s.bytes);
        return;
    }
    if (want) {
        if (s.status != 200) fail("a matching route answers 200", path, s.bytes);
        std::string expect = std::string(want->r->method) + " " + want->r->pattern;
        for (const std::string& p : want->params) {
            bool ok = false;
            std::string d = decoded(p, ok);
            if (!ok) fail("a parameter that does not decode is answered 400", path, s.bytes);
            expect += "\n" + d;
        }
        if (s.body != expect) fail("the reference's route runs, with its parameters decoded", path, s.bytes);
        return;
    }
    if (any_method && (s.status != 405 || !s.has_allow)) fail("a path routed for other methods is 405 + Allow", path, s.bytes);
    if (!any_method && s.status != 404) fail("a path no route matches is 404", path, s.bytes);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const skiff::router router = make_router();
    if (size == 0 || size > 512) return 0;
    std::string_view method = methods[data[0] % (sizeof methods / sizeof methods[0])];
    std::string path(reinterpret_cast<const char*>(data + 1), size - 1);
    if (path.empty() || path.front() != '/') path.insert(path.begin(), '/');
    if (path.find('?') != std::string::npos) return 0;  // the query is not the router's
    bool parsed = false;
    served s = serve(router, method, path, parsed);
    if (parsed) check(method, path, s);
    return 0;
}
