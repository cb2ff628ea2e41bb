// What the server tells a program about the answers it sends: one response_event per response
// (the handlers' and the server's own rejections alike), the reason the server rejected a
// request, and connections opening and closing. The hooks themselves are options fields
// (options.hpp), set through basic_server::on_response, on_error and serve_metrics.
//
//   app.on_response([](const skiff::response_event& e) {
//       if (e.reason != skiff::rejection::none) std::fprintf(stderr, "%s\n", skiff::to_string(e.reason));
//   });
//
// When a hook is called (docs/api.md says it for users): on the loop thread that served the
// connection, after the response's bytes are queued and before they are written; under sharded
// and shared, from several threads at once, so a hook must be safe to call concurrently.
// Nothing here is compiled into the hot path: the session tests one std::function per request
// and builds an event only when it is set.
//
// Not here: the access log and metrics built on these (access_log.hpp, metrics.hpp).
#ifndef SKIFF_ENGINE_HOOKS_HPP
#define SKIFF_ENGINE_HOOKS_HPP

#include <arpa/inet.h>   // inet_ntop
#include <chrono>        // std::chrono::nanoseconds
#include <cstddef>       // std::size_t
#include <cstdint>       // std::uint8_t
#include <cstdio>        // std::snprintf
#include <cstring>       // std::strlen
#include <netinet/in.h>  // sockaddr_in, sockaddr_in6
#include <string_view>   // std::string_view
#include <sys/socket.h>  // getpeername
#include <sys/un.h>      // sockaddr_un

namespace skiff {

// Why the server answered a request itself; none for a handler's answer (404 and 405 included).
enum class rejection : std::uint8_t {
    none,
    bad_request_line,       // 400: the request line is malformed
    bad_header,             // 400: a field line or the framing fields are (smuggling guards included)
    uri_too_long,           // 414
    header_too_large,       // 431: the header section or the count of fields is over its limit
    body_too_large,         // 413
    expectation_failed,     // 417
    not_implemented,        // 501: a transfer coding other than chunked
    version_not_supported,  // 505
    timeout,                // 408: the head or the body did not arrive within its deadline
    connection_limit,       // 503 at accept: options::max_connections reached
    stopping,               // 503 at accept: the server is stopping
    handler_exception,      // 500: the handler threw (on_error saw it first)
};
inline constexpr std::size_t rejection_count = static_cast<std::size_t>(rejection::handler_exception) + 1;

constexpr const char* to_string(rejection r) noexcept {
    switch (r) {
    case rejection::none: return "none";
    case rejection::bad_request_line: return "bad_request_line";
    case rejection::bad_header: return "bad_header";
    case rejection::uri_too_long: return "uri_too_long";
    case rejection::header_too_large: return "header_too_large";
    case rejection::body_too_large: return "body_too_large";
    case rejection::expectation_failed: return "expectation_failed";
    case rejection::not_implemented: return "not_implemented";
    case rejection::version_not_supported: return "version_not_supported";
    case rejection::timeout: return "timeout";
    case rejection::connection_limit: return "connection_limit";
    case rejection::stopping: return "stopping";
    case rejection::handler_exception: return "handler_exception";
    }
    return "none";
}

// One response, as the server queued it. The views are valid during the hook call only.
struct response_event {
    rejection reason = rejection::none;
    int status = 0;
    std::size_t bytes_sent = 0;      // head and body as queued; a stream's head only (its body follows later)
    std::size_t bytes_received = 0;  // the request's bytes (head and body); for a rejection, those read so far
    // From the parsed request to the response queued (the handler chain's time); 0 for a
    // rejection and a deferred answer, whose start is not kept.
    std::chrono::nanoseconds duration{0};
    std::string_view method;   // empty when the request line was not parsed
    std::string_view target;   // as sent; empty likewise
    std::string_view version;  // "HTTP/1.1" or "HTTP/1.0"; empty likewise
    std::string_view peer;     // "127.0.0.1:54321", "[::1]:54321", or the Unix socket's path
    std::size_t loop = 0;      // which loop served it: 0 under single, the worker under sharded and shared
};

// Connections opening and closing, for a gauge of those open (metrics.hpp).
enum class connection_change : std::uint8_t { opened, closed };

namespace detail {

// The peer of a connected socket as text, formatted only when a hook asks. A Unix client has
// no name of its own, so the socket's (the listener's path) stands for it.
class peer_text {
public:
    explicit peer_text(int fd) noexcept {
        sockaddr_storage a{};
        socklen_t n = sizeof a;
        if (::getpeername(fd, reinterpret_cast<sockaddr*>(&a), &n) != 0) return;
        if (a.ss_family == AF_INET) ipv4(reinterpret_cast<const sockaddr_in&>(a));
        else if (a.ss_family == AF_INET6) ipv6(reinterpret_cast<const sockaddr_in6&>(a));
        else if (a.ss_family == AF_UNIX) local(fd);
    }
    std::string_view view() const noexcept { return {text_, size_}; }

private:
    // By hand: inet_ntop and snprintf cost about 1,400 instructions an address (callgrind).
    void ipv4(const sockaddr_in& a) noexcept {
        const auto* b = reinterpret_cast<const unsigned char*>(&a.sin_addr);
        for (int i = 0; i < 4; ++i) {
            if (i != 0) text_[size_++] = '.';
            decimal(b[i]);
        }
        text_[size_++] = ':';
        decimal(ntohs(a.sin_port));
    }
    void decimal(unsigned v) noexcept {
        char digits[5];
        std::size_t n = 0;
        do digits[n++] = static_cast<char>('0' + v % 10);
        while ((v /= 10) != 0);
        while (n != 0) text_[size_++] = digits[--n];
    }
    void ipv6(const sockaddr_in6& a) noexcept {
        char host[INET6_ADDRSTRLEN];
        if (::inet_ntop(AF_INET6, &a.sin6_addr, host, sizeof host) == nullptr) return;
        finish(std::snprintf(text_, sizeof text_, "[%s]:%u", host, unsigned{ntohs(a.sin6_port)}));
    }
    void local(int fd) noexcept {
        sockaddr_un a{};
        socklen_t n = sizeof a;
        if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n) != 0 || n <= sizeof a.sun_family) return;
        std::size_t len = n - sizeof a.sun_family;
        if (a.sun_path[0] == '\0') a.sun_path[0] = '@';  // abstract: named as listen_unix() takes it
        else len = ::strnlen(a.sun_path, len);
        finish(std::snprintf(text_, sizeof text_, "%.*s", static_cast<int>(len), a.sun_path));
    }
    void finish(int n) noexcept {
        if (n > 0) size_ = static_cast<std::size_t>(n) < sizeof text_ ? static_cast<std::size_t>(n) : sizeof text_ - 1;
    }

    char text_[128];  // text_[0, size_) is set; not zeroed, since a hook pays for each byte
    std::size_t size_ = 0;
};

} // namespace detail
} // namespace skiff

#endif // SKIFF_ENGINE_HOOKS_HPP
