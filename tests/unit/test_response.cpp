// skiff::testing::read_response, the test client's reader: framing by chunks, by length, by
// the end of the stream and by status, and what it calls incomplete or malformed.
// Only the part under test (a unit test compiles in about a second); the single-header
// configuration has no parts on its include path, so there it takes the whole file.
#ifdef SKIFF_TEST_SINGLE_HEADER
#include <skiff/testing.hpp>
#else
#include <skiff/testing/test_response.hpp>
#endif

#include <doctest/doctest.h>

#include <cstddef>
#include <string>

using skiff::testing::answer_to;
using skiff::testing::read_response;
using skiff::testing::read_state;
using skiff::testing::stream_end;
using skiff::testing::test_response;

namespace {

read_state read(const std::string& in, test_response& r, std::size_t& used, answer_to to = answer_to::other,
                stream_end end = stream_end::open) {
    return read_response(in, to, end, r, used);
}

} // namespace

TEST_CASE("read_response: a Content-Length body, and the bytes after it left for the next") {
    std::string one = "HTTP/1.1 201 Created\r\nX-A:  padded \r\nContent-Length: 3\r\n\r\nabc";
    test_response r;
    std::size_t used = 0;
    REQUIRE(read(one + "HTTP/1.1 200 OK\r\n", r, used) == read_state::complete);
    CHECK(used == one.size());
    CHECK(r.status == 201);
    CHECK(r.reason == "Created");
    CHECK(r.header("x-a") == "padded");
    CHECK(r.body == "abc");
    CHECK(r.raw == one);
    CHECK(read(one.substr(0, one.size() - 1), r, used) == read_state::incomplete);
    CHECK_FALSE(r.has_header("missing"));
}

TEST_CASE("read_response: chunks with extensions and trailers are joined") {
    std::string in = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                     "3;ext=1\r\nabc\r\nA\r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\n";
    test_response r;
    std::size_t used = 0;
    REQUIRE(read(in, r, used) == read_state::complete);
    CHECK(used == in.size());
    CHECK(r.body == "abc0123456789");
    for (std::size_t cut = 0; cut < in.size(); ++cut) CHECK(read(in.substr(0, cut), r, used) == read_state::incomplete);
    CHECK(read("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", r, used) == read_state::malformed);
    CHECK(read("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n", r, used) == read_state::malformed);
}

TEST_CASE("read_response: no body for HEAD, 1xx, 204 and 304") {
    test_response r;
    std::size_t used = 0;
    std::string head = "HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\n";
    REQUIRE(read(head, r, used, answer_to::head) == read_state::complete);
    CHECK(used == head.size());
    CHECK(r.body.empty());
    for (const char* line : {"HTTP/1.1 100 Continue\r\n\r\n", "HTTP/1.1 204 No Content\r\n\r\n",
                             "HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n"}) {
        CHECK(read(line, r, used) == read_state::complete);
        CHECK(used == std::string(line).size());
    }
}

TEST_CASE("read_response: a body with neither length nor chunks ends with the stream") {
    std::string in = "HTTP/1.0 200 OK\r\n\r\nuntil the end";
    test_response r;
    std::size_t used = 0;
    CHECK(read(in, r, used) == read_state::incomplete);
    REQUIRE(read(in, r, used, answer_to::other, stream_end::closed) == read_state::complete);
    CHECK(r.body == "until the end");
}

TEST_CASE("read_response: what is not a response is malformed") {
    test_response r;
    std::size_t used = 0;
    CHECK(read("HTTX/1.1 200 OK\r\n\r\n", r, used) == read_state::malformed);
    CHECK(read("HTTP/1.1 2x0 OK\r\n\r\n", r, used) == read_state::malformed);
    CHECK(read("HTTP/1.1 200 OK\r\nno colon\r\n\r\n", r, used) == read_state::malformed);
    CHECK(read("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", r, used) == read_state::malformed);
    CHECK_FALSE(r);  // what was not read whole leaves r empty
}
