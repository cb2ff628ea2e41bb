// The server stop_bench.py stops: default options, and routes whose answers outlive any
// request, so that stop() has streams to end and answers to refuse.
//
//   GET /events   text/event-stream: one event ("hello"), then the stream stays open
//   GET /never    a deferred answer the application never completes
//   GET /count    how many of the two are open ("<streams> <waiting>")
//   GET /         Hello, World!
//
// SIGTERM or SIGINT calls stop(); when run() returns, one line on stdout:
// "stopped run_ms=<ms from the signal to run() returning>". Env: PORT, POLICY (single,
// sharded or shared), WORKERS (threaded policies; default 1, so that CPU pinning holds).
#include <skiff/skiff.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <time.h>
#include <vector>

namespace {

struct kept {
    std::mutex lock;
    std::vector<skiff::sse_stream> streams;
    std::vector<skiff::deferred> answers;
};

std::function<void()> stop_server;
std::atomic<long long> signalled_ns{0};

long long now_ns() {
    timespec t{};
    ::clock_gettime(CLOCK_MONOTONIC, &t);  // async-signal-safe
    return static_cast<long long>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

extern "C" void on_signal(int) {
    signalled_ns.store(now_ns());
    if (stop_server) stop_server();
}

template <class Policy>
int serve(std::uint16_t port) {
    kept k;
    skiff::options opt;  // defaults: what the target names
    const char* workers = std::getenv("WORKERS");
    opt.workers = static_cast<unsigned>(workers ? std::atoi(workers) : 1);
    skiff::basic_server<Policy> app(opt);
    app.get("/", [](skiff::request&, skiff::response& res) { res.text("Hello, World!"); });
    app.get("/events", [&k](skiff::request&, skiff::response& res) {
        skiff::sse_stream s = res.defer().events();
        s.send("hello");
        std::lock_guard<std::mutex> g(k.lock);
        k.streams.push_back(std::move(s));
    });
    app.get("/never", [&k](skiff::request&, skiff::response& res) {
        std::lock_guard<std::mutex> g(k.lock);
        k.answers.push_back(res.defer());
    });
    app.get("/count", [&k](skiff::request&, skiff::response& res) {
        std::lock_guard<std::mutex> g(k.lock);
        res.text(std::to_string(k.streams.size()) + " " + std::to_string(k.answers.size()));
    });
    if (auto ec = app.listen(port)) {
        std::fprintf(stderr, "stop_app: cannot listen on %u: %s\n", port, ec.message().c_str());
        return 1;
    }
    stop_server = [&app] { app.stop(); };
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    int code = app.run();
    double ms = static_cast<double>(now_ns() - signalled_ns.load()) / 1e6;
    std::printf("stopped run_ms=%.1f\n", ms);
    std::fflush(stdout);
    return code;
}

} // namespace

int main() {
    const char* port_env = std::getenv("PORT");
    auto port = static_cast<std::uint16_t>(port_env ? std::atoi(port_env) : 8080);
    std::string policy = std::getenv("POLICY") ? std::getenv("POLICY") : "single";
    if (policy == "sharded") return serve<skiff::sharded>(port);
    if (policy == "shared") return serve<skiff::shared>(port);
    return serve<skiff::single>(port);
}
