// A response body that is a range of an open file (response::file), and the call that moves
// the next part of it to a socket: sendfile(2) on Linux, so the bytes go from the page cache
// to the socket without passing through user space; elsewhere pread into the loop's scratch
// buffer and send.
//
// It does not decide when to send (file_send.hpp does, after the head and every earlier
// response have left) nor what to do after a short or failed send.
// Invariants: `left` is the bytes still owed from `offset`; the descriptor is owned and closed
// with the body, however the response ends (complete, client gone, stop()).
#ifndef SKIFF_FILES_FILE_BODY_HPP
#define SKIFF_FILES_FILE_BODY_HPP

#include "skiff/detail/unique_fd.hpp"
#include "skiff/platform/socket.hpp"

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint64_t
#include <sys/types.h>  // off_t, ssize_t
#include <unistd.h>     // pread

#if defined(__linux__)
#include <csignal>         // sigset_t, SIGPIPE
#include <ctime>           // timespec for sigtimedwait
#include <pthread.h>       // pthread_sigmask: this thread only
#include <sys/sendfile.h>  // sendfile
#endif // __linux__

namespace skiff::detail {

struct file_body {
    unique_fd fd;
    std::uint64_t offset = 0;
    std::uint64_t left = 0;
};

#if defined(__linux__)
// sendfile has no MSG_NOSIGNAL: a peer that reset would raise SIGPIPE and kill the process.
// While this lives SIGPIPE is blocked on the calling thread, and one raised meanwhile is
// taken off the pending set before the old mask comes back (the error still reaches the
// caller as EPIPE). One guard covers a writer's whole turn, not each call.
class sigpipe_guard {
public:
    sigpipe_guard() noexcept {
        sigemptyset(&pipe_);
        sigaddset(&pipe_, SIGPIPE);
        ::pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
    }
    ~sigpipe_guard() {
        if (sigismember(&old_, SIGPIPE) == 1) return;  // blocked before: the caller's to handle
        sigset_t pending;
        if (::sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1) {
            timespec now{0, 0};
            ::sigtimedwait(&pipe_, nullptr, &now);
        }
        ::pthread_sigmask(SIG_SETMASK, &old_, nullptr);
    }
    sigpipe_guard(const sigpipe_guard&) = delete;
    sigpipe_guard& operator=(const sigpipe_guard&) = delete;

private:
    sigset_t pipe_;
    sigset_t old_;
};
#else
struct sigpipe_guard {};  // the fallback sends with send_some, which never raises SIGPIPE
#endif // __linux__

inline void advance(file_body& f, ssize_t n) noexcept {
    if (n <= 0) return;
    f.offset += static_cast<std::uint64_t>(n);
    f.left -= static_cast<std::uint64_t>(n);
}

// One call's worth of f to the socket, at most `cap` bytes: returns the bytes sent (advancing
// f), 0 when the file ended before `left` did (it shrank), or -1 with errno.
#if defined(__linux__)
inline constexpr std::size_t file_send_cap = std::size_t{1} << 21;  // the kernel reads the file

inline ssize_t send_file_some(int socket, file_body& f, char*, std::size_t cap) noexcept {
    std::size_t want = f.left < cap ? static_cast<std::size_t>(f.left) : cap;
    off_t at = static_cast<off_t>(f.offset);
    ssize_t n = ::sendfile(socket, f.fd.get(), &at, want);
    advance(f, n);
    return n;
}
#else
inline constexpr std::size_t file_send_cap = 0;  // through scratch: the writer's piece size

inline ssize_t send_file_some(int socket, file_body& f, char* scratch, std::size_t cap) noexcept {
    std::size_t want = f.left < cap ? static_cast<std::size_t>(f.left) : cap;
    ssize_t got = ::pread(f.fd.get(), scratch, want, static_cast<off_t>(f.offset));
    if (got <= 0) return got;
    ssize_t n = send_some(socket, scratch, static_cast<std::size_t>(got));
    advance(f, n);
    return n;
}
#endif // __linux__

} // namespace skiff::detail

#endif // SKIFF_FILES_FILE_BODY_HPP
