// The other side of declares.cpp: the file that defines what routes.hpp declares includes the
// whole server and the test client. Every name fwd.hpp declares is complete here (sizeof of a
// declared-only or misplaced name fails to compile), and the program serves through the
// function declares.cpp defined from the declarations alone.
#include "routes.hpp"

#include <skiff/testing.hpp>

#include <type_traits>

template <class... T>
constexpr bool all_complete() {
    return ((sizeof(T) > 0) && ...);
}
static_assert(all_complete<skiff::single, skiff::sharded, skiff::shared, skiff::server,
                           skiff::basic_server<skiff::sharded>, skiff::basic_server<skiff::shared>,
                           skiff::options, skiff::request, skiff::response, skiff::next, skiff::loop_ref,
                           skiff::deferred, skiff::push_stream, skiff::sse_stream, skiff::blocking_pool,
                           skiff::upload, skiff::set_cookie, skiff::response_event, skiff::route_error,
                           skiff::testing::test_client, skiff::testing::test_response>(),
              "every type skiff/fwd.hpp declares is defined, in the same namespace, by the headers");
static_assert(std::is_same_v<skiff::server, skiff::basic_server<skiff::single>>);
static_assert(std::is_same_v<skiff::testing::test_client, skiff::testing::basic_test_client<skiff::single>>);

void hello(skiff::request&, skiff::response& res) { res.text("hello"); }

void require_name(skiff::request& req, skiff::response& res, const skiff::next& next) {
    if (req.query("name").empty()) {
        res.status(400).text("name?");
        return;
    }
    next();
}

void add_routes(skiff::server& app) { app.get("/", hello); }

void add_routes_to(skiff::basic_server<skiff::sharded>& app) { app.get("/", hello); }

int status_of_root(skiff::testing::test_client& client) { return client.get("/").status; }

int main() {
    skiff::testing::test_client client(register_all);
    auto answer = client.get("/");
    return answer.status == 200 && answer.body == "hello" && status_of_root(client) == 200 ? 0 : 1;
}
