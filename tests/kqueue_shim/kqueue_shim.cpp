// kqueue(2) and kevent(2) on Linux, over epoll(7), for the subset skiff's kqueue backend uses:
// EVFILT_READ and EVFILT_WRITE on sockets and pipes, EVFILT_USER; EV_ADD, EV_DELETE,
// EV_ENABLE, EV_DISABLE, EV_ONESHOT, EV_DISPATCH, EV_CLEAR (EVFILT_USER only); EV_EOF and
// EV_ERROR out. Anything else is refused with EINVAL rather than half emulated. Semantics
// follow the kqueue(2) manual pages of FreeBSD 14 and macOS; "kqueue(2)" below cites them.
//
// How it maps:
// - A kqueue is an epoll instance; its descriptor is the kqueue's, so close() frees it.
// - A knote is (ident, filter), and kqueue keeps one per direction while epoll keeps one
//   registration per descriptor. So the two knotes of a descriptor share one registration,
//   whose mask is the union of the enabled knotes: EVFILT_READ -> EPOLLIN|EPOLLRDHUP,
//   EVFILT_WRITE -> EPOLLOUT. Level filters register level-triggered; if an enabled knote is
//   EV_DISPATCH or EV_ONESHOT the registration is EPOLLONESHOT, so that exactly one of the
//   threads waiting receives it, and is re-armed after its knotes have been processed. With
//   no knote enabled it stays registered with EPOLLONESHOT and no interest, so a hang-up
//   cannot wake a waiter more than once (epoll always reports EPOLLHUP and EPOLLERR).
// - Epoll only wakes the caller. What is returned is decided as kqueue(2) says ("the filter
//   is also run when the user attempts to retrieve the kevent"): under the kqueue's lock the
//   descriptor is polled again, and a knote is returned only if it is live, enabled and its
//   condition holds now. That check is also what keeps an EV_DISPATCH knote from going to
//   two threads when a re-arm races with a wait.
// - data: EVFILT_READ, bytes readable (FIONREAD), or on a listening TCP socket the accept
//   queue length; EVFILT_WRITE, room left in the send buffer. fflags on these filters is 0:
//   Linux gives a socket's pending error only by clearing it (SO_ERROR), which would hide it
//   from the recv() or send() that must see it. skiff reads errors from recv() and send().
// - EVFILT_USER: a fixed table per kqueue. Triggering it is lock-free and async-signal-safe
//   (atomics and one write()), as the real system call is, because skiff's wake() may run in
//   a signal handler. The wake-up is one eventfd for the whole process, registered
//   edge-triggered in every kqueue: each write wakes one waiter of every kqueue, which looks
//   at its own user events and, finding none, waits again for the rest of its timeout. No
//   descriptor per kqueue is needed, so closing a kqueue leaks nothing.
// - close() cannot be seen from here. Its effect on knotes ("Calling close() on a file
//   descriptor will remove any kevents that reference the descriptor") is applied when next
//   noticed: epoll forgets a closed descriptor, so a change to a knote whose registration is
//   gone finds it stale, drops it, and proceeds as the kernel would have.
//
// Deliberate strictness, where the manual pages leave behaviour open or the systems differ:
// EV_ENABLE with EV_DISABLE, EV_ADD with EV_DELETE, and re-adding a knote with different
// EV_ONESHOT/EV_DISPATCH/EV_CLEAR flags are EINVAL.
//
// Not emulated: EV_EOF on EVFILT_WRITE after a local shutdown(SHUT_WR) of a non-TCP socket;
// the socket error in fflags; ext[] on output (zero); more than max_user_events user events.
#include <sys/event.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <ctime>
#include <mutex>
#include <new>
#include <unordered_map>

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

