// The kqueue(2) semantics skiff's kqueue backend relies on, pinned down against the shim.
// Each case names the section of the FreeBSD 14 / macOS manual page it checks; a case that
// pins behaviour the manuals leave open says so.
#include "shim_support.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <pthread.h>
#include <thread>
#include <type_traits>
#include <vector>

using namespace shim_test;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

namespace {

struct kq_guard : fd_guard {
    kq_guard() : fd_guard(::kqueue()) { REQUIRE(get() >= 0); }
};

int tag_a = 0;
int tag_b = 0;

long elapsed_ms(steady_clock::time_point since) {
    return static_cast<long>(std::chrono::duration_cast<milliseconds>(steady_clock::now() - since).count());
}

} // namespace

// ---- declarations (sys/event.h of FreeBSD 14) ---------------------------------------------

// kqueue(2) DESCRIPTION "The kevent structure is defined as": field order and types. The
// macOS layout is compiled by compile_check.cpp.
static_assert(std::is_same_v<decltype(kevent::ident), std::uintptr_t>);
static_assert(std::is_same_v<decltype(kevent::filter), short>);
static_assert(std::is_same_v<decltype(kevent::flags), unsigned short>);
static_assert(std::is_same_v<decltype(kevent::fflags), unsigned int>);
static_assert(std::is_same_v<decltype(kevent::data), std::int64_t>);
static_assert(std::is_same_v<decltype(kevent::udata), void*>);
static_assert(std::is_same_v<decltype(kevent::ext), std::uint64_t[4]>);
static_assert(offsetof(struct kevent, ident) < offsetof(struct kevent, filter) &&
              offsetof(struct kevent, filter) < offsetof(struct kevent, flags) &&
              offsetof(struct kevent, flags) < offsetof(struct kevent, fflags) &&
              offsetof(struct kevent, fflags) < offsetof(struct kevent, data) &&
              offsetof(struct kevent, data) < offsetof(struct kevent, udata) &&
              offsetof(struct kevent, udata) < offsetof(struct kevent, ext));
// Constants keep the literal forms of the real header, hence its integer types.
static_assert(std::is_same_v<decltype(EVFILT_READ), int> && EVFILT_READ == -1 && EVFILT_WRITE == -2);
static_assert(EVFILT_USER == -11);
static_assert(std::is_same_v<decltype(NOTE_FFCOPY), unsigned int> && std::is_same_v<decltype(NOTE_TRIGGER), int>);
static_assert(std::is_same_v<decltype(&::kevent), int (*)(int, const struct kevent*, int, struct kevent*, int,
                                                          const struct timespec*)>);
static_assert(std::is_same_v<decltype(&::kqueue), int (*)()>);

TEST_CASE("EV_SET fills every field and zeroes ext (sys/event.h)") {
    struct kevent ev;
    ev.ext[0] = ev.ext[1] = ev.ext[2] = ev.ext[3] = 7;
    EV_SET(&ev, 5u, EVFILT_WRITE, EV_ADD | EV_DISPATCH, 3u, 9, &tag_a);
    CHECK(ev.ident == 5u);
    CHECK(ev.filter == EVFILT_WRITE);
    CHECK(ev.flags == (EV_ADD | EV_DISPATCH));
    CHECK(ev.fflags == 3u);
    CHECK(ev.data == 9);
    CHECK(ev.udata == &tag_a);
    CHECK((ev.ext[0] | ev.ext[1] | ev.ext[2] | ev.ext[3]) == 0);
}

// ---- the queue ----------------------------------------------------------------------------

TEST_CASE("kqueue() returns a descriptor, and closing it leaves nothing open (kqueue(2) RETURN VALUES)") {
    int before = open_descriptors();
    for (int i = 0; i < 5; ++i) {
        kq_guard kq;
        CHECK(change(kq.get(), 0, EVFILT_USER, EV_ADD | EV_CLEAR) == 0);
        auto p = unix_pair();
        CHECK(change(kq.get(), static_cast<std::uintptr_t>(p.a.get()), EVFILT_READ, EV_ADD) == 0);
    }
    CHECK(open_descriptors() == before);
}

