// Where a server listens, beyond a numeric address (socket.hpp): host names resolved with
// getaddrinfo, Unix domain sockets (a path with its file mode, or an abstract name on Linux),
// descriptors opened by someone else (adopt), and systemd socket activation (sd_listen_fds(3)
// protocol: LISTEN_PID, LISTEN_FDS, descriptors from 3).
//
// Every call returns a std::error_code (errno, or listen_error.hpp) and throws nothing. A
// listener handed back is listening, non-blocking and close-on-exec, and its transport is
// known: TCP connections get TCP_NODELAY, Unix ones nothing of TCP (and no address is ever
// read as a sockaddr_in that is not one). Start-up code: it may allocate and block on DNS.
#ifndef SKIFF_PLATFORM_LISTENER_HPP
#define SKIFF_PLATFORM_LISTENER_HPP

#include "skiff/detail/ascii.hpp"
#include "skiff/detail/unique_fd.hpp"
#include "skiff/platform/listen_error.hpp"
#include "skiff/platform/socket.hpp"

#include <cerrno>        // errno values from bind and connect
#include <cstddef>       // offsetof, std::size_t
#include <cstdint>       // std::uint16_t, std::uint8_t
#include <cstdlib>       // getenv, unsetenv, strtol
#include <cstring>       // std::memcpy
#include <fcntl.h>       // fcntl
#include <netdb.h>       // getaddrinfo
#include <string>        // std::string host and path
#include <string_view>   // std::string_view
#include <sys/socket.h>  // getsockopt, getsockname
#include <sys/stat.h>    // chmod, lstat, S_ISSOCK
#include <sys/types.h>   // mode_t, pid_t
#include <sys/un.h>      // sockaddr_un
#include <system_error>  // std::error_code
#include <unistd.h>      // getpid, unlink
#include <vector>        // std::vector of inherited descriptors

namespace skiff::detail {

// Abstract Unix socket names (no file, no permissions) exist on Linux only.
#if defined(__linux__)
inline constexpr bool has_abstract_unix_sockets = true;
#else
inline constexpr bool has_abstract_unix_sockets = false;
#endif // __linux__

// RFC 6761 §6.3: "localhost" and names under it are the loopback address whatever the
// resolver says; a system without /etc/hosts (a minimal chroot, a container) resolves
// nothing for it otherwise.
inline bool is_localhost_name(std::string_view host) noexcept {
    constexpr std::string_view suffix = ".localhost";
    if (!host.empty() && host.back() == '.') host.remove_suffix(1);  // the root label
    if (detail::iequals_lower(host, "localhost")) return true;
    return host.size() > suffix.size() && detail::iequals_lower(host.substr(host.size() - suffix.size()), suffix);
}

// host: an IPv4 or IPv6 literal, or a name getaddrinfo resolves ("localhost" is 127.0.0.1
// without asking it). A name with both kinds of address binds its first IPv4 one, as
// 127.0.0.1 is what "localhost" means to most clients (Go's net.Listen decides the same);
// else the first address given.
inline std::error_code resolve_endpoint(const std::string& host, std::uint16_t port, endpoint& out) {
    if (make_endpoint(host, port, out)) return {};
    if (is_localhost_name(host) && make_endpoint("127.0.0.1", port, out)) return {};
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    // No AI_ADDRCONFIG: it ignores loopback when deciding which families are configured, so on
    // a machine with only lo it would find no address at all for "localhost".
    hints.ai_flags = AI_PASSIVE;
    addrinfo* found = nullptr;
    if (int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &found); rc != 0)
        return rc == EAI_SYSTEM ? last_errno() : std::error_code(rc, resolve_category());
    const addrinfo* pick = found;
    for (const addrinfo* a = found; a != nullptr; a = a->ai_next)
        if (a->ai_family == AF_INET) {
            pick = a;
            break;
        }
    std::memcpy(&out.addr, pick->ai_addr, pick->ai_addrlen);
    out.len = static_cast<socklen_t>(pick->ai_addrlen);
    ::freeaddrinfo(found);
    set_endpoint_port(out, port);
    return {};
}

// A Unix socket address: a path, or with a leading '@' an abstract name (Linux).
inline std::error_code unix_endpoint(std::string_view path, endpoint& out) noexcept {
    bool abstract = !path.empty() && path.front() == '@';
    if (abstract && !has_abstract_unix_sockets) return std::make_error_code(std::errc::operation_not_supported);
    auto* un = reinterpret_cast<sockaddr_un*>(&out.addr);
    if (path.empty() || path.size() >= sizeof un->sun_path) return std::make_error_code(std::errc::filename_too_long);
    un->sun_family = AF_UNIX;
    std::memcpy(un->sun_path, path.data(), path.size());
    if (abstract) un->sun_path[0] = '\0';  // the name is the bytes after the NUL, not NUL-ended
    out.len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size() + (abstract ? 0 : 1));
    return {};
}

// A socket file left by a server that is gone refuses connections; one whose server is alive
// accepts them. Only the first kind may be removed.
enum class socket_file_state : std::uint8_t { stale, live, not_a_socket };

