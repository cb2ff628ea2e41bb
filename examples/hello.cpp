// The smallest skiff server: GET / answers "Hello, World!" on http://127.0.0.1:8080/ (or the
// port in $PORT). Ctrl-C or SIGTERM stops it gracefully: requests in progress are answered,
// then it exits 0.
#include <skiff/skiff.hpp>

#include <cstdio>

int main() {
    skiff::server app;
    app.get("/", [](skiff::request&, skiff::response& res) { res.text("Hello, World!"); });
    auto port = skiff::port_from_env("PORT", 8080);
    if (!port) {
        std::fprintf(stderr, "hello: PORT must be a number from 0 to 65535\n");
        return 1;
    }
    if (auto ec = app.listen(*port)) {
        std::fprintf(stderr, "hello: cannot listen on 127.0.0.1:%u: %s\n", unsigned{*port}, ec.message().c_str());
        return 1;
    }
    skiff::stop_on_signals stopper(app);  // SIGINT, SIGTERM: stop; declared after app, so it goes first
    std::printf("hello: serving http://127.0.0.1:%u/ (Ctrl-C to stop)\n", app.port());
    std::fflush(stdout);
    int code = app.run();  // 0 after a clean stop
    std::printf("hello: stopped\n");
    return code;
}
