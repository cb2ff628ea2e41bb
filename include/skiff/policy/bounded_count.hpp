// A count with a bound, shared by every loop of one server, as its threading policy needs it:
// a plain integer under `single` (one thread: no atomic compiled in), an atomic under `sharded`
// and `shared`. bounded_count<Policy> picks the one; code above the policy names only that.
//
// Invariant: the count never stays above its bound; each take() that answers true is matched
// by one give_back(). Relaxed atomics: the count orders nothing else, and fetch_add makes each
// slot taken once.
//
// Not here: what the count counts (middleware/concurrency_limit.hpp counts requests in flight).
#ifndef SKIFF_POLICY_BOUNDED_COUNT_HPP
#define SKIFF_POLICY_BOUNDED_COUNT_HPP

#include "skiff/policy/policy.hpp"

#include <atomic>       // the count under the threaded policies
#include <cstddef>      // std::size_t
#include <type_traits>  // std::conditional_t

namespace skiff::detail {

class one_thread_count {
public:
    explicit one_thread_count(std::size_t bound) noexcept : bound_(bound) {}
    bool take() noexcept {
        if (now_ >= bound_) return false;
        ++now_;
        return true;
    }
    void give_back() noexcept { --now_; }

private:
    std::size_t now_ = 0;
    std::size_t bound_;
};

class many_threads_count {
public:
    explicit many_threads_count(std::size_t bound) noexcept : bound_(bound) {}
    bool take() noexcept {
        if (now_.fetch_add(1, std::memory_order_relaxed) < bound_) return true;
        now_.fetch_sub(1, std::memory_order_relaxed);
        return false;
    }
    void give_back() noexcept { now_.fetch_sub(1, std::memory_order_relaxed); }

private:
    std::atomic<std::size_t> now_{0};
    std::size_t bound_;
};

template <class Policy>
using bounded_count = std::conditional_t<is_single<Policy>, one_thread_count, many_threads_count>;

} // namespace skiff::detail

#endif // SKIFF_POLICY_BOUNDED_COUNT_HPP
