// The loop the test client steps by hand: skiff's own event loop and connection set (the same
// session, parser, router, writer and timing wheel a server runs), on a clock that moves only
// when the test says so and a wait that never blocks. Each turn() is one pass of the loop:
// what the descriptors have ready, then the deadlines the clock has passed.
//
// It does not listen or accept: the test client hands it one end of a socketpair (admit). It
// serves the single policy only, on the thread that calls it; nothing here starts a thread.
// The Date line is fixed (fixed_date), so two runs of a test see the same bytes.
//
// The loop's services (loop_ref timers, options::deferred_timeout) follow the same clock:
// advance() moves them too, and a timer's delay counts from the turn that took it in. Posted
// tasks and deferred answers run on the next turn.
#ifndef SKIFF_TESTING_TEST_LOOP_HPP
#define SKIFF_TESTING_TEST_LOOP_HPP

#include "skiff/engine/event_loop.hpp"
#include "skiff/engine/loop_hub.hpp"
#include "skiff/engine/loop_time.hpp"
#include "skiff/engine/options.hpp"
#include "skiff/policy/local_set.hpp"
#include "skiff/policy/policy.hpp"
#include "skiff/router/router.hpp"

#include <chrono>        // std::chrono::milliseconds
#include <cstdint>       // std::int64_t
#include <ctime>         // std::time_t
#include <system_error>  // std::error_code

namespace skiff::testing {

// Sun, 06 Nov 1994 08:49:37 GMT (RFC 9110's example date): the Date of every test response.
inline constexpr std::time_t fixed_date = 784111777;

} // namespace skiff::testing

namespace skiff::detail {

// A loop_time whose milliseconds are set by the test and whose Date never changes.
struct manual_time : loop_time {
    std::int64_t clock_ms = 0;

    void tick() noexcept {
        now_ms = clock_ms;
        date.update(testing::fixed_date);
    }
    // Nothing outside the test moves this clock, so waiting could only hang the test.
    static constexpr int wait_ms(int) noexcept { return 0; }
    std::int64_t services_ms() const noexcept { return clock_ms; }
};

class test_loop {
public:
    using loop_type = event_loop<local_set, manual_time>;

    test_loop(const options& opt, const router& routes) : opt_(opt), loop_(opt, routes, set_) {}
    test_loop(const test_loop&) = delete;
    test_loop& operator=(const test_loop&) = delete;
    ~test_loop() { loop_.close_connections(); }

    std::error_code open() {
        if (auto ec = set_.open(loop_.time().clock_ms, tick_for(opt_))) return ec;
        loop_.open();
        return {};
    }

    // fd: a connected, non-blocking stream socket, from now on the loop's.
    void admit(int fd) { loop_.admit(fd); }

    // One pass of the loop; the events it served (0: nothing was ready), -1 if the wait failed.
    int turn() { return loop_.turn(); }

    void advance(std::chrono::milliseconds by) noexcept { loop_.time().clock_ms += by.count(); }
    std::chrono::milliseconds now() noexcept { return std::chrono::milliseconds(loop_.time().clock_ms); }

    std::size_t connections() const noexcept { return set_.size(); }
    hub_anchor& anchor() noexcept { return set_.anchor(); }

private:
    const options& opt_;
    local_set set_;  // before the loop, which serves it
    loop_type loop_;
};

} // namespace skiff::detail

#endif // SKIFF_TESTING_TEST_LOOP_HPP
