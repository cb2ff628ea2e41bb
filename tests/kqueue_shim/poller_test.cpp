// kqueue_poller over the shim: the contract of epoll.hpp, met by the kqueue backend.
#include "shim_support.hpp"

#include <skiff/poller/epoll.hpp>
#include <skiff/poller/kqueue.hpp>
#include <skiff/poller/poller.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <ostream>  // doctest prints a failed std::error_code with it
#include <thread>
#include <type_traits>
#include <vector>

using namespace shim_test;
using skiff::detail::epoll_poller;
using skiff::detail::kqueue_poller;
using skiff::detail::poll_event;
using skiff::detail::poll_mode;
using skiff::detail::watch_none;
using skiff::detail::watch_read;
using skiff::detail::watch_write;

namespace {

// The function type of a member function pointer, without its class.
template <class T>
struct member_of;
template <class C, class F>
struct member_of<F C::*> {
    using type = F;
};
template <class A, class B>
constexpr bool same_member = std::is_same_v<typename member_of<A>::type, typename member_of<B>::type>;

// "Exactly the member set of epoll_poller": the same public members, with the same types.
static_assert(same_member<decltype(&kqueue_poller::open), decltype(&epoll_poller::open)>);
static_assert(same_member<decltype(&kqueue_poller::add), decltype(&epoll_poller::add)>);
static_assert(same_member<decltype(&kqueue_poller::modify), decltype(&epoll_poller::modify)>);
static_assert(same_member<decltype(&kqueue_poller::remove), decltype(&epoll_poller::remove)>);
static_assert(same_member<decltype(&kqueue_poller::wait), decltype(&epoll_poller::wait)>);
static_assert(same_member<decltype(&kqueue_poller::wake), decltype(&epoll_poller::wake)>);
static_assert(kqueue_poller::max_batch == epoll_poller::max_batch);
static_assert(std::is_same_v<skiff::detail::default_poller, kqueue_poller>, "the shim build selects kqueue");

int conn_a = 0;
int conn_b = 0;

struct open_poller : kqueue_poller {
    open_poller() { REQUIRE_FALSE(open()); }
};

// One wait; returns the events, and in `woken` whether a wake() ended it.
std::vector<poll_event> wait_events(kqueue_poller& p, int timeout_ms, bool& woken) {
    poll_event evs[8];
    int n = p.wait(evs, 8, timeout_ms, woken);
    return {evs, evs + (n > 0 ? n : 0)};
}

std::vector<poll_event> wait_events(kqueue_poller& p, int timeout_ms) {
    bool woken = false;
    return wait_events(p, timeout_ms, woken);
}

} // namespace

TEST_CASE("kqueue_poller: a watched descriptor is reported readable with its data") {
    open_poller p;
    auto s = unix_pair();
    REQUIRE_FALSE(p.add(s.a.get(), &conn_a, watch_read));
    CHECK(wait_events(p, 0).empty());
    send_text(s.b.get(), "x");
    auto evs = wait_events(p, 1000);
    REQUIRE(evs.size() == 1);
    CHECK(evs[0].data == &conn_a);
    CHECK(evs[0].readable);
    CHECK_FALSE(evs[0].writable);
    CHECK(wait_events(p, 0).size() == 1);  // level-triggered: still there
}

TEST_CASE("kqueue_poller: both directions ready come as one merged event") {
    open_poller p;
    auto s = unix_pair();
    send_text(s.b.get(), "x");
    REQUIRE_FALSE(p.add(s.a.get(), &conn_a, watch_read | watch_write));
    auto evs = wait_events(p, 1000);
    REQUIRE(evs.size() == 1);
    CHECK(evs[0].readable);
    CHECK(evs[0].writable);
}

TEST_CASE("kqueue_poller: modify changes the interest, watch_none silences, remove forgets") {
    open_poller p;
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
    p.remove(s.a.get());  // again, and never added: harmless
    REQUIRE_FALSE(p.add(s.a.get(), &conn_a, watch_read));
    CHECK(wait_events(p, 1000).size() == 1);
}

TEST_CASE("kqueue_poller: add fails on a closed descriptor") {
    open_poller p;
    auto s = unix_pair();
    int fd = s.a.get();
    s.a.close();
    CHECK(p.add(fd, &conn_a, watch_read).value() == EBADF);
}