namespace {

constexpr unsigned short action_flags = EV_ADD | EV_DELETE | EV_ENABLE | EV_DISABLE;
constexpr unsigned short fd_mode_flags = EV_ONESHOT | EV_DISPATCH;
constexpr unsigned short user_mode_flags = EV_ONESHOT | EV_DISPATCH | EV_CLEAR;
constexpr std::uint64_t user_wake_marker = ~std::uint64_t{0};
constexpr int epoll_batch = 64;
constexpr int max_user_events = 16;

// The one eventfd every kqueue watches for user events, made before main() so that no test
// counting descriptors sees it appear.
const int user_wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

struct fd_knote {
    bool live = false;
    bool enabled = false;
    unsigned short mode = 0;  // EV_ONESHOT, EV_DISPATCH as registered
    void* udata = nullptr;
};

// Both knotes of one descriptor and its epoll registration; gen tells registrations of a
// reused descriptor number apart, so an event of an old one is never taken for the new.
struct fd_entry {
    fd_knote read;
    fd_knote write;
    std::uint32_t gen = 0;
};

// Fields read by a trigger (lock-free) are atomic; the rest change under the kqueue's lock.
struct user_knote {
    std::atomic<bool> live{false};
    std::atomic<std::uintptr_t> ident{0};
    std::atomic<bool> triggered{false};
    std::atomic<std::uint32_t> fflags{0};
    std::atomic<std::int64_t> data{0};
    bool enabled = false;
    unsigned short mode = 0;  // EV_ONESHOT, EV_DISPATCH, EV_CLEAR as registered
    void* udata = nullptr;
};

struct kq_state {
    std::atomic<int> fd{-1};
    std::atomic<kq_state*> next{nullptr};
    std::mutex lock;
    std::unordered_map<int, fd_entry> fds;
    std::uint32_t last_gen = 0;
    std::array<user_knote, max_user_events> users;
};

// Every kqueue ever made, newest first. States are never freed: a lookup walks the list
// without a lock (a trigger may run in a signal handler), and a state whose descriptor was
// closed is reused when kqueue() gets that number again.
std::atomic<kq_state*> all_kqueues{nullptr};
std::mutex registry_lock;

int fail(int err) noexcept {
    errno = err;
    return -1;
}

kq_state* find_kqueue(int fd) noexcept {
    for (kq_state* s = all_kqueues.load(std::memory_order_acquire); s != nullptr;
         s = s->next.load(std::memory_order_acquire))
        if (s->fd.load(std::memory_order_acquire) == fd) return s;
    return nullptr;
}

void forget_user(user_knote& u) noexcept {
    u.live.store(false, std::memory_order_release);
    u.triggered.store(false);
    u.fflags.store(0);
    u.data.store(0);
    u.enabled = false;
    u.mode = 0;
    u.udata = nullptr;
}

void wake_waiters() noexcept {
    std::uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(user_wake_fd, &one, sizeof one);
}

// ---- EVFILT_USER ----------------------------------------------------------------------------

user_knote* find_user(kq_state& s, std::uintptr_t ident) noexcept {
    for (user_knote& u : s.users)
        if (u.live.load(std::memory_order_acquire) && u.ident.load() == ident) return &u;
    return nullptr;
}

// kqueue(2) EVFILT_USER: NOTE_FFAND / NOTE_FFOR / NOTE_FFCOPY apply the low 24 bits of fflags
// to the stored flags, NOTE_FFNOP leaves them; NOTE_TRIGGER fires the event.
void touch_user(user_knote& u, const struct kevent& c) noexcept {
    std::uint32_t value = c.fflags & NOTE_FFLAGSMASK;
    std::uint32_t op = c.fflags & NOTE_FFCTRLMASK;
    std::uint32_t old = u.fflags.load();
    std::uint32_t now = old;
    do {
        if (op == NOTE_FFAND) now = old & value;
        else if (op == NOTE_FFOR) now = old | value;
        else if (op == NOTE_FFCOPY) now = value;
    } while (!u.fflags.compare_exchange_weak(old, now));
    u.data.store(c.data);
    if ((c.fflags & NOTE_TRIGGER) == 0) return;
    u.triggered.store(true, std::memory_order_release);
    wake_waiters();
}

user_knote* add_user(kq_state& s, const struct kevent& c, int& err) noexcept {
    unsigned short mode = c.flags & user_mode_flags;
    if (user_knote* u = find_user(s, c.ident)) {
        err = u->mode == mode ? 0 : EINVAL;
        return u;
    }
    for (user_knote& u : s.users) {
        if (u.live.load()) continue;
        u.enabled = true;  // kqueue(2) EV_ADD: "Adding an event automatically enables it"
        u.mode = mode;
        u.ident.store(c.ident);
        u.live.store(true, std::memory_order_release);
        return &u;
    }
    err = ENOMEM;
    return nullptr;
}

// Changes with an action flag; under the kqueue's lock.
int change_user(kq_state& s, const struct kevent& c) noexcept {
    int err = 0;
    user_knote* u = (c.flags & EV_ADD) ? add_user(s, c, err) : find_user(s, c.ident);
    if (err != 0) return err;
    if (u == nullptr) return ENOENT;  // kqueue(2) ERRORS: "could not be found to be modified or deleted"
    if (c.flags & EV_DELETE) {
        forget_user(*u);
        return 0;
    }
    if (c.flags & EV_ADD) u->udata = c.udata;
    if (c.flags & EV_DISABLE) u->enabled = false;
    if (c.flags & EV_ENABLE) u->enabled = true;
    touch_user(*u, c);
    if (u->enabled && u->triggered.load()) wake_waiters();  // enabled while already triggered
    return 0;
}

int apply_user(kq_state& s, const struct kevent& c) noexcept {
    if ((c.flags & ~(action_flags | user_mode_flags)) != 0) return EINVAL;
    if ((c.fflags & ~(NOTE_FFCTRLMASK | NOTE_FFLAGSMASK | NOTE_TRIGGER)) != 0) return EINVAL;
    if ((c.flags & action_flags) == 0) {
        // A bare trigger or fflags update, as skiff's wake() sends: lock-free, so that it is
        // async-signal-safe. Mode flags belong with EV_ADD.
        if ((c.flags & user_mode_flags) != 0) return EINVAL;
        user_knote* u = find_user(s, c.ident);
        if (u == nullptr) return ENOENT;
        touch_user(*u, c);
        return 0;
    }
    std::lock_guard<std::mutex> g(s.lock);
    return change_user(s, c);
}

// Returns the triggered, enabled user events; under the kqueue's lock.
int take_users(kq_state& s, struct kevent* out, int room) noexcept {
    int n = 0;
    for (user_knote& u : s.users) {
        if (n == room) break;
        if (!u.live.load() || !u.enabled || !u.triggered.load(std::memory_order_acquire)) continue;
        bool clear = (u.mode & EV_CLEAR) != 0;
        // kqueue(2) EV_CLEAR: "After the event is retrieved by the user, its state is reset".
        if (clear && !u.triggered.exchange(false)) continue;
        struct kevent& e = out[n++];
        e = {};
        e.ident = u.ident.load();
        e.filter = EVFILT_USER;
        e.flags = u.mode;
        e.fflags = clear ? u.fflags.exchange(0) : u.fflags.load();  // NOTE_FFNOP in the top bits
        e.data = clear ? u.data.exchange(0) : u.data.load();
        e.udata = u.udata;
        if (u.mode & EV_ONESHOT) forget_user(u);          // kqueue(2) EV_ONESHOT: then deleted
        else if (u.mode & EV_DISPATCH) u.enabled = false;  // kqueue(2) EV_DISPATCH: then disabled
    }
    return n;
}

// ---- EVFILT_READ and EVFILT_WRITE -----------------------------------------------------------

bool wanted(const fd_knote& k) noexcept { return k.live && k.enabled; }

// The epoll mask standing for the enabled knotes (see the file comment).
std::uint32_t interest(const fd_entry& e) noexcept {
    std::uint32_t events = 0;
    bool one_owner = false;
    if (wanted(e.read)) {
        events |= EPOLLIN | EPOLLRDHUP;
        one_owner |= e.read.mode != 0;
    }
    if (wanted(e.write)) {
        events |= EPOLLOUT;
        one_owner |= e.write.mode != 0;
    }
    if (events == 0 || one_owner) events |= EPOLLONESHOT;
    return events;
}

// Gives the registration of fd the mask of e; deletes it when e has no knote left. Returns
// 0 or the errno of epoll_ctl (ENOENT: fd was closed since it was registered).
int sync_entry(kq_state& s, int fd, bool registered, fd_entry e) noexcept {
    if (!e.read.live && !e.write.live) {
        s.fds.erase(fd);
        if (registered && ::epoll_ctl(s.fd.load(), EPOLL_CTL_DEL, fd, nullptr) != 0) return errno;
        return 0;
    }
    if (!registered) e.gen = ++s.last_gen;
    epoll_event ev{};
    ev.events = interest(e);
    ev.data.u64 = (std::uint64_t{e.gen} << 32) | static_cast<std::uint32_t>(fd);
    if (::epoll_ctl(s.fd.load(), registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &ev) != 0) return errno;
    s.fds[fd] = e;
    return 0;
}

// The knote part of one change: what kqueue(2) says EV_ADD, EV_DELETE, EV_ENABLE and
// EV_DISABLE do to (ident, filter), without touching the kernel.
int update_knote(fd_knote& k, const struct kevent& c) noexcept {
    if (c.flags & EV_DELETE) {
        if (!k.live) return ENOENT;
        k = {};
        return 0;
    }
    if (c.flags & EV_ADD) {
        unsigned short mode = c.flags & fd_mode_flags;
        if (k.live && k.mode != mode) return EINVAL;  // open between systems: refused here
        if (!k.live) k = {true, true, mode, nullptr};  // "automatically enables it"
        k.udata = c.udata;                             // "will modify the parameters"
    } else if (!k.live) {
        return ENOENT;
    }
    if (c.flags & EV_DISABLE) k.enabled = false;
    if (c.flags & EV_ENABLE) k.enabled = true;
    return 0;
}

int change_fd(kq_state& s, int fd, const struct kevent& c) noexcept {
    auto found = s.fds.find(fd);
    bool registered = found != s.fds.end();
    fd_entry e = registered ? found->second : fd_entry{};
    fd_knote& k = c.filter == EVFILT_READ ? e.read : e.write;
    if (int err = update_knote(k, c)) return err;
    return sync_entry(s, fd, registered, e);
}

// True if fd's knotes outlived it: epoll forgets a descriptor when it is closed, so it no
// longer knows this number if it was closed and taken again.
bool outlived(kq_state& s, int fd) noexcept {
    auto found = s.fds.find(fd);
    if (found == s.fds.end()) return false;
    epoll_event ev{};
    ev.events = interest(found->second);
    ev.data.u64 = (std::uint64_t{found->second.gen} << 32) | static_cast<std::uint32_t>(fd);
    return ::epoll_ctl(s.fd.load(), EPOLL_CTL_MOD, fd, &ev) != 0 && errno == ENOENT;
}

int apply_fd(kq_state& s, const struct kevent& c) noexcept {
    if ((c.flags & ~(action_flags | fd_mode_flags)) != 0 || c.fflags != 0) return EINVAL;
    if (c.ident > static_cast<std::uintptr_t>(INT_MAX)) return EBADF;
    int fd = static_cast<int>(c.ident);
    std::lock_guard<std::mutex> g(s.lock);
    if (::fcntl(fd, F_GETFD) < 0) {  // kqueue(2) ERRORS: EBADF; close() removed its knotes
        s.fds.erase(fd);
        return EBADF;
    }
    int err = change_fd(s, fd, c);
    if (err != 0 && outlived(s, fd)) {
        // kqueue(2): close() "will remove any kevents that reference the descriptor", so
        // the change applies to a descriptor without knotes.
        s.fds.erase(fd);
        err = change_fd(s, fd, c);
    }
    return err;
}

int apply_change(kq_state& s, const struct kevent& c) noexcept {
    if ((c.flags & EV_ENABLE) && (c.flags & EV_DISABLE)) return EINVAL;
    if ((c.flags & EV_ADD) && (c.flags & EV_DELETE)) return EINVAL;
    if (c.filter == EVFILT_USER) return apply_user(s, c);
    if (c.filter == EVFILT_READ || c.filter == EVFILT_WRITE) return apply_fd(s, c);
    return EINVAL;  // kqueue(2) ERRORS: "The specified ... filter is invalid"
}

// The descriptor's state now; the filter conditions below are read from it.
short poll_now(int fd) noexcept {
    pollfd p{fd, POLLIN | POLLOUT | POLLRDHUP, 0};
    return ::poll(&p, 1, 0) == 1 ? p.revents : 0;
}

// kqueue(2) EVFILT_READ: "If the read direction of the socket has shutdown, then the filter
// also sets EV_EOF": a peer's FIN, our own SHUT_RD, a reset.
bool read_eof(short revents) noexcept { return (revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0; }
bool read_ready(short revents) noexcept { return read_eof(revents) || (revents & POLLIN) != 0; }

// kqueue(2) EVFILT_WRITE "will set EV_EOF when the reader disconnects"; FreeBSD and macOS
// also set it once the socket can send no more (our SHUT_WR included), which Linux shows as
// plain POLLOUT, so a TCP socket's state tells.
bool write_eof(int fd, short revents) noexcept {
    if ((revents & (POLLHUP | POLLERR)) != 0) return true;
    if ((revents & POLLOUT) == 0) return false;
    tcp_info info{};
    socklen_t len = sizeof info;
    if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0) return false;
    switch (info.tcpi_state) {
    case TCP_FIN_WAIT1:
    case TCP_FIN_WAIT2:
    case TCP_CLOSING:
    case TCP_TIME_WAIT:
    case TCP_LAST_ACK:
        return true;
    default:
        return false;
    }
}

// kqueue(2) EVFILT_READ data: bytes to read, or for a listening socket "the size of the
// listen backlog", i.e. the connections waiting (at least one, since it is readable).
std::int64_t readable_bytes(int fd) noexcept {
    int listening = 0;
    socklen_t len = sizeof listening;
    if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) == 0 && listening) {
        tcp_info info{};
        len = sizeof info;
        bool known = ::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) == 0 && info.tcpi_unacked > 0;
        return known ? info.tcpi_unacked : 1;  // Linux keeps the accept queue length there
    }
    int n = 0;
    return ::ioctl(fd, FIONREAD, &n) == 0 ? n : 0;
}

