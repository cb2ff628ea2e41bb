// Linked with second.cpp: every definition in the headers must be inline (or a template), or
// this program fails to link with duplicate symbols.
#include <skiff/skiff.hpp>

int serve_second(skiff::server& app);

int main() {
    skiff::server app;
    app.get("/", [](skiff::request&, skiff::response& res) { res.text("first"); });
    return serve_second(app);
}
