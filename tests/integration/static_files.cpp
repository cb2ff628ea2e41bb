// serve_dir: types, lengths and bytes (a file larger than any socket buffer, sent by
// sendfile), HEAD, the conditional requests (304 both ways, 412 both ways, If-Range both
// ways), ranges (206 in three forms, 416), directories (index.html, 301), precompressed
// siblings with Vary, every way out of root refused, hidden files refused unless asked for, and
// a file answer pipelined in order before a small one.
#include <skiff/testing.hpp>

#include "support/loopback.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sys/resource.h>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <string_view>
#include <unistd.h>
#include <vector>

using namespace skiff_test;

namespace {

constexpr std::size_t big_size = 8u << 20;  // larger than the loopback socket buffers

std::string big_bytes() {
    std::string s(big_size, ' ');
    for (std::size_t i = 0; i < s.size(); ++i) s[i] = static_cast<char>((i * 7 + i / 4096) & 0xff);
    return s;
}

void write_file(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
}

// A directory tree made once for the whole file: <base>/www is served; <base>/secret.txt lies
// outside it, reached only through a link that points out.
struct site {
    std::string base;
    std::string root;
    site() {
        char name[] = "/tmp/skiff_static_XXXXXX";
        base = ::mkdtemp(name);
        root = base + "/www";
        ::mkdir(root.c_str(), 0755);
        ::mkdir((root + "/docs").c_str(), 0755);
        ::mkdir((root + "/empty").c_str(), 0755);
        ::mkdir((root + "/.git").c_str(), 0755);
        ::mkdir((root + "/.well-known").c_str(), 0755);
        write_file(root + "/index.html", "<h1>home</h1>");
        write_file(root + "/docs/index.html", "<h1>docs</h1>");
        write_file(root + "/style.css", "body{color:red}");
        write_file(root + "/style.css.gz", "GZIP-BYTES");
        write_file(root + "/style.css.br", "BROTLI");
        write_file(root + "/app.js", "let a=1;");
        write_file(root + "/app.js.gz", "GZ-JS");
        write_file(root + "/digits.txt", "0123456789");
        write_file(root + "/blob", "raw");
        write_file(root + "/big.bin", big_bytes());
        write_file(root + "/same.txt", "12345678");
        write_file(root + "/same.txt.gz", "GZ345678");  // as `gzip -k` leaves it: same size and time
        write_file(root + "/empty.txt", "");
        write_file(root + "/future.txt", "later");
        write_file(root + "/.env", "PASSWORD=hunter2");
        write_file(root + "/.git/config", "[core]");
        write_file(root + "/docs/.draft.html", "<h1>draft</h1>");
        write_file(root + "/.well-known/security.txt", "Contact: mailto:security@example.com");
        const timespec same_time[2] = {{1700000000, 0}, {1700000000, 0}};
        ::utimensat(AT_FDCWD, (root + "/same.txt").c_str(), same_time, 0);
        ::utimensat(AT_FDCWD, (root + "/same.txt.gz").c_str(), same_time, 0);
        const timespec in_2100[2] = {{4102444800, 0}, {4102444800, 0}};
        ::utimensat(AT_FDCWD, (root + "/future.txt").c_str(), in_2100, 0);
        write_file(base + "/secret.txt", "top secret");
        int ignored = ::symlink("../secret.txt", (root + "/out").c_str());
        ignored += ::symlink("..", (root + "/up").c_str());
        ignored += ::symlink("digits.txt", (root + "/in").c_str());
        ignored += ::mkfifo((root + "/pipe").c_str(), 0644);
        (void)ignored;
    }
    ~site() {  // the tree above, leaves first
        for (const char* f : {"index.html", "docs/index.html", "style.css", "style.css.gz", "style.css.br", "app.js",
                              "app.js.gz", "digits.txt", "blob", "big.bin", "same.txt", "same.txt.gz", "empty.txt",
                              "future.txt", ".env", ".git/config", "docs/.draft.html", ".well-known/security.txt",
                              "out", "up", "in", "pipe"})
            ::unlink((root + "/" + f).c_str());
        for (const char* d : {"/docs", "/empty", "/.git", "/.well-known", ""}) ::rmdir((root + d).c_str());
        ::unlink((base + "/secret.txt").c_str());
        ::rmdir(base.c_str());
    }
};

const site& the_site() {
    static site s;
    return s;
}

template <class Policy>
std::function<void(skiff::basic_server<Policy>&)> static_routes() {
    return [](skiff::basic_server<Policy>& app) {
        app.serve_dir("/", the_site().root);
        app.get("/api/ping", [](skiff::request&, skiff::response& res) { res.text("pong"); });
    };
}

template <class Policy>
response fetch(running_server<Policy>& srv, const std::string& target, const std::string& fields = "",
               const std::string& method = "GET") {
    client c(srv.port());
    c.send(method + " " + target + " HTTP/1.1\r\nHost: x\r\n" + fields + "\r\n");
    std::string all = c.read_until([&](const std::string& s) { return !parse_responses(s, method == "HEAD").empty(); });
    auto got = parse_responses(all, method == "HEAD");
    REQUIRE(got.size() == 1);
    return got[0];
}

} // namespace