TEST_CASE("kevent() on a descriptor that is no kqueue fails with EBADF (kqueue(2) ERRORS)") {
    struct kevent ev;
    CHECK(::kevent(-1, nullptr, 0, &ev, 1, nullptr) == -1);
    CHECK(errno == EBADF);
}

TEST_CASE("changes are applied before pending events are read, in the same call (kqueue(2) DESCRIPTION)") {
    kq_guard kq;
    auto p = unix_pair();
    send_text(p.b.get(), "hello");
    struct kevent ev = make(static_cast<std::uintptr_t>(p.a.get()), EVFILT_READ, EV_ADD, 0, &tag_a);
    struct kevent out;
    timespec zero{0, 0};
    REQUIRE(::kevent(kq.get(), &ev, 1, &out, 1, &zero) == 1);
    CHECK(out.udata == &tag_a);
}

TEST_CASE("with nevents zero, kevent() returns at once even with a timeout (kqueue(2) DESCRIPTION)") {
    kq_guard kq;
    auto p = unix_pair();
    struct kevent ev = make(static_cast<std::uintptr_t>(p.a.get()), EVFILT_READ, EV_ADD);
    timespec two_seconds{2, 0};
    auto start = steady_clock::now();
    CHECK(::kevent(kq.get(), &ev, 1, nullptr, 0, &two_seconds) == 0);
    CHECK(elapsed_ms(start) < 1000);
}

TEST_CASE("a timeout ends the wait with 0, a NULL timeout waits for the event (kqueue(2) DESCRIPTION)") {
    kq_guard kq;
    auto p = unix_pair();
    REQUIRE(change(kq.get(), static_cast<std::uintptr_t>(p.a.get()), EVFILT_READ, EV_ADD) == 0);
    struct kevent out;
    auto start = steady_clock::now();
    CHECK(wait_for(kq.get(), &out, 1, 60) == 0);
    CHECK(elapsed_ms(start) >= 60);
    std::thread writer([&] {
        std::this_thread::sleep_for(milliseconds(50));
        send_text(p.b.get(), "x");
    });
    CHECK(wait_for(kq.get(), &out, 1, -1) == 1);
    writer.join();
}

TEST_CASE("an invalid timeout or filter is EINVAL (kqueue(2) ERRORS)") {
    kq_guard kq;
    struct kevent out;
    timespec bad{0, 1000000000L};
    CHECK(::kevent(kq.get(), nullptr, 0, &out, 1, &bad) == -1);
    CHECK(errno == EINVAL);
    CHECK(change(kq.get(), 1, -7 /* EVFILT_TIMER: not emulated */, EV_ADD) == EINVAL);
}

// ---- EVFILT_READ --------------------------------------------------------------------------

TEST_CASE("EVFILT_READ reports a socket with data, the byte count in data (kqueue(2) EVFILT_READ)") {
    kq_guard kq;
    auto p = unix_pair();
    REQUIRE(change(kq.get(), static_cast<std::uintptr_t>(p.a.get()), EVFILT_READ, EV_ADD, 0, &tag_a) == 0);
    struct kevent out[4];
    CHECK(wait_for(kq.get(), out, 4, 0) == 0);
    send_text(p.b.get(), "hello");
    REQUIRE(wait_for(kq.get(), out, 4, 1000) == 1);
    CHECK(out[0].ident == static_cast<std::uintptr_t>(p.a.get()));
    CHECK(out[0].filter == EVFILT_READ);
    CHECK(out[0].data == 5);
    CHECK(out[0].udata == &tag_a);
    CHECK((out[0].flags & (EV_EOF | EV_ERROR)) == 0);
}

TEST_CASE("without EV_CLEAR a filter is level-triggered: reported while the condition holds") {
    // kqueue(2) DESCRIPTION: the filter runs again on retrieval and the kevent is returned
    // only if its condition still holds; EV_CLEAR is what would make it report transitions.
    kq_guard kq;
    auto p = unix_pair();
    REQUIRE(change(kq.get(), static_cast<std::uintptr_t>(p.a.get()), EVFILT_READ, EV_ADD) == 0);
    send_text(p.b.get(), "abc");
    struct kevent out;
    CHECK(wait_for(kq.get(), &out, 1, 0) == 1);
    CHECK(wait_for(kq.get(), &out, 1, 0) == 1);
    drain(p.a.get());
    CHECK(wait_for(kq.get(), &out, 1, 0) == 0);
}

