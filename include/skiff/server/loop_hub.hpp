// What a loop and its deferred answers share, as interfaces only: the state of one deferred
// answer (deferred_state), the loop's side (loop_context, implemented by event_loop: it runs a
// handed connection's turn through the session's door, knowing nothing of answers), and the
// hub that carries work to the loop from other threads (loop_hub, implemented by
// async/hub.hpp). The code that applies an answer is async/answer_wait.hpp's.
//
// It does not lock, wake or own a thread: the mutex and the notifier live in the concrete hub,
// which a program instantiates only by deferring or by asking a server for its loop. So the
// loop reaches the hub through a pointer that stays null and a few virtual calls, and a single
// program that never defers compiles no mutex (tests/compile/no_thread_symbols.cmake).
//
// Invariants: a deferred_state's loop-side fields (conn, link, early, answer_waiting,
// socket_watch, on_writable) are touched only by the thread that serves its connection at that
// moment, which is the loop's thread (single, sharded) or the one holding the hub's process
// lock (shared). `conn` is set
// while the connection waits on this answer and cleared the moment it stops (answer written,
// connection closed): a completion that finds it cleared is dropped, so a handle never reaches
// a connection it no longer names, however its slot has been reused since.
#ifndef SKIFF_SERVER_LOOP_HUB_HPP
#define SKIFF_SERVER_LOOP_HUB_HPP

#include "skiff/detail/guarded_call.hpp"
#include "skiff/http/response.hpp"
#include "skiff/poller/poll_event.hpp"
#include "skiff/poller/poller.hpp"
#include "skiff/server/handed.hpp"
#include "skiff/server/options.hpp"
#include "skiff/server/push_ledger.hpp"

#include <atomic>       // flags and byte counts read by producers on other threads
#include <cstddef>      // std::size_t
#include <cstdint>      // std::int64_t, std::uint8_t
#include <functional>   // a push stream's writable callback; what runs when an answer settles
#include <memory>       // std::enable_shared_from_this: the hub keeps a state whose socket it watches
#include <string>       // an answer's body and fields
#include <utility>      // std::pair
#include <vector>       // an answer's fields

namespace skiff::detail {

struct connection;

// How a deferred answer was completed.
enum class answer_kind : std::uint8_t {
    none,     // not yet
    whole,    // status, fields and a body, sent at once
    push,     // status and fields now; the body is pushed by a producer (push_stream)
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
    // A push stream's place among those holding unsent output (push_ledger.hpp): the charge it
    // holds there (0: not in line) and its neighbours, stalled before and after it.
    std::size_t stalled_bytes = 0;
    deferred_state* stalled_prev = nullptr;
    deferred_state* stalled_next = nullptr;
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

// The loop's side, called by the hub on the thread that serves the connection. It knows
// nothing of answers: the feature's code (async/answer_wait.hpp) runs through the door of the
// session that serves the connection, and the loop only settles the connection afterwards.
class loop_context {
public:
    using handed_call = fate (*)(door& d, connection& c, void* arg);
    // Whether a deadline the shared policy's reaper found passed comes first (an event on the
    // connection's socket), as for any event the loop serves.
    enum class expiry : std::uint8_t { ignored, served_first };