// kqueue(2) EVFILT_WRITE data: "the amount of space remaining in the write buffer".
std::int64_t writable_bytes(int fd) noexcept {
    int size = 0;
    socklen_t len = sizeof size;
    int queued = 0;
    if (::getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, &len) == 0) {
        if (::ioctl(fd, TIOCOUTQ, &queued) != 0) queued = 0;
    } else {
        size = ::fcntl(fd, F_GETPIPE_SZ);
        if (size < 0 || ::ioctl(fd, FIONREAD, &queued) != 0) return 0;
    }
    return size > queued ? size - queued : 0;
}

// Returns knote k of fd as an event, then applies EV_ONESHOT or EV_DISPATCH to it.
void deliver(fd_knote& k, int fd, short filter, bool eof, std::int64_t data, struct kevent& e) noexcept {
    e = {};
    e.ident = static_cast<std::uintptr_t>(fd);
    e.filter = filter;
    e.flags = static_cast<unsigned short>(k.mode | (eof ? EV_EOF : 0));
    e.data = data;
    e.udata = k.udata;
    if (k.mode & EV_ONESHOT) k = {};                   // kqueue(2) EV_ONESHOT: then deleted
    else if (k.mode & EV_DISPATCH) k.enabled = false;  // kqueue(2) EV_DISPATCH: then disabled
}

