// macOS and BSD backend: kqueue for readiness, an EVFILT_USER event for wake-ups. The same
// members as epoll_poller (see epoll.hpp for the contract). kqueue(2) below means the manual
// page of FreeBSD and macOS, which agree on everything used here.
//
// kqueue keeps one filter per direction, so a descriptor watched for both reports up to two
// events per wait; wait() merges the two into one poll_event when they arrive together. In
// oneshot mode (EV_DISPATCH) two filters could be handed to two threads at once, so a
// descriptor watched for both directions is armed for writing only: it is read again once its
// output has drained. Filters are level-triggered (no EV_CLEAR), as the loop expects.
//
// Verified on Linux through the test-only kqueue shim (tests/kqueue_shim/; docs/test-suite.md).
#ifndef SKIFF_POLLER_KQUEUE_HPP
#define SKIFF_POLLER_KQUEUE_HPP

#include "skiff/detail/unique_fd.hpp"
#include "skiff/poller/poll_event.hpp"

#include <cerrno>        // errno
#include <cstdint>       // std::uintptr_t
#include <sys/types.h>   // kevent's integer types (macOS and FreeBSD before 12 need it first)
#include <sys/event.h>   // kqueue, kevent, EV_SET
#include <sys/time.h>    // timespec
#include <system_error>  // std::error_code

namespace skiff::detail {

class kqueue_poller {
public:
    // Creates the kqueue and registers its wake-up event.
    std::error_code open() noexcept {
        kq_.reset(::kqueue());
        if (!kq_) return last_error();
        // kqueue(2) EV_CLEAR: the trigger is reset once retrieved, so one wake() ends one wait.
        struct kevent ev;
        EV_SET(&ev, wake_ident, EVFILT_USER, EV_ADD | EV_CLEAR, 0, 0, nullptr);
        if (::kevent(kq_.get(), &ev, 1, nullptr, 0, nullptr) != 0) return last_error();
        return {};
    }

    std::error_code add(int fd, void* data, unsigned watch, poll_mode mode = poll_mode::level) noexcept {
        return control(fd, data, watch, mode);
    }

    // Changes the interest; in oneshot mode this also re-arms the descriptor.
    std::error_code modify(int fd, void* data, unsigned watch, poll_mode mode = poll_mode::level) noexcept {
        return control(fd, data, watch, mode);
    }

    // Both filters in one call. With no eventlist, kevent() stops at the first change that
    // fails (kqueue(2) RETURN VALUES); a filter it leaves goes with the close() that follows
    // ("Calling close() on a file descriptor will remove any kevents that reference the
    // descriptor").
    void remove(int fd) noexcept {
        struct kevent evs[2];
        EV_SET(&evs[0], static_cast<std::uintptr_t>(fd), EVFILT_READ, EV_DELETE, 0, 0, nullptr);
        EV_SET(&evs[1], static_cast<std::uintptr_t>(fd), EVFILT_WRITE, EV_DELETE, 0, 0, nullptr);
        ::kevent(kq_.get(), evs, 2, nullptr, 0, nullptr);
    }

    // Waits up to timeout_ms (-1: no limit) and fills out[0, n). A wake() is not an event: it
    // ends the wait early and sets `woken`. Returns as epoll_poller::wait does: n >= 0 events,
    // 0 on timeout, wake() alone or EINTR, and -1 with errno kept on any other failure
    // (kqueue(2) ERRORS: EBADF, EFAULT, EINVAL), which persists and must stop the caller.
    int wait(poll_event* out, int max, int timeout_ms, bool& woken) noexcept {
        struct kevent evs[max_batch];
        if (max > max_batch) max = max_batch;
        timespec ts{timeout_ms / 1000, static_cast<long>(timeout_ms % 1000) * 1000000L};
        int n = ::kevent(kq_.get(), nullptr, 0, evs, max, timeout_ms < 0 ? nullptr : &ts);
        if (n < 0) return errno == EINTR ? 0 : -1;
        int kept = 0;
        for (int i = 0; i < n; ++i) {
            if (evs[i].filter == EVFILT_USER) {
                if (evs[i].ident == notify_ident) out[kept++] = {evs[i].udata, true, false};
                else woken = true;
                continue;
            }
            // EV_EOF on the write filter means the connection is gone (kqueue(2) EVFILT_WRITE),
            // so the reader is told too, as epoll's EPOLLHUP does; on the read filter it is a
            // read that returns 0 or the error.
            bool readable = evs[i].filter == EVFILT_READ || (evs[i].flags & EV_EOF) != 0;
            bool writable = evs[i].filter == EVFILT_WRITE;
            if (kept > 0 && out[kept - 1].data == evs[i].udata) {  // the other filter of the same fd
                out[kept - 1].readable |= readable;
                out[kept - 1].writable |= writable;
                continue;
            }
            out[kept++] = {evs[i].udata, readable, writable};
        }
        return kept;
    }

