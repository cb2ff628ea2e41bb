// What each consumer project builds and runs: a server that listens, then stops.
#include <skiff/skiff.hpp>

#include <thread>

int main() {
    skiff::server app;
    app.get("/", [](skiff::request&, skiff::response& res) { res.text("consumer"); });
    if (app.listen(0)) return 1;
    std::thread stopper([&] { app.stop(); });
    int code = app.run();
    stopper.join();
    return code;
}
