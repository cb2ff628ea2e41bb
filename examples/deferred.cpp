// Answering later without blocking the loop (response::defer): every answer here comes from
// another thread, while the loop goes on serving.
//
//   GET /          Hello, World!
//   GET /slow/:ms  "slept MS" after MS milliseconds, from a timer thread that holds a queue
//                  of pending answers (the shape of waiting on an upstream)
//   GET /pool/:ms  "slept MS" from a 4-thread pool whose task sleeps MS milliseconds
//                  (skiff::blocking_pool: a full queue answers 503)
//   MS that is not a non-negative integer, or above 60000 (a minute): 400, so that no client
//   holds a pool thread or a queued answer for longer than that
//   An answer not given within options::deferred_timeout (30 s here, the default) is 503.
//
// Ctrl-C or SIGTERM stops it at once: pending answers get 503 and the pool's sleeping tasks
// are woken, so the process does not wait out the longest sleep.
//
// Env: PORT (default 8080), POLICY (single, sharded or shared; default single). Ctrl-C stops.
#include <skiff/skiff.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace {

using clock_type = std::chrono::steady_clock;

// Answers each pending request at its due time, from one thread: a queue ordered by time.
class delayed_answers {
public:
    delayed_answers() : thread_([this] { run(); }) {}
    ~delayed_answers() {
        {
            std::lock_guard<std::mutex> g(lock_);
            stopping_ = true;
        }
        wake_.notify_one();
        thread_.join();
    }

    void add(clock_type::time_point due, skiff::deferred later, std::string body) {
        {
            std::lock_guard<std::mutex> g(lock_);
            pending_.emplace(due, entry{std::move(later), std::move(body)});
        }
        wake_.notify_one();
    }

private:
    struct entry {
        skiff::deferred later;
        std::string body;
    };

    void run() {
        std::unique_lock<std::mutex> g(lock_);
        while (!stopping_) {
            if (pending_.empty()) {
                wake_.wait(g);
                continue;
            }
            auto first = pending_.begin();
            if (clock_type::now() < first->first) {
                wake_.wait_until(g, first->first);
                continue;
            }
            entry e = std::move(first->second);
            pending_.erase(first);
            g.unlock();
            e.later.text(e.body);
            g.lock();
        }
    }

    std::mutex lock_;
    std::condition_variable wake_;
    std::multimap<clock_type::time_point, entry> pending_;
    bool stopping_ = false;
    std::thread thread_;
};

// The pool's tasks sleep here, so that a stop can wake them: blocking_pool joins its threads
// when it goes, and a task asleep for an hour would hold the exit for an hour. A task whose
// answer nobody waits for any more (the client went, deferred_timeout passed) stops sleeping
// too, within a tenth of a second, and gives its thread back.
class wakeable_sleep {
public:
    // Sleeps ms, or less if woken or cancelled; true when the whole time passed.
    bool sleep(unsigned ms, const skiff::deferred& later) {
        auto until = clock_type::now() + std::chrono::milliseconds(ms);
        std::unique_lock<std::mutex> lock(lock_);
        while (!stopping_ && !later.cancelled()) {
            auto left = until - clock_type::now();
            if (left <= clock_type::duration::zero()) return true;
            woken_.wait_for(lock, std::min<clock_type::duration>(left, std::chrono::milliseconds(100)));
        }
        return false;
    }
    void wake_all() {
        {
            std::lock_guard<std::mutex> guard(lock_);
            stopping_ = true;
        }
        woken_.notify_all();
    }

private:
    std::mutex lock_;
    std::condition_variable woken_;
    bool stopping_ = false;
};

constexpr unsigned max_sleep_ms = 60000;

// The :ms parameter, 0 to max_sleep_ms; else answered 400 and empty.
std::optional<unsigned> sleep_ms(skiff::request& req, skiff::response& res) {
    auto ms = skiff::require_param<unsigned>(req, res, "ms");  // not an integer: 400
    if (ms && *ms > max_sleep_ms) {
        res.status(400).text("parameter ms: at most " + std::to_string(max_sleep_ms) + "\n");
        return std::nullopt;
    }
    return ms;
}

template <class Policy>
int serve(std::uint16_t port) {
    delayed_answers timer;  // outlives nothing it answers: a late answer after stop is a no-op
    wakeable_sleep sleeper;        // outlives the pool, whose tasks sleep in it
    skiff::blocking_pool pool(4);  // outlives the server too
    skiff::options opt;
    opt.workers = 2;
    skiff::basic_server<Policy> app(opt);
    app.get("/", [](skiff::request&, skiff::response& res) { res.text("Hello, World!"); });
    app.get("/slow/:ms", [&timer](skiff::request& req, skiff::response& res) {
        auto ms = sleep_ms(req, res);
        if (!ms) return;
        timer.add(clock_type::now() + std::chrono::milliseconds(*ms), res.defer(), "slept " + std::to_string(*ms));
    });
    app.get("/pool/:ms", [&pool, &sleeper](skiff::request& req, skiff::response& res) {
        auto ms = sleep_ms(req, res);
        if (!ms) return;
        pool.run(res.defer(), [ms = *ms, &sleeper](skiff::deferred& later) {
            if (sleeper.sleep(ms, later)) later.text("slept " + std::to_string(ms));  // blocking work, off the loop
        });  // woken by the stop or cancelled: the server has answered it already (503), or nobody waits
    });
    if (auto ec = app.listen(port)) {
        std::fprintf(stderr, "deferred: cannot listen on 127.0.0.1:%u: %s\n", port, ec.message().c_str());
        return 1;
    }
    skiff::stop_on_signals stopper(app);  // SIGINT, SIGTERM: stop; declared after app, so it goes first
    std::printf("deferred: serving http://127.0.0.1:%u/\n", app.port());
    std::fflush(stdout);
    int code = app.run();
    sleeper.wake_all();  // before the pool joins its threads
    return code;
}

} // namespace

int main() {
    auto port_or_none = skiff::port_from_env("PORT", 8080);
    if (!port_or_none) {
        std::fprintf(stderr, "deferred: PORT must be a number from 0 to 65535\n");
        return 1;
    }
    std::uint16_t port = *port_or_none;
    std::string policy = std::getenv("POLICY") ? std::getenv("POLICY") : "single";
    if (policy == "sharded") return serve<skiff::sharded>(port);
    if (policy == "shared") return serve<skiff::shared>(port);
    return serve<skiff::single>(port);
}
