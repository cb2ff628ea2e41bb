// Built against single_include/ only. `single_header_hello --check` listens on an ephemeral
// port and stops at once (for the test suite); without it, it serves on 127.0.0.1:8080.
#include <skiff/skiff.hpp>

#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
    bool check = argc > 1 && std::strcmp(argv[1], "--check") == 0;
    skiff::server app;
    app.get("/", [](skiff::request&, skiff::response& res) { res.text("Hello from one header!"); });
    if (auto ec = app.listen(check ? 0 : 8080)) {
        std::fprintf(stderr, "single_header_hello: %s\n", ec.message().c_str());
        return 1;
    }
    if (check) {
        app.stop();  // run() drains and returns at once
        return app.run();
    }
    return app.run();
}
