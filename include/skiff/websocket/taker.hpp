// The taker that runs a WebSocket connection once it is handed over (websocket/upgrade.hpp
// has the whole picture): it reads frames (message_reader), answers pings, echoes a close and
// closes after it, fails with the reader's code (1002, 1007, 1009), closes idle connections
// and, when the server stops, closes every WebSocket with 1001; and the steps the hub brings
// it from other threads (a send, a close).
//
// The parts: this file (the class, and its life on the loop: the door's calls, ticks,
// output and its accounting), taker_frames.hpp (frames in, control frames out, the close
// handshake), taker_later.hpp (an upgrade decided later), taker_hub.hpp (what the hub brings
// from other threads, and under shared the hub's hold on the connection). upgrade.hpp, which
// makes the taker, includes them all: every TU that emits the class sees every definition.
//
// Deadlines: once a tick (options: a tick is a tenth of the shortest timeout, 5-250 ms) the
// taker is called and decides itself: the idle deadline (handlers::idle_timeout, else
// options::idle_timeout, counted from the last read or the last output the client took; a
// quiet client is pinged at half of it,
// handlers::keepalive), the stop (door::stopping()), and the close handshake's wait
// (linger_timeout). The tick is the `paused` deadline on the loop's wheel (single, sharded),
// or a hub timer under shared (taker_hub.hpp). While output is parked the session's write
// deadline stands instead (the client does not read).
//
// Output a client leaves unread joins the budget's line of pushed output (push_ledger.hpp),
// as a push stream's does: past push output's share the connection stalled longest is closed.
// The socket's send buffer is kept small (options::push_socket_buffer) so that the backlog
// waits here, where the line sees it.
//
// Invariants: bytes are written into the loop's batch only by code that flushes them before
// its event ends (settle()), so a callback that is not followed by a flush (on_drain,
// on_close) runs with ws_current.state unset and its sends are posted. A posted send that finds
// the link finished is dropped; one that finds it unbound (shared) waits in ws_state::early.
// While the hub holds the connection, no worker gets its events (its registration is aimed at
// its ws_state); it goes back to the workers only through finish() (settle()). The thread's
// spare reader is at rest whenever no event is reading with it.
#ifndef SKIFF_WEBSOCKET_TAKER_HPP
#define SKIFF_WEBSOCKET_TAKER_HPP

#include "skiff/async/hub.hpp"
#include "skiff/config.hpp"
#include "skiff/detail/guarded_call.hpp"
#include "skiff/engine/connection.hpp"
#include "skiff/engine/handover.hpp"
#include "skiff/engine/loop_hub.hpp"
#include "skiff/engine/loop_time.hpp"
#include "skiff/engine/options.hpp"
#include "skiff/engine/push_ledger.hpp"
#include "skiff/http/request.hpp"
#include "skiff/http/response.hpp"
#include "skiff/http/response_access.hpp"
#include "skiff/platform/socket.hpp"
#include "skiff/poller/poll_event.hpp"
#include "skiff/websocket/frame.hpp"
#include "skiff/websocket/frame_writer.hpp"
#include "skiff/websocket/handshake.hpp"
#include "skiff/websocket/message_reader.hpp"
#include "skiff/websocket/peer.hpp"

#include <algorithm>    // std::min
#include <atomic>       // what any thread reads of a WebSocket
#include <chrono>       // std::chrono::milliseconds
#include <cstddef>      // std::size_t
#include <cstdint>      // std::int64_t, std::uint8_t, std::uint64_t
#include <functional>   // the application's callbacks
#include <limits>       // no decision deadline
#include <memory>       // std::shared_ptr, std::unique_ptr
#include <string>       // a frame posted from another thread
#include <string_view>  // std::string_view
#include <utility>      // std::move

