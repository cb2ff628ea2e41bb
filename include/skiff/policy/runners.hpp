// How each policy turns loops into a running server: listen, run, stop. basic_server holds
// exactly one of these, chosen by its policy, so a single-policy program instantiates
// single_runner only and contains no thread, atomic or mutex. A runner owns the connection
// sets and the loops that serve them: one of each (single), one of each per thread
// (sharded), or one set that every thread's loop serves (shared).
//
// Listeners come in two kinds. listen(endpoint) opens a TCP socket itself, and so, under
// sharded with SO_REUSEPORT, one per loop. adopt(fd) takes a socket that is open already (a
// Unix socket, one a caller or systemd passed): it cannot be opened again, so under sharded
// every loop watches a duplicate of it (the kernel wakes them all on a connection and one
// accept wins), or, with the round-robin acceptor, loop 0 alone. The sets and loops are
// created by the first listener; each later one is added to them.
//
// Each set's services (async/hub.hpp) start at listen under the threaded policies, before any
// worker runs, so no two threads ever race to start one; single starts its own on first use,
// and a single program that never defers starts (and compiles) none. The hub is a feature,
// above this room: the threaded runners are handed its starter (start_services) by
// basic_server (app/server.hpp) and never name it.
//
// The loop knows no policy: runner_for picks the runner and connection_set_for the set a
// policy's loops serve.
#ifndef SKIFF_POLICY_RUNNERS_HPP
#define SKIFF_POLICY_RUNNERS_HPP

#include "skiff/detail/unique_fd.hpp"
#include "skiff/engine/acceptor.hpp"
#include "skiff/engine/event_loop.hpp"
#include "skiff/engine/loop_time.hpp"
#include "skiff/engine/options.hpp"
#include "skiff/platform/socket.hpp"
#include "skiff/platform/thread.hpp"
#include "skiff/policy/background.hpp"
#include "skiff/policy/local_set.hpp"
#include "skiff/policy/policy.hpp"
#include "skiff/policy/shared_set.hpp"
#include "skiff/router/router.hpp"

#include <atomic>        // the sharded stop flag
#include <cstddef>       // std::size_t
#include <cstdint>       // std::uint16_t, std::uint8_t
#include <fcntl.h>       // fcntl F_DUPFD_CLOEXEC for a listener each sharded loop watches
#include <memory>        // std::unique_ptr for sets and loops (they never move)
#include <mutex>         // std::once_flag for the sharded on_stop hooks
#include <system_error>  // std::error_code
#include <thread>        // std::thread for sharded and shared workers
#include <type_traits>   // std::conditional_t
#include <utility>       // std::move
#include <vector>        // std::vector of sets, loops, threads and their errors

namespace skiff::detail {

template <class Policy>
using connection_set_for = std::conditional_t<is_shared<Policy>, shared_set,
                                              std::conditional_t<is_sharded<Policy>, sharded_set, local_set>>;

// Starts a set's services (async_hub::start), handed down by basic_server.
using start_services = void (*)(hub_anchor&);

template <class Policy>
class single_runner {
public:
    single_runner(const options& opt, const router& r) : loop_(opt, r, set_) {}

    std::error_code listen(const endpoint& ep, const options& opt) {
        unique_fd fd;
        if (auto ec = open_listener(ep, false, opt.listen_backlog, fd)) return ec;
        return adopt(std::move(fd), transport::tcp, opt);
    }
    std::error_code adopt(unique_fd fd, transport kind, const options& opt) {
        if (state_ == set_state::closed) {
            if (auto ec = set_.open(monotonic_ms(), tick_for(opt))) return ec;
            loop_.open();
            state_ = set_state::open;
        }
        return set_.add_listener(std::move(fd), kind);
    }
    std::uint16_t port() const noexcept { return loop_.port(); }
    std::error_code run() { return loop_.run(); }
    void stop() noexcept { loop_.wake(); }
    std::size_t loops() const noexcept { return 1; }
    hub_anchor& anchor(std::size_t) noexcept { return set_.anchor(); }

private:
    enum class set_state : std::uint8_t { closed, open };