TEST_CASE("a listening socket is readable with a pending connection, data the backlog (kqueue(2) EVFILT_READ)") {
    kq_guard kq;
    fd_guard l = tcp_listener();
    REQUIRE(change(kq.get(), static_cast<std::uintptr_t>(l.get()), EVFILT_READ, EV_ADD) == 0);
    struct kevent out;
    CHECK(wait_for(kq.get(), &out, 1, 0) == 0);
    fd_guard c1 = tcp_connect(local_port(l.get()));
    fd_guard c2 = tcp_connect(local_port(l.get()));
    REQUIRE(wait_for(kq.get(), &out, 1, 1000) == 1);
    CHECK(out.filter == EVFILT_READ);
    CHECK(out.data == 2);
}

TEST_CASE("EV_EOF on EVFILT_READ when the peer shuts down, while data is still pending (kqueue(2) EVFILT_READ)") {
    kq_guard kq;
    auto p = tcp_pair();
    REQUIRE(change(kq.get(), static_cast<std::uintptr_t>(p.b.get()), EVFILT_READ, EV_ADD) == 0);
    send_text(p.a.get(), "abc");
    ::shutdown(p.a.get(), SHUT_WR);
    std::this_thread::sleep_for(milliseconds(20));
    struct kevent out;
    REQUIRE(wait_for(kq.get(), &out, 1, 1000) == 1);
    CHECK((out.flags & EV_EOF) != 0);
    CHECK(out.data == 3);
}

namespace {

// Arms one filter of the server side of a TCP connection with EV_DISPATCH, as skiff's shared
// policy does, with its send buffer full if asked; checks that it is silent; runs `end` on the
// pair; returns the event that follows (filter 0 if none came within a second).
template <class End>
struct kevent event_after(short filter, bool full, End end) {
    kq_guard kq;
    auto p = tcp_pair();
    if (full) fill(p.b.get());
    REQUIRE(change(kq.get(), static_cast<std::uintptr_t>(p.b.get()), filter, EV_ADD | EV_DISPATCH) == 0);
    struct kevent out {};
    CHECK(wait_for(kq.get(), &out, 1, 0) == 0);
    end(p);
    if (wait_for(kq.get(), &out, 1, 1000) != 1) out.filter = 0;
    return out;
}

} // namespace

TEST_CASE("our own shutdown(SHUT_RD) wakes the read filter with EV_EOF") {
    // kqueue(2) EVFILT_READ: "If the read direction of the socket has shutdown". skiff's
    // shared policy wakes an expired connection this way.
    struct kevent ev = event_after(EVFILT_READ, false, [](pair& p) { ::shutdown(p.b.get(), SHUT_RD); });
    CHECK(ev.filter == EVFILT_READ);
    CHECK((ev.flags & EV_EOF) != 0);
}

// ---- EVFILT_WRITE -------------------------------------------------------------------------

TEST_CASE("EVFILT_WRITE reports room in the send buffer, and is silent while it is full (kqueue(2) EVFILT_WRITE)") {
    kq_guard kq;
    auto p = unix_pair();
    REQUIRE(change(kq.get(), static_cast<std::uintptr_t>(p.a.get()), EVFILT_WRITE, EV_ADD, 0, &tag_b) == 0);
    struct kevent out;
    REQUIRE(wait_for(kq.get(), &out, 1, 0) == 1);
    CHECK(out.filter == EVFILT_WRITE);
    CHECK(out.udata == &tag_b);
    CHECK(out.data > 0);
    fill(p.a.get());
    CHECK(wait_for(kq.get(), &out, 1, 0) == 0);
    drain(p.b.get());
    CHECK(wait_for(kq.get(), &out, 1, 1000) == 1);
}

