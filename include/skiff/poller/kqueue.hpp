// macOS and BSD backend: kqueue for readiness, an EVFILT_USER event for wake-ups. The same
// members as epoll_poller (see epoll.hpp for the contract).
//
// kqueue keeps one filter per direction, so a descriptor watched for both reports up to two
// events per wait; wait() merges the two into one poll_event when they arrive together. In
// oneshot mode (EV_DISPATCH) two filters could be handed to two threads at once, so a
// descriptor watched for both directions is armed for writing only: it is read again once its
// output has drained. Filters are level-triggered (no EV_CLEAR), as the loop expects.
//
// Verified on Linux through the test-only kqueue shim (tests/kqueue_shim/); see README.
#ifndef SKIFF_POLLER_KQUEUE_HPP
#define SKIFF_POLLER_KQUEUE_HPP

#include "skiff/detail/unique_fd.hpp"
#include "skiff/poller/poll_event.hpp"

#include <cerrno>        // errno
#include <cstdint>       // std::uintptr_t
#include <sys/event.h>   // kqueue, kevent, EV_SET
#include <sys/time.h>    // timespec
#include <sys/types.h>   // kevent's integer types
#include <system_error>  // std::error_code

namespace skiff::detail {

class kqueue_poller {
public:
    std::error_code open() noexcept {
        kq_.reset(::kqueue());
        if (!kq_) return last_error();
        struct kevent ev;
        EV_SET(&ev, wake_ident, EVFILT_USER, EV_ADD | EV_CLEAR, 0, 0, nullptr);
        if (::kevent(kq_.get(), &ev, 1, nullptr, 0, nullptr) != 0) return last_error();
        return {};
    }

    std::error_code add(int fd, void* data, unsigned watch, poll_mode mode = poll_mode::level) noexcept {
        return control(fd, data, watch, mode);
    }

    std::error_code modify(int fd, void* data, unsigned watch, poll_mode mode = poll_mode::level) noexcept {
        return control(fd, data, watch, mode);
    }

    void remove(int fd) noexcept {
        struct kevent evs[2];
        EV_SET(&evs[0], static_cast<std::uintptr_t>(fd), EVFILT_READ, EV_DELETE, 0, 0, nullptr);
        EV_SET(&evs[1], static_cast<std::uintptr_t>(fd), EVFILT_WRITE, EV_DELETE, 0, 0, nullptr);
        for (auto& ev : evs) ::kevent(kq_.get(), &ev, 1, nullptr, 0, nullptr);  // ENOENT is fine
    }

    int wait(poll_event* out, int max, int timeout_ms) noexcept {
        struct kevent evs[max_batch];
        if (max > max_batch) max = max_batch;
        timespec ts{timeout_ms / 1000, static_cast<long>(timeout_ms % 1000) * 1000000L};
        int n = ::kevent(kq_.get(), nullptr, 0, evs, max, timeout_ms < 0 ? nullptr : &ts);
        int kept = 0;
        for (int i = 0; i < n; ++i) {
            if (evs[i].filter == EVFILT_USER) {
                woken_ = true;
                continue;
            }
            bool failed = (evs[i].flags & (EV_ERROR | EV_EOF)) != 0;
            bool readable = evs[i].filter == EVFILT_READ || failed;
            bool writable = evs[i].filter == EVFILT_WRITE || (failed && evs[i].filter != EVFILT_READ);
            if (kept > 0 && out[kept - 1].data == evs[i].udata) {  // the other filter of the same fd
                out[kept - 1].readable |= readable;
                out[kept - 1].writable |= writable;
                continue;
            }
            out[kept++] = {evs[i].udata, readable, writable};
        }
        return kept < 0 ? 0 : kept;
    }

    void wake() noexcept {
        struct kevent ev;
        EV_SET(&ev, wake_ident, EVFILT_USER, 0, NOTE_TRIGGER, 0, nullptr);
        ::kevent(kq_.get(), &ev, 1, nullptr, 0, nullptr);
    }

    bool take_wake() noexcept {
        bool w = woken_;
        woken_ = false;
        return w;
    }

    static constexpr int max_batch = 256;

private:
    static constexpr std::uintptr_t wake_ident = 0;  // EVFILT_USER idents are not descriptors

    std::error_code control(int fd, void* data, unsigned watch, poll_mode mode) noexcept {
        unsigned short extra = mode == poll_mode::oneshot ? EV_DISPATCH : 0;
        if (mode == poll_mode::oneshot && (watch & watch_write)) watch = watch_write;  // see file comment
        struct kevent evs[2];
        auto flags = [&](unsigned bit) {
            return static_cast<unsigned short>(EV_ADD | extra | ((watch & bit) ? EV_ENABLE : EV_DISABLE));
        };
        EV_SET(&evs[0], static_cast<std::uintptr_t>(fd), EVFILT_READ, flags(watch_read), 0, 0, data);
        EV_SET(&evs[1], static_cast<std::uintptr_t>(fd), EVFILT_WRITE, flags(watch_write), 0, 0, data);
        return ::kevent(kq_.get(), evs, 2, nullptr, 0, nullptr) == 0 ? std::error_code{} : last_error();
    }

    static std::error_code last_error() noexcept { return {errno, std::system_category()}; }

    unique_fd kq_;
    bool woken_ = false;
};

} // namespace skiff::detail

#endif // SKIFF_POLLER_KQUEUE_HPP
