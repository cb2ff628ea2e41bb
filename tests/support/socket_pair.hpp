// Connected socket pairs for tests that watch descriptors (the poller contract, the kqueue
// shim): descriptors that close themselves, AF_UNIX and loopback TCP pairs, a reset on close,
// and sends and drains that never block.
#ifndef SKIFF_TESTS_SUPPORT_SOCKET_PAIR_HPP
#define SKIFF_TESTS_SUPPORT_SOCKET_PAIR_HPP

#include <arpa/inet.h>    // htonl, htons, ntohs
#include <fcntl.h>        // fcntl, O_NONBLOCK
#include <netinet/in.h>   // sockaddr_in, INADDR_LOOPBACK
#include <sys/socket.h>   // socketpair, socket, bind, listen, connect, accept, send, recv
#include <unistd.h>       // close

#include <cstddef>    // std::size_t
#include <cstdint>    // std::uint16_t
#include <stdexcept>  // std::runtime_error when a pair cannot be made
#include <string>     // std::string for send_text
#include <utility>    // std::exchange, std::swap, std::move

namespace skiff_test {

class fd_guard {
public:
    explicit fd_guard(int fd = -1) noexcept : fd_(fd) {}
    fd_guard(fd_guard&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
    fd_guard& operator=(fd_guard&& o) noexcept {
        std::swap(fd_, o.fd_);
        return *this;
    }
    ~fd_guard() { close(); }
    int get() const noexcept { return fd_; }
    int release() noexcept { return std::exchange(fd_, -1); }
    void close() noexcept {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }

private:
    int fd_;
};

// Two connected descriptors: AF_UNIX stream sockets, or TCP over loopback.
struct pair {
    fd_guard a;
    fd_guard b;
};

inline void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

inline pair unix_pair() {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) throw std::runtime_error("socketpair");
    set_nonblocking(fds[0]);
    set_nonblocking(fds[1]);
    return {fd_guard(fds[0]), fd_guard(fds[1])};
}

inline std::uint16_t local_port(int fd) {
    sockaddr_in a{};
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    return ntohs(a.sin_port);
}

inline fd_guard tcp_listener() {
    fd_guard l(::socket(AF_INET, SOCK_STREAM, 0));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(l.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(l.get(), 16) != 0)
        throw std::runtime_error("listen");
    return l;
}

inline fd_guard tcp_connect(std::uint16_t port) {
    fd_guard c(::socket(AF_INET, SOCK_STREAM, 0));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(c.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) throw std::runtime_error("connect");
    return c;
}

// a: the client, b: the server's accepted side.
inline pair tcp_pair() {
    fd_guard l = tcp_listener();
    fd_guard c = tcp_connect(local_port(l.get()));
    fd_guard s(::accept(l.get(), nullptr, nullptr));
    set_nonblocking(c.get());
    set_nonblocking(s.get());
    return {std::move(c), std::move(s)};
}

// Sends a reset instead of a FIN when closed.
inline void close_with_reset(fd_guard& fd) {
    linger l{1, 0};
    ::setsockopt(fd.get(), SOL_SOCKET, SO_LINGER, &l, sizeof l);
    fd.close();
}

inline void send_text(int fd, const std::string& s) {
    if (::send(fd, s.data(), s.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(s.size()))
        throw std::runtime_error("send");
}

// Writes until the socket takes no more; returns the bytes written.
inline std::size_t fill(int fd) {
    static char junk[65536];
    std::size_t total = 0;
    for (;;) {
        ssize_t n = ::send(fd, junk, sizeof junk, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n <= 0) return total;
        total += static_cast<std::size_t>(n);
    }
}

// Reads what is there now.
inline std::size_t drain(int fd) {
    static char sink[65536];
    std::size_t total = 0;
    for (;;) {
        ssize_t n = ::recv(fd, sink, sizeof sink, MSG_DONTWAIT);
        if (n <= 0) return total;
        total += static_cast<std::size_t>(n);
    }
}

} // namespace skiff_test

#endif // SKIFF_TESTS_SUPPORT_SOCKET_PAIR_HPP
