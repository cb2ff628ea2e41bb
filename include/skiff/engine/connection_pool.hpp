// Connection slots in fixed blocks of 64 that never move, so the pointer a poller holds for a
// descriptor stays valid for the connection's life. A freed slot goes on a free list and is
// reused before a new block is made; blocks are given back only when the pool goes.
//
// Not thread-safe: the shared policy's set takes its lock around acquire, release and the
// walks.
#ifndef SKIFF_ENGINE_CONNECTION_POOL_HPP
#define SKIFF_ENGINE_CONNECTION_POOL_HPP

#include <cstddef>   // std::size_t
#include <cstdint>   // std::int64_t deadlines
#include <memory>    // std::unique_ptr for blocks
#include <optional>  // earliest_of_next: a connection that does not count
#include <vector>    // std::vector of blocks

namespace skiff::detail {

// Conn: a connection type with reset(), `fd` (-1 when free) and `next_free`.
template <class Conn>
class connection_pool {
public:
    Conn& acquire() {
        if (free_ == nullptr) grow();
        Conn* c = free_;
        free_ = static_cast<Conn*>(c->next_free);
        c->next_free = nullptr;
        return *c;
    }

    void release(Conn& c) noexcept {
        c.reset();
        c.next_free = free_;
        free_ = &c;
    }

    // Calls fn(c) for every connection in use.
    template <class Fn>
    void for_each_open(Fn fn) {
        for (auto& b : blocks_)
            for (std::size_t i = 0; i < block_size; ++i)
                if (b[i].fd >= 0) fn(b[i]);
    }

    // Calls fn(c) for the connections in use among the next `slots` slots, going on round the
    // pool from where the last call stopped: repeated calls see every connection in turn, each
    // at a bounded cost (the sets' search for an idle connection to close, at the limit).
    template <class Fn>
    void for_next_open(std::size_t slots, Fn fn) {
        std::size_t total = blocks_.size() * block_size;
        for (std::size_t i = 0; i < slots && i < total; ++i) {
            cursor_ = cursor_ + 1 < total ? cursor_ + 1 : 0;
            Conn& c = blocks_[cursor_ / block_size][cursor_ % block_size];
            if (c.fd >= 0) fn(c);
        }
    }

    // Among the next `slots` slots (for_next_open), the connection in use whose due(c) is
    // earliest; due(c) is empty for one that does not count. Null when none counts.
    template <class Due>
    Conn* earliest_of_next(std::size_t slots, Due due) {
        Conn* earliest = nullptr;
        std::int64_t earliest_due = 0;
        for_next_open(slots, [&](Conn& c) {
            std::optional<std::int64_t> d = due(c);
            if (d && (earliest == nullptr || *d < earliest_due)) {
                earliest = &c;
                earliest_due = *d;
            }
        });
        return earliest;
    }

private:
    static constexpr std::size_t block_size = 64;

    void grow() {
        blocks_.emplace_back(new Conn[block_size]);
        Conn* b = blocks_.back().get();
        for (std::size_t i = block_size; i-- > 0;) {
            b[i].next_free = free_;
            free_ = &b[i];
        }
    }

    std::vector<std::unique_ptr<Conn[]>> blocks_;
    Conn* free_ = nullptr;
    std::size_t cursor_ = 0;  // for_next_open: the slot it visited last
};

} // namespace skiff::detail

#endif // SKIFF_ENGINE_CONNECTION_POOL_HPP
