// request_id()'s generated ids, as a proxy or a log reader sees them: "<16 hex digits>-<n>",
// one prefix per thread, the count going up by one from 1, its digits carried as a decimal
// number would carry them (9 -> 10, 99 -> 100), and every id valid as an incoming one.
// Only the part under test (a unit test compiles in about a second); the single-header
// configuration has no parts on its include path, so there it takes the whole file.
#ifdef SKIFF_TEST_SINGLE_HEADER
#include <skiff/skiff.hpp>
#else
#include <skiff/middleware/request_id.hpp>
#endif

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <thread>

namespace {

// The prefix and the count of a generated id; fails the test when the shape is wrong.
struct id_parts {
    std::string prefix;
    std::uint64_t count = 0;
};

id_parts split(const std::string& id) {
    REQUIRE(id.size() > 17);
    REQUIRE(id[16] == '-');
    for (std::size_t i = 0; i < 16; ++i) {
        char c = id[i];
        REQUIRE(((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')));
    }
    id_parts p;
    p.prefix = id.substr(0, 16);
    std::string digits = id.substr(17);
    REQUIRE((digits.size() == 1 || digits[0] != '0'));  // no leading zero
    for (char c : digits) {
        REQUIRE((c >= '0' && c <= '9'));
        p.count = p.count * 10 + static_cast<std::uint64_t>(c - '0');
    }
    return p;
}

} // namespace

TEST_CASE("generated request ids: one prefix per thread, a count up by one through every carry") {
    id_parts first = split(skiff::new_request_id());
    CHECK(first.count >= 1);
    std::uint64_t expected = first.count;
    // Past 9, 99, 999 and 9,999 from wherever this thread's count starts.
    for (int i = 0; i < 12000; ++i) {
        std::string id = skiff::new_request_id();
        CHECK(skiff::valid_request_id(id));
        id_parts p = split(id);
        CHECK(p.prefix == first.prefix);
        CHECK(p.count == ++expected);
    }
}

TEST_CASE("a new thread's ids count from 1 under a prefix of its own") {
    std::string mine = skiff::new_request_id();
    std::string a, b;
    std::thread t([&] {
        a = skiff::new_request_id();
        b = skiff::new_request_id();
    });
    t.join();
    CHECK(split(a).count == 1);
    CHECK(split(b).count == 2);
    CHECK(split(a).prefix == split(b).prefix);
    CHECK(split(a).prefix != split(mine).prefix);
}

TEST_CASE("generated ids do not repeat") {
    std::set<std::string> seen;
    for (int i = 0; i < 1000; ++i) CHECK(seen.insert(skiff::new_request_id()).second);
}
