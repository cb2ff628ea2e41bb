// The connections of one loop, for the single and sharded policies: a level-triggered poller,
// the connection pool and a timing wheel, touched by one thread only, so nothing is locked.
// shared_set.hpp has the same members for connections that several threads serve.
#ifndef SKIFF_SERVER_LOCAL_SET_HPP
#define SKIFF_SERVER_LOCAL_SET_HPP

#include "skiff/poller/poller.hpp"
#include "skiff/server/connection.hpp"
#include "skiff/server/timer_wheel.hpp"

#include <cstddef>       // std::size_t
#include <cstdint>       // std::int64_t, std::uint8_t
#include <system_error>  // std::error_code
#include <unistd.h>      // close

namespace skiff::detail {

class local_set {
public:
    using conn = connection;

    std::error_code open(std::int64_t now_ms, std::int64_t tick_ms) {
        timers_.init(now_ms, tick_ms, 512);
        return poller_.open();
    }

    default_poller& poller() noexcept { return poller_; }

    // Registers a new connection for reading, with its first deadline; false if the poller
    // refused it (the descriptor is then closed).
    bool add(int fd, deadline_kind kind, std::int64_t deadline) {
        conn& c = pool_.acquire();
        c.fd = fd;
        c.deadline = kind;
        timers_.arm(c, deadline);
        ++size_;
        if (poller_.add(fd, &c, watch_read)) {
            remove(c);
            return false;
        }
        c.watching = watch_read;
        return true;
    }

    void remove(conn& c) noexcept {
        poller_.remove(c.fd);
        ::close(c.fd);
        timers_.disarm(c);
        pool_.release(c);
        --size_;
    }

    // Interest changes only when it differs from what the poller has.
    void watch(conn& c, std::uint8_t w) noexcept {
        if (c.watching == w) return;
        c.watching = w;
        poller_.modify(c.fd, &c, w);
    }

    // Level-triggered and one thread: nothing to re-arm after an event, nobody to hand to.
    void event_done(conn&) noexcept {}
    static void take_ownership(conn&) noexcept {}

    void arm(conn& c, std::int64_t deadline) noexcept { timers_.arm(c, deadline); }

    template <class OnExpired>
    void expire(std::int64_t now_ms, OnExpired on_expired) {
        timers_.expire(now_ms, [&](timer_node& t) { on_expired(static_cast<conn&>(t)); });
    }

    bool has_deadlines() const noexcept { return !timers_.empty(); }
    std::int64_t tick_ms() const noexcept { return timers_.tick_ms(); }
    std::size_t size() const noexcept { return size_; }

    template <class Fn>
    void for_each(Fn fn) {
        pool_.for_each_open(fn);
    }

private:
    default_poller poller_;
    connection_pool pool_;
    timer_wheel timers_;
    std::size_t size_ = 0;
};

} // namespace skiff::detail

#endif // SKIFF_SERVER_LOCAL_SET_HPP
