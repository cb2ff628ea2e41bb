// The server the black-box system tests (tests/system/*.py) start: the contract routes
// (GET /, POST /echo, ...) plus GET /name (which instance answered, for the proxy tests) and
// GET /big/:kib (a body of that many KiB, for slow readers and resets mid-response), and
// POST /framing (how the body came: "chunked" or "length N", to see what a proxy forwards).
// Env: PORT (0: the kernel picks), NAME, POLICY (single | sharded | shared), WORKERS (1),
// MAX_CONNECTIONS, MAX_BUFFERED, HEADER_TIMEOUT_MS, WRITE_TIMEOUT_MS; unset means the skiff default. Prints "serving PORT" once listening; SIGTERM stops it.
#include "../../tools/bench/contract.hpp"

#include <chrono>
#include <cstdio>
#include <string>

namespace {

template <class T>
void from_env(const char* name, T& value) {
    const char* v = std::getenv(name);
    if (v && *v) value = static_cast<T>(std::strtoull(v, nullptr, 10));
}

void from_env_ms(const char* name, std::chrono::milliseconds& value) {
    long long ms = value.count();
    from_env(name, ms);
    value = std::chrono::milliseconds(ms);
}

} // namespace

template <class Policy>
int serve(const skiff::options& opt) {
    static skiff::basic_server<Policy> app(opt);
    bench::contract_routes(app);

    const char* name_env = std::getenv("NAME");
    static const std::string name = name_env ? name_env : "skiff";
    app.get("/name", [](skiff::request&, skiff::response& res) { res.text(name); });
    app.post("/framing", [](skiff::request& req, skiff::response& res) {
        bool chunked = req.has_header("transfer-encoding");
        res.text(chunked ? std::string("chunked") : "length " + std::string(req.header("content-length")));
    });
    static const std::string mebibyte(1 << 20, 'x');
    app.get("/big/:kib", [](skiff::request& req, skiff::response& res) {
        std::size_t kib = std::strtoul(std::string(req.param("kib")).c_str(), nullptr, 10);
        std::string body;
        for (std::size_t left = kib * 1024; left > 0;) {
            std::size_t n = left < mebibyte.size() ? left : mebibyte.size();
            body.append(mebibyte, 0, n);
            left -= n;
        }
        res.body(body, "application/octet-stream");
    });

    if (auto ec = app.listen(static_cast<std::uint16_t>(bench::env_number("PORT", 0)))) {
        std::fprintf(stderr, "system_app: cannot listen: %s\n", ec.message().c_str());
        return 1;
    }
    bench::stop_server = [] { app.stop(); };
    std::signal(SIGINT, bench::on_signal);
    std::signal(SIGTERM, bench::on_signal);
    std::printf("serving %u\n", app.port());
    std::fflush(stdout);
    return app.run();
}

int main() {
    skiff::options opt;
    opt.workers = bench::env_number("WORKERS", 1);
    from_env("MAX_CONNECTIONS", opt.max_connections);
    from_env("MAX_BUFFERED", opt.max_buffered);
    from_env_ms("HEADER_TIMEOUT_MS", opt.header_timeout);
    from_env_ms("WRITE_TIMEOUT_MS", opt.write_timeout);
    const char* p = std::getenv("POLICY");
    std::string policy = p && *p ? p : "single";
    if (policy == "single") return serve<skiff::single>(opt);
    if (policy == "sharded") return serve<skiff::sharded>(opt);
    if (policy == "shared") return serve<skiff::shared>(opt);
    std::fprintf(stderr, "system_app: POLICY must be single, sharded or shared (got '%s')\n", policy.c_str());
    return 2;
}
