// Blocking work off the loop: a fixed set of threads that run what would block a loop (a
// database query, a file system walk, a call to a synchronous client) and answer through the
// request's deferred handle.
//
//   skiff::blocking_pool pool(4);                        // outlives the server
//   app.get("/items/:id", [&pool](skiff::request& req, skiff::response& res) {
//       auto id = req.param_as<long long>("id");
//       pool.run(res.defer(), [id](skiff::deferred& later) { later.json(load(*id)); });
//   });
//
// The queue is bounded (max_queued tasks waiting, not counting those running): past it run()
// answers at once, 503 with Retry-After: 1 (or what on_full() renders), so an overloaded
// backend sheds load instead of growing the queue, and the client is told to come back.
// A task whose answer nobody waits for any more (the client went or half-closed, the deadline
// passed) is skipped when its turn comes, and answers nothing. A task that throws answers 500
// if it had not answered.
//
// Invariants. The threads start in the constructor and are joined in the destructor, which
// first refuses new work (pool_status::stopped) and lets the threads finish what is queued;
// a late answer, after its server is gone, is a no-op. Nothing here is compiled into a program
// that does not name the pool, so a single-policy server that does not use it has no thread
// code (tests/compile/no_thread_symbols.cmake).
#ifndef SKIFF_ASYNC_THREAD_POOL_HPP
#define SKIFF_ASYNC_THREAD_POOL_HPP

#include "skiff/async/deferred.hpp"
#include "skiff/detail/guarded_call.hpp"
#include "skiff/detail/unique_function.hpp"

#include <condition_variable>  // workers wait for tasks
#include <cstddef>             // std::size_t
#include <cstdint>             // std::uint8_t
#include <deque>               // the queue
#include <functional>          // std::function: the overflow answer, called from any thread
#include <mutex>               // the queue's lock
#include <thread>              // the workers
#include <type_traits>         // std::is_invocable_v
#include <utility>             // std::move, std::forward
#include <vector>              // the workers

namespace skiff {

// What became of work given to a pool.
enum class pool_status : std::uint8_t {
    queued,   // a pool thread will run it
    full,     // max_queued tasks already wait: not queued (run() has answered 503)
    stopped,  // the pool is being destroyed: not queued (run() has answered 503)
};

class blocking_pool {
public:
    static constexpr std::size_t default_max_queued = 1024;

    explicit blocking_pool(unsigned threads, std::size_t max_queued = default_max_queued) : max_queued_(max_queued) {
        if (threads == 0) threads = 1;
        threads_.reserve(threads);
        for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this, i] { work(i); });
    }
    blocking_pool(const blocking_pool&) = delete;
    blocking_pool& operator=(const blocking_pool&) = delete;
    ~blocking_pool() {
        {
            std::lock_guard<std::mutex> g(lock_);
            state_ = pool_state::stopping;
        }
        wake_.notify_all();
        for (auto& t : threads_) t.join();
    }

    // Runs work(later) on a pool thread; work answers through `later` (any of its
    // completions, or a push stream). Refused (full or stopped): `later` is answered 503 now.
    template <class Work>
    pool_status run(deferred later, Work&& work) {
        static_assert(std::is_invocable_v<std::decay_t<Work>&, deferred&>,
                      "blocking_pool::run: the work is called as work(skiff::deferred&)");
        std::unique_lock<std::mutex> g(lock_);
        pool_status st = admit();
        if (st != pool_status::queued) {
            g.unlock();
            refuse(later);
            return st;
        }
        return enqueue(g, [later = std::move(later), work = std::forward<Work>(work)]() mutable {
            if (later.cancelled()) return;  // dropped with the task: nothing is answered (deferred)
            detail::call_guarded([&] { work(later); }, [&] {
                if (later.pending()) later.status(500).text("Internal Server Error\n");
            });
        });
    }

    // Runs task on a pool thread; refused when full or stopping (the task is dropped).
    pool_status submit(detail::unique_function<void()> task) {
        std::unique_lock<std::mutex> g(lock_);
        pool_status st = admit();
        if (st != pool_status::queued) return st;
        return enqueue(g, [task = std::move(task)]() mutable { detail::call_guarded([&] { task(); }, [] {}); });
    }

    // The answer to give when run() is refused, instead of 503 text/plain with Retry-After: 1
    // (a JSON API answers JSON). Set before the pool is used: it is called from any thread.
    void on_full(std::function<void(deferred&)> render) { on_full_ = std::move(render); }

    // Which of this pool's threads calls, from 0 to size() - 1: for state kept per thread (a
    // database connection each). Outside a pool thread: size_t(-1).
    static std::size_t worker() noexcept { return current_worker(); }
    std::size_t size() const noexcept { return threads_.size(); }
    // Tasks waiting for a thread (approximate: others may be adding or taking).
    std::size_t queued() const {
        std::lock_guard<std::mutex> g(lock_);
        return tasks_.size();
    }

private:
    enum class pool_state : std::uint8_t { running, stopping };
    using task_type = detail::unique_function<void()>;

    pool_status admit() const noexcept {
        if (state_ == pool_state::stopping) return pool_status::stopped;
        return tasks_.size() >= max_queued_ ? pool_status::full : pool_status::queued;
    }

    template <class Task>
    pool_status enqueue(std::unique_lock<std::mutex>& g, Task&& task) {
        tasks_.emplace_back(std::forward<Task>(task));
        g.unlock();
        wake_.notify_one();
        return pool_status::queued;
    }

    void refuse(deferred& later) const {
        if (on_full_) return on_full_(later);
        later.status(503).header("Retry-After", "1").text("Service Unavailable\n");
    }

    static std::size_t& current_worker() noexcept {
        static thread_local std::size_t index = static_cast<std::size_t>(-1);
        return index;
    }

    // Takes tasks until the pool stops and the queue is empty: what was queued still runs.
    void work(std::size_t index) {
        current_worker() = index;
        std::unique_lock<std::mutex> g(lock_);
        for (;;) {
            wake_.wait(g, [this] { return state_ == pool_state::stopping || !tasks_.empty(); });
            if (tasks_.empty()) return;
            task_type t = std::move(tasks_.front());
            tasks_.pop_front();
            g.unlock();
            t();
            t = nullptr;  // what the task held (its deferred) goes before the lock is taken again
            g.lock();
        }
    }

    mutable std::mutex lock_;
    std::condition_variable wake_;
    std::deque<task_type> tasks_;
    std::size_t max_queued_;
    pool_state state_ = pool_state::running;
    std::function<void(deferred&)> on_full_;
    std::vector<std::thread> threads_;  // last: started once everything they use is made
};

} // namespace skiff

#endif // SKIFF_ASYNC_THREAD_POOL_HPP