TEST_CASE("EV_EOF on EVFILT_WRITE when the reader disconnects (kqueue(2) EVFILT_WRITE)") {
    kq_guard kq;
    auto p = unix_pair();
    REQUIRE(change(kq.get(), static_cast<std::uintptr_t>(p.a.get()), EVFILT_WRITE, EV_ADD) == 0);
    p.b.close();
    struct kevent out;
    REQUIRE(wait_for(kq.get(), &out, 1, 1000) == 1);
    CHECK((out.flags & EV_EOF) != 0);
}

TEST_CASE("a reset wakes a write filter whose buffer is full, with EV_EOF") {
    // kqueue(2) EVFILT_WRITE: EV_EOF "when the reader disconnects". skiff arms only the write
    // filter of a shared-policy connection with parked output, so this is how it learns.
    struct kevent ev = event_after(EVFILT_WRITE, true, [](pair& p) { close_with_reset(p.a); });
    CHECK(ev.filter == EVFILT_WRITE);
    CHECK((ev.flags & EV_EOF) != 0);
}

TEST_CASE("our own shutdown(SHUT_RDWR) wakes a write filter whose buffer is full, with EV_EOF") {
    // FreeBSD and macOS set EV_EOF on EVFILT_WRITE once the send side is shut: what wakes a
    // connection armed for writing only. SHUT_RD alone does not (see the next case).
    struct kevent ev = event_after(EVFILT_WRITE, true, [](pair& p) { ::shutdown(p.b.get(), SHUT_RDWR); });
    CHECK(ev.filter == EVFILT_WRITE);
    CHECK((ev.flags & EV_EOF) != 0);
}

TEST_CASE("our own shutdown(SHUT_RD) does not wake a write filter whose buffer is full") {
    // The read direction is the read filter's business (kqueue(2) EVFILT_READ): a reaper that
    // shuts only that side cannot wake a connection armed for writing only.
    struct kevent ev = event_after(EVFILT_WRITE, true, [](pair& p) { ::shutdown(p.b.get(), SHUT_RD); });
    CHECK(ev.filter == 0);
}

TEST_CASE("the two filters of one descriptor are two kevents with the same ident (kqueue(2) DESCRIPTION)") {
    kq_guard kq;
    auto p = unix_pair();
    auto fd = static_cast<std::uintptr_t>(p.a.get());
    REQUIRE(change(kq.get(), fd, EVFILT_READ, EV_ADD, 0, &tag_a) == 0);
    REQUIRE(change(kq.get(), fd, EVFILT_WRITE, EV_ADD, 0, &tag_a) == 0);
    send_text(p.b.get(), "x");
    struct kevent out[4];
    REQUIRE(wait_for(kq.get(), out, 4, 1000) == 2);
    CHECK(out[0].ident == fd);
    CHECK(out[1].ident == fd);
    CHECK(out[0].filter + out[1].filter == EVFILT_READ + EVFILT_WRITE);
}

// ---- flags --------------------------------------------------------------------------------

TEST_CASE("EV_DISABLE silences a knote, EV_ENABLE reports it again while its condition holds") {
    // kqueue(2) EV_DISABLE: "Disable the event so kevent() will not return it. The filter
    // itself is not disabled." EV_ENABLE: "Permit kevent() to return the event if it is triggered."
    kq_guard kq;
    auto p = unix_pair();
    auto fd = static_cast<std::uintptr_t>(p.a.get());
    send_text(p.b.get(), "x");
    REQUIRE(change(kq.get(), fd, EVFILT_READ, EV_ADD | EV_DISABLE) == 0);  // "unless overridden by EV_DISABLE"
    struct kevent out;
    CHECK(wait_for(kq.get(), &out, 1, 0) == 0);
    REQUIRE(change(kq.get(), fd, EVFILT_READ, EV_ENABLE) == 0);
    CHECK(wait_for(kq.get(), &out, 1, 1000) == 1);
    REQUIRE(change(kq.get(), fd, EVFILT_READ, EV_DISABLE) == 0);
    CHECK(wait_for(kq.get(), &out, 1, 0) == 0);
}

