// Response serialisation: the exact bytes for each way of sending, with the Date masked.
// Only the part under test (a unit test compiles in about a second); the single-header
// configuration has no parts on its include path, so there it takes the whole file.
#ifdef SKIFF_TEST_SINGLE_HEADER
#include <skiff/skiff.hpp>
#else
#include <skiff/http/response.hpp>
#include <skiff/http/response_access.hpp>
#include <skiff/stream/stream_send.hpp>  // what a streamed body is handed to
#endif

#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace {

struct written {
    std::string bytes;
    bool close = false;
};

written serialise(const std::function<void(skiff::response&)>& handler, bool head = false, bool close = false,
                  bool http10 = false) {
    skiff::detail::byte_buffer out;
    out.append("PRIOR", 5);  // an earlier response of the same batch must stay untouched
    skiff::detail::date_cache date;
    date.update(784111777);  // Sun, 06 Nov 1994 08:49:37 GMT (RFC 9110 §5.6.7)
    skiff::response res;
    skiff::detail::response_access::start(res, out, date, head, close, http10);
    handler(res);
    if (!res.sent()) res.end();
    skiff::detail::handed_ptr taken(skiff::detail::response_access::take_taker(res));  // a stream's
    std::string all(out.data(), out.size());
    REQUIRE(all.substr(0, 5) == "PRIOR");
    return {all.substr(5), res.closes_connection()};
}

const std::string date = "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n";

// What a stream hands the loop (response::stream's Sender): the framing its head promised and
// the Content-Length to fill.
struct stream_probe final : skiff::detail::handed {
    stream_probe(skiff::body_source, skiff::detail::response_framing f, std::uint64_t n) : framing(f), length(n) {}
    std::size_t begin(skiff::detail::door&, skiff::detail::connection&, skiff::detail::pending_body&, char*,
                      std::size_t) override {
        return 0;
    }
    skiff::detail::fate on_readable(skiff::detail::door&, skiff::detail::connection&) override { return {}; }
    skiff::detail::fate on_deadline(skiff::detail::door&, skiff::detail::connection&) override { return {}; }
    skiff::detail::fate await(skiff::detail::door&, skiff::detail::connection&) override { return {}; }
    void abandon() noexcept override {}
    void on_sent(skiff::detail::door&, skiff::detail::connection&) override {}
    bool take_from_workers(skiff::detail::loop_context&, skiff::detail::connection&) override { return false; }
    void dispose() noexcept override { delete this; }

    skiff::detail::response_framing framing;
    std::uint64_t length;
};

} // namespace

TEST_CASE("the Date line is IMF-fixdate (RFC 9110 §5.6.7) and fixed-length") {
    skiff::detail::date_cache d;
    d.update(784111777);
    CHECK(d.line() == date);
    d.update(4102444799);  // Thu, 31 Dec 2099 23:59:59 GMT
    CHECK(d.line() == "Date: Thu, 31 Dec 2099 23:59:59 GMT\r\n");
    CHECK(d.line().size() == skiff::detail::date_cache::line_size);
}

