// The smallest skiff server: GET / answers "Hello, World!" on http://127.0.0.1:8080/ (or the
// port in $PORT). Ctrl-C or SIGTERM stops it gracefully: requests in progress are answered,
// then it exits 0.
#include <skiff/skiff.hpp>

#include <csignal>
#include <cstdio>
#include <cstdlib>

static skiff::server* running = nullptr;

// stop() is async-signal-safe: with the single policy it is one write(2) to the loop's wake
// descriptor, so a plain handler may call it (no thread, no self-pipe of our own).
extern "C" void on_signal(int) {
    if (running) running->stop();
}

int main() {
    skiff::server app;
    app.get("/", [](skiff::request&, skiff::response& res) { res.text("Hello, World!"); });
    const char* port = std::getenv("PORT");
    if (auto ec = app.listen(static_cast<std::uint16_t>(port ? std::atoi(port) : 8080))) {
        std::fprintf(stderr, "hello: cannot listen on 127.0.0.1:%s: %s\n", port ? port : "8080", ec.message().c_str());
        return 1;
    }
    running = &app;
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    std::printf("hello: serving http://127.0.0.1:%u/ (Ctrl-C to stop)\n", app.port());
    std::fflush(stdout);
    int code = app.run();  // 0 after a clean stop
    std::printf("hello: stopped\n");
    return code;
}
