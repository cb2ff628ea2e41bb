// A multi-core server: the same handlers, one loop per CPU (skiff::sharded), Ctrl-C to stop.
#include <skiff/skiff.hpp>

#include <csignal>
#include <cstdio>

static skiff::basic_server<skiff::sharded>* running = nullptr;

extern "C" void on_signal(int) {
    if (running) running->stop();  // async-signal-safe
}

int main() {
    skiff::options opt;
    opt.workers = 0;  // one loop per CPU
    skiff::basic_server<skiff::sharded> app(opt);
    app.get("/", [](skiff::request&, skiff::response& res) { res.text("Hello from some core!"); });
    if (auto ec = app.listen(8080)) {
        std::fprintf(stderr, "sharded: %s\n", ec.message().c_str());
        return 1;
    }
    running = &app;
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    return app.run();
}
