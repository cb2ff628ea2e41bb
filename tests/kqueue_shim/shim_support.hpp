// Helpers for the kqueue shim's tests: kevent() calls in one line, open descriptors counted,
// and (from tests/support/socket_pair.hpp) connected pairs that close themselves.
#ifndef SKIFF_TESTS_KQUEUE_SHIM_SHIM_SUPPORT_HPP
#define SKIFF_TESTS_KQUEUE_SHIM_SHIM_SUPPORT_HPP

#include <sys/types.h>
#include <sys/event.h>
#include <sys/time.h>

#include "support/socket_pair.hpp"

#include <dirent.h>

#include <cerrno>
#include <cstdint>

namespace shim_test {

// The socket helpers (fd_guard, unix_pair, tcp_pair, send_text, fill, drain, ...) are
// tests/support/socket_pair.hpp's, shared with the poller contract test.
using namespace skiff_test;

inline int open_descriptors() {
    int n = 0;
    if (DIR* d = ::opendir("/proc/self/fd")) {
        while (::readdir(d) != nullptr) ++n;
        ::closedir(d);
    }
    return n;
}

inline struct kevent make(std::uintptr_t ident, short filter, unsigned short flags, unsigned int fflags = 0,
                          void* udata = nullptr) {
    struct kevent ev;
    EV_SET(&ev, ident, filter, flags, fflags, 0, udata);
    return ev;
}

// One change, no events: 0, or the errno of the failure.
inline int change(int kq, std::uintptr_t ident, short filter, unsigned short flags, unsigned int fflags = 0,
                  void* udata = nullptr) {
    struct kevent ev = make(ident, filter, flags, fflags, udata);
    return ::kevent(kq, &ev, 1, nullptr, 0, nullptr) == 0 ? 0 : errno;
}

inline timespec after_ms(long ms) { return timespec{ms / 1000, (ms % 1000) * 1000000L}; }

// Waits up to timeout_ms (-1: no limit) for at most max events.
inline int wait_for(int kq, struct kevent* out, int max, long timeout_ms) {
    timespec ts = after_ms(timeout_ms);
    return ::kevent(kq, nullptr, 0, out, max, timeout_ms < 0 ? nullptr : &ts);
}

} // namespace shim_test

#endif // SKIFF_TESTS_KQUEUE_SHIM_SHIM_SUPPORT_HPP