TEST_CASE_TEMPLATE("a file is answered with its type, length and bytes", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(static_routes<Policy>());
    auto r = fetch(srv, "/digits.txt");
    CHECK(r.status == 200);
    CHECK(r.header("Content-Type") == "text/plain; charset=utf-8");
    CHECK(r.header("Content-Length") == "10");
    CHECK(r.body == "0123456789");
    CHECK(r.header("Accept-Ranges") == "bytes");
    CHECK(r.header("ETag").size() > 2);
    CHECK(r.header("Last-Modified").size() == 29);
    CHECK(fetch(srv, "/style.css").header("Content-Type") == "text/css; charset=utf-8");
    CHECK(fetch(srv, "/app.js").header("Content-Type") == "text/javascript; charset=utf-8");
    CHECK(fetch(srv, "/blob").header("Content-Type") == "application/octet-stream");
    CHECK(fetch(srv, "/in").body == "0123456789");  // a link that stays inside root is followed
}

TEST_CASE_TEMPLATE("a file larger than the socket buffer arrives whole", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(static_routes<Policy>());
    client c(srv.port());
    c.send("GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n");
    std::string all = c.read_until([](const std::string& s) {
        auto end = s.find("\r\n\r\n");
        return end != std::string::npos && s.size() >= end + 4 + big_size;
    }, 20000ms);
    auto end = all.find("\r\n\r\n");
    REQUIRE(end != std::string::npos);
    CHECK(all.find("Content-Length: 8388608\r\n") < end);
    CHECK(all.size() == end + 4 + big_size);
    CHECK(all.substr(end + 4) == big_bytes());
}

TEST_CASE_TEMPLATE("HEAD gives the head of a file and no body", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(static_routes<Policy>());
    client c(srv.port());
    c.send("HEAD /big.bin HTTP/1.1\r\nHost: x\r\n\r\nGET /api/ping HTTP/1.1\r\nHost: x\r\n\r\n");
    std::string all = c.read_until([](const std::string& s) { return s.find("pong") != std::string::npos; });
    auto end = all.find("\r\n\r\n");
    REQUIRE(end != std::string::npos);
    CHECK(all.find("Content-Length: 8388608\r\n") < end);
    CHECK(all.substr(end + 4, 17) == "HTTP/1.1 200 OK\r\n");  // the next answer, no body between
}