TEST_CASE("re-adding a knote modifies it (udata) without a duplicate entry (kqueue(2) EV_ADD)") {
    kq_guard kq;
    auto p = unix_pair();
    auto fd = static_cast<std::uintptr_t>(p.a.get());
    REQUIRE(change(kq.get(), fd, EVFILT_READ, EV_ADD, 0, &tag_a) == 0);
    REQUIRE(change(kq.get(), fd, EVFILT_READ, EV_ADD, 0, &tag_b) == 0);
    send_text(p.b.get(), "x");
    struct kevent out[4];
    REQUIRE(wait_for(kq.get(), out, 4, 1000) == 1);
    CHECK(out[0].udata == &tag_b);
}

TEST_CASE("EV_DISPATCH: delivered once, then disabled until EV_ENABLE (kqueue(2) EV_DISPATCH)") {
    kq_guard kq;
    auto p = unix_pair();
    auto fd = static_cast<std::uintptr_t>(p.a.get());
    send_text(p.b.get(), "x");
    REQUIRE(change(kq.get(), fd, EVFILT_READ, EV_ADD | EV_DISPATCH, 0, &tag_a) == 0);
    struct kevent out;
    REQUIRE(wait_for(kq.get(), &out, 1, 1000) == 1);
    CHECK((out.flags & EV_DISPATCH) != 0);
    CHECK(wait_for(kq.get(), &out, 1, 50) == 0);  // still readable, but disabled
    // Re-armed the way skiff's modify() does it: EV_ADD with the same flags, and EV_ENABLE.
    REQUIRE(change(kq.get(), fd, EVFILT_READ, EV_ADD | EV_DISPATCH | EV_ENABLE, 0, &tag_b) == 0);
    REQUIRE(wait_for(kq.get(), &out, 1, 1000) == 1);
    CHECK(out.udata == &tag_b);
    CHECK(wait_for(kq.get(), &out, 1, 0) == 0);
}

TEST_CASE("EV_DISPATCH hands a ready descriptor to exactly one of the threads waiting") {
    // What skiff's shared policy builds on: several threads wait on one kqueue, and a
    // delivered EV_DISPATCH knote is disabled before any other thread can receive it.
    kq_guard kq;
    auto p = unix_pair();
    auto fd = static_cast<std::uintptr_t>(p.a.get());
    REQUIRE(change(kq.get(), fd, EVFILT_READ, EV_ADD | EV_DISPATCH | EV_DISABLE) == 0);
    for (int round = 0; round < 20; ++round) {
        std::atomic<int> delivered{0};
        std::vector<std::thread> waiters;
        for (int t = 0; t < 4; ++t)
            waiters.emplace_back([&] {
                struct kevent out;
                int n = wait_for(kq.get(), &out, 1, 150);
                if (n > 0) delivered += n;
            });
        send_text(p.b.get(), "x");
        REQUIRE(change(kq.get(), fd, EVFILT_READ, EV_ENABLE) == 0);
        for (auto& w : waiters) w.join();
        CHECK(delivered.load() == 1);
        drain(p.a.get());
    }
}

TEST_CASE("EV_ONESHOT: delivered once, then deleted (kqueue(2) EV_ONESHOT)") {
    kq_guard kq;
    auto p = unix_pair();
    auto fd = static_cast<std::uintptr_t>(p.a.get());
    send_text(p.b.get(), "x");
    REQUIRE(change(kq.get(), fd, EVFILT_READ, EV_ADD | EV_ONESHOT) == 0);
    struct kevent out;
    REQUIRE(wait_for(kq.get(), &out, 1, 1000) == 1);
    CHECK(wait_for(kq.get(), &out, 1, 0) == 0);
    CHECK(change(kq.get(), fd, EVFILT_READ, EV_DELETE) == ENOENT);
}

