// The smallest skiff server: GET / answers "Hello, World!" on http://127.0.0.1:8080/.
#include <skiff/skiff.hpp>

#include <cstdio>

int main() {
    skiff::server app;
    app.get("/", [](skiff::request&, skiff::response& res) { res.text("Hello, World!"); });
    if (auto ec = app.listen(8080)) {
        std::fprintf(stderr, "hello: cannot listen on 127.0.0.1:8080: %s\n", ec.message().c_str());
        return 1;
    }
    std::printf("hello: serving http://127.0.0.1:%u/\n", app.port());
    std::fflush(stdout);
    return app.run();
}