TEST_CASE_TEMPLATE("If-None-Match and If-Modified-Since answer 304", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(static_routes<Policy>());
    auto first = fetch(srv, "/digits.txt");
    std::string etag = first.header("ETag"), date = first.header("Last-Modified");
    auto by_tag = fetch(srv, "/digits.txt", "If-None-Match: \"x\", " + etag + "\r\n");
    CHECK(by_tag.status == 304);
    CHECK(by_tag.body.empty());
    CHECK(by_tag.header("ETag") == etag);
    CHECK(fetch(srv, "/digits.txt", "If-None-Match: W/" + etag + "\r\n").status == 304);  // weak comparison
    CHECK(fetch(srv, "/digits.txt", "If-None-Match: *\r\n").status == 304);
    CHECK(fetch(srv, "/digits.txt", "If-Modified-Since: " + date + "\r\n").status == 304);
    CHECK(fetch(srv, "/digits.txt", "If-Modified-Since: Thu, 01 Jan 1970 00:00:01 GMT\r\n").status == 200);
    CHECK(fetch(srv, "/digits.txt", "If-Modified-Since: not a date\r\n").status == 200);
    // RFC 9110 §13.2.2: If-None-Match decides; a matching date does not make a stale tag fresh.
    CHECK(fetch(srv, "/digits.txt", "If-None-Match: \"other\"\r\nIf-Modified-Since: " + date + "\r\n").status == 200);
}

TEST_CASE_TEMPLATE("If-Match and If-Unmodified-Since answer 412 when false, before any 304 or range",
                   Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(static_routes<Policy>());
    auto first = fetch(srv, "/digits.txt");
    std::string etag = first.header("ETag"), date = first.header("Last-Modified");
    auto stale = fetch(srv, "/digits.txt", "If-Match: \"other\"\r\n");
    CHECK(stale.status == 412);
    CHECK(stale.body.empty());
    CHECK(fetch(srv, "/digits.txt", "If-Match: \"x\", " + etag + "\r\n").status == 200);
    CHECK(fetch(srv, "/digits.txt", "If-Match: *\r\n").status == 200);
    CHECK(fetch(srv, "/digits.txt", "If-Match: W/" + etag + "\r\n").status == 412);  // strong comparison
    CHECK(fetch(srv, "/digits.txt", "If-Match: \"other\"\r\nRange: bytes=0-4\r\n").status == 412);
    CHECK(fetch(srv, "/digits.txt", "If-Match: \"other\"\r\nIf-None-Match: " + etag + "\r\n").status == 412);
    CHECK(fetch(srv, "/digits.txt", "If-Unmodified-Since: Mon, 01 Jan 1990 00:00:00 GMT\r\n").status == 412);
    CHECK(fetch(srv, "/digits.txt", "If-Unmodified-Since: " + date + "\r\n").status == 200);
    CHECK(fetch(srv, "/digits.txt", "If-Unmodified-Since: not a date\r\n").status == 200);
    // §13.2.2: If-Match, present, decides; an old date beside a matching tag does not fail it.
    CHECK(fetch(srv, "/digits.txt", "If-Match: " + etag + "\r\nIf-Unmodified-Since: Mon, 01 Jan 1990 00:00:00 GMT\r\n")
              .status == 200);
}

// RFC 9110 §5.3: field lines of one name are one field, their values joined by commas. A
// client (or a proxy) may split If-None-Match or Accept-Encoding over several lines; the tag
// or coding on the second line counts as much as one on the first.
TEST_CASE_TEMPLATE("a list field split over several lines is read whole", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(static_routes<Policy>());
    std::string etag = fetch(srv, "/digits.txt").header("ETag");
    REQUIRE(!etag.empty());
    CHECK(fetch(srv, "/digits.txt", "If-None-Match: \"x\"\r\nIf-None-Match: " + etag + "\r\n").status == 304);
    CHECK(fetch(srv, "/digits.txt", "If-None-Match: \"x\"\r\nif-none-match: \"y\", W/" + etag + "\r\n").status ==
          304);
    CHECK(fetch(srv, "/digits.txt", "If-None-Match: \"x\"\r\nIf-None-Match: \"y\"\r\n").status == 200);
    auto br = fetch(srv, "/style.css", "Accept-Encoding: gzip;q=0\r\nAccept-Encoding: br\r\n");
    CHECK(br.header("Content-Encoding") == "br");
    CHECK(br.body == "BROTLI");
    // Range is one value: two lines combine into no valid range set, so the whole file.
    auto two = fetch(srv, "/digits.txt", "Range: bytes=0-1\r\nRange: bytes=5-9\r\n");
    CHECK(two.status == 200);
    CHECK(two.body == "0123456789");
    auto gz = fetch(srv, "/app.js", "Accept-Encoding: identity\r\nAccept-Encoding: gzip\r\n");
    CHECK(gz.header("Content-Encoding") == "gzip");
    CHECK(gz.body == "GZ-JS");
}

