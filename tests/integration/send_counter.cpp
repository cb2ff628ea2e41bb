// send(), sendmsg(), write() and writev() interposers for support/send_counter.hpp.
#include "support/send_counter.hpp"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>

namespace {

std::atomic<std::uint16_t> watched_port{0};
std::atomic<long> writes{0};

void note(int fd) {
    std::uint16_t port = watched_port.load();
    if (port == 0) return;
    sockaddr_storage peer{};
    socklen_t len = sizeof peer;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0) return;
    if (peer.ss_family != AF_INET) return;
    if (ntohs(reinterpret_cast<sockaddr_in*>(&peer)->sin_port) == port) ++writes;
}

template <class Fn>
Fn next(const char* name) {
    return reinterpret_cast<Fn>(::dlsym(RTLD_NEXT, name));
}

// Looked up before main(), not on first use: a signal handler may be the first to write
// (skiff's stop() wakes the loop with write()), and dlsym is not async-signal-safe. A call
// made before these are set (another file's static initialiser) looks the function up then.
ssize_t (*real_send)(int, const void*, size_t, int) = next<ssize_t (*)(int, const void*, size_t, int)>("send");
ssize_t (*real_sendmsg)(int, const struct msghdr*, int) = next<ssize_t (*)(int, const struct msghdr*, int)>("sendmsg");
ssize_t (*real_write)(int, const void*, size_t) = next<ssize_t (*)(int, const void*, size_t)>("write");
ssize_t (*real_writev)(int, const struct iovec*, int) = next<ssize_t (*)(int, const struct iovec*, int)>("writev");

} // namespace

namespace skiff_test {
void watch_writes_to(std::uint16_t client_port) {
    writes = 0;
    watched_port = client_port;
}
long counted_writes() { return writes.load(); }
} // namespace skiff_test

extern "C" {

ssize_t send(int fd, const void* buf, size_t len, int flags) {
    note(fd);
    if (real_send == nullptr) real_send = next<ssize_t (*)(int, const void*, size_t, int)>("send");
    return real_send(fd, buf, len, flags);
}

ssize_t sendmsg(int fd, const struct msghdr* msg, int flags) {
    note(fd);
    if (real_sendmsg == nullptr) real_sendmsg = next<ssize_t (*)(int, const struct msghdr*, int)>("sendmsg");
    return real_sendmsg(fd, msg, flags);
}

ssize_t write(int fd, const void* buf, size_t len) {
    note(fd);
    if (real_write == nullptr) real_write = next<ssize_t (*)(int, const void*, size_t)>("write");
    return real_write(fd, buf, len);
}

ssize_t writev(int fd, const struct iovec* iov, int count) {
    note(fd);
    if (real_writev == nullptr) real_writev = next<ssize_t (*)(int, const struct iovec*, int)>("writev");
    return real_writev(fd, iov, count);
}

} // extern "C"
