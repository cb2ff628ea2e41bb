// Declarations of skiff's public types, for a file that only names them: a header that
// declares handlers, middleware or the function that registers routes.
//
//   #include <skiff/fwd.hpp>
//   void hello(skiff::request& req, skiff::response& res);
//   void add_routes(skiff::server& app);
//
// The file that defines them, or calls a member, includes <skiff/skiff.hpp> (and
// <skiff/testing.hpp> for the test client). Costs almost nothing to parse: it includes no
// header at all, skiff's or the standard library's, so nothing it says may need one (no
// enum with a fixed std:: type, no alias of a std:: template such as skiff::middleware).
//
// Invariants: each name is declared here in the namespace and with the class key of its
// definition (tests/compile/fwd_declarations checks that every one is complete after
// <skiff/skiff.hpp> and <skiff/testing.hpp>). The default template arguments and the aliases
// of basic_server and basic_test_client are given here and only here (C++ allows a default
// once); their defining headers include this file.
#ifndef SKIFF_FWD_HPP
#define SKIFF_FWD_HPP

namespace skiff {

// Threading policies (policy/policy.hpp).
struct single;
struct sharded;
struct shared;

// The server and what it is configured with (app/server.hpp, engine/options.hpp).
template <class Policy = single>
class basic_server;
using server = basic_server<single>;
struct options;

// A handler's arguments (http/request.hpp, http/response.hpp) and a middleware's third one
// (middleware/stack.hpp).
class request;
class response;
class next;

// Answering later, pushing, and work off the loop (async/).
class loop_ref;
class deferred;
class push_stream;
class sse_stream;
class blocking_pool;

// Streamed uploads (upload/upload.hpp), cookies (http/cookie.hpp), observers (engine/hooks.hpp),
// what route registration throws (router/route_error.hpp).
class upload;
class set_cookie;
struct response_event;
struct route_error;

namespace testing {

// The test client (testing/test_client.hpp, testing/test_response.hpp; <skiff/testing.hpp>).
template <class Policy = single>
class basic_test_client;
using test_client = basic_test_client<single>;
struct test_response;

} // namespace testing
} // namespace skiff

#endif // SKIFF_FWD_HPP
