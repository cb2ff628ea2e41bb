#include <skiff/skiff.hpp>

int serve_second(skiff::server& app) {
    app.get("/second", [](skiff::request&, skiff::response& res) { res.text("second"); });
    skiff::basic_server<skiff::sharded> other;
    other.get("/", [](skiff::request&, skiff::response& res) { res.text("sharded"); });
    return app.listen(0) ? 1 : 0;  // listening works; not running keeps the test instant
}
