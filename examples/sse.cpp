// Server-Sent Events pushed from a producer thread (deferred::events): every 100 ms one
// thread publishes `data: N` (N counting up from 1) to every subscriber, while the loop goes
// on serving other requests.
//
//   GET /events    text/event-stream: data: 1, data: 2, ... (a subscriber joins at the next N)
//   GET /          Hello, World!
//
// A subscriber that reads too slowly is told apart by send()'s result: `backlogged` (it holds
// more than write_high_water) is skipped this round, `closed` (it went, or passed
// max_push_buffer) is dropped. Env: PORT (default 8080), POLICY (single, sharded or shared;
// default single). Ctrl-C stops.
#include <skiff/skiff.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

class publisher {
public:
    publisher() : thread_([this] { run(); }) {}
    ~publisher() {
        stopping_ = true;
        thread_.join();
    }

    void subscribe(skiff::sse_stream s) {
        std::lock_guard<std::mutex> g(lock_);
        subscribers_.push_back(std::move(s));
    }

private:
    void run() {
        auto next = std::chrono::steady_clock::now();
        for (unsigned long n = 1; !stopping_; ++n) {
            next += std::chrono::milliseconds(100);
            std::this_thread::sleep_until(next);
            publish(std::to_string(n));
        }
    }

    void publish(const std::string& data) {
        std::lock_guard<std::mutex> g(lock_);
        std::vector<skiff::sse_stream> kept;
        for (auto& s : subscribers_) {
            if (s.buffered() > 64 * 1024) {  // slow: skip it this round rather than queue more
                kept.push_back(std::move(s));
                continue;
            }
            if (s.send(data) != skiff::push_status::closed) kept.push_back(std::move(s));
        }
        subscribers_.swap(kept);
    }

    std::mutex lock_;
    std::vector<skiff::sse_stream> subscribers_;
    std::atomic<bool> stopping_{false};
    std::thread thread_;
};

template <class Policy>
int serve(std::uint16_t port) {
    publisher events;
    skiff::options opt;
    opt.workers = 2;
    opt.stop_timeout = std::chrono::milliseconds(500);  // open streams are cut at stop
    skiff::basic_server<Policy> app(opt);
    app.get("/", [](skiff::request&, skiff::response& res) { res.text("Hello, World!"); });
    app.get("/events", [&events](skiff::request&, skiff::response& res) {
        skiff::deferred later = res.defer();
        events.subscribe(later.events());
    });
    if (auto ec = app.listen(port)) {
        std::fprintf(stderr, "sse: cannot listen on 127.0.0.1:%u: %s\n", port, ec.message().c_str());
        return 1;
    }
    skiff::stop_on_signals stopper(app);  // SIGINT, SIGTERM: stop; declared after app, so it goes first
    std::printf("sse: serving http://127.0.0.1:%u/\n", app.port());
    std::fflush(stdout);
    return app.run();
}

} // namespace

int main() {
    auto port_or_none = skiff::port_from_env("PORT", 8080);
    if (!port_or_none) {
        std::fprintf(stderr, "sse: PORT must be a number from 0 to 65535\n");
        return 1;
    }
    std::uint16_t port = *port_or_none;
    std::string policy = std::getenv("POLICY") ? std::getenv("POLICY") : "single";
    if (policy == "sharded") return serve<skiff::sharded>(port);
    if (policy == "shared") return serve<skiff::shared>(port);
    return serve<skiff::single>(port);
}
