// Small wrappers over the POSIX socket calls skiff makes: a non-blocking listener, accept with
// the flags set atomically where the OS can, TCP_NODELAY, and a send that never raises SIGPIPE.
// Failures come back as std::error_code from errno; nothing here throws.
#ifndef SKIFF_PLATFORM_SOCKET_HPP
#define SKIFF_PLATFORM_SOCKET_HPP

#include "skiff/config.hpp"
#include "skiff/detail/unique_fd.hpp"

#include <arpa/inet.h>    // inet_pton
#include <cerrno>         // errno
#include <climits>        // INT_MAX
#include <cstddef>        // std::size_t
#include <cstdint>        // std::uint16_t, std::uint8_t
#include <fcntl.h>        // fcntl, O_NONBLOCK
#include <netinet/in.h>   // sockaddr_in, sockaddr_in6
#include <netinet/tcp.h>  // TCP_NODELAY
#include <string>         // std::string for the bind address
#include <sys/socket.h>   // socket, bind, listen, accept, send
#include <sys/types.h>    // ssize_t
#include <system_error>   // std::error_code

namespace skiff::detail {

inline std::error_code last_errno() noexcept { return {errno, std::system_category()}; }

inline bool set_nonblocking(int fd) noexcept {
    int flags = ::fcntl(fd, F_GETFL, 0);
    return flags >= 0 && ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

inline void set_cloexec(int fd) noexcept { ::fcntl(fd, F_SETFD, FD_CLOEXEC); }

inline void set_nodelay(int fd) noexcept {
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// The address to bind: IPv4 or IPv6 literal ("127.0.0.1", "::1", "0.0.0.0", "::").
struct endpoint {
    sockaddr_storage addr{};
    socklen_t len = 0;
};

inline bool make_endpoint(const std::string& host, std::uint16_t port, endpoint& out) noexcept {
    auto* v4 = reinterpret_cast<sockaddr_in*>(&out.addr);
    if (::inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(port);
        out.len = sizeof(sockaddr_in);
        return true;
    }
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&out.addr);
    if (::inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(port);
        out.len = sizeof(sockaddr_in6);
        return true;
    }
    return false;
}

// Sets the port of an IPv4 or IPv6 endpoint (a Unix one has none).
inline void set_endpoint_port(endpoint& ep, std::uint16_t port) noexcept {
    if (ep.addr.ss_family == AF_INET) reinterpret_cast<sockaddr_in*>(&ep.addr)->sin_port = htons(port);
    else if (ep.addr.ss_family == AF_INET6) reinterpret_cast<sockaddr_in6*>(&ep.addr)->sin6_port = htons(port);
}

#if defined(SO_REUSEPORT)
constexpr bool has_reuse_port = true;
inline bool enable_reuse_port(int fd) noexcept {
    int one = 1;
    return ::setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) == 0;
}
#else
constexpr bool has_reuse_port = false;
inline bool enable_reuse_port(int) noexcept { return false; }
#endif // SO_REUSEPORT

// A bound, listening, non-blocking socket. reuse_port lets several loops each own a listener
// on the same port (the sharded policy); the kernel then spreads new connections over them.
inline std::error_code open_listener(const endpoint& ep, bool reuse_port, int backlog,
                                     unique_fd& out) noexcept {
    unique_fd fd(::socket(ep.addr.ss_family, SOCK_STREAM, 0));
    if (!fd) return last_errno();
    set_cloexec(fd.get());
    int one = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (reuse_port && !enable_reuse_port(fd.get()))
        return std::make_error_code(std::errc::operation_not_supported);
    if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&ep.addr), ep.len) != 0) return last_errno();
    if (::listen(fd.get(), backlog) != 0) return last_errno();
    if (!set_nonblocking(fd.get())) return last_errno();
    out = std::move(fd);
    return {};
}

// The port a socket is bound to (to learn what port 0 chose); 0 for a Unix socket.
inline std::uint16_t local_port(int fd) noexcept {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) return 0;
    if (a.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&a)->sin_port);
    if (a.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&a)->sin6_port);
    return 0;
}

// Accepts one connection, non-blocking and close-on-exec. Returns the descriptor, or -1 with
// errno set (EAGAIN when the queue is empty).
#if defined(__linux__) || defined(__FreeBSD__) || defined(__NetBSD__) || defined(__OpenBSD__)
inline int accept_nonblocking(int listener) noexcept {
    return ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
}
#else
inline int accept_nonblocking(int listener) noexcept {
    int fd = ::accept(listener, nullptr, nullptr);
    if (fd >= 0) {
        set_nonblocking(fd);
        set_cloexec(fd);
    }
    return fd;
}
#endif // accept4

#if defined(MSG_NOSIGNAL)
constexpr int send_flags = MSG_NOSIGNAL;  // a peer that closed must not kill the process
#else
constexpr int send_flags = 0;             // macOS: SO_NOSIGPIPE is set per socket instead
#endif // MSG_NOSIGNAL

#if defined(SO_NOSIGPIPE)
inline void suppress_sigpipe(int fd) noexcept {
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one);
}
#else
inline void suppress_sigpipe(int) noexcept {}  // send_flags carries MSG_NOSIGNAL instead
#endif // SO_NOSIGPIPE

// What a listener's connections are (listener.hpp tells them apart).
enum class transport : std::uint8_t { tcp, local };

// Per-connection set-up done once at accept. TCP_NODELAY only where there is TCP: a Unix
// socket has no Nagle delay to turn off.
inline void prepare_connection(int fd, transport kind = transport::tcp) noexcept {
    if (kind == transport::tcp) set_nodelay(fd);
    suppress_sigpipe(fd);
}

// Makes the coming close() reset the connection and drop unsent data, instead of the kernel
// going on delivering it: for peers that stopped reading, whose buffered bytes would
// otherwise keep memory (and the connection) alive long after skiff gave up on them.
inline void discard_unsent_on_close(int fd) noexcept {
    linger l{};
    l.l_onoff = 1;
    l.l_linger = 0;
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
}

// Bounds what the kernel holds unsent for fd (it may double the figure for its bookkeeping).
inline void limit_send_buffer(int fd, std::size_t bytes) noexcept {
    int size = bytes > static_cast<std::size_t>(INT_MAX) ? INT_MAX : static_cast<int>(bytes);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
}

// After a failed recv or send: the socket is merely not ready (or a signal interrupted).
inline bool retry_later() noexcept { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR; }

inline ssize_t send_some(int fd, const char* data, std::size_t len) noexcept {
    return ::send(fd, data, len, send_flags);
}

} // namespace skiff::detail

#endif // SKIFF_PLATFORM_SOCKET_HPP
