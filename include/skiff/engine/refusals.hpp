// Connections the acceptor refuses (over the connection limit, or stopping): a fixed 503, then
// a close that does not reset the connection under the client's feet.
//
// A client that is refused has usually sent its request already, and may still be sending a
// body. Closing a socket with bytes unread makes the kernel send a reset, not a FIN, and a
// client still writing then sees EPIPE or ECONNRESET instead of the 503 (measured by an outside
// audit: Node lost it on 20 of 21 refused 1 MiB uploads, curl on 4 of 6). So, as RFC 9112 §9.6
// asks and Go's closeWriteAndWait does, the 503 goes out, the write side is shut (the client
// reads the 503 and then the end), and what the client sends is read and dropped until it
// closes or refusal_linger_ms passes.
//
// Bounded, since the acceptor refuses exactly when the server is short of places: at most
// lingering_refusals_max wait on one loop, each drained a bounded amount once a tick (no
// registration with the poller), and a refusal past the bound is closed at once, as before.
//
// Not here: whom to refuse (acceptor.hpp).
#ifndef SKIFF_ENGINE_REFUSALS_HPP
#define SKIFF_ENGINE_REFUSALS_HPP

#include "skiff/platform/socket.hpp"

#include <cstddef>       // std::size_t
#include <cstdint>       // std::int64_t
#include <sys/socket.h>  // shutdown, recv
#include <unistd.h>      // close
#include <vector>        // the refusals waiting

namespace skiff::detail {

inline constexpr char refusal_text[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
inline constexpr std::int64_t refusal_linger_ms = 500;  // as Go's rstAvoidanceDelay
inline constexpr std::size_t lingering_refusals_max = 32;
inline constexpr std::size_t refusal_drain_per_tick = 64 * 1024;

// The 503 and a close at once: where no loop is left to let it linger (the server has stopped).
inline void refuse_connection(int fd) noexcept {
    [[maybe_unused]] auto n = send_some(fd, refusal_text, sizeof refusal_text - 1);
    ::close(fd);
}

class refused_connections {
public:
    refused_connections() = default;
    refused_connections(const refused_connections&) = delete;
    refused_connections& operator=(const refused_connections&) = delete;
    ~refused_connections() { close_all(); }

    // The 503, written without waiting; then the connection lingers (file comment), or closes
    // at once when lingering_refusals_max already do.
    void refuse(int fd, std::int64_t now_ms) {
        [[maybe_unused]] auto n = send_some(fd, refusal_text, sizeof refusal_text - 1);
        if (waiting_.size() < lingering_refusals_max && drain(fd)) {
            ::shutdown(fd, SHUT_WR);
            waiting_.push_back({fd, now_ms + refusal_linger_ms});
        } else {
            ::close(fd);  // the bound is reached, or the client has closed already
        }
    }

    // Once a tick: reads what each has sent; closes those that closed, failed or are due.
    void on_tick(std::int64_t now_ms) {
        std::size_t kept = 0;
        for (const lingering& l : waiting_) {
            if (now_ms < l.until_ms && drain(l.fd)) waiting_[kept++] = l;
            else ::close(l.fd);
        }
        waiting_.resize(kept);
    }

    bool empty() const noexcept { return waiting_.empty(); }

    void close_all() noexcept {
        for (const lingering& l : waiting_) ::close(l.fd);
        waiting_.clear();
    }

private:
    struct lingering {
        int fd;
        std::int64_t until_ms;
    };

    // Reads and drops what has arrived, up to refusal_drain_per_tick; false once the client
    // has closed or the connection failed (nothing more to wait for).
    static bool drain(int fd) noexcept {
        char sink[4096];
        for (std::size_t taken = 0; taken < refusal_drain_per_tick;) {
            ssize_t n = ::recv(fd, sink, sizeof sink, 0);
            if (n <= 0) return n < 0 && retry_later();  // not ready (or interrupted): next tick
            taken += static_cast<std::size_t>(n);
        }
        return true;
    }

    std::vector<lingering> waiting_;
};

} // namespace skiff::detail

#endif // SKIFF_ENGINE_REFUSALS_HPP
