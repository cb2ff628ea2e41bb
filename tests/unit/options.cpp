// options: its limits default to parse_limits', the one place each default is written.
#include <skiff/skiff.hpp>

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
