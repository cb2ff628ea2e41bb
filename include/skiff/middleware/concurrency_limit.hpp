// The concurrency limit built-in: at most N requests inside the chain behind it at once;
// beyond that, 503 with Retry-After: 1 at once, without running the handler.
//
//   app.use(skiff::concurrency_limit(64));  // counted as the server's policy needs
//
// What counts: a request from the moment it enters this middleware until its answer is
// done with. For a plain answer that is when next() returns (thrown out of or not); for a
// deferred one (response::defer), when the loop has applied its completion, its push stream
// has ended, or its client went. So under `single`, where one handler runs at a time, the
// limit bounds the requests waiting on a pool or an upstream; under `sharded` the count is
// over all loops.
//
// The count is a plain integer under `single` (no atomic compiled in), an atomic otherwise
// (policy/bounded_count.hpp). Which one is the server's choice, never the caller's:
// concurrency_limit(n) returns a maker (middleware/stack.hpp) and use() builds the middleware
// with basic_server's own Policy. The spelling concurrency_limit<Policy>(n) of earlier versions
// let a `single` count onto a sharded server (a data race, found by ThreadSanitizer); it now
// fails to compile, saying so.
//
// Not here: queueing beyond the limit; per-route or per-client limits.
#ifndef SKIFF_MIDDLEWARE_CONCURRENCY_LIMIT_HPP
#define SKIFF_MIDDLEWARE_CONCURRENCY_LIMIT_HPP

#include "skiff/async/deferred_state.hpp"
#include "skiff/detail/call_chain.hpp"
#include "skiff/engine/loop_hub.hpp"
#include "skiff/http/request.hpp"
#include "skiff/http/response.hpp"
#include "skiff/http/response_access.hpp"
#include "skiff/middleware/stack.hpp"
#include "skiff/policy/bounded_count.hpp"
#include "skiff/policy/policy.hpp"

#include <cstddef>      // std::size_t
#include <functional>   // std::function: what runs when a deferred answer settles
#include <memory>       // std::shared_ptr: the count, shared by every copy
#include <type_traits>  // std::is_same_v

namespace skiff {
namespace detail {

// Leaves the count when the chain returns or throws, unless the answer was deferred: then
// when the loop is done with it.
template <class Policy>
class in_flight_slot {
public:
    explicit in_flight_slot(const std::shared_ptr<bounded_count<Policy>>& c) noexcept : count_(c) {}
    in_flight_slot(const in_flight_slot&) = delete;
    in_flight_slot& operator=(const in_flight_slot&) = delete;
    ~in_flight_slot() {
        if (state_ == slot_state::held) count_->give_back();
    }

    // After the chain returned: a deferred answer takes the slot with it.
    void follow(response& res) {
        deferred_state* later = response_access::pending_deferred(res);
        if (later == nullptr) return;
        append_call(later->on_settled, std::function<void()>([count = count_] { count->give_back(); }));  // a copy: the answer may outlive the app
        state_ = slot_state::handed_over;
    }

private:
    enum class slot_state : unsigned char { held, handed_over };
    const std::shared_ptr<bounded_count<Policy>>& count_;
    slot_state state_ = slot_state::held;
};

// The built-in's state: the count, which a deferred answer's completion holds too.
template <class Policy>
class limit_state {
public:
    explicit limit_state(std::size_t limit) : count_(std::make_shared<bounded_count<Policy>>(limit)) {}
    template <class Next>
    void serve(request&, response& res, const Next& go) const {
        if (!count_->take()) {
            res.status(503).header("Retry-After", "1").text("Service Unavailable\n");
            return;
        }
        in_flight_slot<Policy> slot(count_);
        go();
        slot.follow(res);
    }

private:
    std::shared_ptr<bounded_count<Policy>> count_;
};

// What concurrency_limit(n) returns: basic_server::use() calls for_policy<its Policy>().
class concurrency_limit_maker {
public:
    explicit concurrency_limit_maker(std::size_t n) noexcept : limit_(n) {}

    template <class Policy>
    middleware for_policy() const {
        static_assert(is_policy<Policy>, "skiff::concurrency_limit: the server's policy");
        return make_builtin(std::make_shared<const limit_state<Policy>>(limit_));
    }

private:
    std::size_t limit_;
};

// The default of concurrency_limit's template parameter: "the server says".
struct policy_of_server {};

} // namespace detail

// At most n requests inside the chain behind it; give it to use(), which supplies the policy.
template <class Named = detail::policy_of_server>
detail::concurrency_limit_maker concurrency_limit(std::size_t n) {
    static_assert(std::is_same_v<Named, detail::policy_of_server>,
                  "skiff::concurrency_limit<Policy>(n): write skiff::concurrency_limit(n); the server's use() "
                  "supplies its own policy, so the count cannot disagree with it");
    return detail::concurrency_limit_maker(n);
}

} // namespace skiff

#endif // SKIFF_MIDDLEWARE_CONCURRENCY_LIMIT_HPP
