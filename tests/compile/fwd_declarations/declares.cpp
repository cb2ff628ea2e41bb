// A translation unit that sees only <skiff/fwd.hpp> (through routes.hpp): the declarations are
// enough to declare handlers, pass the types by reference and name the defaults, and they
// bring in no skiff engine header and no standard header (fwd.hpp's promise; a header added
// to it fails here). Linked with defines.cpp, which defines what routes.hpp declares.
#include "routes.hpp"

#if defined(SKIFF_SKIFF_HPP) || defined(SKIFF_SINGLE_INCLUDE_SKIFF_HPP) || defined(SKIFF_CONFIG_HPP) || \
    defined(SKIFF_APP_SERVER_HPP) || defined(SKIFF_HTTP_REQUEST_HPP) || defined(SKIFF_TESTING_HPP)
#error "skiff/fwd.hpp included a skiff header: it must only declare"
#endif
#if defined(_GLIBCXX_RELEASE) || defined(_LIBCPP_VERSION)
#error "skiff/fwd.hpp included a standard header: it must include none"
#endif

// The defaults are declared once, in fwd.hpp: basic_server<> is server, basic_test_client<>
// is test_client (a pointer converts only between the same class type).
[[maybe_unused]] static skiff::server* default_server(skiff::basic_server<>* app) { return app; }
[[maybe_unused]] static skiff::testing::test_client* default_client(skiff::testing::basic_test_client<>* c) {
    return c;
}

// A handler's address and a registration function, from declarations alone.
using handler_pointer = void (*)(skiff::request&, skiff::response&);
using middleware_pointer = void (*)(skiff::request&, skiff::response&, const skiff::next&);
[[maybe_unused]] static const handler_pointer hello_pointer = &hello;
[[maybe_unused]] static const middleware_pointer require_name_pointer = &require_name;

void register_all(skiff::server& app) { add_routes(app); }