TEST_CASE_TEMPLATE("a single Range is answered 206 in each form, 416 when unsatisfiable", Policy,
                   SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(static_routes<Policy>());
    auto ab = fetch(srv, "/digits.txt", "Range: bytes=2-4\r\n");
    CHECK(ab.status == 206);
    CHECK(ab.body == "234");
    CHECK(ab.header("Content-Range") == "bytes 2-4/10");
    CHECK(ab.header("Content-Length") == "3");
    auto from = fetch(srv, "/digits.txt", "Range: bytes=7-\r\n");
    CHECK(from.status == 206);
    CHECK(from.body == "789");
    CHECK(from.header("Content-Range") == "bytes 7-9/10");
    auto last = fetch(srv, "/digits.txt", "Range: bytes=-4\r\n");
    CHECK(last.status == 206);
    CHECK(last.body == "6789");
    CHECK(fetch(srv, "/digits.txt", "Range: bytes=5-100\r\n").body == "56789");  // clipped to the end
    auto beyond = fetch(srv, "/digits.txt", "Range: bytes=10-\r\n");
    CHECK(beyond.status == 416);
    CHECK(beyond.header("Content-Range") == "bytes */10");
    CHECK(fetch(srv, "/digits.txt", "Range: bytes=-0\r\n").status == 416);
    auto several = fetch(srv, "/digits.txt", "Range: bytes=0-1,4-5\r\n");  // answered whole
    CHECK(several.status == 200);
    CHECK(several.body == "0123456789");
    CHECK(fetch(srv, "/digits.txt", "Range: lines=1-2\r\n").status == 200);
    CHECK(fetch(srv, "/digits.txt", "Range: bytes=5-2\r\n").status == 200);
    auto big = fetch(srv, "/big.bin", "Range: bytes=8388000-\r\n");
    CHECK(big.status == 206);
    CHECK(big.body == big_bytes().substr(8388000));
}

TEST_CASE_TEMPLATE("If-Range gives the range only when it names the current file", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(static_routes<Policy>());
    auto first = fetch(srv, "/digits.txt");
    std::string etag = first.header("ETag"), date = first.header("Last-Modified");
    CHECK(fetch(srv, "/digits.txt", "Range: bytes=0-0\r\nIf-Range: " + etag + "\r\n").status == 206);
    CHECK(fetch(srv, "/digits.txt", "Range: bytes=0-0\r\nIf-Range: " + date + "\r\n").status == 206);
    auto stale = fetch(srv, "/digits.txt", "Range: bytes=0-0\r\nIf-Range: \"old\"\r\n");
    CHECK(stale.status == 200);
    CHECK(stale.body == "0123456789");
    CHECK(fetch(srv, "/digits.txt", "Range: bytes=0-0\r\nIf-Range: W/" + etag + "\r\n").status == 200);
    CHECK(fetch(srv, "/digits.txt", "Range: bytes=0-0\r\nIf-Range: Thu, 01 Jan 1970 00:00:01 GMT\r\n").status == 200);
}

TEST_CASE_TEMPLATE("a directory answers its index.html, or 301 to its slash form", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(static_routes<Policy>());
    CHECK(fetch(srv, "/").body == "<h1>home</h1>");
    auto docs = fetch(srv, "/docs/");
    CHECK(docs.status == 200);
    CHECK(docs.body == "<h1>docs</h1>");
    CHECK(docs.header("Content-Type") == "text/html; charset=utf-8");
    auto moved = fetch(srv, "/docs?x=1");
    CHECK(moved.status == 301);
    CHECK(moved.header("Location") == "/docs/?x=1");
    CHECK(fetch(srv, "/empty/").status == 404);  // no index, no listing
    CHECK(fetch(srv, "/missing.txt").status == 404);
}

