// The poller contract (epoll.hpp's comments), one set of cases run over every backend this
// build has: epoll_poller on Linux; kqueue_poller on macOS and the BSDs; both in the
// kqueue-shim build (tests/kqueue_shim/), where kqueue_poller runs over the Linux shim.
// What only kqueue does (one filter per direction, the order of its changes) stays in
// tests/kqueue_shim/poller_test.cpp.
#include "support/socket_pair.hpp"

// Only the part under test (a unit test compiles in about a second); the single-header
// configuration has no parts on its include path, so there it takes the whole file.
#ifdef SKIFF_TEST_SINGLE_HEADER
#include <skiff/skiff.hpp>
#else
#include <skiff/poller/poller.hpp>
#endif

// The kqueue-shim build selects kqueue_poller; epoll_poller is still there to test beside it.
#if defined(SKIFF_HAS_KQUEUE) && defined(__linux__)
#include <skiff/poller/epoll.hpp>
#define SKIFF_TEST_POLLERS skiff::detail::epoll_poller, skiff::detail::kqueue_poller
#else
#define SKIFF_TEST_POLLERS skiff::detail::default_poller
#endif // both backends

#include <doctest/doctest.h>

#include <pthread.h>  // pthread_kill, to interrupt a wait with a signal
#include <signal.h>   // sigaction

#include <atomic>        // std::atomic for the threads' flags
#include <cerrno>        // errno, EBADF
#include <chrono>        // timing the waits
#include <ostream>       // doctest prints a failed std::error_code with it
#include <system_error>  // std::error_code
#include <thread>        // std::thread for wake() and the oneshot race
#include <vector>        // std::vector of events

using namespace skiff_test;
using skiff::detail::poll_event;
using skiff::detail::poll_mode;
using skiff::detail::watch_none;
using skiff::detail::watch_read;
using skiff::detail::watch_write;
using clock_type = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

int conn_a = 0;
int conn_b = 0;

template <class Poller>
struct open_poller : Poller {
    open_poller() { REQUIRE_FALSE(this->open()); }
};

struct waited {
    int result;  // what wait() returned
    int error;   // errno just after it
    std::vector<poll_event> events;
    bool woken;
};

template <class Poller>
waited wait_once(Poller& p, int timeout_ms) {
    poll_event evs[8];
    bool woken = false;
    int n = p.wait(evs, 8, timeout_ms, woken);
    int error = errno;
    return {n, error, {evs, evs + (n > 0 ? n : 0)}, woken};
}

template <class Poller>
std::vector<poll_event> wait_events(Poller& p, int timeout_ms) {
    waited w = wait_once(p, timeout_ms);
    CHECK(w.result >= 0);
    return w.events;
}

// A wait nothing ends: 0 events, not woken, after the whole timeout.
template <class Poller>
void check_times_out(Poller& p, int timeout_ms) {
    auto start = clock_type::now();
    waited w = wait_once(p, timeout_ms);
    CHECK(clock_type::now() - start >= milliseconds(timeout_ms));
    CHECK(w.result == 0);
    CHECK(w.events.empty());
    CHECK_FALSE(w.woken);
}

void ignore_signal(int) {}

} // namespace

TEST_CASE_TEMPLATE("poller contract: a watched descriptor is reported readable, again while unread",
                   Poller, SKIFF_TEST_POLLERS) {
    open_poller<Poller> p;
    auto s = unix_pair();
    REQUIRE_FALSE(p.add(s.a.get(), &conn_a, watch_read));
    CHECK(wait_events(p, 0).empty());
    send_text(s.b.get(), "x");
    auto evs = wait_events(p, 1000);
    REQUIRE(evs.size() == 1);
    CHECK(evs[0].data == &conn_a);
    CHECK(evs[0].readable);
    CHECK_FALSE(evs[0].writable);
    CHECK(wait_events(p, 0).size() == 1);  // level-triggered: reported again until read
    drain(s.a.get());
    CHECK(wait_events(p, 0).empty());
}