// One epoll event: returns the knotes of its descriptor whose condition holds now, then
// re-arms (or deletes) the registration to match what is left. Under the kqueue's lock.
int take_fd(kq_state& s, std::uint64_t key, struct kevent* out, int room) noexcept {
    int fd = static_cast<int>(key & 0xffffffffu);
    auto found = s.fds.find(fd);
    if (found == s.fds.end() || found->second.gen != key >> 32) return 0;  // deleted or replaced
    fd_entry e = found->second;
    short revents = poll_now(fd);
    int n = 0;
    if (n < room && wanted(e.read) && read_ready(revents))
        deliver(e.read, fd, EVFILT_READ, read_eof(revents), readable_bytes(fd), out[n++]);
    if (n < room && wanted(e.write)) {
        bool eof = write_eof(fd, revents);
        if (eof || (revents & POLLOUT) != 0) deliver(e.write, fd, EVFILT_WRITE, eof, writable_bytes(fd), out[n++]);
    }
    sync_entry(s, fd, true, e);  // a failure means fd was closed: nothing left to report
    return n;
}

// ---- waiting --------------------------------------------------------------------------------

using steady = std::chrono::steady_clock;

// Milliseconds left until deadline, rounded up so that a wait never ends early; -1: none.
int remaining_ms(bool bounded, steady::time_point deadline) noexcept {
    if (!bounded) return -1;
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - steady::now()).count();
    return left <= 0 ? 0 : left > INT_MAX ? INT_MAX : static_cast<int>(left);
}

