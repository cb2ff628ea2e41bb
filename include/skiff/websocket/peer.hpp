// What an application holds of a WebSocket connection (websocket/upgrade.hpp has the whole
// picture): the callbacks a route gives (handlers), the kinds of message and what became of
// a send, and the handle (peer) that sends on a connection from the loop or from any thread.
// The handle's sending is defined in upgrade.hpp, beside the taker it reaches.
//
// Memory: a WebSocket's state is one block with its taker (taker.hpp: ws_taker derives from
// ws_state), counted in place (detail/counted_ref.hpp) by its connection, its peers and the
// posts made to it; what the connections given the same handlers on one loop share (the
// callbacks, the hub, the limits) is one ws_route they point to. An idle WebSocket so costs its connection
// and one 72-byte block (tools/bench/README.md, "Memory per idle WebSocket").
//
// Invariants: the peer's phase only moves forward: open, closing, closed. While the link is
// bound, the state's taker serves the connection, and only the thread that serves it (the
// loop's; under shared, the hub's processor) touches the taker's part. Bytes held (queued +
// parked) stay below 2^32: a backlog limit is at most ws_max_held / 2, and a message sent at
// most as much (a larger one is dropped).
#ifndef SKIFF_WEBSOCKET_PEER_HPP
#define SKIFF_WEBSOCKET_PEER_HPP

#include "skiff/async/hub.hpp"
#include "skiff/detail/counted_ref.hpp"
#include "skiff/websocket/frame.hpp"
#include "skiff/websocket/message_reader.hpp"

#include <atomic>       // what any thread reads of a WebSocket
#include <chrono>       // std::chrono::milliseconds
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint8_t, std::uint32_t
#include <functional>   // the application's callbacks
#include <memory>       // std::shared_ptr, std::unique_ptr
#include <string>       // a frame posted from another thread
#include <string_view>  // std::string_view
#include <utility>      // std::move

namespace skiff::websocket {

enum class kind : std::uint8_t { text, binary };

// What became of a message given to peer::send (uWebSockets' SUCCESS, BACKPRESSURE, DROPPED).
enum class send_status : std::uint8_t {
    queued,        // on its way
    backpressure,  // on its way, but more than options::write_high_water waits: the client is slow
    dropped,       // not sent: the backlog passed its limit, the message is over 1 GiB, or the
                   // connection is closing or gone
};

class peer;

// Whether a quiet client is pinged: once it has sent nothing for half the idle timeout, a
// ping goes, and its pong (which browsers send by themselves) keeps it open; one that does not
// answer is closed at the idle timeout. none: a quiet client is closed at the idle timeout.
enum class keepalive : std::uint8_t { ping, none };

// A route's WebSocket: its callbacks (each optional; all run on the loop that serves the
// connection) and limits. Shared by every connection of the route (accept() takes a shared_ptr).
struct handlers {
    std::function<void(peer&)> on_open;
    // A whole message (delivery::whole): text is valid UTF-8.
    std::function<void(peer&, std::string_view data, kind k)> on_message;
    // A piece of a message (delivery::pieces); `last` on its final piece.
    std::function<void(peer&, std::string_view data, kind k, bool last)> on_piece;
    // Once, when the connection ends: the client's close code and reason, the code it was
    // failed with (1002, 1007, 1009; 1011 when a callback threw), or 1006 when it went
    // without a close frame. Sends from here are dropped.
    std::function<void(peer&, close_code code, std::string_view reason)> on_close;
    // A send said backpressure, and what waits is down to half of write_high_water again.
    std::function<void(peer&)> on_drain;
    std::uint64_t max_message = 1024 * 1024;  // longer: closed with 1009
    websocket::delivery delivery = delivery::whole;
    std::size_t max_backlog = 0;  // sends past this many waiting bytes are dropped; 0: options::max_push_buffer
    std::chrono::milliseconds idle_timeout{0};  // 0: options::idle_timeout
    websocket::keepalive keepalive = keepalive::ping;
};

} // namespace skiff::websocket

