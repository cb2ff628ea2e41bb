// A multi-core server: the same handlers, one loop per CPU (skiff::sharded), on 127.0.0.1:8080
// (or the port in $PORT). Ctrl-C to stop.
#include <skiff/skiff.hpp>

#include <cstdio>

int main() {
    skiff::options opt;
    opt.workers = 0;  // one loop per CPU
    skiff::basic_server<skiff::sharded> app(opt);
    app.get("/", [](skiff::request&, skiff::response& res) { res.text("Hello from some core!"); });
    auto port = skiff::port_from_env("PORT", 8080);
    if (!port) {
        std::fprintf(stderr, "sharded: PORT must be a number from 0 to 65535\n");
        return 1;
    }
    if (auto ec = app.listen(*port)) {
        std::fprintf(stderr, "sharded: cannot listen on 127.0.0.1:%u: %s\n", unsigned{*port}, ec.message().c_str());
        return 1;
    }
    skiff::stop_on_signals stopper(app);  // SIGINT, SIGTERM: stop; declared after app, so it goes first
    return app.run();
}
