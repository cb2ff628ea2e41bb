// The descriptors a loop hub watches beside its notifier (async/hub.hpp): foreign ones, whose
// callback runs on each readiness (async_hub::add_watch), and, under shared, the sockets of
// the connections the hub holds for the workers (a deferred answer's, a WebSocket's), whose
// holder's function runs on their readiness.
//
// Invariants. Every list is under the watch lock, which is taken alone (never while waiting
// for another lock of the hub). A descriptor no longer watched stays claimable for a second
// (retired), so that an event the wait already reported for it, on this thread or under shared
// another, is not taken for a connection's; a held socket keeps its owner alive as long. The
// count of watched and retired entries is read without the lock, so that a program that
// watches nothing pays no lock per event.
//
// Not here: when these run (the hub's process lock, taken by the hub around serve()), or
// what a holder does on readiness.
#ifndef SKIFF_ASYNC_HUB_WATCHES_HPP
#define SKIFF_ASYNC_HUB_WATCHES_HPP

#include "skiff/detail/guarded_call.hpp"
#include "skiff/detail/unique_function.hpp"
#include "skiff/engine/loop_hub.hpp"
#include "skiff/engine/loop_time.hpp"
#include "skiff/poller/poll_event.hpp"

#include <algorithm>      // std::remove_if, std::find_if
#include <atomic>         // the counts: read without a lock
#include <cstddef>        // std::size_t
#include <cstdint>        // std::int64_t, std::uint64_t, std::uint8_t
#include <memory>         // std::shared_ptr: a held socket's owner; std::unique_ptr watchers
#include <mutex>          // the watch lock
#include <unordered_map>  // held sockets
#include <utility>        // std::move, std::pair
#include <vector>         // watchers, retired ones

namespace skiff::detail {

// What runs when a socket the hub holds is ready (async_hub::hold_socket): owner is the
// address the socket was aimed at.
using socket_ready_fn = void (*)(loop_context& ctx, void* owner);

// A connection's socket the hub watches in the workers' stead: what keeps its owner alive,
// what runs on its readiness, and whether it is still watched or retired (claimed a second
// longer, see retire_held).
enum class held_watch : std::uint8_t { watched, retired };
struct held_socket {
    std::shared_ptr<void> owner;
    socket_ready_fn ready = nullptr;
    held_watch watch = held_watch::watched;
};

class hub_watches {
public:
    struct watcher {
        std::uint64_t id;
        int fd;
        unique_function<void()> fn;
        std::int64_t retired_at;
    };
    using watcher_list = std::vector<std::unique_ptr<watcher>>;

    hub_watches(default_poller& poller, poll_mode mode) noexcept : poller_(poller), mode_(mode) {}

    // Watches fd for readability (on the loop): fn runs on each readiness until retired.
    void add(std::uint64_t id, int fd, unique_function<void()> fn) {
        auto w = std::make_unique<watcher>(watcher{id, fd, std::move(fn), 0});
        if (poller_.add(fd, w.get(), watch_read, mode_)) return;
        std::lock_guard<std::mutex> g(lock_);
        watchers_.push_back(std::move(w));
        total_.fetch_add(1, std::memory_order_relaxed);
    }

    // The watcher `id` no longer runs; its descriptor stays claimed for a second.
    void retire(std::uint64_t id) {
        std::lock_guard<std::mutex> g(lock_);
        for (auto it = watchers_.begin(); it != watchers_.end(); ++it) {
            if ((*it)->id != id) continue;
            poller_.remove((*it)->fd);
            (*it)->retired_at = monotonic_ms();
            retired_.push_back(std::move(*it));
            watchers_.erase(it);
            retired_count_.fetch_add(1, std::memory_order_relaxed);
            return;
        }
    }

    // A connection's socket, re-aimed at owner (one-shot: once per call); `keep()` (what
    // keeps owner alive) is asked for only on the first call for an owner, since every re-arm
    // calls again.
    template <class Keep>
    void hold(void* owner, Keep keep, socket_ready_fn ready, int fd, std::uint8_t what) {
        {
            std::lock_guard<std::mutex> g(lock_);
            auto [it, added] = held_.try_emplace(owner);  // one lookup
            if (added) {
                it->second.owner = keep();
                it->second.ready = ready;
                total_.fetch_add(1, std::memory_order_relaxed);
            }
        }
        poller_.modify(fd, owner, what, mode_);  // the connection's own registration, re-aimed
    }