// One epoll_wait turned into kevents: fd events first, then user events if the wake-up
// eventfd fired. Returns the number placed in out.
int take_batch(kq_state& s, const epoll_event* evs, int count, struct kevent* out, int room) noexcept {
    std::lock_guard<std::mutex> g(s.lock);
    int n = 0;
    bool user_wake = false;
    for (int i = 0; i < count; ++i) {
        if (evs[i].data.u64 == user_wake_marker) user_wake = true;
        else n += take_fd(s, evs[i].data.u64, out + n, room - n);
    }
    if (user_wake) n += take_users(s, out + n, room - n);
    return n;
}

int wait_events(kq_state& s, struct kevent* out, int room, const struct timespec* timeout) noexcept {
    bool bounded = timeout != nullptr;
    steady::time_point deadline = steady::now();
    if (bounded) {
        // kqueue(2) BUGS: "The timeout value is limited to 24 hours".
        auto sec = timeout->tv_sec < 86400 ? timeout->tv_sec : 86400;
        deadline += std::chrono::seconds(sec) + std::chrono::nanoseconds(timeout->tv_nsec);
    }
    for (;;) {
        int n = 0;
        {
            std::lock_guard<std::mutex> g(s.lock);
            n = take_users(s, out, room);  // level-triggered ones stay triggered: no wake-up
        }
        int wait_ms = n > 0 ? 0 : remaining_ms(bounded, deadline);
        // One slot more than there is room for: the user wake-up marker must not crowd out a
        // descriptor's event (a new kqueue may see it at once, the eventfd being readable).
        epoll_event evs[epoll_batch + 1];
        int count = ::epoll_wait(s.fd.load(), evs, (room - n < epoll_batch ? room - n : epoll_batch) + 1, wait_ms);
        if (count < 0) return n > 0 ? n : -1;  // kqueue(2) ERRORS: EINTR "before any events"
        n += take_batch(s, evs, count, out + n, room - n);
        // Nothing yet but time left: the wake-up was for another kqueue, or stale.
        if (n > 0 || wait_ms == 0) return n;
    }
}

