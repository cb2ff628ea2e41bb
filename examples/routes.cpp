// Routing: static paths, :parameters, a *wildcard, query strings, methods, custom 404, on 127.0.0.1:8080
// (or the port in $PORT).
//   curl http://127.0.0.1:8080/users/42
//   curl 'http://127.0.0.1:8080/search?q=red+boat&page=2'
//   curl -X DELETE http://127.0.0.1:8080/users/42
//   curl http://127.0.0.1:8080/files/docs/readme.txt
#include <skiff/skiff.hpp>

#include <cstdio>
#include <string>

int main() {
    skiff::server app;
    app.get("/users/:id", [](skiff::request& req, skiff::response& res) {
        auto id = skiff::require_param<long long>(req, res, "id");  // /users/abc: 400
        if (!id) return;
        res.json("{\"id\":" + std::to_string(*id) + "}");
    });
    app.del("/users/:id", [](skiff::request&, skiff::response& res) { res.status(204).end(); });
    app.get("/users/me", [](skiff::request&, skiff::response& res) { res.text("static beats :id"); });
    app.get("/files/*path", [](skiff::request& req, skiff::response& res) {
        res.text("you asked for " + std::string(req.param("path")));
    });
    app.get("/search", [](skiff::request& req, skiff::response& res) {
        int page = req.query_as<int>("page").value_or(1);  // absent or not a number: 1
        res.text("q=" + std::string(req.query("q")) + " page=" + std::to_string(page));
    });
    app.post("/form", [](skiff::request& req, skiff::response& res) {
        res.text("name=" + std::string(req.form("name")));
    });
    app.on_not_found([](skiff::request& req, skiff::response& res) {
        res.text("nothing at " + std::string(req.path()) + "\n");
    });
    auto port = skiff::port_from_env("PORT", 8080);
    if (!port) {
        std::fprintf(stderr, "routes: PORT must be a number from 0 to 65535\n");
        return 1;
    }
    if (auto ec = app.listen(*port)) {
        std::fprintf(stderr, "routes: cannot listen on 127.0.0.1:%u: %s\n", unsigned{*port}, ec.message().c_str());
        return 1;
    }
    return app.run();
}