TEST_CASE("EV_DELETE removes a knote, and deleting or enabling one that is not there is ENOENT") {
    // kqueue(2) EV_DELETE, and ERRORS ENOENT: "The event could not be found to be modified or deleted."
    kq_guard kq;
    auto p = unix_pair();
    auto fd = static_cast<std::uintptr_t>(p.a.get());
    CHECK(change(kq.get(), fd, EVFILT_READ, EV_DELETE) == ENOENT);
    CHECK(change(kq.get(), fd, EVFILT_WRITE, EV_ENABLE) == ENOENT);
    REQUIRE(change(kq.get(), fd, EVFILT_READ, EV_ADD) == 0);
    send_text(p.b.get(), "x");
    CHECK(change(kq.get(), fd, EVFILT_READ, EV_DELETE) == 0);
    struct kevent out;
    CHECK(wait_for(kq.get(), &out, 1, 0) == 0);
}

TEST_CASE("a failed change goes to the eventlist as EV_ERROR while there is room (kqueue(2) RETURN VALUES)") {
    kq_guard kq;
    auto p = unix_pair();
    auto fd = static_cast<std::uintptr_t>(p.a.get());
    struct kevent changes[2] = {make(fd, EVFILT_READ, EV_DELETE, 0, &tag_a), make(fd, EVFILT_WRITE, EV_ADD)};
    struct kevent out[2];
    timespec zero{0, 0};
    REQUIRE(::kevent(kq.get(), changes, 2, out, 2, &zero) == 1);
    CHECK(out[0].flags == EV_ERROR);
    CHECK(out[0].data == ENOENT);
    CHECK(out[0].ident == fd);
    CHECK(out[0].udata == &tag_a);
    CHECK(change(kq.get(), fd, EVFILT_WRITE, EV_DELETE) == 0);  // the change after it was applied
    // No room: the call fails with the error instead, after applying the changes before it.
    struct kevent again[2] = {make(fd, EVFILT_WRITE, EV_ADD), make(fd, EVFILT_READ, EV_DELETE)};
    CHECK(::kevent(kq.get(), again, 2, nullptr, 0, nullptr) == -1);
    CHECK(errno == ENOENT);
    CHECK(change(kq.get(), fd, EVFILT_WRITE, EV_DELETE) == 0);
}

TEST_CASE("a change on a closed descriptor is EBADF (kqueue(2) ERRORS)") {
    kq_guard kq;
    auto p = unix_pair();
    auto fd = static_cast<std::uintptr_t>(p.a.get());
    REQUIRE(change(kq.get(), fd, EVFILT_READ, EV_ADD) == 0);
    p.a.close();
    CHECK(change(kq.get(), fd, EVFILT_READ, EV_DELETE) == EBADF);
    CHECK(change(kq.get(), fd, EVFILT_READ, EV_ADD) == EBADF);
}

TEST_CASE("close() removes a descriptor's knotes, so its number starts afresh (kqueue(2) DESCRIPTION)") {
    kq_guard kq;
    auto p = unix_pair();
    int number = p.a.get();
    auto fd = static_cast<std::uintptr_t>(number);
    REQUIRE(change(kq.get(), fd, EVFILT_READ, EV_ADD, 0, &tag_a) == 0);
    REQUIRE(change(kq.get(), fd, EVFILT_WRITE, EV_ADD, 0, &tag_a) == 0);
    p.a.close();
    auto q = unix_pair();
    REQUIRE(q.a.get() == number);
    // Only the read filter of the new descriptor: the old write filter must not report.
    REQUIRE(change(kq.get(), fd, EVFILT_READ, EV_ADD, 0, &tag_b) == 0);
    send_text(q.b.get(), "x");
    struct kevent out[4];
    REQUIRE(wait_for(kq.get(), out, 4, 1000) == 1);
    CHECK(out[0].filter == EVFILT_READ);
    CHECK(out[0].udata == &tag_b);
    CHECK(change(kq.get(), fd, EVFILT_WRITE, EV_DELETE) == ENOENT);
}

