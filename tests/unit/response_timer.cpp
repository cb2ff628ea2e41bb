// response_timer()'s field value for a duration, byte for byte: milliseconds with three
// decimals (microsecond resolution, never rounded up), as Server-Timing's "app;dur=" or as
// X-Response-Time's "<ms>ms".
// Only the part under test (a unit test compiles in about a second); the single-header
// configuration has no parts on its include path, so there it takes the whole file.
#ifdef SKIFF_TEST_SINGLE_HEADER
#include <skiff/skiff.hpp>
#else
#include <skiff/middleware/response_timer.hpp>
#endif

#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

// The value as the timer writes it in the field's place, checked to be exactly size() bytes.
template <skiff::timer_field Field>
std::string value_of(std::uint64_t micros) {
    skiff::detail::millis_value<Field> value(micros);
    std::array<char, skiff::detail::timer_value_room + 1> room;
    room.fill('#');
    REQUIRE(value.size() <= skiff::detail::timer_value_room);
    value(room.data());
    CHECK(room[value.size()] == '#');  // nothing written past size()
    return std::string(room.data(), value.size());
}

std::string server_timing(std::uint64_t micros) { return value_of<skiff::timer_field::server_timing>(micros); }
std::string response_time(std::uint64_t micros) { return value_of<skiff::timer_field::response_time>(micros); }

struct timer_case {
    std::uint64_t micros;
    std::string_view millis;
};

constexpr std::array<timer_case, 14> timer_cases{{
    {0, "0.000"},
    {1, "0.001"},
    {9, "0.009"},
    {10, "0.010"},
    {99, "0.099"},
    {100, "0.100"},
    {999, "0.999"},
    {1000, "1.000"},
    {1234, "1.234"},
    {10005, "10.005"},
    {99999, "99.999"},
    {123456789, "123456.789"},
    {1000000000, "1000000.000"},
    {18446744073709551615u, "18446744073709551.615"},  // the largest count: every digit fits the room
}};

} // namespace

TEST_CASE("response timer values: milliseconds with three decimals, in either field's form") {
    for (const timer_case& c : timer_cases) {
        CAPTURE(c.micros);
        CHECK(server_timing(c.micros) == "app;dur=" + std::string(c.millis));
        CHECK(response_time(c.micros) == std::string(c.millis) + "ms");
    }
}
