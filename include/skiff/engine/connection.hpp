// One connection's state between events: the bytes of an incomplete request, output a short
// write left behind, parser state, its deadline, and its phase. An idle keep-alive connection
// owns no buffer, so it costs sizeof(connection) (checked by a test) plus the kernel's socket.
//
// It does not act: the session (session.hpp) moves it from phase to phase, the writer
// (writer.hpp) sends its output, the connection set (local_set.hpp, shared_set.hpp) owns its
// slot. Invariants: `in` is empty between requests; `out` is empty unless a write fell short;
// `taker` is set exactly while the phase is handed.
//
// The phases (enum phase below), and what moves a connection between them:
//
//   reading         --head complete, Expect and body deadline acted on--> body
//   reading, body   --request answered-------------------------------->  reading
//   reading, body   --answers pass write_high_water------------------->  waiting (the rest stays in `in`)
//   reading, body   --answer says close, client EOF, stop()---------->  closing
//   reading, body   --framing or limit error, unread requests behind-->  draining
//   waiting         --the client took the output: serve what waited-->  reading
//   reading, body   --a route takes the unread body, or the handler---> handed (the rest stays in `in`)
//                     answers later, streams or sends a file (the door)
//   handed          --the taker is done (door::finish, door::answered)-> connection::then
//                                    (reading, or waiting when requests wait; closing; draining)
//   closing         --output written---------------------------------> closed
//   draining        --output written: shut the write side------------> lingering
//   lingering       --EOF, or the linger deadline--------------------> closed
//   any             --reset, send error, idle or write deadline-------> closed
#ifndef SKIFF_ENGINE_CONNECTION_HPP
#define SKIFF_ENGINE_CONNECTION_HPP

#include "skiff/detail/byte_buffer.hpp"
#include "skiff/engine/handed.hpp"
#include "skiff/engine/timer_wheel.hpp"
#include "skiff/http/message_parser.hpp"
#include "skiff/http/request.hpp"
#include "skiff/http/response.hpp"
#include "skiff/poller/poll_event.hpp"

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint8_t, std::uint64_t
#include <memory>   // std::unique_ptr for a stream in progress

namespace skiff::detail {

// The order matters: the phases from closing to lingering end the connection, and those from
// lingering on are not read as requests (session.hpp compares).
enum class phase : std::uint8_t {
    reading,    // between requests, or reading a request's head
    body,       // reading a body whose head was acted on (body deadline, 100 Continue)
    waiting,    // complete requests wait in `in` until the client takes earlier output
    closing,    // no more requests: close once the output is written
    draining,   // as closing, then shut the write side and linger, so the client reads the answer
    lingering,  // write side shut; input is read and discarded until EOF or the linger deadline
    handed,     // a feature runs the connection (connection::taker, handover.hpp); nothing
                // more is parsed meanwhile
};

// The phases in which the connection is read and its requests served.
constexpr bool takes_requests(phase p) noexcept { return p == phase::reading || p == phase::body; }

// Which deadline the connection's timer stands for.
// paused: a handed connection's taker polls once a tick (a streamed body waiting for a resume).
// awaited: a handed connection waits on an answer made elsewhere; a last-resort guard
// (options::deferred_timeout, then write_timeout), after which it closes.
enum class deadline_kind : std::uint8_t { idle, header, body, write, linger, awaited, paused };

// How a body written in pieces is delimited: by its Content-Length, by chunks (HTTP/1.1), or
// by the end of the connection (HTTP/1.0 without a length).
enum class stream_framing : std::uint8_t { sized, chunked, until_close };

// The connection derives from its timer node, so an expired node is the connection itself.
struct connection : timer_node {
    byte_buffer in;              // an incomplete request, or requests waiting; empty between requests
    byte_buffer out;             // unsent output; empty unless a write fell short
    std::size_t out_sent = 0;    // bytes of `out` already written
    // While the connection is handed (a body streamed or a file sent, an answer awaited, an
    // upload read, a WebSocket): the feature's state (handover.hpp), abandoned by the session
    // before the close; null otherwise.
    handed_ptr taker;
    message_parser parser;
    connection* next_free = nullptr;  // the pool's free list
    int fd = -1;
    std::uint8_t watching = 0;   // interest bits last given to the poller
    deadline_kind deadline = deadline_kind::idle;
    phase state = phase::reading;
    phase then = phase::reading;  // while handed: the phase once the taker is done (reading, closing, draining)

    // Back to a fresh slot (the pool calls this when the connection closes).
    void reset() noexcept {
        in.release();
        out.release();
        out_sent = 0;
        taker.reset();
        parser.reset();
        fd = -1;
        watching = 0;
        deadline = deadline_kind::idle;
        state = phase::reading;
        then = phase::reading;
    }
};

// Idle keep-alive: a request answered, nothing read of the next, nothing left to write, and
// watched for reading (not waiting for memory). Between events, such a connection may be
// closed to make room (local_set::close_an_idle) as its idle deadline would close it. A new
// connection that has sent nothing yet is not idle: it has a header deadline.
inline bool idle_between_requests(const connection& c) noexcept {
    return c.deadline == deadline_kind::idle && c.state == phase::reading && c.in.empty() && c.out.empty() &&
           c.watching == watch_read;
}

} // namespace skiff::detail

#endif // SKIFF_ENGINE_CONNECTION_HPP