kq_state* register_kqueue(int fd) {
    std::lock_guard<std::mutex> g(registry_lock);
    kq_state* s = find_kqueue(fd);  // a closed kqueue's state: reset it for this one
    if (s == nullptr) {
        s = new (std::nothrow) kq_state;
        if (s == nullptr) return nullptr;
        s->fd.store(fd);
        s->next.store(all_kqueues.load());
        all_kqueues.store(s, std::memory_order_release);
    }
    std::lock_guard<std::mutex> l(s->lock);
    s->fds.clear();
    for (user_knote& u : s->users) forget_user(u);
    return s;
}

} // namespace

extern "C" int kqueue(void) {
    if (user_wake_fd < 0) return fail(ENOMEM);
    int fd = ::epoll_create1(EPOLL_CLOEXEC);
    if (fd < 0) return -1;
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLET;  // one wake-up per write, to every kqueue (file comment)
    ev.data.u64 = user_wake_marker;
    if (::epoll_ctl(fd, EPOLL_CTL_ADD, user_wake_fd, &ev) != 0) {
        int err = errno;
        ::close(fd);
        return fail(err);
    }
    if (register_kqueue(fd) == nullptr) {
        ::close(fd);
        return fail(ENOMEM);
    }
    return fd;
}

extern "C" int kevent(int kq, const struct kevent* changelist, int nchanges, struct kevent* eventlist, int nevents,
                      const struct timespec* timeout) {
    kq_state* s = find_kqueue(kq);
    if (s == nullptr) return fail(EBADF);
    if (nchanges < 0 || nevents < 0) return fail(EINVAL);
    if (timeout != nullptr && (timeout->tv_sec < 0 || timeout->tv_nsec < 0 || timeout->tv_nsec >= 1000000000L))
        return fail(EINVAL);  // kqueue(2) ERRORS: "The specified time limit ... is invalid"
    // kqueue(2) RETURN VALUES: a change that fails goes into eventlist with EV_ERROR and the
    // error in data while there is room; otherwise kevent() fails with it. Changes are
    // applied first, in order ("before any pending events are read"), and a call that
    // reported errors returns them without waiting. The same array may be both lists, so
    // each change is copied before its slot can be overwritten.
    int errors = 0;
    for (int i = 0; i < nchanges; ++i) {
        struct kevent change = changelist[i];
        int err = apply_change(*s, change);
        if (err == 0) continue;
        if (errors == nevents) return fail(err);
        change.flags = EV_ERROR;
        change.data = err;
        eventlist[errors++] = change;
    }
    // "When nevents is zero, kevent() will return immediately even if there is a timeout".
    if (errors > 0 || nevents == 0) return errors;
    return wait_events(*s, eventlist, nevents, timeout);
}
