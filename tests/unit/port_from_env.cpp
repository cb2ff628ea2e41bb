// port_from_env: the examples' PORT, read strictly, so that a mistyped port is an error and
// not another port (std::atoi made 70000 port 4464, and "http" port 0).
#ifdef SKIFF_TEST_SINGLE_HEADER
#include <skiff/skiff.hpp>
#else
#include <skiff/app/port_from_env.hpp>
#endif

#include <doctest/doctest.h>

#include <cstdlib>

namespace {

constexpr const char* var = "SKIFF_TEST_PORT";

std::optional<std::uint16_t> port_for(const char* text) {
    if (text == nullptr) ::unsetenv(var);
    else ::setenv(var, text, 1);
    return skiff::port_from_env(var, 8080);
}

} // namespace

TEST_CASE("port_from_env: unset or empty gives the fallback") {
    CHECK(port_for(nullptr) == std::optional<std::uint16_t>{8080});
    CHECK(port_for("") == std::optional<std::uint16_t>{8080});
}

TEST_CASE("port_from_env: a decimal port from 0 to 65535") {
    CHECK(port_for("0") == std::optional<std::uint16_t>{0});
    CHECK(port_for("80") == std::optional<std::uint16_t>{80});
    CHECK(port_for("08080") == std::optional<std::uint16_t>{8080});
    CHECK(port_for("65535") == std::optional<std::uint16_t>{65535});
}

TEST_CASE("port_from_env: anything else is no port") {
    for (const char* text : {"65536", "70000", "999999999999", "-1", "+80", " 80", "80 ", "8o", "http", "0x50", "80.0"}) {
        CAPTURE(text);
        CHECK_FALSE(port_for(text).has_value());
    }
    ::unsetenv(var);
}
