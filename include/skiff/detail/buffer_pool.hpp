// Request buffers of one standard size (a request head's worst case) kept for reuse, so the
// hot path does not return them to malloc between requests. Only connections with a request
// in flight hold one, so a few suffice: past max_free, released buffers go back to malloc.
//
// Not thread-safe: each loop has its own.
#ifndef SKIFF_DETAIL_BUFFER_POOL_HPP
#define SKIFF_DETAIL_BUFFER_POOL_HPP

#include "skiff/detail/byte_buffer.hpp"

#include <cstddef>  // std::size_t
#include <utility>  // std::move
#include <vector>   // std::vector of free buffers

namespace skiff::detail {

class buffer_pool {
public:
    // Rounded up to a power of two: the capacity byte_buffer's growth gives, so buffers that
    // grew no further are recognised on release.
    void set_size(std::size_t size) noexcept {
        size_ = 256;
        while (size_ < size) size_ *= 2;
    }
    std::size_t buffer_size() const noexcept { return size_; }

    void acquire(byte_buffer& b) {
        if (!free_.empty()) {
            b = std::move(free_.back());
            free_.pop_back();
            return;
        }
        b.reserve_more(size_);
    }

    void release(byte_buffer& b) {
        b.clear();
        if (b.capacity() == size_ && free_.size() < max_free) free_.push_back(std::move(b));
        else b.release();
    }

private:
    static constexpr std::size_t max_free = 16;
    std::vector<byte_buffer> free_;
    std::size_t size_ = 16 * 1024;
};

} // namespace skiff::detail

#endif // SKIFF_DETAIL_BUFFER_POOL_HPP
