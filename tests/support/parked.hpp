// Deferred handles parked by handlers and taken by the test, which completes them when it
// chooses: the common fixture of the answer-later tests (integration/deferred.cpp and the
// wall-clock deadline cases in system/deadlines_wall_clock.cpp). Thread-safe: handlers put
// from the server's threads, the test takes from its own.
#ifndef SKIFF_TESTS_SUPPORT_PARKED_HPP
#define SKIFF_TESTS_SUPPORT_PARKED_HPP

#include <skiff/skiff.hpp>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

namespace skiff_test {

class parked {
public:
    void put(skiff::deferred d) {
        std::lock_guard<std::mutex> g(lock_);
        handles_.push_back(std::make_shared<skiff::deferred>(std::move(d)));
        arrived_.notify_all();
    }
    // Waits (up to 5 s) until n handles are parked; returns them all, oldest first.
    std::vector<std::shared_ptr<skiff::deferred>> take(std::size_t n) {
        std::unique_lock<std::mutex> g(lock_);
        arrived_.wait_for(g, std::chrono::seconds(5), [&] { return handles_.size() >= n; });
        std::vector<std::shared_ptr<skiff::deferred>> out(handles_.begin(), handles_.end());
        handles_.clear();
        return out;
    }

private:
    std::mutex lock_;
    std::condition_variable arrived_;
    std::deque<std::shared_ptr<skiff::deferred>> handles_;
};

} // namespace skiff_test

#endif // SKIFF_TESTS_SUPPORT_PARKED_HPP