TEST_CASE_TEMPLATE("poller contract: writable is reported, and both directions come as one event",
                   Poller, SKIFF_TEST_POLLERS) {
    open_poller<Poller> p;
    auto s = unix_pair();
    REQUIRE_FALSE(p.add(s.a.get(), &conn_a, watch_write));
    auto evs = wait_events(p, 1000);
    REQUIRE(evs.size() == 1);
    CHECK(evs[0].writable);
    CHECK_FALSE(evs[0].readable);
    send_text(s.b.get(), "x");
    REQUIRE_FALSE(p.modify(s.a.get(), &conn_a, watch_read | watch_write));
    evs = wait_events(p, 1000);
    REQUIRE(evs.size() == 1);
    CHECK(evs[0].readable);
    CHECK(evs[0].writable);
}

TEST_CASE_TEMPLATE("poller contract: modify changes the interest and data, watch_none silences, remove forgets",
                   Poller, SKIFF_TEST_POLLERS) {
    open_poller<Poller> p;
    auto s = unix_pair();
    send_text(s.b.get(), "x");
    REQUIRE_FALSE(p.add(s.a.get(), &conn_a, watch_read));
    REQUIRE_FALSE(p.modify(s.a.get(), &conn_b, watch_write));
    auto evs = wait_events(p, 1000);
    REQUIRE(evs.size() == 1);
    CHECK(evs[0].data == &conn_b);
    CHECK(evs[0].writable);
    CHECK_FALSE(evs[0].readable);
    REQUIRE_FALSE(p.modify(s.a.get(), &conn_b, watch_none));
    CHECK(wait_events(p, 0).empty());
    REQUIRE_FALSE(p.modify(s.a.get(), &conn_b, watch_read));
    CHECK(wait_events(p, 1000).size() == 1);
    p.remove(s.a.get());
    CHECK(wait_events(p, 0).empty());
    p.remove(s.a.get());  // again, now unknown: harmless
    REQUIRE_FALSE(p.add(s.a.get(), &conn_a, watch_read));
    CHECK(wait_events(p, 1000).size() == 1);
}

TEST_CASE_TEMPLATE("poller contract: add fails on a closed descriptor", Poller, SKIFF_TEST_POLLERS) {
    open_poller<Poller> p;
    auto s = unix_pair();
    int fd = s.a.get();
    s.a.close();
    CHECK(p.add(fd, &conn_a, watch_read).value() == EBADF);
}

TEST_CASE_TEMPLATE("poller contract: oneshot reports once, until modify re-arms", Poller, SKIFF_TEST_POLLERS) {
    open_poller<Poller> p;
    auto s = unix_pair();
    send_text(s.b.get(), "x");
    REQUIRE_FALSE(p.add(s.a.get(), &conn_a, watch_read, poll_mode::oneshot));
    CHECK(wait_events(p, 1000).size() == 1);
    CHECK(wait_events(p, 50).empty());  // still unread, but disarmed
    REQUIRE_FALSE(p.modify(s.a.get(), &conn_a, watch_read, poll_mode::oneshot));
    CHECK(wait_events(p, 1000).size() == 1);
    CHECK(wait_events(p, 50).empty());
}

TEST_CASE_TEMPLATE("poller contract: oneshot hands a ready descriptor to exactly one of the threads waiting",
                   Poller, SKIFF_TEST_POLLERS) {
    open_poller<Poller> p;
    auto s = unix_pair();
    REQUIRE_FALSE(p.add(s.a.get(), &conn_a, watch_none, poll_mode::oneshot));
    for (int round = 0; round < 10; ++round) {
        std::atomic<int> delivered{0};
        std::vector<std::thread> waiters;
        for (int t = 0; t < 4; ++t)
            waiters.emplace_back([&] { delivered += static_cast<int>(wait_once(p, 150).events.size()); });
        send_text(s.b.get(), "x");
        REQUIRE_FALSE(p.modify(s.a.get(), &conn_a, watch_read, poll_mode::oneshot));
        for (auto& w : waiters) w.join();
        CHECK(delivered.load() == 1);
        drain(s.a.get());
    }
}

