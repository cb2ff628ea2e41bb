// The listening sockets one connection set watches: TCP ports, Unix sockets, adopted and
// systemd descriptors alike, up to max_listeners. They live in fixed room, so the address of
// each slot (what the poller hands back with its readiness) stays valid as more are added, and
// telling a listener's event from a connection's is one range comparison on that address.
//
// Not here: opening the sockets (platform/listener.hpp) or accepting on them (acceptor.hpp).
// Invariant: slots [0, size()) hold open descriptors; only the owning set's threads touch it,
// and only before serving or while stopping.
#ifndef SKIFF_ENGINE_LISTENER_LIST_HPP
#define SKIFF_ENGINE_LISTENER_LIST_HPP

#include "skiff/detail/unique_fd.hpp"
#include "skiff/platform/socket.hpp"

#include <array>    // std::array of slots
#include <cstddef>  // std::size_t
#include <cstdint>  // std::uintptr_t, std::uint16_t
#include <utility>  // std::move

namespace skiff {

// Listeners one server may have: far more than a service binds (an address per family, a Unix
// socket, a few inherited from systemd); fixed so that slots never move.
inline constexpr std::size_t max_listeners = 16;

namespace detail {

struct listener_slot {
    unique_fd fd;
    transport kind = transport::tcp;
};

class listener_list {
public:
    // Whether data (an address the poller handed back) is one of these slots. Connections
    // live elsewhere, so their addresses fall outside: one subtraction and one comparison,
    // since unsigned wrap-around puts an address below the array above its size.
    bool contains(const void* data) const noexcept {
        auto offset = reinterpret_cast<std::uintptr_t>(data) - reinterpret_cast<std::uintptr_t>(slots_.data());
        return offset < sizeof slots_;
    }
    listener_slot& at(void* data) noexcept { return *static_cast<listener_slot*>(data); }

    // Takes fd over; the slot to register with the poller, or nullptr when all are taken
    // (fd is then closed).
    listener_slot* add(unique_fd fd, transport kind) noexcept {
        if (count_ == max_listeners) return nullptr;
        listener_slot& s = slots_[count_++];
        s.fd = std::move(fd);
        s.kind = kind;
        if (kind == transport::tcp && port_ == 0) port_ = local_port(s.fd.get());
        return &s;
    }

    // The port of the first TCP listener (what port 0 chose); 0 when none is TCP.
    std::uint16_t port() const noexcept { return port_; }
    std::size_t size() const noexcept { return count_; }
    bool empty() const noexcept { return count_ == 0; }

    template <class Fn>
    void for_each(Fn fn) {
        for (std::size_t i = 0; i < count_; ++i) fn(slots_[i]);
    }

    void close_all() noexcept {
        for (std::size_t i = 0; i < count_; ++i) slots_[i].fd.reset();
        count_ = 0;
    }

private:
    std::array<listener_slot, max_listeners> slots_;
    std::size_t count_ = 0;
    std::uint16_t port_ = 0;
};

} // namespace detail
} // namespace skiff

#endif // SKIFF_ENGINE_LISTENER_LIST_HPP
