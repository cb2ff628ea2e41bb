// The access log's two line formats, from a fixed event and time: Common Log Format (the
// request line escaped inside its quotes, "-" when it did not parse, the host without its
// port) and JSON lines (strings JSON-escaped).
// Only the part under test (a unit test compiles in about a second); the single-header
// configuration has no parts on its include path, so there it takes the whole file.
#ifdef SKIFF_TEST_SINGLE_HEADER
#include <skiff/skiff.hpp>
#else
#include <skiff/observe/access_log.hpp>
#endif

#include <doctest/doctest.h>

#include <string>

namespace {

constexpr std::time_t october_10_2000 = 971186136;  // 2000-10-10T13:55:36Z

skiff::response_event sample() {
    skiff::response_event e;
    e.status = 200;
    e.bytes_sent = 2326;
    e.duration = std::chrono::microseconds(1500);
    e.method = "GET";
    e.target = "/x";
    e.version = "HTTP/1.1";
    e.peer = "127.0.0.1:54321";
    return e;
}

std::string common(const skiff::response_event& e) {
    std::string out;
    skiff::append_common_log(out, e, october_10_2000);
    return out;
}

std::string json(const skiff::response_event& e) {
    std::string out;
    skiff::append_json_log(out, e, october_10_2000);
    return out;
}

} // namespace

TEST_CASE("a Common Log Format line") {
    CHECK(common(sample()) == R"(127.0.0.1 - - [10/Oct/2000:13:55:36 +0000] "GET /x HTTP/1.1" 200 2326)");
}

TEST_CASE("CLF: an IPv6 peer loses its brackets and port, a Unix path stays whole") {
    skiff::response_event e = sample();
    e.peer = "[::1]:8080";
    CHECK(common(e).rfind("::1 - - [", 0) == 0);
    e.peer = "/run/app.sock";
    CHECK(common(e).rfind("/run/app.sock - - [", 0) == 0);
    e.peer = "";
    CHECK(common(e).rfind("- - - [", 0) == 0);
}

TEST_CASE("CLF: a rejection without a request line logs a dash, and quotes are escaped") {
    skiff::response_event e = sample();
    e.method = {};
    e.target = {};
    e.status = 400;
    e.bytes_sent = 90;
    CHECK(common(e) == R"(127.0.0.1 - - [10/Oct/2000:13:55:36 +0000] "-" 400 90)");
    e = sample();
    e.target = "/a\"b\\\n";
    CHECK(common(e).find(R"("GET /a\x22b\x5c\x0a HTTP/1.1")") != std::string::npos);
}

TEST_CASE("a JSON line") {
    skiff::response_event e = sample();
    e.reason = skiff::rejection::none;
    CHECK(json(e) == R"({"remote":"127.0.0.1:54321","time":"2000-10-10T13:55:36Z","method":"GET","target":"/x",)"
                     R"("status":200,"bytes":2326,"duration_us":1500,"reason":"none"})");
}

TEST_CASE("JSON lines escape their strings, and name the rejection") {
    skiff::response_event e = sample();
    e.target = "/\"q\"\x01";
    e.reason = skiff::rejection::header_too_large;
    e.status = 431;
    std::string line = json(e);
    CHECK(line.find(R"("target":"/\"q\"\u0001")") != std::string::npos);
    CHECK(line.find(R"("reason":"header_too_large"})") != std::string::npos);
}

TEST_CASE("every rejection has a name") {
    for (std::size_t r = 0; r < skiff::rejection_count; ++r)
        CHECK(std::string(skiff::to_string(static_cast<skiff::rejection>(r))).size() > 0);
    CHECK(std::string(skiff::to_string(skiff::rejection::bad_request_line)) == "bad_request_line");
    CHECK(std::string(skiff::to_string(skiff::rejection::connection_limit)) == "connection_limit");
}

TEST_CASE("log times: leap days, year ends and the epoch, in UTC") {
    auto iso = [](std::time_t t) {
        std::string out;
        skiff::detail::append_iso_time(out, t);
        return out;
    };
    CHECK(iso(0) == "1970-01-01T00:00:00Z");
    CHECK(iso(951782400) == "2000-02-29T00:00:00Z");
    CHECK(iso(1735689599) == "2024-12-31T23:59:59Z");
    CHECK(iso(-1) == "1969-12-31T23:59:59Z");
    std::string clf;
    skiff::detail::append_clf_time(clf, 951782400);
    CHECK(clf == "29/Feb/2000:00:00:00 +0000");
}