// A Location of "//docs/" is a network-path reference (RFC 3986 §4.2): a browser goes to the
// host "docs". Empty segments are merged before the target is written, as nginx's
// merge_slashes does, so every redirect stays on this site.
TEST_CASE_TEMPLATE("a directory's redirect never names another host", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(static_routes<Policy>());
    for (const char* target : {"//docs", "//%64ocs?x=1", "///docs", "/./docs"}) {
        CAPTURE(target);
        auto r = fetch(srv, target);
        if (r.status != 301) continue;  // answered some other way: no Location to follow
        std::string location = r.header("Location");
        CHECK(location.substr(0, 2) != "//");
        CHECK(location.substr(0, 1) == "/");
    }
    auto twice = fetch(srv, "//docs");
    CHECK(twice.status == 301);
    CHECK(twice.header("Location") == "/docs/");
    auto encoded = fetch(srv, "//%64ocs?x=1");
    CHECK(encoded.status == 301);
    CHECK(encoded.header("Location") == "/%64ocs/?x=1");
    CHECK(fetch(srv, "/docs//sub").status == 404);  // no such directory: nothing to redirect to
}

// serve_dir("/static", ...): "/static" is the root directory's URL without its slash, so it
// answers as "/static/sub" does, 301 to the slash form, instead of a 404.
TEST_CASE_TEMPLATE("the bare prefix of serve_dir redirects to its slash form", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv([](skiff::basic_server<Policy>& app) { app.serve_dir("/static", the_site().root); });
    auto bare = fetch(srv, "/static?v=2");
    CHECK(bare.status == 301);
    CHECK(bare.header("Location") == "/static/?v=2");
    CHECK(fetch(srv, "/static/").body == "<h1>home</h1>");
    auto sub = fetch(srv, "/static/docs");
    CHECK(sub.status == 301);
    CHECK(sub.header("Location") == "/static/docs/");
    CHECK(fetch(srv, "/static", "", "HEAD").status == 301);
    CHECK(fetch(srv, "/statics").status == 404);
}

// The same three fixes through the test client, byte for byte what a handler test sees.
TEST_CASE("test client: a merged-slash Location, the bare prefix's 301, a list split over lines") {
    skiff::testing::test_client client([](skiff::server& app) {
        app.serve_dir("/site", the_site().root);
        app.use(skiff::concurrency_limit(1));  // the policy comes from the client's server
        app.get("/limited", [](skiff::request&, skiff::response& res) { res.text("in"); });
    });
    auto moved = client.get("/site//docs?x=1");
    CHECK(moved.status == 301);
    CHECK(moved.header("Location") == "/site/docs/?x=1");
    auto bare = client.get("/site");
    CHECK(bare.status == 301);
    CHECK(bare.header("Location") == "/site/");
    std::string etag(client.get("/site/digits.txt").header("ETag"));
    client.send("GET /site/digits.txt HTTP/1.1\r\nHost: x\r\nIf-None-Match: \"x\"\r\nIf-None-Match: " + etag +
                "\r\n\r\n");
    CHECK(client.next_response().status == 304);
    CHECK(client.get("/limited").body == "in");
}

TEST_CASE_TEMPLATE("a precompressed sibling is chosen when accepted, with Vary", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(static_routes<Policy>());
    auto br = fetch(srv, "/style.css", "Accept-Encoding: gzip, deflate, br\r\n");
    CHECK(br.body == "BROTLI");
    CHECK(br.header("Content-Encoding") == "br");
    CHECK(br.header("Content-Type") == "text/css; charset=utf-8");
    CHECK(br.header("Vary") == "Accept-Encoding");
    auto gz = fetch(srv, "/style.css", "Accept-Encoding: gzip, br;q=0\r\n");
    CHECK(gz.body == "GZIP-BYTES");
    CHECK(gz.header("Content-Encoding") == "gzip");
    auto plain = fetch(srv, "/style.css", "Accept-Encoding: identity\r\n");
    CHECK(plain.body == "body{color:red}");
    CHECK(plain.header("Content-Encoding").empty());
    CHECK(plain.header("Vary") == "Accept-Encoding");
    CHECK(fetch(srv, "/style.css", "Accept-Encoding: *;q=0.0\r\n").body == "body{color:red}");
    CHECK(fetch(srv, "/app.js", "Accept-Encoding: br, gzip\r\n").body == "GZ-JS");  // no .br: gzip
    CHECK(fetch(srv, "/style.css").header("Vary") == "Accept-Encoding");
    CHECK(fetch(srv, "/big.bin").header("Vary").empty());  // not compressible: no Vary
    CHECK(br.header("ETag") != plain.header("ETag"));     // each representation its own tag
}

