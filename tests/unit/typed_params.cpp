// Typed route parameters and query values (request::param_as / query_as, require_param /
// require_query): whole decimal integers in range or nothing, and a clear 400 from the
// require_ forms. Served through the test client: no socket, no thread.
#include <skiff/testing.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

using skiff::testing::test_client;

TEST_CASE("parse_integer: whole decimal integers within the type's range, nothing else") {
    CHECK(skiff::parse_integer<int>("42") == 42);
    CHECK(skiff::parse_integer<int>("-7") == -7);
    CHECK(skiff::parse_integer<int>("0") == 0);
    CHECK(skiff::parse_integer<int>("2147483647") == std::numeric_limits<int>::max());
    CHECK(skiff::parse_integer<long long>("-9223372036854775808") == std::numeric_limits<long long>::min());
    CHECK(skiff::parse_integer<std::uint8_t>("255") == 255);
    for (const char* bad : {"", "2147483648", "-2147483649", "12x", "x12", " 1", "1 ", "+1", "1.5", "0x10", "-"})
        CHECK_MESSAGE(!skiff::parse_integer<int>(bad), bad);
    CHECK_FALSE(skiff::parse_integer<unsigned>("-1"));
    CHECK_FALSE(skiff::parse_integer<std::uint8_t>("256"));
}

namespace {

void typed_routes(skiff::server& app) {
    app.get("/items/:id", [](skiff::request& req, skiff::response& res) {
        std::optional<int> id = req.param_as<int>("id");
        res.text(id ? "item " + std::to_string(*id + 1) : std::string("no id"));
    });
    app.get("/list", [](skiff::request& req, skiff::response& res) {
        int limit = req.query_as<int>("limit").value_or(20);
        res.text("limit " + std::to_string(limit));
    });
    app.get("/user/:id", [](skiff::request& req, skiff::response& res) {
        auto id = skiff::require_param<unsigned>(req, res, "id");
        if (!id) return;
        auto page = skiff::require_query<int>(req, res, "page");
        if (!page) return;
        res.text("user " + std::to_string(*id) + " page " + std::to_string(*page));
    });
}

} // namespace

TEST_CASE("param_as and query_as give the value, or nothing for missing, junk and overflow") {
    test_client client(typed_routes);
    CHECK(client.get("/items/41").body == "item 42");
    CHECK(client.get("/items/4%31").body == "item 42");  // decoded first
    CHECK(client.get("/items/41x").body == "no id");
    CHECK(client.get("/items/99999999999").body == "no id");
    CHECK(client.get("/list?limit=5").body == "limit 5");
    CHECK(client.get("/list").body == "limit 20");
    CHECK(client.get("/list?limit=five").body == "limit 20");
}

TEST_CASE("require_param and require_query answer 400 naming what was wrong") {
    test_client client(typed_routes);
    CHECK(client.get("/user/7?page=2").body == "user 7 page 2");
    auto bad_id = client.get("/user/-7?page=2");
    CHECK(bad_id.status == 400);
    CHECK(bad_id.body == "parameter id: expected a non-negative integer\n");
    auto no_page = client.get("/user/7");
    CHECK(no_page.status == 400);
    CHECK(no_page.body == "query value page: expected an integer\n");
    auto bad_page = client.get("/user/7?page=2a");
    CHECK(bad_page.status == 400);
    CHECK(bad_page.body == "query value page: expected an integer\n");
}