TEST_CASE("each way of sending, byte for byte") {
    struct row {
        const char* name;
        std::function<void(skiff::response&)> handler;
        std::string expected;
    };
    const row rows[] = {
        {"text", [](skiff::response& r) { r.text("hi"); },
         "HTTP/1.1 200 OK\r\n" + date + "Content-Type: text/plain\r\nContent-Length: 2\r\n\r\nhi"},
        {"json", [](skiff::response& r) { r.json("{}"); },
         "HTTP/1.1 200 OK\r\n" + date + "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"},
        {"body with a type", [](skiff::response& r) { r.body("x", "image/png"); },
         "HTTP/1.1 200 OK\r\n" + date + "Content-Type: image/png\r\nContent-Length: 1\r\n\r\nx"},
        {"body without a type", [](skiff::response& r) { r.body("x", ""); },
         "HTTP/1.1 200 OK\r\n" + date + "Content-Type: application/octet-stream\r\nContent-Length: 1\r\n\r\nx"},
        {"end", [](skiff::response& r) { r.status(201).end(); },
         "HTTP/1.1 201 Created\r\n" + date + "Content-Length: 0\r\n\r\n"},
        {"nothing sent", [](skiff::response&) {}, "HTTP/1.1 200 OK\r\n" + date + "Content-Length: 0\r\n\r\n"},
        {"204 drops the body", [](skiff::response& r) { r.status(204).text("x"); },
         "HTTP/1.1 204 No Content\r\n" + date + "\r\n"},
        {"304 drops the body", [](skiff::response& r) { r.status(304).text("x"); },
         "HTTP/1.1 304 Not Modified\r\n" + date + "\r\n"},
        {"507, from WebDAV, keeps its reason", [](skiff::response& r) { r.status(507).end(); },
         "HTTP/1.1 507 Insufficient Storage\r\n" + date + "Content-Length: 0\r\n\r\n"},
        {"unlisted code: empty reason", [](skiff::response& r) { r.status(299).text("x"); },
         "HTTP/1.1 299 \r\n" + date + "Content-Type: text/plain\r\nContent-Length: 1\r\n\r\nx"},
        {"code outside 100-599 is 500", [](skiff::response& r) { r.status(42).end(); },
         "HTTP/1.1 500 Internal Server Error\r\n" + date + "Content-Length: 0\r\n\r\n"},
        {"an interim 1xx cannot be the final answer: 500", [](skiff::response& r) { r.status(101).end(); },
         "HTTP/1.1 500 Internal Server Error\r\n" + date + "Content-Length: 0\r\n\r\n"},
        {"headers follow skiff's own, in order",
         [](skiff::response& r) { r.header("X-A", "1").header("X-B", "2").text("hi"); },
         "HTTP/1.1 200 OK\r\n" + date + "Content-Type: text/plain\r\nContent-Length: 2\r\nX-A: 1\r\nX-B: 2\r\n\r\nhi"},
        {"user Content-Type and Date win; Content-Length and Transfer-Encoding are skiff's",
         [](skiff::response& r) {
             r.header("content-type", "a/b").header("Date", "x").header("Content-Length", "9");
             r.header("Transfer-Encoding", "chunked").text("hi");
         },
         "HTTP/1.1 200 OK\r\nContent-Length: 2\r\ncontent-type: a/b\r\nDate: x\r\n\r\nhi"},
        {"invalid names and values are dropped",
         [](skiff::response& r) { r.header("Bad Name", "1").header("X", "a\nb").header("Y", std::string("a\0b", 3)).end(); },
         "HTTP/1.1 200 OK\r\n" + date + "Content-Length: 0\r\n\r\n"},
        {"only the first send counts", [](skiff::response& r) { r.text("one"); r.text("two"); r.status(500); },
         "HTTP/1.1 200 OK\r\n" + date + "Content-Type: text/plain\r\nContent-Length: 3\r\n\r\none"},
        {"stream with a length: Content-Length, no body yet",
         [](skiff::response& r) { r.stream("text/plain", [](char*, std::size_t) { return std::size_t{0}; }, 10); },
         "HTTP/1.1 200 OK\r\n" + date + "Content-Type: text/plain\r\nContent-Length: 10\r\n\r\n"},
        {"stream without a length: chunked",
         [](skiff::response& r) { r.stream("text/plain", [](char*, std::size_t) { return std::size_t{0}; }); },
         "HTTP/1.1 200 OK\r\n" + date + "Content-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"},
    };
    for (const row& r : rows) {
        CAPTURE(r.name);
        CHECK(serialise(r.handler).bytes == r.expected);
    }
}

TEST_CASE("HEAD keeps the GET headers, Content-Length included, and drops the body") {
    CHECK(serialise([](skiff::response& r) { r.text("hello"); }, true).bytes ==
          "HTTP/1.1 200 OK\r\n" + date + "Content-Type: text/plain\r\nContent-Length: 5\r\n\r\n");
}

TEST_CASE("Connection: close, asked by the server or by the handler") {
    auto by_server = serialise([](skiff::response& r) { r.text("x"); }, false, true);
    CHECK(by_server.bytes.find("Connection: close\r\n") != std::string::npos);
    CHECK(by_server.close);
    auto by_handler = serialise([](skiff::response& r) { r.header("Connection", "close").text("x"); });
    CHECK(by_handler.close);
    CHECK(by_handler.bytes.find("Connection: close\r\n") != std::string::npos);
    auto keep = serialise([](skiff::response& r) { r.header("Connection", "keep-alive").text("x"); });
    CHECK_FALSE(keep.close);
    CHECK(keep.bytes.find("Connection") == std::string::npos);
}

TEST_CASE("RFC 9112 §9.3: an HTTP/1.0 response kept alive says so") {
    CHECK(serialise([](skiff::response& r) { r.text("x"); }, false, false, true).bytes ==
          "HTTP/1.1 200 OK\r\n" + date + "Content-Type: text/plain\r\nContent-Length: 1\r\nConnection: keep-alive\r\n\r\nx");
    CHECK(serialise([](skiff::response& r) { r.text("x"); }, false, true, true).bytes ==
          "HTTP/1.1 200 OK\r\n" + date + "Content-Type: text/plain\r\nContent-Length: 1\r\nConnection: close\r\n\r\nx");
}

TEST_CASE("an HTTP/1.0 stream of unknown length is close-delimited") {
    auto w = serialise([](skiff::response& r) { r.stream("text/plain", [](char*, std::size_t) { return std::size_t{0}; }); },
                       false, false, true);
    CHECK(w.bytes == "HTTP/1.1 200 OK\r\n" + date + "Content-Type: text/plain\r\nConnection: close\r\n\r\n");
    CHECK(w.close);
}