    local_set set_;
    event_loop<connection_set_for<Policy>> loop_;
    set_state state_ = set_state::closed;
};

// Runs fn on `workers` threads, each pinned and started as the options say, and joins them.
template <class Fn>
void run_workers(std::size_t workers, const options& opt, Fn fn) {
    std::vector<std::thread> threads;
    threads.reserve(workers);
    for (std::size_t i = 0; i < workers; ++i) {
        threads.emplace_back([&opt, &fn, i] {
            if (!opt.cpus.empty()) pin_current_thread(opt.cpus[i % opt.cpus.size()]);
            else if (opt.pin_workers) pin_current_thread(static_cast<int>(i % cpu_count()));
            if (opt.on_worker_start) opt.on_worker_start(static_cast<unsigned>(i));
            on_serving_thread() = true;  // a handler's stop() must not wait for this thread
            fn(i);
        });
    }
    for (auto& t : threads) t.join();
}

// Runs each loop on a worker of its own until every one has returned; the error that ended
// a loop's run (the first loop's, if several), or none after a clean stop.
template <class Loops>
std::error_code run_loops(Loops& loops, const options& opt) {
    std::vector<std::error_code> errors(loops.size());
    run_workers(loops.size(), opt, [&](std::size_t i) { errors[i] = loops[i]->run(); });
    for (auto& ec : errors)
        if (ec) return ec;
    return {};
}

inline std::size_t worker_count(const options& opt) noexcept { return opt.workers == 0 ? cpu_count() : opt.workers; }

template <class Policy>
class sharded_runner {
    using loop = event_loop<connection_set_for<Policy>>;

public:
    sharded_runner(const options& opt, const router& r, start_services start)
        : opt_(opt), router_(r), start_services_(start) {}

    // One SO_REUSEPORT listener per loop; or, without it, one listener on loop 0, which hands
    // connections round-robin to all loops.
    std::error_code listen(endpoint ep, const options& opt) {
        if (auto ec = open_loops(opt)) return ec;
        for (std::size_t i = 0; i < listening_loops(); ++i) {
            unique_fd fd;
            if (auto ec = open_listener(ep, reuse(), opt.listen_backlog, fd)) return ec;
            if (i == 0) set_endpoint_port(ep, local_port(fd.get()));  // port 0: the others join the one chosen
            if (auto ec = sets_[i]->add_listener(std::move(fd), transport::tcp)) return ec;
        }
        return {};
    }

    // Every listening loop watches the socket: loop 0 the descriptor, the others duplicates.
    std::error_code adopt(unique_fd fd, transport kind, const options& opt) {
        if (auto ec = open_loops(opt)) return ec;
        for (std::size_t i = 1; i < listening_loops(); ++i) {
            unique_fd copy(::fcntl(fd.get(), F_DUPFD_CLOEXEC, 0));
            if (!copy) return last_errno();
            if (auto ec = sets_[i]->add_listener(std::move(copy), kind)) return ec;
        }
        return sets_[0]->add_listener(std::move(fd), kind);
    }
    std::uint16_t port() const noexcept { return loops_.empty() ? 0 : loops_[0]->port(); }
    std::size_t loops() const noexcept { return sets_.size(); }
    hub_anchor& anchor(std::size_t i) noexcept { return sets_[i % sets_.size()]->anchor(); }

    // After every worker has returned: a connection the acceptor handed to a loop after it
    // had drained is refused (503) and closed, not left open.
    std::error_code run() {
        std::error_code ec = run_loops(loops_, opt_);
        for (auto& s : sets_) s->adopt_inbox(refuse_connection);
        return ec;
    }

