// The server of tools/bench/ws_slow_clients.py (issue 32): WebSocket clients at `/chat` join a
// room, and one producer thread broadcasts a 4 KiB text message to every member every 20 ms
// with peer::send (from a thread of its own, so each send is posted to the member's loop, one
// copy of the frame per send, as upgrade.hpp says). `GET /` answers Hello, World!.
//
// Env: PORT, POLICY (single, sharded or shared; default single), WORKERS (default 1),
// MODE: `ignore` sends to every member every round whatever it holds (an application that
// ignores what send() said); `throttle` skips a member holding more than 64 KiB (buffered())
// this round, as examples/sse.cpp does for push streams. PERIOD_MS (default 20), MESSAGE_BYTES
// (default 4096). SIGTERM stops; the app then prints one line on stdout, what became of its
// sends (`sends queued=Q backpressure=B dropped=D skipped=S members=M`, M the most
// members at once), for the script.
#include <skiff/skiff.hpp>

#include <atomic>      // the producer's stop flag and counts
#include <chrono>      // the broadcast period
#include <csignal>     // SIGTERM stops
#include <cstdio>      // the counts line
#include <cstdlib>     // getenv, atoi
#include <mutex>       // the room, joined on the loop and read by the producer
#include <string>      // the message
#include <thread>      // the producer
#include <vector>      // the room's members

namespace ws = skiff::websocket;

namespace {

enum class mode { ignore, throttle };

// The members of /chat and the thread that speaks to them. Members join and leave on the loop
// that serves them; the list is copied out of the lock before sending, so no send runs under it
// (as examples/websocket.cpp's chat_room does).
class room {
public:
    room(mode m, std::chrono::milliseconds period, std::size_t bytes)
        : mode_(m), period_(period), message_(bytes, 'x'), thread_([this] { run(); }) {}
    ~room() {
        stopping_ = true;
        thread_.join();
    }
    void join(const ws::peer& p) {
        std::lock_guard<std::mutex> g(lock_);
        members_.push_back(p);
        if (members_.size() > most_) most_ = members_.size();
    }
    void leave(const ws::peer& p) {
        std::lock_guard<std::mutex> g(lock_);
        for (auto it = members_.begin(); it != members_.end(); ++it) {
            if (*it != p) continue;
            *it = members_.back();
            members_.pop_back();
            return;
        }
    }
    void report() {
        std::lock_guard<std::mutex> g(lock_);
        std::printf("sends queued=%llu backpressure=%llu dropped=%llu skipped=%llu members=%zu\n",
                    queued_.load(), backpressure_.load(), dropped_.load(), skipped_.load(),
                    most_);
        std::fflush(stdout);
    }

private:
    void run() {
        auto next = std::chrono::steady_clock::now();
        while (!stopping_) {
            next += period_;
            std::this_thread::sleep_until(next);
            broadcast();
        }
    }
    void broadcast() {
        std::vector<ws::peer> now;
        {
            std::lock_guard<std::mutex> g(lock_);
            now = members_;
        }
        for (ws::peer& p : now) {
            if (mode_ == mode::throttle && p.buffered() > 64 * 1024) {
                ++skipped_;
                continue;
            }
            switch (p.send(message_, ws::kind::text)) {
            case ws::send_status::queued: ++queued_; break;
            case ws::send_status::backpressure: ++backpressure_; break;
            case ws::send_status::dropped: ++dropped_; break;
            }
        }
    }

    mode mode_;
    std::chrono::milliseconds period_;
    std::string message_;
    std::mutex lock_;
    std::vector<ws::peer> members_;
    std::size_t most_ = 0;  // the most members at once (under lock_)
    // Written by the producer, read by report() while it may still be running.
    std::atomic<unsigned long long> queued_{0}, backpressure_{0}, dropped_{0}, skipped_{0};
    std::atomic<bool> stopping_{false};
    std::thread thread_;
};

const char* env(const char* name, const char* fallback) {
    const char* v = std::getenv(name);
    return v ? v : fallback;
}

ws::handlers chat_handlers(room& r) {
    ws::handlers h;
    h.max_message = 64 * 1024;
    h.on_open = [&r](ws::peer& p) { r.join(p); };
    h.on_close = [&r](ws::peer& p, ws::close_code, std::string_view) { r.leave(p); };
    return h;
}

template <class Policy>
int serve(std::uint16_t port) {
    mode m = std::string(env("MODE", "ignore")) == "throttle" ? mode::throttle : mode::ignore;
    // Outlives the server: a loop may still run a callback until run() returns.
    room chat(m, std::chrono::milliseconds(std::atoi(env("PERIOD_MS", "20"))),
              static_cast<std::size_t>(std::atol(env("MESSAGE_BYTES", "4096"))));
    skiff::options opt;
    opt.workers = static_cast<unsigned>(std::atoi(env("WORKERS", "1")));
    opt.max_connections = 20'000;
    opt.stop_timeout = std::chrono::milliseconds(500);
    opt.linger_timeout = std::chrono::milliseconds(200);  // clients that never read never answer the 1001
    int rc = 0;
    {
        skiff::basic_server<Policy> app(opt);
        app.get("/", [](skiff::request&, skiff::response& res) { res.text("Hello, World!"); });
        app.get("/chat", ws::upgrade(chat_handlers(chat)));
        if (auto ec = app.listen(port)) {
            std::fprintf(stderr, "ws_slow_clients_app: cannot listen on %u: %s\n", port, ec.message().c_str());
            return 1;
        }
        // Ignored once the stopper has gone (it puts back what was there), so that a late
        // signal cannot end the process before report().
        std::signal(SIGINT, SIG_IGN);
        std::signal(SIGTERM, SIG_IGN);
        skiff::stop_on_signals stopper(app);  // SIGINT, SIGTERM: stop
        rc = app.run();
    }
    chat.report();
    return rc;
}

} // namespace

int main() {
    auto port = static_cast<std::uint16_t>(std::atoi(env("PORT", "8080")));
    std::string policy = env("POLICY", "single");
    if (policy == "sharded") return serve<skiff::sharded>(port);
    if (policy == "shared") return serve<skiff::shared>(port);
    return serve<skiff::single>(port);
}
