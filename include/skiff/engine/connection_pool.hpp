// Connection slots in fixed blocks of 64 that never move, so the pointer a poller holds for a
// descriptor stays valid for the connection's life. A freed slot goes on a free list and is
// reused before a new block is made; blocks are given back only when the pool goes.
//
// Not thread-safe: the shared policy's set takes its lock around acquire and release.
#ifndef SKIFF_ENGINE_CONNECTION_POOL_HPP
#define SKIFF_ENGINE_CONNECTION_POOL_HPP

#include <cstddef>  // std::size_t
#include <memory>   // std::unique_ptr for blocks
#include <vector>   // std::vector of blocks

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
};

} // namespace skiff::detail

#endif // SKIFF_ENGINE_CONNECTION_POOL_HPP
