// The server of tools/bench/slow_subscribers.py (issue 28, defect 5): `GET /events` subscribes
// to a push stream, and one producer thread pushes a 4 KiB server-sent event to every
// subscriber every 20 ms. `GET /` answers Hello, World!.
//
// Env: PORT, POLICY (single, sharded or shared; default single), WORKERS (default 1),
// MODE: `ignore` pushes to every subscriber every round whatever it holds (an application
// that ignores buffered()); `throttle` skips a subscriber holding more than 64 KiB this round,
// as examples/sse.cpp does. A subscriber whose push says closed is dropped either way.
// PERIOD_MS (default 20), EVENT_BYTES (default 4096). SIGTERM stops.
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

enum class mode { ignore, throttle };

class publisher {
public:
    publisher(mode m, std::chrono::milliseconds period, std::size_t bytes)
        : mode_(m), period_(period), event_("data: " + std::string(bytes > 8 ? bytes - 8 : 0, 'x') + "\n\n"),
          thread_([this] { run(); }) {}
    ~publisher() {
        stopping_ = true;
        thread_.join();
    }
    void subscribe(skiff::push_stream s) {
        std::lock_guard<std::mutex> g(lock_);
        subscribers_.push_back(std::move(s));
    }

private:
    void run() {
        auto next = std::chrono::steady_clock::now();
        while (!stopping_) {
            next += period_;
            std::this_thread::sleep_until(next);
            publish();
        }
    }
    void publish() {
        std::lock_guard<std::mutex> g(lock_);
        std::vector<skiff::push_stream> kept;
        kept.reserve(subscribers_.size());
        for (auto& s : subscribers_) {
            if (mode_ == mode::throttle && s.buffered() > 64 * 1024) {
                kept.push_back(std::move(s));
                continue;
            }
            if (s.write(event_) != skiff::push_status::closed) kept.push_back(std::move(s));
        }
        subscribers_.swap(kept);
    }

    mode mode_;
    std::chrono::milliseconds period_;
    std::string event_;
    std::mutex lock_;
    std::vector<skiff::push_stream> subscribers_;
    std::atomic<bool> stopping_{false};
    std::thread thread_;
};

const char* env(const char* name, const char* fallback) {
    const char* v = std::getenv(name);
    return v ? v : fallback;
}

template <class Policy>
int serve(std::uint16_t port) {
    mode m = std::string(env("MODE", "ignore")) == "throttle" ? mode::throttle : mode::ignore;
    publisher events(m, std::chrono::milliseconds(std::atoi(env("PERIOD_MS", "20"))),
                     static_cast<std::size_t>(std::atol(env("EVENT_BYTES", "4096"))));
    skiff::options opt;
    opt.workers = static_cast<unsigned>(std::atoi(env("WORKERS", "1")));
    opt.max_connections = 20'000;
    opt.stop_timeout = std::chrono::milliseconds(500);
    skiff::basic_server<Policy> app(opt);
    app.get("/", [](skiff::request&, skiff::response& res) { res.text("Hello, World!"); });
    app.get("/events", [&events](skiff::request&, skiff::response& res) {
        skiff::deferred later = res.defer();
        later.header("Cache-Control", "no-cache");
        events.subscribe(later.stream("text/event-stream"));
    });
    if (auto ec = app.listen(port)) {
        std::fprintf(stderr, "slow_subscribers_app: cannot listen on %u: %s\n", port, ec.message().c_str());
        return 1;
    }
    skiff::stop_on_signals stopper(app);  // SIGINT, SIGTERM: stop
    return app.run();
}

} // namespace

int main() {
    auto port = static_cast<std::uint16_t>(std::atoi(env("PORT", "8080")));
    std::string policy = env("POLICY", "single");
    if (policy == "sharded") return serve<skiff::sharded>(port);
    if (policy == "shared") return serve<skiff::shared>(port);
    return serve<skiff::single>(port);
}
