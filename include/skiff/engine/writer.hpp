// The pipelined-flush writer: responses to every request parsed from one read are built, one
// after another, in the loop's batch buffer, and leave in one send(). What the socket does not
// take is parked in the connection (a copy of the unsent bytes only) and sent on writability.
// Bodies sent in pieces (a stream, a push stream) are produced by the feature the connection
// is handed to (the door, handover.hpp), which appends each piece here; a file's bytes go from
// the kernel (files/file_send.hpp) once the batch has left.
//
// It does not decide what a connection does next (read more, close, linger): it reports what
// happened to the bytes (write_status), and the session acts on that. It never closes a
// descriptor, watches one, or arms a deadline. Parked output is memory a slow client holds, so the writer charges it to its Budget: the session's account,
// the connection set's memory budget (memory_budget.hpp: the loop's, or under shared one for
// every worker, as any thread's writer may write a connection's output), whose returns wake
// connections waiting for it.
//
// Invariants: the batch is empty between events (every flush empties it, into the socket or
// into the connection); a connection's parked output is written before anything newer, so
// responses leave in request order; while a body is sent in pieces, at most one batch per
// connection waits in memory, since the connection is not read meanwhile; the Budget holds
// exactly the capacity of every parked output it was charged for and not given back (under
// shared, by every worker's writer together).
#ifndef SKIFF_ENGINE_WRITER_HPP
#define SKIFF_ENGINE_WRITER_HPP

#include "skiff/config.hpp"
#include "skiff/detail/byte_buffer.hpp"
#include "skiff/engine/connection.hpp"
#include "skiff/platform/socket.hpp"

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint8_t

namespace skiff::detail {

enum class write_status : std::uint8_t {
    drained,  // everything owed to the client has been written
    parked,   // output newly parked, or some went and the rest waits: a write deadline (re)starts
    stalled,  // nothing went; parked output waits as before (its deadline keeps running)
    failed,   // the peer is gone: the connection must close
};

// Where no budget is kept (a loop of one's own: examples/annotated_loop.cpp): the writer's
// charges go nowhere.
struct unbudgeted {
    void take(std::size_t) noexcept {}
    void give(std::size_t) noexcept {}
};

template <class Budget = unbudgeted>
class writer {
public:
    // The batch and a stream's pieces are each up to `piece` bytes before the first send.
    void open(std::size_t piece, Budget budget = Budget{}) {
        piece_ = piece;
        budget_ = budget;
        batch_.reserve_more(piece);
    }

    // c is closing: its parked output, freed with it, no longer holds any of the budget.
    void forget(const connection& c) {
        if (c.out.capacity() != 0) budget_.give(c.out.capacity());
    }

    // Where the responses to the current read are built.
    byte_buffer& batch() noexcept { return batch_; }

    static std::size_t pending(const connection& c) noexcept { return c.out.size() - c.out_sent; }

    // Sends the batch to c in one call, behind whatever c has parked. The common case (a
    // batch, nothing parked) is kept apart so that it inlines into the read path.
    SKIFF_ALWAYS_INLINE write_status flush(connection& c) {
        if (!batch_.empty() && c.out.empty()) return send_batch(c);
        return flush_behind_parked(c);
    }

    // Writability: sends what c has parked.
    write_status write_parked(connection& c) {
        ssize_t n = send_some(c.fd, c.out.data() + c.out_sent, pending(c));
        if (n < 0) {
            if (!retry_later()) return write_status::failed;
            n = 0;
        }
        c.out_sent += static_cast<std::size_t>(n);
        if (c.out_sent != c.out.size()) return n > 0 ? write_status::parked : write_status::stalled;
        unpark(c);
        return write_status::drained;
    }

    // A piece of a body in the batch, chunk framing included (a push stream's, or a source's).
    void append_piece(stream_framing framing, const char* data, std::size_t n) {
        bool chunked = framing == stream_framing::chunked;
        if (chunked) append_chunk_size(n);
        batch_.append(data, n);
        if (chunked) append(crlf);
    }
    void append_last_chunk() { append(last_chunk); }

private:

    // Charged before the copy: a large answer takes a while to copy, and the budget is full
    // from the moment the socket refused the rest (others may be reading meanwhile: shared).
    void park(connection& c, const char* data, std::size_t n) {
        budget_.take(c.out.capacity_after_reserving(n) - c.out.capacity());
        c.out.append(data, n);
    }

    void unpark(connection& c) {
        budget_.give(c.out.capacity());
        c.out.release();
        c.out_sent = 0;
    }

    // Output parked before this batch means the socket refused the last write and the
    // connection waits for writability: the batch joins it without a write of its own (one
    // that would almost always fail: a push to a subscriber that stopped reading costs a copy,
    // not a system call). The batch goes when the poller says the socket has room.
    SKIFF_NOINLINE write_status flush_behind_parked(connection& c) {
        if (batch_.empty()) return pending(c) == 0 ? write_status::drained : write_status::stalled;
        bool waiting_for_room = pending(c) != 0;
        park(c, batch_.data(), batch_.size());
        batch_.clear();
        return waiting_for_room ? write_status::stalled : write_parked(c);
    }

    // The batch straight to the socket; what it does not take is parked in c.
    SKIFF_ALWAYS_INLINE write_status send_batch(connection& c) {
        ssize_t n = send_some(c.fd, batch_.data(), batch_.size());
        if (n < 0 && !retry_later()) {
            batch_.clear();
            return write_status::failed;
        }
        std::size_t sent = n < 0 ? 0 : static_cast<std::size_t>(n);
        write_status w = write_status::drained;
        if (sent < batch_.size()) {
            park(c, batch_.data() + sent, batch_.size() - sent);
            w = write_status::parked;
        }
        batch_.clear();
        return w;
    }

    template <std::size_t N>
    void append(const char (&literal)[N]) {
        batch_.append(literal, N - 1);
    }

    void append_chunk_size(std::size_t n) {
        char hex[2 * sizeof(std::size_t) + sizeof crlf];
        char* end = hex + sizeof hex - 1;
        char* p = end - (sizeof crlf - 1);
        end[-2] = '\r';
        end[-1] = '\n';
        do {
            *--p = "0123456789abcdef"[n & 15];
            n >>= 4;
        } while (n != 0);
        batch_.append(p, static_cast<std::size_t>(end - p));
    }

    static constexpr char crlf[] = "\r\n";
    static constexpr char last_chunk[] = "0\r\n\r\n";

    byte_buffer batch_;
    std::size_t piece_ = 0;
    Budget budget_{};  // a small handle (the session's account), copied in at open
};

} // namespace skiff::detail

#endif // SKIFF_ENGINE_WRITER_HPP