    // A held connection's socket watch ends when the connection stops waiting on the hub; it
    // stays claimable for a second, as a watcher does, and keeps its owner alive meanwhile.
    void retire_held(const void* owner) {
        if (total_.load(std::memory_order_relaxed) == 0) return;
        std::lock_guard<std::mutex> g(lock_);
        auto it = held_.find(owner);
        if (it == held_.end() || it->second.watch == held_watch::retired) return;
        it->second.watch = held_watch::retired;
        retired_held_.push_back({owner, monotonic_ms()});
        retired_count_.fetch_add(1, std::memory_order_relaxed);
    }

    bool claims(const void* data) const noexcept {
        if (total_.load(std::memory_order_relaxed) == 0) return false;  // most programs: no lock per event
        std::lock_guard<std::mutex> g(lock_);
        return find(watchers_, data) != nullptr || find(retired_, data) != nullptr || held_.count(data) != 0;
    }

    // An event for data: a watcher's callback, or a held socket's function, which a retired
    // entry no longer runs. The hub holds its process lock around this.
    void serve(const void* data, loop_context& ctx) {
        watcher* w = nullptr;
        held_socket held;  // its owner kept alive while it is served
        {
            std::lock_guard<std::mutex> g(lock_);
            w = find(watchers_, data);
            if (w == nullptr) held = find_held(data);
        }
        if (held.owner && held.watch == held_watch::watched) return held.ready(ctx, held.owner.get());
        if (w == nullptr) return;  // unwatched since the wait reported it
        call_guarded([&] { w->fn(); }, [] {});
        if (mode_ == poll_mode::oneshot) poller_.modify(w->fd, w, watch_read, mode_);
    }

    bool any_retired() const noexcept { return retired_count_.load(std::memory_order_relaxed) != 0; }

    // Retirement is timed on the monotonic clock, whatever clock the loop's timers follow.
    void free_retired() {
        if (!any_retired()) return;
        std::int64_t now_ms = monotonic_ms();
        std::lock_guard<std::mutex> g(lock_);
        auto old = [&](const std::unique_ptr<watcher>& w) { return now_ms - w->retired_at >= 1000; };
        retired_.erase(std::remove_if(retired_.begin(), retired_.end(), old), retired_.end());
        auto young = std::find_if(retired_held_.begin(), retired_held_.end(),
                                  [&](const auto& r) { return now_ms - r.second < 1000; });  // oldest first
        for (auto r = retired_held_.begin(); r != young; ++r) held_.erase(r->first);
        retired_held_.erase(retired_held_.begin(), young);
        std::size_t left = retired_.size() + retired_held_.size();
        std::size_t freed = retired_count_.load(std::memory_order_relaxed) - left;
        retired_count_.store(left, std::memory_order_relaxed);
        total_.fetch_sub(freed, std::memory_order_relaxed);
    }

    using held_map = std::unordered_map<const void*, held_socket>;

    // The hub is detached (its loop polls no more): its watchers and held sockets are handed
    // out, to be destroyed after its locks. A held socket's owner may keep the hub alive (a
    // WebSocket's state, through its route), so the hub must not keep it.
    void take_watchers(watcher_list& watched, watcher_list& retired, held_map& held) {
        std::lock_guard<std::mutex> g(lock_);
        watched.swap(watchers_);
        retired.swap(retired_);
        held.swap(held_);
        retired_held_.clear();
    }

private:
    static watcher* find(const watcher_list& ws, const void* data) noexcept {
        auto it = std::find_if(ws.begin(), ws.end(), [data](const auto& w) { return w.get() == data; });
        return it == ws.end() ? nullptr : it->get();
    }
    held_socket find_held(const void* data) const {
        auto it = held_.find(data);
        return it == held_.end() ? held_socket{} : it->second;
    }

    default_poller& poller_;
    poll_mode mode_;
    mutable std::mutex lock_;
    watcher_list watchers_;
    watcher_list retired_;
    // shared: the connections whose socket the hub watches (a deferred answer's, a WebSocket's),
    // by the address the poller reports, so that claims() is one lookup however many wait (a
    // scan of a vector cost every event on any connection a pass over all of them).
    held_map held_;
    std::vector<std::pair<const void*, std::int64_t>> retired_held_;  // retired held_ entries and when, oldest first
    std::atomic<std::size_t> retired_count_{0};  // retired watchers and held sockets
    std::atomic<std::size_t> total_{0};  // watchers, held sockets and retired ones: claims() looks only if some
};

} // namespace skiff::detail

#endif // SKIFF_ASYNC_HUB_WATCHES_HPP