TEST_CASE_TEMPLATE("a precompressed sibling with the plain file's size and time has its own tag", Policy,
                   SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(static_routes<Policy>());
    auto gz = fetch(srv, "/same.txt", "Accept-Encoding: gzip\r\n");
    auto plain = fetch(srv, "/same.txt");
    REQUIRE(gz.header("Content-Encoding") == "gzip");
    CHECK(gz.header("ETag") != plain.header("ETag"));  // RFC 9110 §8.8.3: one tag, one representation
    // So a range resumed under the other coding gets the whole file, not spliced bytes.
    auto spliced = fetch(srv, "/same.txt", "Range: bytes=4-\r\nIf-Range: " + gz.header("ETag") + "\r\n");
    CHECK(spliced.status == 200);
    CHECK(spliced.body == "12345678");
}

TEST_CASE_TEMPLATE("an empty file's suffix range is the whole empty file, a modification time ahead is now", Policy,
                   SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(static_routes<Policy>());
    auto empty = fetch(srv, "/empty.txt", "Range: bytes=-1\r\n");  // satisfiable, RFC 9110 §14.1.1
    CHECK(empty.status == 200);
    CHECK(empty.header("Content-Length") == "0");
    CHECK(fetch(srv, "/empty.txt", "Range: bytes=0-0\r\n").status == 416);
    auto future = fetch(srv, "/future.txt");  // RFC 9110 §8.8.2.1: never later than Date
    CHECK(future.status == 200);
    // The handler writes Date itself, the same second (the support masks Date's value): one line.
    CHECK(future.head.find("\r\nDate: ") == future.head.rfind("\r\nDate: "));
    auto modified = skiff::detail::parse_http_date(future.header("Last-Modified"));
    REQUIRE(modified);
    CHECK(*modified <= std::time(nullptr));
}

TEST_CASE_TEMPLATE("older date forms are read, and a date that is no date is ignored", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(static_routes<Policy>());
    CHECK(fetch(srv, "/digits.txt", "If-Unmodified-Since: Thursday, 01-Jan-98 00:00:00 GMT\r\n").status == 412);
    CHECK(fetch(srv, "/digits.txt", "If-Unmodified-Since: Thu Jan  1 00:00:00 1998\r\n").status == 412);
    CHECK(fetch(srv, "/same.txt", "If-Modified-Since: Tuesday, 14-Nov-23 22:13:20 GMT\r\n").status == 304);
    CHECK(fetch(srv, "/same.txt", "If-Modified-Since: Sat, 31 Feb 2037 00:00:00 GMT\r\n").status == 200);
}

TEST_CASE_TEMPLATE("a file that cannot be opened for want of descriptors is 503, not 404", Policy,
                   SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(static_routes<Policy>());
    client c(srv.port());
    c.send("GET /digits.txt HTTP/1.1\r\nHost: x\r\n\r\n");
    REQUIRE(read_responses(c, 1).size() == 1);  // accepted and served: it holds its descriptor
    rlimit saved{};
    ::getrlimit(RLIMIT_NOFILE, &saved);
    int lowest_free = 0;  // what the next open() would get
    while (::fcntl(lowest_free, F_GETFD) != -1) ++lowest_free;
    rlimit tight = saved;
    tight.rlim_cur = static_cast<rlim_t>(lowest_free);  // the file's open() fails, EMFILE
    ::setrlimit(RLIMIT_NOFILE, &tight);
    c.send("GET /digits.txt HTTP/1.1\r\nHost: x\r\n\r\n");
    auto rs = read_responses(c, 1);
    ::setrlimit(RLIMIT_NOFILE, &saved);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == 503);
    CHECK(rs[0].header("Retry-After") == "1");
    c.send("GET /digits.txt HTTP/1.1\r\nHost: x\r\n\r\n");  // descriptors back: served again
    rs = read_responses(c, 1);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].body == "0123456789");
}