TEST_CASE("the shim refuses what the systems leave open or it does not emulate, with EINVAL") {
    kq_guard kq;
    auto p = unix_pair();
    auto fd = static_cast<std::uintptr_t>(p.a.get());
    CHECK(change(kq.get(), fd, EVFILT_READ, EV_ADD | EV_ENABLE | EV_DISABLE) == EINVAL);
    CHECK(change(kq.get(), fd, EVFILT_READ, EV_ADD | EV_DELETE) == EINVAL);
    CHECK(change(kq.get(), fd, EVFILT_READ, EV_ADD | EV_CLEAR) == EINVAL);  // edge-triggered sockets
    CHECK(change(kq.get(), fd, EVFILT_READ, EV_ADD, 1 /* NOTE_LOWAT */) == EINVAL);
    REQUIRE(change(kq.get(), fd, EVFILT_READ, EV_ADD) == 0);
    CHECK(change(kq.get(), fd, EVFILT_READ, EV_ADD | EV_DISPATCH) == EINVAL);  // a mode change
}

// ---- EVFILT_USER --------------------------------------------------------------------------

TEST_CASE("EVFILT_USER: NOTE_TRIGGER from another thread ends a wait, and EV_CLEAR resets it (kqueue(2) EVFILT_USER)") {
    kq_guard kq;
    REQUIRE(change(kq.get(), 0, EVFILT_USER, EV_ADD | EV_CLEAR, 0, &tag_a) == 0);
    struct kevent out[2];
    CHECK(wait_for(kq.get(), out, 2, 0) == 0);
    std::thread other([&] {
        std::this_thread::sleep_for(milliseconds(50));
        CHECK(change(kq.get(), 0, EVFILT_USER, 0, NOTE_TRIGGER) == 0);
    });
    REQUIRE(wait_for(kq.get(), out, 2, -1) == 1);
    other.join();
    CHECK(out[0].filter == EVFILT_USER);
    CHECK(out[0].ident == 0u);
    CHECK(out[0].udata == &tag_a);
    CHECK(wait_for(kq.get(), out, 2, 0) == 0);
}

TEST_CASE("EVFILT_USER without EV_CLEAR stays triggered") {
    // kqueue(2) EV_CLEAR resets the state after retrieval; without it nothing does.
    kq_guard kq;
    REQUIRE(change(kq.get(), 7, EVFILT_USER, EV_ADD) == 0);
    REQUIRE(change(kq.get(), 7, EVFILT_USER, 0, NOTE_TRIGGER) == 0);
    struct kevent out;
    CHECK(wait_for(kq.get(), &out, 1, 0) == 1);
    CHECK(wait_for(kq.get(), &out, 1, 0) == 1);
    REQUIRE(change(kq.get(), 7, EVFILT_USER, EV_DELETE) == 0);
    CHECK(wait_for(kq.get(), &out, 1, 0) == 0);
}

TEST_CASE("EVFILT_USER fflags: NOTE_FFCOPY, NOTE_FFOR and NOTE_FFAND act on the low 24 bits (kqueue(2) EVFILT_USER)") {
    kq_guard kq;
    REQUIRE(change(kq.get(), 1, EVFILT_USER, EV_ADD | EV_CLEAR) == 0);
    REQUIRE(change(kq.get(), 1, EVFILT_USER, 0, NOTE_FFCOPY | 0x0f0u) == 0);
    REQUIRE(change(kq.get(), 1, EVFILT_USER, 0, NOTE_FFOR | 0x00fu) == 0);
    REQUIRE(change(kq.get(), 1, EVFILT_USER, 0, NOTE_FFAND | 0x03cu) == 0);
    REQUIRE(change(kq.get(), 1, EVFILT_USER, 0, NOTE_FFNOP | 0xfffu | NOTE_TRIGGER) == 0);
    struct kevent out;
    REQUIRE(wait_for(kq.get(), &out, 1, 1000) == 1);
    CHECK(out.fflags == 0x03cu);  // ((0x0f0 | 0x00f) & 0x03c); the top bits say NOTE_FFNOP
}