    // Async-signal-safe: a lock-free store and one write per loop.
    void stop() noexcept {
        stop_.store(true, std::memory_order_relaxed);
        for (auto& l : loops_) l->wake();
    }

private:
    // The first listener creates the loops; the round-robin acceptor (no SO_REUSEPORT) is
    // loop 0, handing to all.
    std::error_code open_loops(const options& opt) {
        if (!loops_.empty()) return {};
        std::size_t n = worker_count(opt);
        accepting_ = opt.reuse_port && has_reuse_port ? accepting::every_loop : accepting::loop_zero;
        for (std::size_t i = 0; i < n; ++i) {
            sets_.push_back(std::make_unique<sharded_set>());
            sets_.back()->follow(stop_, stop_once_);
            if (auto ec = sets_.back()->open(monotonic_ms(), tick_for(opt))) return ec;
            sets_.back()->limit_budget(opt.max_buffered / n);
            loops_.push_back(std::make_unique<loop>(opt_, router_, *sets_.back()));
            loops_.back()->limit_connections((opt.max_connections + n - 1) / n);
            loops_.back()->number(i);
            loops_.back()->open();
            start_services_(sets_.back()->anchor());
        }
        if (!reuse()) {
            std::vector<sharded_set*> all;
            for (auto& s : sets_) all.push_back(s.get());
            sets_[0]->hand_to(std::move(all));
        }
        return {};
    }
    bool reuse() const noexcept { return accepting_ == accepting::every_loop; }
    std::size_t listening_loops() const noexcept { return reuse() ? sets_.size() : 1; }

    // every_loop: SO_REUSEPORT, each loop accepts its own; loop_zero: the round-robin acceptor.
    enum class accepting : std::uint8_t { every_loop, loop_zero };

    const options& opt_;
    const router& router_;
    start_services start_services_;
    std::vector<std::unique_ptr<sharded_set>> sets_;
    std::vector<std::unique_ptr<loop>> loops_;
    std::atomic<bool> stop_{false};
    std::once_flag stop_once_;  // the on_stop hooks, run by the first loop to stop
    accepting accepting_ = accepting::every_loop;
};

template <class Policy>
class shared_runner {
    using loop = event_loop<connection_set_for<Policy>>;

public:
    shared_runner(const options& opt, const router& r, start_services start)
        : opt_(opt), router_(r), start_services_(start) {}

    std::error_code listen(const endpoint& ep, const options& opt) {
        unique_fd fd;
        if (auto ec = open_listener(ep, false, opt.listen_backlog, fd)) return ec;
        return adopt(std::move(fd), transport::tcp, opt);
    }
    std::error_code adopt(unique_fd fd, transport kind, const options& opt) {
        if (loops_.empty()) {
            if (auto ec = set_.open(monotonic_ms(), tick_for(opt))) return ec;
            for (std::size_t i = 0; i < worker_count(opt); ++i) {
                loops_.push_back(std::make_unique<loop>(opt_, router_, set_));
                loops_.back()->number(i);
                loops_.back()->open();
            }
            start_services_(set_.anchor());  // once, with the set: later listeners share it
        }
        return set_.add_listener(std::move(fd), kind);
    }
    std::uint16_t port() const noexcept { return set_.port(); }
    std::size_t loops() const noexcept { return 1; }  // one set of connections, one hub
    hub_anchor& anchor(std::size_t) noexcept { return set_.anchor(); }

    std::error_code run() {
        std::error_code ec = run_loops(loops_, opt_);
        set_.close_all();  // past the stop deadline
        return ec;
    }

    void stop() noexcept { set_.request_stop(); }

private:
    const options& opt_;
    const router& router_;
    start_services start_services_;
    shared_set set_;
    std::vector<std::unique_ptr<loop>> loops_;
};

template <class Policy>
using runner_for = std::conditional_t<is_single<Policy>, single_runner<Policy>,
                                      std::conditional_t<is_sharded<Policy>, sharded_runner<Policy>,
                                                         shared_runner<Policy>>>;

} // namespace skiff::detail

#endif // SKIFF_POLICY_RUNNERS_HPP
