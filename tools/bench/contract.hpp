// The benchmark contract (design.md, "The contract app") and the start-up every benchmark app
// shares: env PORT (8080), WORKERS (1), POLICY (single | sharded | shared); binds 127.0.0.1;
// prints nothing per request; stops cleanly on SIGINT and SIGTERM.
//
//   int main() { return bench::run_app("contract_app", [](auto&) {}); }
//
// `extra(app)` may register routes beyond the contract (uneven_app does).
#ifndef SKIFF_TOOLS_BENCH_CONTRACT_HPP
#define SKIFF_TOOLS_BENCH_CONTRACT_HPP

#include <skiff/skiff.hpp>

#include <csignal>  // SIGINT, SIGTERM
#include <cstdio>   // std::fprintf
#include <cstdlib>  // std::getenv, std::strtoul
#include <string>   // the policy name

namespace bench {

inline void (*stop_server)() = nullptr;

extern "C" inline void on_signal(int) {
    if (stop_server) stop_server();
}

inline unsigned env_number(const char* name, unsigned fallback) {
    const char* v = std::getenv(name);
    return v && *v ? static_cast<unsigned>(std::strtoul(v, nullptr, 10)) : fallback;
}

template <class Policy>
void contract_routes(skiff::basic_server<Policy>& app) {
    app.get("/", [](skiff::request&, skiff::response& res) { res.text("Hello, World!"); });
    app.get("/json", [](skiff::request&, skiff::response& res) { res.json(R"({"message":"Hello, World!"})"); });
    app.get("/user/:id", [](skiff::request& req, skiff::response& res) { res.text(req.param("id")); });
    app.post("/echo", [](skiff::request& req, skiff::response& res) {
        res.body(req.body(), req.header("content-type"));
    });
}

template <class Policy, class Extra>
int serve(const char* name, Extra extra) {
    skiff::options opt;
    opt.workers = env_number("WORKERS", 1);
    static skiff::basic_server<Policy> app(opt);
    contract_routes(app);
    extra(app);
    auto port = static_cast<std::uint16_t>(env_number("PORT", 8080));
    if (auto ec = app.listen(port)) {
        std::fprintf(stderr, "%s: cannot listen on 127.0.0.1:%u: %s\n", name, port, ec.message().c_str());
        return 1;
    }
    stop_server = [] { app.stop(); };
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    return app.run();
}

// Runs the app under the policy POLICY names; `extra` is called with the server.
template <class Extra>
int run_app(const char* name, Extra extra) {
    const char* p = std::getenv("POLICY");
    std::string policy = p && *p ? p : "single";
    if (policy == "single") return serve<skiff::single>(name, extra);
    if (policy == "sharded") return serve<skiff::sharded>(name, extra);
    if (policy == "shared") return serve<skiff::shared>(name, extra);
    std::fprintf(stderr, "%s: POLICY must be single, sharded or shared (got '%s')\n", name, policy.c_str());
    return 2;
}

} // namespace bench

#endif // SKIFF_TOOLS_BENCH_CONTRACT_HPP
