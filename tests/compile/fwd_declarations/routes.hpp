// A user's header that only declares: its handlers, the function that registers them, a test
// helper. It includes <skiff/fwd.hpp> and nothing else, as the header of a project of many
// files would, so that the files including it parse no server.
#ifndef SKIFF_TESTS_COMPILE_FWD_DECLARATIONS_ROUTES_HPP
#define SKIFF_TESTS_COMPILE_FWD_DECLARATIONS_ROUTES_HPP

#include <skiff/fwd.hpp>

void hello(skiff::request& req, skiff::response& res);
void require_name(skiff::request& req, skiff::response& res, const skiff::next& next);
void add_routes(skiff::server& app);
void add_routes_to(skiff::basic_server<skiff::sharded>& app);
void register_all(skiff::server& app);  // defined in declares.cpp, from the declarations alone
int status_of_root(skiff::testing::test_client& client);

#endif // SKIFF_TESTS_COMPILE_FWD_DECLARATIONS_ROUTES_HPP
