// The smallest skiff server: GET / answers "Hello, World!" on http://127.0.0.1:8080/ (or the
// port in $PORT). Ctrl-C or SIGTERM stops it gracefully: requests in progress are answered,
// then it exits 0.
#include <skiff/skiff.hpp>

#include <cstdio>
#include <cstdlib>

int main() {
    skiff::server app;
    app.get("/", [](skiff::request&, skiff::response& res) { res.text("Hello, World!"); });
    const char* port = std::getenv("PORT");
    if (auto ec = app.listen(static_cast<std::uint16_t>(port ? std::atoi(port) : 8080))) {
        std::fprintf(stderr, "hello: cannot listen on 127.0.0.1:%s: %s\n", port ? port : "8080", ec.message().c_str());
        return 1;
    }
    skiff::stop_on_signals stopper(app);  // SIGINT, SIGTERM: stop; declared after app, so it goes first
    std::printf("hello: serving http://127.0.0.1:%u/ (Ctrl-C to stop)\n", app.port());
    std::fflush(stdout);
    int code = app.run();  // 0 after a clean stop
    std::printf("hello: stopped\n");
    return code;
}