TEST_CASE("a user event triggered while disabled is delivered once enabled") {
    // kqueue(2) EV_DISABLE: "The filter itself is not disabled", so the trigger is kept.
    kq_guard kq;
    REQUIRE(change(kq.get(), 2, EVFILT_USER, EV_ADD | EV_CLEAR | EV_DISABLE) == 0);
    REQUIRE(change(kq.get(), 2, EVFILT_USER, 0, NOTE_TRIGGER) == 0);
    struct kevent out;
    CHECK(wait_for(kq.get(), &out, 1, 0) == 0);
    std::thread other([&] {
        std::this_thread::sleep_for(milliseconds(50));
        CHECK(change(kq.get(), 2, EVFILT_USER, EV_ENABLE) == 0);
    });
    CHECK(wait_for(kq.get(), &out, 1, 2000) == 1);
    other.join();
}

TEST_CASE("triggering a user event that was never added is ENOENT (kqueue(2) ERRORS)") {
    kq_guard kq;
    CHECK(change(kq.get(), 3, EVFILT_USER, 0, NOTE_TRIGGER) == ENOENT);
}

TEST_CASE("one trigger of an EV_CLEAR user event is delivered to one of the threads waiting") {
    kq_guard kq;
    REQUIRE(change(kq.get(), 0, EVFILT_USER, EV_ADD | EV_CLEAR) == 0);
    for (int round = 0; round < 10; ++round) {
        std::atomic<int> delivered{0};
        std::vector<std::thread> waiters;
        for (int t = 0; t < 3; ++t)
            waiters.emplace_back([&] {
                struct kevent out;
                int n = wait_for(kq.get(), &out, 1, 150);
                if (n > 0) delivered += n;
            });
        std::this_thread::sleep_for(milliseconds(20));
        REQUIRE(change(kq.get(), 0, EVFILT_USER, 0, NOTE_TRIGGER) == 0);
        for (auto& w : waiters) w.join();
        CHECK(delivered.load() == 1);
    }
}

TEST_CASE("a trigger on one kqueue does not end a wait on another") {
    kq_guard a;
    kq_guard b;
    REQUIRE(change(a.get(), 0, EVFILT_USER, EV_ADD | EV_CLEAR) == 0);
    REQUIRE(change(b.get(), 0, EVFILT_USER, EV_ADD | EV_CLEAR) == 0);
    std::thread other([&] {
        for (int i = 0; i < 5; ++i) {
            std::this_thread::sleep_for(milliseconds(20));
            CHECK(change(a.get(), 0, EVFILT_USER, 0, NOTE_TRIGGER) == 0);
        }
    });
    struct kevent out;
    auto start = steady_clock::now();
    CHECK(wait_for(b.get(), &out, 1, 200) == 0);
    CHECK(elapsed_ms(start) >= 200);
    other.join();
    CHECK(wait_for(a.get(), &out, 1, 0) == 1);
}

namespace {

std::atomic<int> signal_kq{-1};

extern "C" void trigger_from_handler(int) {
    struct kevent ev;
    EV_SET(&ev, 0, EVFILT_USER, 0, NOTE_TRIGGER, 0, nullptr);
    ::kevent(signal_kq.load(), &ev, 1, nullptr, 0, nullptr);
}

} // namespace

TEST_CASE("a trigger is async-signal-safe: it works from a handler that interrupts kevent() on the same kqueue") {
    // skiff's stop() may run in a signal handler, and on a real kernel a trigger is one
    // system call; the shim must not take a lock there that the interrupted call may hold.
    kq_guard kq;
    REQUIRE(change(kq.get(), 0, EVFILT_USER, EV_ADD) == 0);
    signal_kq = kq.get();
    struct sigaction sa{};
    struct sigaction old{};
    sa.sa_handler = trigger_from_handler;
    ::sigaction(SIGUSR1, &sa, &old);
    auto p = unix_pair();
    std::atomic<bool> done{false};
    std::thread busy([&] {  // changes knotes of the same kqueue as fast as it can
        auto fd = static_cast<std::uintptr_t>(p.a.get());
        while (!done) change(kq.get(), fd, EVFILT_READ, EV_ADD);
    });
    for (int i = 0; i < 200; ++i) ::pthread_kill(busy.native_handle(), SIGUSR1);
    done = true;
    busy.join();
    ::sigaction(SIGUSR1, &old, nullptr);
    struct kevent out;
    CHECK(wait_for(kq.get(), &out, 1, 1000) == 1);
}
