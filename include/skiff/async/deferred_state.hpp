// The state of one deferred answer (deferred_state), shared by the handles that complete it on
// any thread (deferred.hpp), the taker that waits for it on the connection's loop
// (answer_wait.hpp) and the hub that carries it across (hub.hpp); and what tells a push
// stream's producer it may write again. It holds no lock and starts no thread.
//
// Invariants: a deferred_state's loop-side fields (conn, link, early, answer_waiting,
// socket_watch, on_writable) are touched only by the thread that serves its connection at that
// moment, which is the loop's thread (single, sharded) or the one holding the hub's process
// lock (shared). `conn` is set while the connection waits on this answer and cleared the
// moment it stops (answer written, connection closed): a completion that finds it cleared is
// dropped, so a handle never reaches a connection it no longer names, however its slot has
// been reused since.
#ifndef SKIFF_ASYNC_DEFERRED_STATE_HPP
#define SKIFF_ASYNC_DEFERRED_STATE_HPP

#include "skiff/detail/guarded_call.hpp"
#include "skiff/engine/loop_hub.hpp"
#include "skiff/engine/push_ledger.hpp"
#include "skiff/http/response.hpp"
#include "skiff/poller/poll_event.hpp"

#include <atomic>       // flags and byte counts read by producers on other threads
#include <cstddef>      // std::size_t
#include <cstdint>      // std::int64_t, std::uint8_t
#include <functional>   // a push stream's writable callback; what runs when an answer settles
#include <memory>       // std::enable_shared_from_this: the hub keeps a state whose socket it watches
#include <string>       // an answer's body and fields
#include <utility>      // std::pair
#include <vector>       // an answer's fields

namespace skiff::detail {

// How a deferred answer was completed.
enum class answer_kind : std::uint8_t {
    none,     // not yet
    whole,    // status, fields and a body, sent at once
    push,     // status and fields now; the body is pushed by a producer (push_stream)
    dropped,  // none: the handle was dropped once cancelled (nobody waits), so the connection
              // closes after what went before, with nothing written for this request
};

// Where the loop is with a deferred answer's connection.
enum class link_state : std::uint8_t {
    unbound,   // shared policy: the worker that read the request has not handed it over yet
    bound,     // the connection waits on this answer
    finished,  // the answer is written, or the connection went: completions are dropped
};

// A push stream as its producer sees it.
enum class push_state : std::uint8_t { open, closed };

// Loop-side: whether a push answer's head is written, so that its stream can be ended.
enum class push_progress : std::uint8_t { head_pending, streaming };
// Loop-side: the server's stop ended this answer's push stream (or will, once its head is
// written: a completion that raced the stop).
enum class stop_mark : std::uint8_t { none, end_stream };

// Made by defer() as a shared_ptr (the handles and the tasks in flight hold it).
struct deferred_state : std::enable_shared_from_this<deferred_state> {
    // Set by defer() on the loop, then read-only.
    bool head_request = false;  // HEAD: the answer's body is not sent
    bool http10 = false;
    std::int64_t push_limit = 0;  // options::max_push_buffer
    std::size_t push_high_water = 0;  // options::write_high_water
    // The fields the chain wrote before defer() (middleware's included), taken out of the
    // batch then and written in front of the answer's own when it completes (response.hpp).
    held_fields head_fields;

    // Written by the one thread that wins `done`, before it posts the answer to the loop (the
    // hub's mutex orders the two).
    std::atomic<bool> done{false};
    answer_kind kind = answer_kind::none;
    int status = 200;
    std::string content_type;
    std::vector<std::pair<std::string, std::string>> fields;
    std::string body;

    // Read by any thread, written by the loop.
    std::atomic<bool> cancelled{false};  // the client went, the deadline passed, or the server stopped
    std::atomic<push_state> push{push_state::open};
    std::atomic<std::size_t> queued{0};  // pushed bytes not yet taken by the loop
    std::atomic<std::size_t> parked{0};  // bytes the socket has not taken yet
    std::atomic<bool> overflowed{false};  // the producer passed max_push_buffer: the loop closes
    // Set by a write() that says backlogged, before it posts its bytes (so the loop sees it when
    // it applies them); the loop clears it when it tells on_writable the backlog drained.
    std::atomic<bool> wants_writable{false};

    // Loop-side (see the file comment).
    connection* conn = nullptr;
    link_state link = link_state::unbound;
    bool answer_waiting = false;  // shared: completed before the hand-over
    std::string early;            // shared: pushed before the hand-over
    bool early_last = false;
    // shared: what the hub watches the connection's socket for while it holds it
    // (loop_hub::watch_socket): watch_read, the client going; watch_write, a push stream's
    // parked bytes; watch_none, nothing.
    std::uint8_t socket_watch = watch_none;
    std::uint64_t deadline_timer = 0;
    push_progress progress = push_progress::head_pending;
    stop_mark at_stop = stop_mark::none;
    // push_stream::on_writable's callback: false, the backlog drained; true, the stream ended.
    std::function<void(bool ended)> on_writable;
    // Runs once, on the loop, when the connection stops waiting on this answer (it is
    // written, a push stream ended, or the connection went): middleware that holds something
    // for the request's whole life (concurrency_limit) lets go here; added to with
    // append_call (detail/call_chain.hpp), so several run in order.
    std::function<void()> on_settled;
    // A push stream's place among those holding unsent output (push_ledger.hpp).
    stalled_output stall;
};

// ---- push_stream::on_writable, on the thread that serves the stream ------------------------

// Once a write() said backlogged and what waits (queued and unsent) is down to half of
// write_high_water: the producer may write again. Half, so that a producer woken writes a
// good run before the next backlog, not one piece per wake.
inline void tell_if_drained(deferred_state& s) {
    if (!s.on_writable || !s.wants_writable.load(std::memory_order_relaxed)) return;
    std::size_t held = s.queued.load(std::memory_order_relaxed) + s.parked.load(std::memory_order_relaxed);
    if (held > s.push_high_water / 2 || !s.wants_writable.exchange(false, std::memory_order_relaxed)) return;
    call_guarded([&] { s.on_writable(false); }, [] {});
}

// The stream ended (the client went, its bound passed, the server stopped, or close()): the
// callback hears it once, and is then dropped with what it holds.
inline void tell_ended(deferred_state& s) {
    if (!s.on_writable) return;
    std::function<void(bool)> fn = std::move(s.on_writable);
    s.on_writable = nullptr;
    call_guarded([&] { fn(true); }, [] {});
}

// The registration, posted by the producer: a stream that already ended or already drained
// is told at once, so a producer that registers late is not left waiting.
inline void listen_writable(deferred_state& s, std::function<void(bool)> fn) {
    s.on_writable = std::move(fn);
    if (s.link == link_state::finished) return tell_ended(s);
    tell_if_drained(s);
}

} // namespace skiff::detail

#endif // SKIFF_ASYNC_DEFERRED_STATE_HPP
