// What a loop and the work other threads bring it share, as interfaces only: the loop's side
// (loop_context, implemented by event_loop: it runs a handed connection's turn through the
// session's door, knowing nothing of answers), and the hub that carries work to the loop from
// other threads (loop_hub, implemented by async/hub.hpp). A deferred answer's state is
// async/deferred_state.hpp's, and the code that applies an answer async/answer_wait.hpp's.
//
// It does not lock, wake or own a thread: the mutex and the notifier live in the concrete hub,
// which a program instantiates only by deferring or by asking a server for its loop. So the
// loop reaches the hub through a pointer that stays null and a few virtual calls, and a single
// program that never defers compiles no mutex (tests/compile/no_thread_symbols.cmake).
#ifndef SKIFF_ENGINE_LOOP_HUB_HPP
#define SKIFF_ENGINE_LOOP_HUB_HPP

#include "skiff/engine/handed.hpp"
#include "skiff/engine/options.hpp"
#include "skiff/engine/push_ledger.hpp"
#include "skiff/poller/poll_event.hpp"
#include "skiff/poller/poller.hpp"

#include <cstddef>      // std::size_t
#include <cstdint>      // std::int64_t, std::uint8_t

namespace skiff::detail {

struct connection;
// One deferred answer (async/deferred_state.hpp): the hub's answer services below and the
// anchor's push ledger take it by reference only, so the engine never sees inside it.
struct deferred_state;

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
    // shared: c, still handed, was held by the hub and is given back: its taker may take it
    // again (take_from_workers), else the workers serve it. Nothing under the other policies.
    virtual void give_to_workers(connection& c) = 0;
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
    // The server stops: grace_ms after now_ms (the loop's services clock, as on_turn's),
    // every answer it knows of that is still waiting or streaming is ended
    // (loop_context::end_for_stop), and so is any deferred after that. Once per hub; a later
    // call does nothing. The caller's now, not the hub's last turn: a hub started by a defer
    // in the turn that also begins the stop has had no turn, and its grace ended at once.
    void begin_stop(std::int64_t now_ms, std::int64_t grace_ms) { ops_->begin_stop(this, now_ms, grace_ms); }

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
        void (*begin_stop)(loop_hub*, std::int64_t, std::int64_t);
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
    push_ledger pushes;

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

#endif // SKIFF_ENGINE_LOOP_HUB_HPP
