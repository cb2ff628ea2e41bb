// options: its limits default to parse_limits', the one place each default is written.
// Only the part under test (a unit test compiles in about a second); the single-header
// configuration has no parts on its include path, so there it takes the whole file.
#ifdef SKIFF_TEST_SINGLE_HEADER
#include <skiff/skiff.hpp>
#else
#include <skiff/engine/options.hpp>
#endif

#include <doctest/doctest.h>

TEST_CASE("options: request limits default to parse_limits") {
    const skiff::options opt;
    const skiff::parse_limits limits;
    CHECK(opt.max_request_line == limits.max_request_line);
    CHECK(opt.max_header_bytes == limits.max_header_bytes);
    CHECK(opt.max_headers == limits.max_headers);
    CHECK(opt.max_body == limits.max_body);
    CHECK(opt.max_body == 1024 * 1024);  // the documented default (README, design.md)
}
