// kqueue_poller over the shim: what only the kqueue backend does (its member set is
// epoll_poller's; a descriptor watched both ways in oneshot mode is armed for writing only;
// its filters are registered in a safe order). The contract both backends meet is
// tests/unit/poller_contract.cpp, which the kqueue-shim build runs over kqueue_poller too.
#include "shim_support.hpp"

#include <skiff/poller/epoll.hpp>
#include <skiff/poller/kqueue.hpp>
#include <skiff/poller/poller.hpp>

#include <doctest/doctest.h>

#include <atomic>
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

struct open_poller : kqueue_poller {
    open_poller() { REQUIRE_FALSE(open()); }
};

// One wait; returns the events.
std::vector<poll_event> wait_events(kqueue_poller& p, int timeout_ms) {
    poll_event evs[8];
    bool woken = false;
    int n = p.wait(evs, 8, timeout_ms, woken);
    return {evs, evs + (n > 0 ? n : 0)};
}

} // namespace

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