inline socket_file_state probe_socket_file(const std::string& path, const endpoint& ep) noexcept {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return socket_file_state::stale;  // gone meanwhile
    if (!S_ISSOCK(st.st_mode)) return socket_file_state::not_a_socket;
    unique_fd probe(::socket(AF_UNIX, SOCK_STREAM, 0));
    // Non-blocking: a live server with a full backlog answers EAGAIN instead of stalling us.
    if (!probe || !set_nonblocking(probe.get())) return socket_file_state::live;  // cannot tell
    int rc = ::connect(probe.get(), reinterpret_cast<const sockaddr*>(&ep.addr), ep.len);
    return rc != 0 && errno == ECONNREFUSED ? socket_file_state::stale : socket_file_state::live;
}

// Binds a Unix socket, replacing a stale socket file; sets the file's mode before listen(),
// so no client connects while it is wider than asked. Abstract names have no file and no mode.
inline std::error_code open_unix_listener(const std::string& path, mode_t mode, int backlog, unique_fd& out) {
    endpoint ep;
    if (auto ec = unix_endpoint(path, ep)) return ec;
    bool abstract = path.front() == '@';
    unique_fd fd(::socket(AF_UNIX, SOCK_STREAM, 0));
    if (!fd) return last_errno();
    set_cloexec(fd.get());
    const auto* addr = reinterpret_cast<const sockaddr*>(&ep.addr);
    if (::bind(fd.get(), addr, ep.len) != 0) {
        if (errno != EADDRINUSE || abstract) return last_errno();
        socket_file_state s = probe_socket_file(path, ep);
        if (s == socket_file_state::not_a_socket) return listen_errc::path_not_a_socket;
        if (s == socket_file_state::live) return listen_errc::socket_in_use;
        ::unlink(path.c_str());
        if (::bind(fd.get(), addr, ep.len) != 0) return last_errno();
    }
    if (!abstract && ::chmod(path.c_str(), mode) != 0) return last_errno();
    if (::listen(fd.get(), backlog) != 0) return last_errno();
    if (!set_nonblocking(fd.get())) return last_errno();
    out = std::move(fd);
    return {};
}

// Checks that fd is a listening stream socket and makes it non-blocking and close-on-exec;
// its transport from its address family.
inline std::error_code check_listener(int fd, transport& kind) noexcept {
    int value = 0;
    socklen_t len = sizeof value;
    if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &value, &len) != 0) return last_errno();
    if (value != SOCK_STREAM) return listen_errc::not_a_stream;
    len = sizeof value;
    if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &value, &len) != 0) return last_errno();
    if (value == 0) return listen_errc::not_a_listener;
    sockaddr_storage a{};
    len = sizeof a;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) return last_errno();
    kind = a.ss_family == AF_UNIX ? transport::local : transport::tcp;
    if (!set_nonblocking(fd)) return last_errno();
    set_cloexec(fd);
    return {};
}

// sd_listen_fds(3): the descriptors systemd passed this process (3, 4, ...), or
// no_systemd_sockets. As sd_listen_fds(1) does, LISTEN_PID, LISTEN_FDS and LISTEN_FDNAMES are
// removed from the environment, so that child processes do not take the sockets for theirs
// (unsetenv is not thread-safe: call this before starting threads).
inline std::error_code systemd_fds(std::vector<int>& out) {
    constexpr int first_fd = 3;  // SD_LISTEN_FDS_START
    const char* pid = std::getenv("LISTEN_PID");
    const char* fds = std::getenv("LISTEN_FDS");
    long n = fds != nullptr ? std::strtol(fds, nullptr, 10) : 0;
    bool ours = pid != nullptr && std::strtol(pid, nullptr, 10) == static_cast<long>(::getpid());
    ::unsetenv("LISTEN_PID");
    ::unsetenv("LISTEN_FDS");
    ::unsetenv("LISTEN_FDNAMES");
    if (!ours || n <= 0) return listen_errc::no_systemd_sockets;
    for (long i = 0; i < n; ++i) out.push_back(first_fd + static_cast<int>(i));
    return {};
}

// Removes a Unix socket file when its server is done, if it is still the file this server
// bound (another server may have replaced it since, as a stale file is replaced above).
class socket_file {
public:
    explicit socket_file(std::string path) : path_(std::move(path)) {
        struct stat st {};
        if (::lstat(path_.c_str(), &st) == 0) {
            dev_ = st.st_dev;
            ino_ = st.st_ino;
        }
    }
    socket_file(socket_file&& o) noexcept : path_(std::move(o.path_)), dev_(o.dev_), ino_(o.ino_) { o.path_.clear(); }
    socket_file& operator=(socket_file&&) = delete;
    socket_file(const socket_file&) = delete;
    socket_file& operator=(const socket_file&) = delete;
    ~socket_file() {
        struct stat st {};
        if (!path_.empty() && ::lstat(path_.c_str(), &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_)
            ::unlink(path_.c_str());
    }

private:
    std::string path_;
    dev_t dev_ = 0;
    ino_t ino_ = 0;
};

} // namespace skiff::detail

#endif // SKIFF_PLATFORM_LISTENER_HPP
