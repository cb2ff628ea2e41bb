// One connection's state between reads: the bytes of an incomplete request, output a short
// write left behind, parser state and its deadline. An idle keep-alive connection owns no
// buffer, so it costs sizeof(connection) (checked by a test) plus the kernel's socket.
#ifndef SKIFF_SERVER_CONNECTION_HPP
#define SKIFF_SERVER_CONNECTION_HPP

#include "skiff/detail/byte_buffer.hpp"
#include "skiff/http/message_parser.hpp"
#include "skiff/http/response.hpp"
#include "skiff/server/timer_wheel.hpp"

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint8_t
#include <memory>   // std::unique_ptr for pool blocks
#include <vector>   // std::vector of blocks and free buffers

namespace skiff::detail {

// Which deadline the connection's timer stands for.
enum class deadline_kind : std::uint8_t { idle, header, body, write, linger };

// stream_state::left for a stream without a Content-Length (response_access::stream_length()
// gave nullopt).
inline constexpr std::uint64_t unknown_length = ~std::uint64_t{0};

// A response body being streamed (response::stream): allocated per streamed response only.
struct stream_state {
    body_source source;
    std::uint64_t left;  // bytes still owed under Content-Length, or unknown_length
    bool chunked;
};

// The connection derives from its timer node, so an expired node is the connection itself.
struct connection : timer_node {
    byte_buffer in;              // an incomplete request; empty between requests
    byte_buffer out;             // unsent output; empty unless a write fell short
    std::size_t out_sent = 0;    // bytes of `out` already written
    std::unique_ptr<stream_state> stream;  // set while a streamed body is being sent
    request_parser parser;
    connection* next_free = nullptr;
    int fd = -1;
    std::uint8_t watching = 0;   // interest bits last given to the poller
    deadline_kind deadline = deadline_kind::idle;
    bool head_seen = false;      // this request's head was acted on (Expect, deadline)
    bool close_after = false;    // close once the output is written
    bool linger = false;         // ... and drain unread input first
    bool lingering = false;      // write side shut; discarding input until EOF or deadline
    bool read_eof = false;       // the peer shut its side; finish writing, then close
    bool resume = false;         // requests wait in `in` behind a stream that has ended
};

// Connections live in fixed blocks that never move, so a poller's data pointer stays valid.
template <class Conn>
class basic_pool {
public:
    Conn& acquire() {
        if (free_ == nullptr) grow();
        Conn* c = free_;
        free_ = static_cast<Conn*>(c->next_free);
        c->next_free = nullptr;
        return *c;
    }

    void release(Conn& c) noexcept {
        c.in.release();
        c.out.release();
        c.out_sent = 0;
        c.stream.reset();
        c.parser.reset();
        c.fd = -1;
        c.watching = 0;
        c.deadline = deadline_kind::idle;
        c.head_seen = c.close_after = c.linger = c.lingering = c.read_eof = c.resume = false;
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

using connection_pool = basic_pool<connection>;

// Request buffers of the standard size (one request head) kept for reuse, so the hot path
// does not return them to malloc between requests; a few suffice, since only connections
// with a request in flight hold one.
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

#endif // SKIFF_SERVER_CONNECTION_HPP