TEST_CASE_TEMPLATE("no request escapes root", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(static_routes<Policy>());
    CHECK(fetch(srv, "/../secret.txt").status == 400);
    CHECK(fetch(srv, "/docs/../../secret.txt").status == 400);
    CHECK(fetch(srv, "/%2e%2e/secret.txt").status == 400);
    CHECK(fetch(srv, "/docs/%2E%2e/%2e%2E/secret.txt").status == 400);
    CHECK(fetch(srv, "/..%2fsecret.txt").status == 400);
    CHECK(fetch(srv, "/docs%2F..%2F..%2Fsecret.txt").status == 400);
    CHECK(fetch(srv, "/..\\secret.txt").status == 400);
    CHECK(fetch(srv, "/..%5csecret.txt").status == 400);
    CHECK(fetch(srv, "/digits.txt%00.html").status == 400);
    CHECK(fetch(srv, "/out").status == 404);              // a link to a file outside
    CHECK(fetch(srv, "/up/secret.txt").status == 404);    // a link to a directory outside
    CHECK(fetch(srv, "/pipe").status == 404);             // not a regular file: refused, not opened to block
    auto answers = fetch(srv, "/out", "Range: bytes=0-\r\n");
    CHECK(answers.body.find("secret") == std::string::npos);
}

TEST_CASE_TEMPLATE("hidden files are 404 unless asked for, and .well-known is served", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(static_routes<Policy>());
    CHECK(fetch(srv, "/.env").status == 404);
    CHECK(fetch(srv, "/%2eenv").status == 404);  // decoded before the check
    CHECK(fetch(srv, "/.git/config").status == 404);
    CHECK(fetch(srv, "/.git/").status == 404);
    CHECK(fetch(srv, "/docs/.draft.html").status == 404);
    CHECK(fetch(srv, "/docs/.well-known").status == 404);  // only a first segment is excepted
    auto txt = fetch(srv, "/.well-known/security.txt");
    CHECK(txt.status == 200);
    CHECK(txt.body == "Contact: mailto:security@example.com");
    CHECK(fetch(srv, "/digits.txt").status == 200);

    running_server<Policy> open_srv([](skiff::basic_server<Policy>& app) {
        skiff::static_options o;
        o.hidden = skiff::hidden_files::served;
        app.serve_dir("/", the_site().root, o);
    });
    CHECK(fetch(open_srv, "/.env").body == "PASSWORD=hunter2");
    CHECK(fetch(open_srv, "/.git/config").body == "[core]");
    CHECK(fetch(open_srv, "/docs/.draft.html").status == 200);
}

TEST_CASE_TEMPLATE("a file answer and a small one pipelined behind it come back in order", Policy,
                   SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(static_routes<Policy>());
    client c(srv.port());
    c.send("GET /api/ping HTTP/1.1\r\nHost: x\r\n\r\nGET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n"
           "GET /digits.txt HTTP/1.1\r\nHost: x\r\n\r\nGET /api/ping HTTP/1.1\r\nHost: x\r\n\r\n");
    std::string all = c.read_until([](const std::string& s) { return s.size() > big_size && parse_responses(s).size() >= 4; },
                                   20000ms);
    auto got = parse_responses(all);
    REQUIRE(got.size() == 4);
    CHECK(got[0].body == "pong");
    CHECK(got[1].body == big_bytes());
    CHECK(got[2].body == "0123456789");
    CHECK(got[3].body == "pong");
}