TEST_CASE("a stream's framing for the loop: the Content-Length to fill, chunks, or the close") {
    using skiff::detail::response_access;
    using framing = skiff::detail::response_framing;
    struct handed_over {
        framing how;
        std::uint64_t length;
    };
    auto hand = [](std::optional<std::uint64_t> length, bool close, bool http10, bool head = false) {
        skiff::detail::byte_buffer out;
        skiff::detail::date_cache date;
        skiff::response res;
        response_access::start(res, out, date, head, close, http10);
        res.stream<stream_probe>("text/plain", [](char*, std::size_t) { return std::size_t{0}; }, length);
        skiff::detail::handed_ptr taken(response_access::take_taker(res));
        auto* probe = static_cast<stream_probe*>(taken.get());
        return probe ? handed_over{probe->framing, probe->length} : handed_over{framing::no_content, 0};
    };
    CHECK(hand(10, false, false).how == framing::content_length);
    CHECK(hand(10, false, false).length == 10);
    CHECK(hand(std::nullopt, false, false).how == framing::chunked);
    CHECK(hand(std::nullopt, false, true).how == framing::until_close);  // HTTP/1.0: ends with the connection
    CHECK(hand(10, true, false).how == framing::until_close);           // closing: the close frames it
    CHECK(hand(10, false, false, true).how == framing::no_content);     // HEAD: no body, nothing handed over
}

TEST_CASE("the pre-composed 200 head: across a Date second change, and beside the general head") {
    // One response object and one date_cache, reused as the loop reuses them: the 200 heads
    // are composed once per Date second and must follow each change.
    using skiff::detail::response_access;
    skiff::detail::byte_buffer out;
    skiff::detail::date_cache clock;
    skiff::response res;
    auto send = [&](const std::function<void(skiff::response&)>& handler, bool head = false, bool close = false,
                    bool http10 = false) {
        out.clear();
        response_access::start(res, out, clock, head, close, http10);
        handler(res);
        if (!res.sent()) res.end();
        return std::string(out.data(), out.size());
    };
    const std::string later = "Date: Sun, 06 Nov 1994 08:49:38 GMT\r\n";
    auto hi = [](skiff::response& r) { r.text("hi"); };
    clock.update(784111777);
    CHECK(send(hi) == "HTTP/1.1 200 OK\r\n" + date + "Content-Type: text/plain\r\nContent-Length: 2\r\n\r\nhi");
    clock.update(784111778);
    CHECK(send(hi) == "HTTP/1.1 200 OK\r\n" + later + "Content-Type: text/plain\r\nContent-Length: 2\r\n\r\nhi");
    clock.update(784111778);  // the same second: nothing to redo
    CHECK(send([](skiff::response& r) { r.json("{}"); }) ==
          "HTTP/1.1 200 OK\r\n" + later + "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}");
    CHECK(send([](skiff::response& r) { r.html("<p>"); }) ==
          "HTTP/1.1 200 OK\r\n" + later + "Content-Type: text/html; charset=utf-8\r\nContent-Length: 3\r\n\r\n<p>");
    CHECK(send([](skiff::response&) {}) == "HTTP/1.1 200 OK\r\n" + later + "Content-Length: 0\r\n\r\n");
    CHECK(send(hi, true) == "HTTP/1.1 200 OK\r\n" + later + "Content-Type: text/plain\r\nContent-Length: 2\r\n\r\n");
    // No block: another status, a field written first, Connection: close, HTTP/1.0.
    CHECK(send([](skiff::response& r) { r.status(404).text("no"); }) ==
          "HTTP/1.1 404 Not Found\r\n" + later + "Content-Type: text/plain\r\nContent-Length: 2\r\n\r\nno");
    CHECK(send([](skiff::response& r) { r.header("X-A", "1").text("hi"); }) ==
          "HTTP/1.1 200 OK\r\n" + later + "Content-Type: text/plain\r\nContent-Length: 2\r\nX-A: 1\r\n\r\nhi");
    CHECK(send(hi, false, true) ==
          "HTTP/1.1 200 OK\r\n" + later + "Content-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi");
    CHECK(send([](skiff::response& r) { r.header("Connection", "close").text("hi"); }) ==
          "HTTP/1.1 200 OK\r\n" + later + "Content-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi");
    CHECK(send(hi, false, false, true) == "HTTP/1.1 200 OK\r\n" + later +
                                              "Content-Type: text/plain\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nhi");
    // The block for 200 again after the general head, and a body past the copied room.
    clock.update(4102444799);
    std::string big(300, 'x');
    CHECK(send([&](skiff::response& r) { r.text(big); }) == "HTTP/1.1 200 OK\r\nDate: Thu, 31 Dec 2099 23:59:59 GMT\r\n"
                                                             "Content-Type: text/plain\r\nContent-Length: 300\r\n\r\n" + big);
}

TEST_CASE("length digits written in place, at every width") {
    char room[24];
    const std::uint64_t values[] = {0, 9, 10, 99, 100, 12345, 18446744073709551615ull};
    for (std::uint64_t v : values) {
        CAPTURE(v);
        char* end = skiff::detail::put_decimal(room, v);
        CHECK(std::string(room, end) == std::to_string(v));
    }
}
