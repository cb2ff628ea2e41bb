// A connection's input buffer: taken from the loop's pool when a read leaves an incomplete
// request, grown within the memory budget (the set keeps it: connection_set.hpp) while a head
// or a declared body arrives, and given back when the connection has nothing left to parse.
//
// It does not read or parse: the session does, and asks here for room. Invariant: what an
// input buffer counts against the budget is exactly charge_of(its capacity), taken when it
// grows and given back when it is released, so a waiting connection holds none of it.
#ifndef SKIFF_ENGINE_INPUT_BUFFERS_HPP
#define SKIFF_ENGINE_INPUT_BUFFERS_HPP

#include "skiff/detail/buffer_pool.hpp"
#include "skiff/engine/connection.hpp"

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint64_t

namespace skiff::detail {

template <class Set>
class input_buffers {
    using conn = typename Set::conn;

public:
    explicit input_buffers(Set& set) noexcept : set_(set) {}

    // `head_capacity`: the longest head (request line and fields); `read_size`: one read.
    void open(std::size_t head_capacity, std::size_t read_size) {
        head_capacity_ = head_capacity;
        read_size_ = read_size;
        pool_.set_size(head_capacity);
    }
    std::size_t head_capacity() const noexcept { return head_capacity_; }

    // Room to read behind a connection's leftover bytes: the rest of the head, else the rest
    // of the declared body, or one read's worth of a chunked one. A declared body is reserved
    // whole at its first growth, so a body once granted never waits again and bodies cannot
    // each hold part of the budget and all wait for more; the budget, not the client, bounds
    // what declared bodies reserve. 0: refused, wait.
    std::size_t make_room(conn& c) {
        std::size_t want = read_size_;
        std::uint64_t declared = c.parser.declared_size();
        if (!c.parser.head_complete()) want = head_capacity_ > c.in.size() ? head_capacity_ - c.in.size() : 1;
        else if (declared > c.in.size())
            want = static_cast<std::size_t>(declared - c.in.size());
        if (c.in.room() < want && !grow_within_budget(c, want)) return 0;
        return c.in.room();
    }

    // The tail of a fresh read (at most a read's worth: outside the budget) moves in.
    void keep(conn& c, const char* data, std::size_t n) {
        pool_.acquire(c.in);
        c.in.append(data, n);
    }

    void release(conn& c) {
        std::size_t charge = charge_of(c.in.capacity());
        pool_.release(c.in);
        if (charge != 0) set_.give_back(charge);  // waiting connections read again
    }

private:
    // What an input buffer of this capacity counts: all of it once it grew past both a pool
    // buffer and one read's worth (what the tail of a fresh read may need, bounded per
    // connection already), else nothing.
    std::size_t charge_of(std::size_t capacity) const noexcept {
        std::size_t free_size = pool_.buffer_size() > read_size_ ? pool_.buffer_size() : read_size_;
        return capacity > free_size ? capacity : 0;
    }

    // Grows c's input buffer for want more bytes, if the budget grants what the growth
    // counts; false, and nothing taken, when it does not.
    bool grow_within_budget(conn& c, std::size_t want) {
        std::size_t before = charge_of(c.in.capacity());
        std::size_t after = charge_of(c.in.capacity_after_reserving(want));
        if (after > before && !set_.try_grow(c, after - before, before)) return false;
        c.in.reserve_more(want);
        return true;
    }

    Set& set_;
    buffer_pool pool_;
    std::size_t head_capacity_ = 0;
    std::size_t read_size_ = 0;
};

} // namespace skiff::detail

#endif // SKIFF_ENGINE_INPUT_BUFFERS_HPP
