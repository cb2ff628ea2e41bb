// sse_stream::format: the event-stream lines a client parses (HTML Living Standard §9.2.6).
// Only the part under test (a unit test compiles in about a second); the single-header
// configuration has no parts on its include path, so there it takes the whole file.
#ifdef SKIFF_TEST_SINGLE_HEADER
#include <skiff/skiff.hpp>
#else
#include <skiff/async/deferred.hpp>
#endif

#include <doctest/doctest.h>

#include <string>

TEST_CASE("sse: an event's lines") {
    struct row {
        const char* name;
        std::string data, event, id, expected;
    };
    const row rows[] = {
        {"data only", "42", "", "", "data: 42\n\n"},
        {"empty data is one empty data line", "", "", "", "data: \n\n"},
        {"LF splits data lines", "a\nb", "", "", "data: a\ndata: b\n\n"},
        {"CRLF and CR split too", "a\r\nb\rc", "", "", "data: a\ndata: b\ndata: c\n\n"},
        {"a trailing newline ends with an empty line", "a\n", "", "", "data: a\ndata: \n\n"},
        {"event and id come first", "x", "tick", "7", "event: tick\nid: 7\ndata: x\n\n"},
        {"event and id are cut at a line break", "x", "a\nevent: forged", "1\r2", "event: a\nid: 1\ndata: x\n\n"},
    };
    for (const row& r : rows) {
        CAPTURE(r.name);
        CHECK(skiff::sse_stream::format(r.data, r.event, r.id) == r.expected);
    }
}

TEST_CASE("options: deferred answers and push streams have documented defaults") {
    const skiff::options opt;
    CHECK(opt.deferred_timeout == std::chrono::milliseconds(30'000));
    CHECK(opt.max_push_buffer == 1024 * 1024);
}

TEST_CASE("sse: a stream without a connection is closed and takes nothing") {
    skiff::sse_stream s;
    CHECK(s.closed());
    CHECK(s.send("x") == skiff::push_status::closed);
    skiff::deferred d;
    CHECK_FALSE(d.pending());
    CHECK(d.cancelled());
    CHECK_FALSE(d.text("nobody"));
}
