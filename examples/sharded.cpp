// A multi-core server: the same handlers, one loop per CPU (skiff::sharded), Ctrl-C to stop.
#include <skiff/skiff.hpp>

#include <cstdio>

int main() {
    skiff::options opt;
    opt.workers = 0;  // one loop per CPU
    skiff::basic_server<skiff::sharded> app(opt);
    app.get("/", [](skiff::request&, skiff::response& res) { res.text("Hello from some core!"); });
    if (auto ec = app.listen(8080)) {
        std::fprintf(stderr, "sharded: %s\n", ec.message().c_str());
        return 1;
    }
    skiff::stop_on_signals stopper(app);  // SIGINT, SIGTERM: stop; declared after app, so it goes first
    return app.run();
}