TEST_CASE("kqueue_poller: oneshot reports once, until modify re-arms") {
    open_poller p;
    auto s = unix_pair();
    send_text(s.b.get(), "x");
    REQUIRE_FALSE(p.add(s.a.get(), &conn_a, watch_read, poll_mode::oneshot));
    CHECK(wait_events(p, 1000).size() == 1);
    CHECK(wait_events(p, 50).empty());
    REQUIRE_FALSE(p.modify(s.a.get(), &conn_a, watch_read, poll_mode::oneshot));
    CHECK(wait_events(p, 1000).size() == 1);
}

TEST_CASE("kqueue_poller: oneshot with both directions is armed for writing only") {
    // See kqueue.hpp: two filters armed at once could go to two threads.
    open_poller p;
    auto s = unix_pair();
    send_text(s.b.get(), "x");
    REQUIRE_FALSE(p.add(s.a.get(), &conn_a, watch_read | watch_write, poll_mode::oneshot));
    auto evs = wait_events(p, 1000);
    REQUIRE(evs.size() == 1);
    CHECK(evs[0].writable);
    CHECK_FALSE(evs[0].readable);
    CHECK(wait_events(p, 50).empty());
    REQUIRE_FALSE(p.modify(s.a.get(), &conn_a, watch_read, poll_mode::oneshot));
    evs = wait_events(p, 1000);
    REQUIRE(evs.size() == 1);
    CHECK(evs[0].readable);
}

TEST_CASE("kqueue_poller: oneshot hands a ready descriptor to exactly one of the threads waiting") {
    open_poller p;
    auto s = unix_pair();
    REQUIRE_FALSE(p.add(s.a.get(), &conn_a, watch_none, poll_mode::oneshot));
    for (int round = 0; round < 10; ++round) {
        std::atomic<int> delivered{0};
        std::vector<std::thread> waiters;
        for (int t = 0; t < 4; ++t)
            waiters.emplace_back([&] { delivered += static_cast<int>(wait_events(p, 150).size()); });
        send_text(s.b.get(), "x");
        REQUIRE_FALSE(p.modify(s.a.get(), &conn_a, watch_read, poll_mode::oneshot));
        for (auto& w : waiters) w.join();
        CHECK(delivered.load() == 1);
        drain(s.a.get());
    }
}

TEST_CASE("kqueue_poller: wake from another thread ends a wait, without an event, once") {
    open_poller p;
    std::thread other([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        p.wake();
    });
    bool woken = false;
    CHECK(wait_events(p, -1, woken).empty());
    other.join();
    CHECK(woken);
    woken = false;
    auto start = std::chrono::steady_clock::now();
    CHECK(wait_events(p, 60, woken).empty());  // one wake ends one wait
    CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(60));
    CHECK_FALSE(woken);
}

TEST_CASE("kqueue_poller: a peer's hang-up is reported readable") {
    open_poller p;
    auto s = tcp_pair();
    REQUIRE_FALSE(p.add(s.b.get(), &conn_a, watch_read));
    s.a.close();
    auto evs = wait_events(p, 1000);
    REQUIRE(evs.size() == 1);
    CHECK(evs[0].readable);
}

TEST_CASE("kqueue_poller: a reset while armed for writing only is reported readable and writable") {
    open_poller p;
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

TEST_CASE("kqueue_poller: oneshot registers the filter it enables last, so whoever receives it may close at once") {
    // The changes of one kevent() call are applied one by one (kqueue(2) RETURN VALUES): had
    // add() enabled the read filter before adding the write filter, a thread receiving the
    // read event could close the descriptor in between, and add() would fail with EBADF for a
    // connection another thread had already served and closed.
    open_poller p;
    std::atomic<bool> done{false};
    std::thread owner([&] {  // takes each connection it receives and closes it at once
        for (bool idle = false; !(done && idle);) {
            auto evs = wait_events(p, 10);
            idle = evs.empty();
            for (const poll_event& ev : evs) {
                int fd = static_cast<int>(reinterpret_cast<std::intptr_t>(ev.data));
                p.remove(fd);
                ::close(fd);
            }
        }
    });
    int failures = 0;
    for (int i = 0; i < 2000; ++i) {
        auto s = unix_pair();
        send_text(s.b.get(), "x");
        int fd = s.a.release();  // the owner closes it
        void* data = reinterpret_cast<void*>(static_cast<std::intptr_t>(fd));
        failures += p.add(fd, data, watch_read, poll_mode::oneshot) ? 1 : 0;
    }
    done = true;
    owner.join();
    CHECK(failures == 0);
}