namespace skiff::detail {

// An upgrade decided later (websocket::accept_later), until its decision: the client's key
// and the fields the chain set, for the 101 or the refusal; when the wait ends
// (options::deferred_timeout: 503); and what the client sent meanwhile, kept for the
// WebSocket (a client should wait for the 101, so more than ws_deciding_bytes closes it).
struct ws_deciding {
    std::string key;
    held_fields fields;
    std::int64_t deadline_ms = 0;
    std::string early_bytes;
};
inline constexpr std::size_t ws_deciding_bytes = 64 * 1024;

// What only some WebSocket connections need, so it is made on demand (the taker holds a
// pointer): a reader of its own while a frame or message is open across reads, its place in
// the budget's line of pushed output while the client leaves output unread (push_ledger.hpp),
// and an upgrade's wait for its decision.
struct ws_side : stalled_output {
    std::unique_ptr<websocket::message_reader> own;
    push_ledger* ledger = nullptr;  // the line it is in (the door's), to leave it without a door
    std::unique_ptr<ws_deciding> deciding;
};

// The loop's side of one WebSocket connection (the file comment says what it does), in one
// block with the state its peers share (ws_state, peer.hpp): the connection holds one count
// of it, and dispose() ends the loop's part; the block goes with the last count.
class ws_taker final : public handed, public ws_state {
public:
    explicit ws_taker(counted_ref<ws_route> r) noexcept { route = std::move(r); }
    // An upgrade whose decision comes later (on_decision): nothing is written until then.
    ws_taker(counted_ref<ws_route> r, std::unique_ptr<ws_deciding> later) : stage_(stage::deciding) {
        route = std::move(r);
        side().deciding = std::move(later);
    }

    // The connection is done with it: peers' sends are dropped from now on, and what only the
    // loop touches goes; the block stays while a peer or a post holds a count.
    void dispose() noexcept override {
        unlink();
        side_.reset();
        ws_ref::drop(this);
    }

    // Nothing behind the handshake is read here: it waits in c.in for await().
    std::size_t begin(door& d, connection& c, pending_body&, char*, std::size_t) override {
        conn_ = &c;
        if (stage_ == stage::deciding) {
            std::int64_t wait = d.settings().deferred_timeout.count();
            side_->deciding->deadline_ms = wait == 0 ? std::numeric_limits<std::int64_t>::max() : d.now_ms() + wait;
        }
        if (!d.workers_wait()) bind();  // else once the worker's event is done (take_from_workers)
        else tick_ms_ = static_cast<std::uint16_t>(tick_for(d.settings()));
        return 0;
    }

    fate on_readable(door& d, connection& c) override {
        read_result r = d.read(c);
        if (r.outcome == read_outcome::retry) return fate::open;
        if (r.outcome == read_outcome::ended) return d.close(c);  // abandon() tells on_close 1006
        if (SKIFF_UNLIKELY(stage_ == stage::deciding)) return keep_for_later(d, c, r);
        on_bytes(d, r.data, r.size);
        return settle(d, c);
    }

    // Once a tick (deadline_kind::paused): the close handshake's wait, the stop, idleness,
    // and the keepalive ping.
    fate on_deadline(door& d, connection& c) override {
        std::int64_t now = d.now_ms();
        if (SKIFF_UNLIKELY(stage_ == stage::deciding)) return decide_by_deadline(d, c, now);
        if (stage_ == stage::closing && now >= mark_ms_) return d.close(c);
        if (stage_ == stage::open && (d.stopping() || now >= mark_ms_ + idle_ms(d))) {
            callback_scope scope(*this, d);
            bool stop = d.stopping();
            start_close(d, stop ? websocket::close_code::going_away : websocket::close_code::normal, stop ? "server stopping" : "idle");
            return settle(d, c);
        }
        if (stage_ == stage::open && wants_ping(d, now)) {
            ping_ = ping_state::sent;
            d.write(websocket::make_frame_head(websocket::opcode::ping, websocket::fin_bit::final, 0).view());
            return settle(d, c);
        }
        arm_tick(d, c);
        return fate::open;
    }