TEST_CASE("Accept-Encoding, Range and dates parse as RFC 9110 says") {
    using namespace skiff::detail;
    CHECK(accepts_coding("gzip, br", "br"));
    CHECK(!accepts_coding("gzip;q=0, br;q=0", "gzip"));
    CHECK(!accepts_coding("br;q=0.000", "br"));
    CHECK(accepts_coding("br;q=0.001", "br"));
    CHECK(accepts_coding("*", "gzip"));
    CHECK(!accepts_coding("*, gzip;q=0", "gzip"));
    CHECK(!accepts_coding("", "gzip"));
    std::vector<std::string_view> lines = {"identity", "gzip;q=0, br"};  // one field, two lines
    CHECK(accepts_coding(lines, "br"));
    CHECK(!accepts_coding(lines, "gzip"));
    CHECK(none_match_hits(std::vector<std::string_view>{"\"a\"", "\"b\""}, "\"b\""));
    CHECK(match_hits(std::vector<std::string_view>{"\"a\"", "\"b\""}, "\"b\""));
    CHECK(match_hits("*", "\"b\""));
    CHECK(!match_hits("W/\"b\"", "\"b\""));  // If-Match compares strongly (RFC 9110 §13.1.1)
    CHECK(!match_hits("\"b\"", "W/\"b\""));
    CHECK(!match_hits("\"a\", \"c\"", "\"b\""));
    CHECK(parse_range("bytes=0-0", 1).kind == range_kind::satisfiable);
    CHECK(parse_range("bytes=-5", 3).first == 0);
    CHECK(parse_range("bytes=0-", 0).kind == range_kind::unsatisfiable);
    CHECK(parse_range("bytes=-1", 0).kind == range_kind::empty_whole);  // RFC 9110 §14.1.1
    CHECK(parse_range("bytes=-0", 0).kind == range_kind::unsatisfiable);
    CHECK(parse_range("bytes=99999999999999999999-", 10).kind == range_kind::none);
    CHECK(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT") == std::time_t{784111777});
    // RFC 9110 §5.6.7: all three forms; a date that is no real date is none (§13.1.3).
    CHECK(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT") == std::time_t{784111777});
    CHECK(parse_http_date("Sun Nov  6 08:49:37 1994") == std::time_t{784111777});
    CHECK(parse_http_date("Thu Jan 01 00:00:00 1998") == std::time_t{883612800});
    CHECK(parse_http_date("Thursday, 01-Jan-98 00:00:00 GMT") == std::time_t{883612800});
    CHECK(parse_http_date("Tue, 29 Feb 2028 00:00:00 GMT"));  // a leap day
    for (const char* bad : {"Sat, 31 Feb 2037 00:00:00 GMT", "Foo, 07 Dec 2026 14:51:57 GMT", "Sun, 29 Feb 2027 00:00:00 GMT",
                            "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 nov 1994 08:49:37 GMT",
                            "Sun 06 Nov 1994 08:49:37 GMT", "Sund, 06-Nov-94 08:49:37 GMT", "Sunday, 06-Nov-1994 08:49:37 GMT",
                            "Sun Nov 6 08:49:37 1994", "Sun Nov  6 08:49:37 94", "", "0"}) {
        CAPTURE(bad);
        CHECK(!parse_http_date(bad));
    }
    CHECK(http_date(784111777) == "Sun, 06 Nov 1994 08:49:37 GMT");
    CHECK(skiff::mime_for("a/B.PNG").type == "image/png");
    CHECK(skiff::mime_for("a.b/c").type == "application/octet-stream");
}

TEST_CASE_TEMPLATE("a client that goes in the middle of a file leaves the server serving", Policy,
                   SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(static_routes<Policy>());
    {
        client c(srv.port());
        c.send("GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n");
        CHECK(!c.read_some().empty());
        struct linger reset_on_close{1, 0};  // RST: the next sendfile fails at once
        ::setsockopt(c.fd(), SOL_SOCKET, SO_LINGER, &reset_on_close, sizeof reset_on_close);
    }
    CHECK(fetch(srv, "/digits.txt").body == "0123456789");
    CHECK(fetch(srv, "/digits.txt", "Connection: close\r\n").header("Content-Length") == "10");
}

TEST_CASE_TEMPLATE("a root that does not exist answers 404", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv([](skiff::basic_server<Policy>& app) { app.serve_dir("/files", "/nonexistent/skiff"); });
    CHECK(fetch(srv, "/files/index.html").status == 404);
    CHECK(fetch(srv, "/files/").status == 404);
}