    // Async-signal-safe (one system call): ends the current (or next) wait() early.
    void wake() noexcept {
        struct kevent ev;
        EV_SET(&ev, wake_ident, EVFILT_USER, 0, NOTE_TRIGGER, 0, nullptr);
        ::kevent(kq_.get(), &ev, 1, nullptr, 0, nullptr);
    }

    // The notifier (see epoll.hpp): a second EVFILT_USER event carrying `data`. EV_CLEAR
    // resets it as it is delivered, so there is no count to clear; in oneshot mode
    // EV_DISPATCH hands it to one thread and rearm_notifier() enables it again.
    std::error_code add_notifier(void* data, poll_mode mode) noexcept {
        notify_data_ = data;
        notify_mode_ = mode;
        struct kevent ev;
        unsigned short dispatch = mode == poll_mode::oneshot ? EV_DISPATCH : 0;
        EV_SET(&ev, notify_ident, EVFILT_USER, EV_ADD | EV_CLEAR | dispatch, 0, 0, data);
        return ::kevent(kq_.get(), &ev, 1, nullptr, 0, nullptr) == 0 ? std::error_code{} : last_error();
    }
    void notify() noexcept {
        struct kevent ev;
        EV_SET(&ev, notify_ident, EVFILT_USER, 0, NOTE_TRIGGER, 0, notify_data_);
        ::kevent(kq_.get(), &ev, 1, nullptr, 0, nullptr);
    }
    static void clear_notifier() noexcept {}
    void rearm_notifier() noexcept {
        if (notify_mode_ != poll_mode::oneshot) return;
        struct kevent ev;
        EV_SET(&ev, notify_ident, EVFILT_USER, EV_ENABLE, 0, 0, notify_data_);
        ::kevent(kq_.get(), &ev, 1, nullptr, 0, nullptr);
    }

    static constexpr int max_batch = 256;

private:
    static constexpr std::uintptr_t wake_ident = 0;  // EVFILT_USER idents are not descriptors
    static constexpr std::uintptr_t notify_ident = 1;

    // Registers both filters, each enabled or disabled: EV_ADD on an existing filter modifies
    // it (kqueue(2) EV_ADD), so add and modify are one call, and a filter not wanted stays
    // registered but silent (EV_DISABLE), ready for the next modify. In oneshot mode
    // EV_DISPATCH disables a filter as it is delivered, so exactly one thread gets it, and
    // EV_ENABLE here re-arms it.
    //
    // The filter being enabled goes last. The changes of one call are applied one at a time,
    // and from the moment an enabled filter is registered another thread may receive it, serve
    // the connection and close it; this thread must then be done with fd, not still adding its
    // other filter (which would fail, and make the caller undo a connection it no longer owns).
    std::error_code control(int fd, void* data, unsigned watch, poll_mode mode) noexcept {
        unsigned short dispatch = mode == poll_mode::oneshot ? EV_DISPATCH : 0;
        if (mode == poll_mode::oneshot && (watch & watch_write)) watch = watch_write;  // see file comment
        auto flags = [&](unsigned bit) {
            return static_cast<unsigned short>(EV_ADD | dispatch | ((watch & bit) ? EV_ENABLE : EV_DISABLE));
        };
        bool read_last = (watch & watch_read) != 0;
        struct kevent evs[2];
        EV_SET(&evs[read_last ? 1 : 0], static_cast<std::uintptr_t>(fd), EVFILT_READ, flags(watch_read), 0, 0, data);
        EV_SET(&evs[read_last ? 0 : 1], static_cast<std::uintptr_t>(fd), EVFILT_WRITE, flags(watch_write), 0, 0, data);
        return ::kevent(kq_.get(), evs, 2, nullptr, 0, nullptr) == 0 ? std::error_code{} : last_error();
    }

    static std::error_code last_error() noexcept { return {errno, std::system_category()}; }

    unique_fd kq_;
    void* notify_data_ = nullptr;
    poll_mode notify_mode_ = poll_mode::level;
};

} // namespace skiff::detail

#endif // SKIFF_POLLER_KQUEUE_HPP