    // The output is written: the first time, the 101 head, so the WebSocket opens and reads
    // the bytes that came behind the handshake; then, wait for the client.
    fate await(door& d, connection& c) override {
        if (stage_ == stage::head_sent) return open_now(d, c);
        d.watch(c, watch_read);
        arm_tick(d, c);
        return fate::open;
    }

    void abandon() noexcept override {
        if (state().phase.load(std::memory_order_relaxed) == ws_phase::closed) return;
        unlink();
        if (stage_ != stage::deciding) tell_close(websocket::close_code::abnormal, {});  // else it never opened
    }

    // Parked output went: the peers see it in buffered(), and on_drain may hear. Its sends are
    // posted (nothing flushes after this call). A client that takes output is not idle: one
    // reading a long message slowly was closed as idle the moment it had read it all.
    void on_sent(door& d, connection& c) override {
        if (stage_ == stage::open) mark_ms_ = d.now_ms();
        note_parked(d, c);
        if (side_ != nullptr && side_->stalled_bytes != 0) {  // less held now: nobody is shed
            side_->ledger->note(*side_, c.out.capacity(), c);
            release_side_if_idle();
        }
        tell_if_drained();
    }

    // shared: the upgrade's event is done; the hub's processor takes the connection
    // (taker_hub.hpp). Declared inline here, or it would be the class's key function (as
    // answer_wait.hpp explains).
    inline bool take_from_workers(loop_context& ctx, connection& c) override;

    // The hub's steps under shared, each under its process lock (taker_hub.hpp).
    fate on_hub_tick(door& d, connection& c);
    fate on_socket_ready(door& d, connection& c);
    fate on_bound(door& d, connection& c);
    void watch_again(connection& c, bool fired);

    // ---- what the peers reach, on the loop ------------------------------------------------

    // Inside a callback of this connection: straight into the batch (settle() flushes it).
    void send_here(websocket::opcode op, std::string_view payload) {
        websocket::frame_head head = websocket::make_frame_head(op, websocket::fin_bit::final, payload.size());
        ws_current.out->write(head.view());
        ws_current.out->write(payload);
        parked.fetch_add(static_cast<std::uint32_t>(head.size + payload.size()), std::memory_order_relaxed);
    }
    void close_here(websocket::close_code code, std::string_view reason) { start_close(*ws_current.out, code, reason); }

    // A frame posted from elsewhere (any thread), through the hub.
    fate on_post(door& d, connection& c, std::string_view frame) {
        if (stage_ != stage::open) return fate::open;  // closing: nothing more goes out
        d.write(frame);
        return settle(d, c);
    }
    fate on_close_post(door& d, connection& c, websocket::close_code code, std::string& reason) {
        if (stage_ != stage::open) return fate::open;
        start_close(d, code, reason);
        return settle(d, c);
    }

    fate on_decision(door& d, connection& c, ws_decision& what);  // taker_later.hpp

    connection* conn() const noexcept { return conn_; }

private:
    // deciding: an upgrade decided later waits for its decision, nothing written; head_sent:
    // the 101 head is on its way; open; closing: our close frame is written and the client's
    // is awaited.
    enum class stage : std::uint8_t { deciding, head_sent, open, closing };
    // How the connection ends once its output is written: not yet, closed, or lingering (a
    // failure: the client may still be sending, and must read our close frame, not a reset).
    enum class ending : std::uint8_t { none, close, linger };

    // While a callback runs: its own peer's sends go into the batch through this door.
    struct callback_scope {
        callback_scope(ws_taker& t, door& d) noexcept : outer(ws_current) { ws_current = {&t.state(), &t, &d}; }
        ~callback_scope() { ws_current = outer; }
        callback_scope(const callback_scope&) = delete;
        callback_scope& operator=(const callback_scope&) = delete;
        ws_callback_context outer;
    };
    // While a callback that no flush follows runs (on_drain, on_close): its sends are posted.
    struct posted_sends_scope {
        posted_sends_scope() noexcept : outer(ws_current.state) { ws_current.state = nullptr; }
        ~posted_sends_scope() { ws_current.state = outer; }
        posted_sends_scope(const posted_sends_scope&) = delete;
        posted_sends_scope& operator=(const posted_sends_scope&) = delete;
        ws_state* outer;
    };