namespace skiff::detail {

class ws_taker;
class door;  // engine/handover.hpp: what a callback's own sends are written through
struct peer_access;  // broadcast.hpp: what a broadcast reads of each peer

// As peers see it; only moves forward.
enum class ws_phase : std::uint8_t { open, closing, closed };

// Where the loop is with a WebSocket's connection, as the hub's tasks see it.
enum class ws_link : std::uint8_t {
    unbound,   // shared policy: the worker that upgraded it has not handed it to the hub yet
    bound,     // `taker` serves it
    finished,  // closed, or given back: posts are dropped
};

// An upgrade decided later (websocket::pending_upgrade): accept it, with a subprotocol or
// none, or refuse it with a status and a text body.
enum class ws_verdict : std::uint8_t { accept, refuse };
struct ws_decision {
    ws_verdict verdict = ws_verdict::refuse;
    std::string protocol;  // accept: the subprotocol chosen, or empty
    int status = 500;      // refuse
    std::string body;      // refuse: text/plain
};

// shared: what peers posted before the hub held the connection, sent first when it does
// (under the hub's process lock): the decision on an upgrade decided later, the frames, in
// order, and a close. Made by the first such post, so that a WebSocket that has none carries
// only the pointer.
struct ws_early {
    std::unique_ptr<ws_decision> decision;  // an upgrade decided later, decided before (first)
    std::string frames;
    bool close_asked = false;
    websocket::close_code code = websocket::close_code::normal;
    std::string reason;
};

// What the WebSockets given the same handlers on one loop share, so that each connection
// carries one pointer for it: the route's callbacks, the loop's hub that peers post to (kept
// alive for them after the server is gone), and the limits taken from both. The loop's hub
// keeps one per handlers object (ws_routes, upgrade.hpp). Counted in place.
struct ws_route {
    std::shared_ptr<const websocket::handlers> h;
    std::shared_ptr<async_hub> hub;
    std::uint32_t high_water = 0;  // options::write_high_water
    std::uint32_t limit = 0;       // the backlog past which sends are dropped
    std::atomic<std::uint32_t> refs{1};
};
inline void counted_free(ws_route* r) noexcept { delete r; }

// The most a WebSocket holds in its counts (queued + parked fit 32 bits): half of it for the
// backlog limit, and half for the message sent past it.
inline constexpr std::uint64_t ws_max_held = std::uint64_t{1} << 31;

// One WebSocket's state, shared by its taker (on the loop) and its peers (any thread): the
// first part of the taker's block (taker.hpp), freed with it when the last count goes.
// The hub keeps it alive while it watches the connection's socket (shared). The small members
// go last, so that they share one word (x86-64: 32 bytes).
struct ws_state {
    counted_ref<ws_route> route;
    std::atomic<std::uint32_t> queued{0};  // posted from other threads, not yet in the loop's hands
    std::atomic<std::uint32_t> parked{0};  // written, not yet taken by the socket
    std::unique_ptr<ws_early> early;       // shared, before the hub holds the connection
    std::atomic<std::uint32_t> refs{1};    // the connection's, and one per peer and per post
    std::atomic<ws_phase> phase{ws_phase::open};
    std::atomic<bool> wants_drain{false};
    // Loop-side (see the file comment). Atomic because under shared a worker may end an
    // unbound WebSocket (finished) while the hub's processor reads it on another thread.
    std::atomic<ws_link> link{ws_link::unbound};

    // Bytes sent but not yet taken by the client (or by the loop, from another thread).
    std::size_t held() const noexcept {
        return std::size_t{queued.load(std::memory_order_relaxed)} + parked.load(std::memory_order_relaxed);
    }
    // Bytes posted to the loop, and taken off once the loop has them (or the post failed): each
    // a frame peer::admits() let through, so below 2^31 (the file comment).
    void add_queued(std::size_t bytes) noexcept {
        queued.fetch_add(static_cast<std::uint32_t>(bytes), std::memory_order_relaxed);
    }
    void take_queued(std::size_t bytes) noexcept {
        queued.fetch_sub(static_cast<std::uint32_t>(bytes), std::memory_order_relaxed);
    }
};
inline void counted_free(ws_state* s) noexcept;  // taker.hpp: the whole block goes (ws_taker)
using ws_ref = counted_ref<ws_state>;

// The WebSocket whose callback runs on this thread, so that its own sends go straight into the
// loop's batch through the event's door rather than through the hub (`taker` is the state's
// own block, named here since peer.hpp comes before the class). All null outside a callback,
// and `state` null in one that no flush follows (on_drain, on_close), whose sends are posted.
struct ws_callback_context {
    ws_state* state = nullptr;
    ws_taker* taker = nullptr;
    door* out = nullptr;
};
inline thread_local ws_callback_context ws_current{};

} // namespace skiff::detail

namespace skiff::websocket {

// A handle to one WebSocket: copyable, usable from any thread, safe after the connection
// went (its sends are then dropped). Two handles are equal when they name the same connection.
class peer {
public:
    peer() = default;
    inline send_status send(std::string_view data, kind k = kind::text);
    // Starts the close handshake (the connection closes when the client answers, or after
    // linger_timeout). queued, or dropped when it is already closing or gone.
    inline send_status close(close_code code = close_code::normal, std::string_view reason = {});
    bool is_open() const noexcept { return s_ && s_->phase.load(std::memory_order_acquire) == detail::ws_phase::open; }
    // Bytes sent but not yet taken by the client (or by the loop, from another thread).
    std::size_t buffered() const noexcept { return s_ ? s_->held() : 0; }
    explicit operator bool() const noexcept { return static_cast<bool>(s_); }
    friend bool operator==(const peer& a, const peer& b) noexcept { return a.s_.get() == b.s_.get(); }
    friend bool operator!=(const peer& a, const peer& b) noexcept { return a.s_.get() != b.s_.get(); }

private:
    friend class detail::ws_taker;
    friend struct detail::peer_access;

    // What every send of `size` bytes decides first (send(), broadcast()): whether it may go
    // (open, not past its backlog, and not too large to count), with the bytes that wait
    // already in `held`.
    bool admits(std::size_t size, std::size_t& held) const noexcept {
        if (!is_open() || size > detail::ws_max_held / 2) return false;
        held = buffered();
        return held <= s_->route->limit;
    }
    // And what it says once on its way: backpressure past write_high_water (on_drain follows).
    send_status went(std::size_t held, std::size_t size) const noexcept {
        if (held + size <= s_->route->high_water) return send_status::queued;
        s_->wants_drain.store(true, std::memory_order_relaxed);
        return send_status::backpressure;
    }
    // Defined in taker.hpp, beside the state's free: a constructor may destroy its members.
    inline explicit peer(detail::ws_ref&& s) noexcept;

    inline bool post_frame(std::string frame);

    detail::ws_ref s_;
};

} // namespace skiff::websocket

#endif // SKIFF_WEBSOCKET_PEER_HPP
