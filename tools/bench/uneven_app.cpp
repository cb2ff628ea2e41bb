// The contract app (design.md, "The contract app") plus one route whose cost is uneven, for
// measuring the threading policies when requests do not all cost the same
// (tools/bench/README.md, "Threading policies"). Env as contract_app: PORT (8080), WORKERS (1),
// POLICY (single | sharded | shared). Binds 127.0.0.1, prints nothing per request.
//
//   GET /uneven/:n/:us   200 text/plain "Hello, World!", like GET /; but one request in n,
//                        counted per worker thread, first spins for us microseconds.
//
// It spins rather than sleeps: the slow request holds its worker's CPU, as a costly handler
// would, so a loop that owns it serves none of its other connections meanwhile. Counting per
// thread keeps the slow share at 1/n under every policy without a shared counter.
//
// Until contract_app serves this route itself, this program repeats its routes and start-up.
#include <skiff/skiff.hpp>

#include <charconv>  // std::from_chars for the route's numbers
#include <chrono>    // the spin
#include <csignal>
#include <cstdio>
#include <cstdlib>
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

// The whole of s as a number, or false.
bool to_number(std::string_view s, unsigned long& out) {
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && end == s.data() + s.size();
}

void spin_for(std::chrono::microseconds how_long) {
    auto until = std::chrono::steady_clock::now() + how_long;
    while (std::chrono::steady_clock::now() < until) {
    }
}

void uneven(skiff::request& req, skiff::response& res) {
    unsigned long n = 0, us = 0;
    if (!to_number(req.param("n"), n) || n == 0 || !to_number(req.param("us"), us) || us > 10'000'000) {
        res.status(400).text("want /uneven/N/MICROSECONDS, N > 0\n");
        return;
    }
    thread_local unsigned long answered = 0;
    if (++answered % n == 0) spin_for(std::chrono::microseconds(us));
    res.text("Hello, World!");
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
    app.get("/uneven/:n/:us", uneven);
    auto port = static_cast<std::uint16_t>(env_number("PORT", 8080));
    if (auto ec = app.listen(port)) {
        std::fprintf(stderr, "uneven_app: cannot listen on 127.0.0.1:%u: %s\n", port, ec.message().c_str());
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
    std::fprintf(stderr, "uneven_app: POLICY must be single, sharded or shared (got '%s')\n", policy.c_str());
    return 2;
}