    ws_state& state() noexcept { return *this; }
    const websocket::handlers& callbacks() const noexcept { return *route->h; }
    // The handle a callback is given (a count of its own: the application may keep a copy).
    websocket::peer self() noexcept { return websocket::peer(ws_ref::share(this)); }
    // What the socket has not taken, as the peers see it (below 2^32: peer.hpp says why).
    void note_parked(door& d, connection& c) noexcept {
        parked.store(static_cast<std::uint32_t>(std::min<std::uint64_t>(d.parked(c), ws_max_held * 2 - 1)), std::memory_order_relaxed);
    }

    // handlers::idle_timeout, else options::idle_timeout (looked up once a tick, not kept: an
    // idle connection carries no copy).
    std::int64_t idle_ms(door& d) const noexcept {
        std::int64_t own = callbacks().idle_timeout.count();
        return own != 0 ? own : d.settings().idle_timeout.count();
    }

    // The 101 is out: the WebSocket opens (taker_frames.hpp).
    fate open_now(door& d, connection& c, std::string* sent_meanwhile = nullptr);

    // An upgrade decided later, until its decision (taker_later.hpp).
    fate keep_for_later(door& d, connection& c, const read_result& r);
    fate decide_by_deadline(door& d, connection& c, std::int64_t now);
    fate refuse(door& d, connection& c, int status, std::string_view body);

    // Frames in, control frames out, the close handshake (taker_frames.hpp).
    void on_bytes(door& d, char* data, std::size_t len);
    void read_own(door& d, char* data, std::size_t len);
    websocket::message_limits limits() const noexcept;
    void read_events(door& d, websocket::message_reader& reader, char* data, std::size_t len);
    void deliver(door& d, const websocket::message_event& e);
    void pong(door& d, std::string_view payload);
    void on_peer_close(door& d, const websocket::message_event& e);
    void fail(door& d, websocket::close_code code);
    void start_close(door& d, websocket::close_code code, std::string_view reason);
    void write_close(door& d, websocket::close_code code, std::string_view reason);
    void tell_close(websocket::close_code code, std::string_view reason) noexcept;

    // What only some connections need, made when one does (an idle one carries the pointer).
    ws_side& side() {
        if (side_ == nullptr) side_ = std::make_unique<ws_side>();
        return *side_;
    }
    void release_side_if_idle() noexcept {
        if (side_ != nullptr && side_->own == nullptr && side_->stalled_bytes == 0 && side_->deciding == nullptr)
            side_.reset();
    }

    // What the client has not taken goes in the budget's line of pushed output (push_ledger.hpp):
    // past push output's share, the connection stalled longest is closed, this one or another
    // (a push stream's, or a WebSocket's). Under shared only once the hub holds the connection,
    // as the line is touched only under the hub's process lock.
    fate note_output(door& d, connection& c) {
        std::size_t held = c.out.capacity();
        if (held == 0 && (side_ == nullptr || side_->stalled_bytes == 0)) return fate::open;  // the usual case
        if (d.workers_wait() && holder_ != holder::hub) return fate::open;
        ws_side& x = side();
        x.ledger = &d.pushes();
        fate f = note_stalled(d, *x.ledger, x, c, held);
        if (f == fate::open) release_side_if_idle();  // (shed: unlink() left the line, c is going)
        return f;
    }

    // Quiet for half the idle timeout, and not pinged since it last sent anything.
    bool wants_ping(door& d, std::int64_t now) const noexcept {
        return callbacks().keepalive == websocket::keepalive::ping && ping_ == ping_state::not_sent &&
               now >= mark_ms_ + idle_ms(d) / 2;
    }

