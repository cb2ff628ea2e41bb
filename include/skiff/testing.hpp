// skiff's test client: serves a program's routes on the calling thread, over a socketpair, on
// a clock the test moves (testing/test_client.hpp says how). Includes the server too, so a
// test file needs this one include:
//
//   #include <skiff/testing.hpp>
//   skiff::testing::test_client client([](skiff::server& app) { add_routes(app); });
//
// Kept out of <skiff/skiff.hpp> so that a program's own translation units do not parse it;
// tools/amalgamate.py generates single_include/skiff/testing.hpp from this file, which
// includes the single skiff.hpp beside it and inlines only the testing/ parts.
#ifndef SKIFF_TESTING_HPP
#define SKIFF_TESTING_HPP

#include "skiff/skiff.hpp"
#include "skiff/testing/test_client.hpp"
#include "skiff/testing/test_loop.hpp"
#include "skiff/testing/test_response.hpp"
#include "skiff/testing/test_websocket.hpp"

#endif // SKIFF_TESTING_HPP