    // Runs call(door, c, arg) for c, a handed connection, then settles c: a close is counted,
    // and under shared c goes back to the workers once it is no longer handed.
    virtual void serve_handed(connection& c, handed_call call, void* arg, expiry e) = 0;
    // The server stops: answers from now on say Connection: close (a stop the hub saw before
    // this loop looked at the stop flag).
    virtual void begin_stop() = 0;

protected:
    ~loop_context() = default;
};

// Called through a table of function pointers that the concrete hub fills, not through
// virtual functions: GCC devirtualises a call speculatively when one derived class is in
// sight, and would so compile the concrete hub (and its mutex) into every program.
class loop_hub {
public:
    // The set is going: posts are refused from now on, and the hub lives on only as long as
    // handles still name it.
    void detach() noexcept { ops_->detach(this); }
    // Whether a poller event's data is the hub's (its notifier or a watched descriptor).
    bool claims(const void* data) const noexcept { return ops_->claims(this, data); }
    void on_event(const void* data, loop_context& ctx) { ops_->on_event(this, data, ctx); }
    // The wait timeout given the loop's own (-1: none), shortened to the next timer.
    int timeout(int base, std::int64_t now_ms) noexcept { return ops_->timeout(this, base, now_ms); }
    // Once a turn: runs the timers that are due.
    void on_turn(std::int64_t now_ms, loop_context& ctx) { ops_->on_turn(this, now_ms, ctx); }
    // Runs fn as the hub's processor (under its process lock), so that no completion is
    // applied meanwhile (under shared, on another thread).
    void exclusive(void (*fn)(void*), void* arg) { ops_->exclusive(this, fn, arg); }
    // The connection stopped waiting on s: its deadline timer is dropped (and its
    // writability watch, if any).
    void forget(deferred_state& s) { ops_->forget(this, s); }
    // shared: a connection waiting on a deferred answer belongs to the hub, not to the
    // workers, until the answer is written. The hub watches its socket in its stead, aimed at s
    // (socket_ready() on the loop_context): for reading while it waits (the client going), for
    // writing while a push stream's bytes are parked. One-shot: once per call.
    void watch_socket(deferred_state& s, int fd, std::uint8_t what) { ops_->watch_socket(this, s, fd, what); }
    // The server stops: grace_ms from now, every answer it knows of that is still waiting or
    // streaming is ended (loop_context::end_for_stop), and so is any deferred after that.
    // Once per hub; a later call does nothing.
    void begin_stop(std::int64_t grace_ms) { ops_->begin_stop(this, grace_ms); }

protected:
    struct ops {
        void (*detach)(loop_hub*) noexcept;
        bool (*claims)(const loop_hub*, const void*) noexcept;
        void (*on_event)(loop_hub*, const void*, loop_context&);
        int (*timeout)(loop_hub*, int, std::int64_t) noexcept;
        void (*on_turn)(loop_hub*, std::int64_t, loop_context&);
        void (*exclusive)(loop_hub*, void (*)(void*), void*);
        void (*forget)(loop_hub*, deferred_state&);
        void (*watch_socket)(loop_hub*, deferred_state&, int, std::uint8_t);
        void (*begin_stop)(loop_hub*, std::int64_t);
    };
    explicit loop_hub(const ops& o) noexcept : ops_(&o) {}
    ~loop_hub() = default;

private:
    const ops* ops_;
};

// What a loop lends each response so that defer() can find its hub (or start it: single
// starts it on the first defer, the threaded policies at listen), and the options it needs.
struct hub_anchor {
    loop_hub* hub = nullptr;
    default_poller* poller = nullptr;
    poll_mode mode = poll_mode::level;  // how watched descriptors are registered
    std::int64_t deferred_timeout_ms = 0;
    std::int64_t push_limit = 0;
    std::size_t push_high_water = 0;
    // The push streams holding unsent output, and their share of the budget (push_ledger.hpp):
    // one per budget, so per loop, or one for a shared server's workers.
    push_ledger<deferred_state> pushes;

    // By the session, when its loop opens; `budget`: the memory budget this anchor's pushes share.
    void open(default_poller& p, const options& opt, std::size_t budget) {
        poller = &p;
        deferred_timeout_ms = opt.deferred_timeout.count();
        push_limit = static_cast<std::int64_t>(opt.max_push_buffer);
        push_high_water = opt.write_high_water;
        pushes.set_share(budget / 2);  // push output's share (push_ledger.hpp says why half)
    }
};

} // namespace skiff::detail

#endif // SKIFF_SERVER_LOOP_HUB_HPP