    // A callback that throws fails the connection with 1011 (the application broke).
    template <class Fn>
    void guarded(door& d, Fn&& fn) {
        call_guarded(fn, [&] { fail(d, websocket::close_code::internal_error); });
    }

    // After bytes went into the batch: flush them, and wait for what comes next; or, once the
    // WebSocket ended, give the connection back to close after its output. Nothing of this
    // taker is touched after d.finish() (it is freed when the event is over).
    fate settle(door& d, connection& c) {
        if (ending_ != ending::none) {
            unlink();
            if (ending_ == ending::linger) d.linger_after_output(c);
            else d.close_after_output(c);
            d.finish(c);
            return d.after_write(c, d.flush(c));
        }
        write_status w = d.flush(c);
        if (w == write_status::failed) return d.close(c);
        note_parked(d, c);
        if (SKIFF_UNLIKELY(note_output(d, c) == fate::closed)) return fate::closed;
        tell_if_drained();
        return d.after_write(c, w);
    }

    void tell_if_drained();  // taker_frames.hpp

    void hand_to_hub(loop_context& ctx);  // take_from_workers' work (taker_hub.hpp)

    // Posts reach this taker from now on (shared: bound under the hub's process lock, since
    // the processor may be applying a post to s meanwhile; see take_from_workers).
    void bind() noexcept { link.store(ws_link::bound, std::memory_order_relaxed); }

    // Peers' sends are dropped from now on, and posted ones find no taker. A connection the
    // hub held is no longer its: the socket's events go back to the workers' registration.
    void unlink() noexcept {
        if (side_ != nullptr && side_->stalled_bytes != 0) side_->ledger->forget(*side_);
        phase.store(ws_phase::closed, std::memory_order_release);
        link.store(ws_link::finished, std::memory_order_relaxed);
        if (holder_ != holder::hub) return;
        holder_ = holder::workers;
        call_guarded([&] { route->hub->release_socket(&state()); }, [] {});
    }

    // The deadline that brings the tick: the loop's `paused` (single, sharded); under shared a
    // backstop, since the hub's timer ticks (see the file comment).
    static void arm_tick(door& d, connection& c) {
        d.arm(c, d.workers_wait() ? deadline_kind::awaited : deadline_kind::paused);
    }

    enum class told : std::uint8_t { not_yet, closed };
    enum class ping_state : std::uint8_t { not_sent, sent };
    // Who serves the connection's events: the workers (or the loop), or, under shared once the
    // upgrade's event is over, the hub's processor.
    enum class holder : std::uint8_t { workers, hub };

    std::unique_ptr<ws_side> side_;  // only while a frame or message is open across reads, or output stalls
    connection* conn_ = nullptr;
    std::int64_t mark_ms_ = 0;  // open: when the client last sent or took output; closing: when the wait for its close ends
    stage stage_ = stage::head_sent;
    ending ending_ = ending::none;
    told told_ = told::not_yet;
    ping_state ping_ = ping_state::not_sent;
    holder holder_ = holder::workers;
    std::uint8_t watched_ = watch_none;  // what the hub last watched the socket for
    std::uint16_t tick_ms_ = 0;          // shared: the set's tick (5-250 ms), the hub timer's period
};

// The taker whose state s is (its own block). The last count frees the block, on whatever
// thread dropped it (dispose() has ended the loop's part before the connection's count went).
inline ws_taker& taker_of(ws_state& s) noexcept { return static_cast<ws_taker&>(s); }
inline void counted_free(ws_state* s) noexcept { delete &taker_of(*s); }

// shared: the upgrade's event is done; the hub's processor takes the connection
// (taker_hub.hpp).
inline bool ws_taker::take_from_workers(loop_context& ctx, connection&) {
    if (holder_ != holder::hub) hand_to_hub(ctx);
    return true;
}

} // namespace skiff::detail

inline skiff::websocket::peer::peer(detail::ws_ref&& s) noexcept : s_(std::move(s)) {}  // (peer.hpp)

#endif // SKIFF_WEBSOCKET_TAKER_HPP