TEST_CASE_TEMPLATE("poller contract: wake from another thread ends a wait, without an event, once",
                   Poller, SKIFF_TEST_POLLERS) {
    open_poller<Poller> p;
    std::thread other([&] {
        std::this_thread::sleep_for(milliseconds(50));
        p.wake();
    });
    waited w = wait_once(p, -1);
    other.join();
    CHECK(w.result == 0);
    CHECK(w.woken);
    check_times_out(p, 60);  // one wake ends one wait
}

TEST_CASE_TEMPLATE("poller contract: a timeout returns 0 events after the time asked", Poller, SKIFF_TEST_POLLERS) {
    open_poller<Poller> p;
    auto s = unix_pair();
    REQUIRE_FALSE(p.add(s.a.get(), &conn_a, watch_read));  // watched, never ready
    check_times_out(p, 50);
}

TEST_CASE_TEMPLATE("poller contract: a peer's hang-up is reported readable", Poller, SKIFF_TEST_POLLERS) {
    open_poller<Poller> p;
    auto s = tcp_pair();
    REQUIRE_FALSE(p.add(s.b.get(), &conn_a, watch_read));
    s.a.close();
    auto evs = wait_events(p, 1000);
    REQUIRE(evs.size() == 1);
    CHECK(evs[0].data == &conn_a);
    CHECK(evs[0].readable);
}

TEST_CASE_TEMPLATE("poller contract: a reset while a write is parked is reported readable and writable",
                   Poller, SKIFF_TEST_POLLERS) {
    // The shared policy's parked writer: oneshot, both directions asked (kqueue arms only the
    // write filter then: see kqueue.hpp). The reader and the writer both must find out.
    open_poller<Poller> p;
    auto s = tcp_pair();
    fill(s.b.get());
    REQUIRE_FALSE(p.add(s.b.get(), &conn_a, watch_write | watch_read, poll_mode::oneshot));
    CHECK(wait_events(p, 0).empty());
    close_with_reset(s.a);
    auto evs = wait_events(p, 1000);
    REQUIRE(evs.size() == 1);
    CHECK(evs[0].readable);
    CHECK(evs[0].writable);
}

TEST_CASE_TEMPLATE("poller contract: a signal that interrupts a wait returns 0 events", Poller, SKIFF_TEST_POLLERS) {
    // EINTR is not an error: the loop waits again (and finds a wake() a handler sent, if any).
    struct sigaction action {};
    struct sigaction previous {};
    action.sa_handler = ignore_signal;  // no SA_RESTART; epoll_wait and kevent never restart anyway
    REQUIRE(::sigaction(SIGUSR1, &action, &previous) == 0);
    open_poller<Poller> p;
    std::atomic<bool> returned{false};
    waited w{};
    std::thread waiter([&] {
        w = wait_once(p, 10000);
        returned = true;
    });
    auto start = clock_type::now();
    // A signal sent before the waiter blocks is spent on nothing: send until the wait ends.
    while (!returned && clock_type::now() - start < milliseconds(5000)) {
        ::pthread_kill(waiter.native_handle(), SIGUSR1);
        std::this_thread::sleep_for(milliseconds(10));
    }
    waiter.join();
    ::sigaction(SIGUSR1, &previous, nullptr);
    CHECK(clock_type::now() - start < milliseconds(5000));  // interrupted, not timed out
    CHECK(w.result == 0);
    CHECK(w.events.empty());
    CHECK_FALSE(w.woken);
}

TEST_CASE_TEMPLATE("poller contract: a failing wait returns -1 with errno, not 0 events", Poller, SKIFF_TEST_POLLERS) {
    // A poller never opened has no kernel queue: every wait fails with EBADF, as it would after
    // its descriptor was lost. Taken for "no events", such an error makes the loop spin.
    Poller p;
    for (int i = 0; i < 2; ++i) {  // persistent: the same answer every time
        errno = 0;
        waited w = wait_once(p, 1000);
        CHECK(w.result == -1);
        CHECK(w.error == EBADF);
        CHECK(w.events.empty());
        CHECK_FALSE(w.woken);
    }
}
