// The benchmark contract app (design.md, "The contract app"): the routes every peer serves,
// byte for byte. Env: PORT (8080), WORKERS (1), POLICY (single | sharded | shared).
// Binds 127.0.0.1, prints nothing per request, stops cleanly on SIGINT and SIGTERM.
#include <skiff/skiff.hpp>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

void (*stop_server)() = nullptr;

extern "C" void on_signal(int) {
    if (stop_server) stop_server();
}

unsigned env_number(const char* name, unsigned fallback) {
    const char* v = std::getenv(name);
    return v && *v ? static_cast<unsigned>(std::strtoul(v, nullptr, 10)) : fallback;
}

template <class Policy>
int serve() {
    skiff::options opt;
    opt.workers = env_number("WORKERS", 1);
    static skiff::basic_server<Policy> app(opt);
    app.get("/", [](skiff::request&, skiff::response& res) { res.text("Hello, World!"); });
    app.get("/json", [](skiff::request&, skiff::response& res) { res.json(R"({"message":"Hello, World!"})"); });
    app.get("/user/:id", [](skiff::request& req, skiff::response& res) { res.text(req.param("id")); });
    app.post("/echo", [](skiff::request& req, skiff::response& res) {
        res.body(req.body(), req.header("content-type"));
    });
    auto port = static_cast<std::uint16_t>(env_number("PORT", 8080));
    if (auto ec = app.listen(port)) {
        std::fprintf(stderr, "contract_app: cannot listen on 127.0.0.1:%u: %s\n", port, ec.message().c_str());
        return 1;
    }
    stop_server = [] { app.stop(); };
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    return app.run();
}

} // namespace

int main() {
    const char* p = std::getenv("POLICY");
    std::string policy = p && *p ? p : "single";
    if (policy == "single") return serve<skiff::single>();
    if (policy == "sharded") return serve<skiff::sharded>();
    if (policy == "shared") return serve<skiff::shared>();
    std::fprintf(stderr, "contract_app: POLICY must be single, sharded or shared (got '%s')\n", policy.c_str());
    return 2;
}
