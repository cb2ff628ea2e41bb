// JSON in and out with nlohmann/json (Debian: nlohmann-json3-dev), for APIs with more than a
// few fields; skiff::json_escape covers the hand-built case. Built only where CMake finds the
// library: skiff itself depends on nothing. On 127.0.0.1:8080, or the port in $PORT.
//
//   curl http://127.0.0.1:8080/items/7
//   curl -d '{"name":"boat","tags":["red"]}' http://127.0.0.1:8080/items
#include <skiff/skiff.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>

int main() {
    skiff::server app;
    app.get("/items/:id", [](skiff::request& req, skiff::response& res) {
        nlohmann::json item = {{"id", std::string(req.param("id"))}, {"name", "example"}};
        res.json(item.dump());
    });
    app.post("/items", [](skiff::request& req, skiff::response& res) {
        // parse(..., nullptr, false): no exception on bad input, a discarded value instead.
        nlohmann::json in = nlohmann::json::parse(req.body(), nullptr, false);
        if (in.is_discarded() || !in.is_object() || !in.contains("name")) {
            res.status(400).json(R"({"error":"expected an object with a name"})");
            return;
        }
        nlohmann::json out = {{"created", in["name"]}, {"fields", in.size()}};
        res.status(201).json(out.dump());
    });
    auto port = skiff::port_from_env("PORT", 8080);
    if (!port) {
        std::fprintf(stderr, "json_api: PORT must be a number from 0 to 65535\n");
        return 1;
    }
    if (auto ec = app.listen(*port)) {
        std::fprintf(stderr, "json_api: cannot listen on 127.0.0.1:%u: %s\n", unsigned{*port}, ec.message().c_str());
        return 1;
    }
    std::printf("json_api: serving http://127.0.0.1:%u/\n", app.port());
    std::fflush(stdout);
    return app.run();
}
