// The taker that runs a WebSocket connection once it is handed over (websocket/upgrade.hpp
// has the whole picture): it reads frames (message_reader), answers pings, echoes a close and
// closes after it, fails with the reader's code (1002, 1007, 1009), closes idle connections
// and, when the server stops, closes every WebSocket with 1001; and the steps the hub brings
// it from other threads (a send, a close).
//
// Deadlines: once a tick (options: a tick is a tenth of the shortest timeout, 5-250 ms) the
// taker is called and decides itself: the idle deadline (handlers::idle_timeout, else
// options::idle_timeout, counted from the last read; a quiet client is pinged at half of it,
// handlers::keepalive), the stop (door::stopping()), and the close handshake's wait
// (linger_timeout). The tick is the `paused` deadline on the loop's wheel (single, sharded), or
// a hub timer under shared (below). While output is parked the session's write deadline stands
// instead (the client does not read).
//
// Under shared any worker may serve a connection's next event, and the set's reaper wakes an
// expired connection only by shutting its socket down, so neither can run a WebSocket, whose
// peers post to it from any thread and which needs a tick. Once the upgrade's event is over the
// hub's processor takes the connection from the workers (take_from_workers), as it does a
// deferred answer's: it watches the socket (async_hub::hold_shared_socket) and runs the tick
// on a hub timer, so every step of a shared WebSocket (a read, a write, a tick, a post) runs
// under the hub's process lock, one at a time. The set's deadline is then only a backstop
// (`awaited`, pushed back each tick) that the reaper would act on if the hub stalled. What
// peers posted before the hub held it is kept (ws_state::early) and sent first, in order.
//
// An upgrade decided later (accept_later) starts in the `deciding` stage: nothing is written,
// what the client sends is kept (ws_deciding, within ws_deciding_bytes), and each tick looks
// at the decision's deadline and the stop (503). The decision comes as a post does (under
// shared, kept in ws_state::early until the hub holds the connection): the 101, and the
// WebSocket opens; or the refusal, written as a late answer once the connection is no longer
// handed (refuse()).
//
// Output a client leaves unread joins the budget's line of pushed output (push_ledger.hpp),
// as a push stream's does: past push output's share the connection stalled longest is closed.
// The socket's send buffer is kept small (options::push_socket_buffer) so that the backlog
// waits here, where the line sees it.
//
// Memory: an idle WebSocket holds the taker (72 bytes, x86-64) and its ws_state, no message
// reader: a read borrows the thread's spare reader (ws_spare_reader()) and gives it back at rest
// before its event ends; only a frame or message left open across reads moves into a reader
// of the connection's own (side_->own), freed once it is at rest again. Either way nothing of one
// connection's reading stays with a thread, so any thread may serve its next event (a worker,
// or under shared the hub's processor).
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

inline void ws_socket_ready(loop_context& ctx, void* owner);

// The thread's spare message reader (the file comment says why), and whether an event is
// reading with it now (then a read that somehow begins inside that one takes its own).
// Local to a function, so that a program that never upgrades emits none of it (a namespace-
// scope thread_local with a constructor is emitted, with its init function, wherever it is seen).
struct ws_reader_loan {
    websocket::message_reader reader;
    bool out = false;
};
inline ws_reader_loan& ws_spare_reader() noexcept {
    thread_local ws_reader_loan loan;
    return loan;
}

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

// The loop's side of one WebSocket connection (the file comment says what it does).
class ws_taker final : public handed {
public:
    ws_taker(websocket::peer self, const websocket::handlers&) : self_(std::move(self)) {}
    // An upgrade whose decision comes later (on_decision): nothing is written until then.
    ws_taker(websocket::peer self, std::unique_ptr<ws_deciding> later) : self_(std::move(self)), stage_(stage::deciding) {
        side().deciding = std::move(later);
    }
    ~ws_taker() override { unlink(); }

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
    // posted (nothing flushes after this call).
    void on_sent(door& d, connection& c) override {
        state().parked.store(d.parked(c), std::memory_order_relaxed);
        if (side_ != nullptr && side_->stalled_bytes != 0) {  // less held now: nobody is shed
            side_->ledger->note(*side_, c.out.capacity(), c);
            release_side_if_idle();
        }
        tell_if_drained();
    }

    // shared: the upgrade's event is done; the hub's processor takes the connection (see the
    // file comment). Declared inline here, or it would be the class's key function (as
    // answer_wait.hpp explains).
    inline bool take_from_workers(loop_context& ctx, connection& c) override;

    // ---- the hub's steps, under shared (each under its process lock) ----------------------

    // Once a tick: as on_deadline, unless output is parked (the write deadline stands).
    fate on_hub_tick(door& d, connection& c) {
        if (d.parked(c) != 0) return fate::open;
        return on_deadline(d, c);
    }

    // The socket the hub watches is ready: parked output goes first, then a read, as the
    // loop serves a connection's event (writable, then readable). A readiness the wait
    // reported before a later step re-aimed the watch may find nothing to do: the write and
    // the read then say so (drained, retry), and the watch is set again.
    fate on_socket_ready(door& d, connection& c) {
        if (c.watching & watch_write) {
            write_status w = d.parked(c) == 0 ? write_status::drained : d.write_parked(c);
            if (w == write_status::failed) return d.close(c);
            on_sent(d, c);
            if (d.after_write(c, w) == fate::closed) return fate::closed;
        }
        if (c.watching & watch_read) return on_readable(d, c);
        return fate::open;
    }

    // The hub holds the connection now: what peers posted before goes out, in order (a
    // decision first: the peers' posts can only follow an accept).
    fate on_bound(door& d, connection& c) {
        std::unique_ptr<ws_early> early = std::move(state().early);
        if (early == nullptr) return settle(d, c);
        if (early->decision != nullptr) {
            if (on_decision(d, c, *early->decision) == fate::closed) return fate::closed;
            if (stage_ != stage::open) return fate::open;  // refused: the connection is no longer this taker's
        }
        state().queued.fetch_sub(early->frames.size(), std::memory_order_relaxed);
        if (stage_ == stage::open && !early->frames.empty()) d.write(early->frames);
        if (stage_ == stage::open && early->close_asked) start_close(d, early->code, early->reason);
        return settle(d, c);
    }

    // After a step, while the hub holds the connection: its socket watched again if the watch
    // fired or the connection now waits for something else (one-shot: a watch that did not
    // fire still stands).
    void watch_again(connection& c, bool fired) {
        if (holder_ != holder::hub || (!fired && c.watching == watched_)) return;
        watched_ = c.watching;
        self_.hub_->hold_shared_socket(self_.s_, &ws_socket_ready, c.fd, c.watching);
    }

    // ---- what the peers reach, on the loop ------------------------------------------------

    // Inside a callback of this connection: straight into the batch (settle() flushes it).
    void send_here(websocket::opcode op, std::string_view payload) {
        websocket::frame_head head = websocket::make_frame_head(op, websocket::fin_bit::final, payload.size());
        ws_current.out->write(head.view());
        ws_current.out->write(payload);
        state().parked.fetch_add(head.size + payload.size(), std::memory_order_relaxed);
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

    // The decision on an upgrade decided later: the 101 and the WebSocket opens (the bytes the
    // client sent meanwhile are read now), or the refusal, after which the connection closes.
    fate on_decision(door& d, connection& c, ws_decision& what) {
        if (stage_ != stage::deciding) return fate::open;  // one decision counts: pending_upgrade sends one
        if (d.stopping()) return refuse(d, c, 503, "Service Unavailable\n");
        if (what.verdict == ws_verdict::refuse) return refuse(d, c, what.status, what.body);
        std::string head;
        ws_deciding& later = *side_->deciding;
        if (!websocket::append_accept_head(head, later.key, what.protocol, later.fields.bytes))
            return refuse(d, c, 500, "Internal Server Error\n");  // a subprotocol that is not a token
        std::string early = std::move(later.early_bytes);
        side_->deciding.reset();
        release_side_if_idle();
        d.write(head);
        return open_now(d, c, &early);
    }

    connection* conn() const noexcept { return conn_; }

    // A handle to a new WebSocket (accept()).
    static websocket::peer make_peer(std::shared_ptr<ws_state> s, std::shared_ptr<async_hub> hub) {
        return websocket::peer(std::move(s), std::move(hub));
    }

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

    ws_state& state() const noexcept { return *peer_state(self_); }
    static ws_state* peer_state(const websocket::peer& p) noexcept { return p.s_.get(); }

    // handlers::idle_timeout, else options::idle_timeout (looked up once a tick, not kept: an
    // idle connection carries no copy).
    std::int64_t idle_ms(door& d) const noexcept {
        std::int64_t own = state().h->idle_timeout.count();
        return own != 0 ? own : d.settings().idle_timeout.count();
    }

    fate open_now(door& d, connection& c, std::string* sent_meanwhile = nullptr) {
        stage_ = stage::open;
        mark_ms_ = d.now_ms();
        // As a push stream's: what the client leaves unread waits here, where the budget's
        // line of pushed output sees it, not in a kernel buffer grown to megabytes.
        if (std::size_t buffer = d.settings().push_socket_buffer; buffer != 0) limit_send_buffer(c.fd, buffer);
        {
            callback_scope scope(*this, d);
            if (state().h->on_open) guarded(d, [&] { state().h->on_open(self_); });
        }
        if (!c.in.empty() && ending_ == ending::none) {  // the bytes behind the handshake
            on_bytes(d, c.in.data(), c.in.size());
            c.in.release();  // a pool buffer the size of a head: not charged to the budget
        }
        if (sent_meanwhile != nullptr && !sent_meanwhile->empty() && ending_ == ending::none)
            on_bytes(d, sent_meanwhile->data(), sent_meanwhile->size());  // while the upgrade was decided
        return settle(d, c);
    }

    // ---- an upgrade decided later, until its decision ----------------------------------------

    // What the client sends before the 101 is kept for the WebSocket, within ws_deciding_bytes.
    fate keep_for_later(door& d, connection& c, const read_result& r) {
        std::string& kept = side_->deciding->early_bytes;
        if (kept.size() + r.size > ws_deciding_bytes) return d.close(c);
        kept.append(r.data, r.size);
        return settle(d, c);
    }

    // Each tick: no decision by options::deferred_timeout, or the server stops: 503.
    fate decide_by_deadline(door& d, connection& c, std::int64_t now) {
        if (d.stopping() || now >= side_->deciding->deadline_ms) return refuse(d, c, 503, "Service Unavailable\n");
        arm_tick(d, c);
        return fate::open;
    }

    // The upgrade refused: an HTTP answer with the fields the chain set, then the connection
    // closes (the client may have sent frames already). The connection is no longer handed
    // first, as an upload's late answer does (upload.hpp); this taker is freed after the event.
    fate refuse(door& d, connection& c, int status, std::string_view body) {
        answer_context ctx;
        ctx.close = true;
        ctx.head_fields = std::move(side_->deciding->fields);
        unlink();
        d.finish(c);
        d.answer(c, ctx, [status, body](response& res) { res.status(status).text(body); });
        return d.after_write(c, d.flush(c));
    }

    // What a read brought, read with the connection's own reader if a frame or message is
    // open across reads, else with the thread's spare one (the file comment says why).
    void on_bytes(door& d, char* data, std::size_t len) {
        if (stage_ == stage::open) mark_ms_ = d.now_ms();
        ping_ = ping_state::not_sent;
        callback_scope scope(*this, d);
        ws_reader_loan& loan = ws_spare_reader();
        if ((side_ != nullptr && side_->own != nullptr) || loan.out) return read_own(d, data, len);
        loan.out = true;
        loan.reader.limit(limits());
        read_events(d, loan.reader, data, len);
        loan.out = false;
        if (loan.reader.at_rest()) return loan.reader.release_delivered();
        websocket::message_reader open = std::move(loan.reader);
        loan.reader = websocket::message_reader();  // at rest again before anything can throw
        if (ending_ == ending::none) side().own = std::make_unique<websocket::message_reader>(std::move(open));
    }

    // With a reader of the connection's own, kept only while it is not at rest.
    SKIFF_NOINLINE void read_own(door& d, char* data, std::size_t len) {
        ws_side& x = side();
        if (x.own == nullptr) x.own = std::make_unique<websocket::message_reader>(limits());
        read_events(d, *x.own, data, len);
        if (side_ != nullptr && side_->own->at_rest()) {  // (a failure may have ended it: side_ stays)
            side_->own.reset();
            release_side_if_idle();
        }
    }

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

    websocket::message_limits limits() const noexcept {
        const websocket::handlers& h = *state().h;
        return {h.max_message, h.delivery};
    }

    // Every event the reader finds, until it needs more or the connection ends. Views handed
    // to callbacks point into data or the reader.
    void read_events(door& d, websocket::message_reader& reader, char* data, std::size_t len) {
        std::size_t at = 0;
        while (ending_ == ending::none) {
            std::size_t used = 0;
            websocket::message_event e = reader.next(data + at, len - at, used);
            at += used;
            switch (e.step) {
            case websocket::message_step::need_more: return;
            case websocket::message_step::text:
            case websocket::message_step::binary: deliver(d, e); break;
            case websocket::message_step::ping: pong(d, e.data); break;
            case websocket::message_step::close: on_peer_close(d, e); return;
            case websocket::message_step::failed: fail(d, e.code); return;
            }
        }
    }

    void deliver(door& d, const websocket::message_event& e) {
        if (stage_ != stage::open) return;  // after our close: the client's data is dropped
        websocket::kind k = e.step == websocket::message_step::text ? websocket::kind::text : websocket::kind::binary;
        const websocket::handlers& h = *state().h;
        if (h.delivery == websocket::delivery::pieces) {
            if (h.on_piece) guarded(d, [&] { h.on_piece(self_, e.data, k, e.last); });
        } else if (h.on_message) {
            guarded(d, [&] { h.on_message(self_, e.data, k); });
        }
    }

    // Quiet for half the idle timeout, and not pinged since it last sent anything.
    bool wants_ping(door& d, std::int64_t now) const noexcept {
        return state().h->keepalive == websocket::keepalive::ping && ping_ == ping_state::not_sent &&
               now >= mark_ms_ + idle_ms(d) / 2;
    }

    void pong(door& d, std::string_view payload) {
        websocket::frame_head head = websocket::make_frame_head(websocket::opcode::pong, websocket::fin_bit::final, payload.size());
        d.write(head.view());
        d.write(payload);
    }

    // The client's close frame: echoed (its code, §5.5.1) unless ours went first; either way the
    // handshake is done and the connection closes once the output is written.
    void on_peer_close(door& d, const websocket::message_event& e) {
        if (stage_ == stage::open) write_close(d, e.code, {});
        ending_ = ending::close;
        tell_close(e.code, e.data);
    }

    void fail(door& d, websocket::close_code code) {
        if (stage_ == stage::open) write_close(d, code, {});
        ending_ = ending::linger;
        tell_close(code, {});
    }

    void start_close(door& d, websocket::close_code code, std::string_view reason) {
        if (stage_ != stage::open) return;
        write_close(d, code, reason);
        stage_ = stage::closing;
        mark_ms_ = d.now_ms() + d.settings().linger_timeout.count();
    }

    void write_close(door& d, websocket::close_code code, std::string_view reason) {
        std::string frame;
        websocket::append_close(frame, code, reason);
        d.write(frame);
        stage_ = stage::closing;
        state().phase.store(ws_phase::closing, std::memory_order_release);
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
        state().parked.store(d.parked(c), std::memory_order_relaxed);
        if (SKIFF_UNLIKELY(note_output(d, c) == fate::closed)) return fate::closed;
        tell_if_drained();
        return d.after_write(c, w);
    }

    void tell_if_drained() {
        ws_state& s = state();
        if (!s.h->on_drain || !s.wants_drain.load(std::memory_order_relaxed)) return;
        std::size_t held = s.queued.load(std::memory_order_relaxed) + s.parked.load(std::memory_order_relaxed);
        if (held > s.high_water / 2 || !s.wants_drain.exchange(false, std::memory_order_relaxed)) return;
        posted_sends_scope posted;
        call_guarded([&] { s.h->on_drain(self_); }, [] {});
    }

    // Posts reach this taker from now on (shared: bound under the hub's process lock, since
    // the processor may be applying a post to s meanwhile; see take_from_workers).
    void bind() noexcept {
        ws_state& s = state();
        s.taker = this;
        s.link.store(ws_link::bound, std::memory_order_relaxed);
    }

    // Peers' sends are dropped from now on, and posted ones find no taker. A connection the
    // hub held is no longer its: the socket's events go back to the workers' registration.
    void unlink() noexcept {
        ws_state& s = state();
        if (side_ != nullptr && side_->stalled_bytes != 0) side_->ledger->forget(*side_);
        s.phase.store(ws_phase::closed, std::memory_order_release);
        if (s.taker == this) s.taker = nullptr;
        s.link.store(ws_link::finished, std::memory_order_relaxed);
        if (holder_ != holder::hub) return;
        holder_ = holder::workers;
        call_guarded([&] { self_.hub_->release_socket(&s); }, [] {});
    }

    // The deadline that brings the tick: the loop's `paused` (single, sharded); under shared a
    // backstop, since the hub's timer ticks (see the file comment).
    static void arm_tick(door& d, connection& c) {
        d.arm(c, d.workers_wait() ? deadline_kind::awaited : deadline_kind::paused);
    }

    void tell_close(websocket::close_code code, std::string_view reason) noexcept {
        if (told_ == told::closed) return;
        told_ = told::closed;
        const websocket::handlers& h = *state().h;
        if (!h.on_close) return;
        posted_sends_scope posted;
        call_guarded([&] { h.on_close(self_, code, reason); }, [] {});
    }

    enum class told : std::uint8_t { not_yet, closed };
    enum class ping_state : std::uint8_t { not_sent, sent };
    // Who serves the connection's events: the workers (or the loop), or, under shared once the
    // upgrade's event is over, the hub's processor.
    enum class holder : std::uint8_t { workers, hub };

    websocket::peer self_;
    std::unique_ptr<ws_side> side_;  // only while a frame or message is open across reads, or output stalls
    connection* conn_ = nullptr;
    std::int64_t mark_ms_ = 0;  // open: when the client last sent; closing: when the wait for its close ends
    stage stage_ = stage::head_sent;
    ending ending_ = ending::none;
    told told_ = told::not_yet;
    ping_state ping_ = ping_state::not_sent;
    holder holder_ = holder::workers;
    std::uint8_t watched_ = watch_none;  // what the hub last watched the socket for
    std::uint16_t tick_ms_ = 0;          // shared: the set's tick (5-250 ms), the hub timer's period
};

// ---- what the hub brings, on the loop that serves the connection ---------------------------

// Runs step(taker, door, connection) if s is bound to a taker; else the post is dropped.
// Under shared the hub then watches the socket again while it still holds the connection
// (`fired`: the step answered the watch's readiness, which one-shot disarmed).
template <class Step>
void on_ws(loop_context& ctx, ws_state& s, loop_context::expiry e, Step& step, bool fired = false) {
    if (s.link.load(std::memory_order_relaxed) != ws_link::bound) return;
    ws_taker& t = *s.taker;
    connection& c = *t.conn();
    serve_taker<ws_taker>(ctx, c, e, step);
    if (s.link.load(std::memory_order_relaxed) == ws_link::bound) t.watch_again(c, fired);  // else t and c are gone
}

// A new WebSocket's shared state (accept(), accept_later()): the route's handlers, and its
// limits from the loop's options.
inline std::shared_ptr<ws_state> new_ws_state(const hub_anchor& a, std::shared_ptr<const websocket::handlers> h) {
    auto s = std::make_shared<ws_state>();
    s->high_water = a.push_high_water;
    s->limit = h->max_backlog != 0 ? h->max_backlog : static_cast<std::size_t>(a.push_limit);
    s->h = std::move(h);
    return s;
}

// shared: what is kept for s until the hub holds its connection, made on first use.
inline ws_early& early_of(ws_state& s) {
    if (s.early == nullptr) s.early = std::make_unique<ws_early>();
    return *s.early;
}

inline void apply_ws_send(loop_context& ctx, ws_state& s, std::string_view frame) {
    if (s.link.load(std::memory_order_relaxed) == ws_link::unbound) {
        early_of(s).frames += frame;  // shared: sent once the hub holds the connection (still queued)
        return;
    }
    s.queued.fetch_sub(frame.size(), std::memory_order_relaxed);
    auto step = [&frame](ws_taker& t, door& d, connection& c) { return t.on_post(d, c, frame); };
    on_ws(ctx, s, loop_context::expiry::ignored, step);
}

inline void apply_ws_close(loop_context& ctx, ws_state& s, websocket::close_code code, std::string& reason) {
    if (s.link.load(std::memory_order_relaxed) == ws_link::unbound) {
        ws_early& early = early_of(s);
        if (early.close_asked) return;
        early.close_asked = true;
        early.code = code;
        early.reason = std::move(reason);
        return;
    }
    auto step = [&](ws_taker& t, door& d, connection& c) { return t.on_close_post(d, c, code, reason); };
    on_ws(ctx, s, loop_context::expiry::ignored, step);
}

inline void apply_ws_decision(loop_context& ctx, ws_state& s, ws_decision& what) {
    if (s.link.load(std::memory_order_relaxed) == ws_link::unbound) {
        early_of(s).decision = std::make_unique<ws_decision>(std::move(what));  // shared: applied first when bound
        return;
    }
    auto step = [&](ws_taker& t, door& d, connection& c) { return t.on_decision(d, c, what); };
    on_ws(ctx, s, loop_context::expiry::ignored, step);
}

// shared: the socket the hub holds for s is ready. A deadline the reaper found passed (the
// write deadline, or the stop's end) is handled first, as for any event.
inline void ws_socket_ready(loop_context& ctx, void* owner) {
    auto step = [](ws_taker& t, door& d, connection& c) { return t.on_socket_ready(d, c); };
    on_ws(ctx, *static_cast<ws_state*>(owner), loop_context::expiry::served_first, step, true);
}

// shared: the hub's tick for s, until the connection is no longer the hub's.
inline timer_action ws_hub_tick(loop_context& ctx, ws_state& s) {
    auto step = [](ws_taker& t, door& d, connection& c) { return t.on_hub_tick(d, c); };
    on_ws(ctx, s, loop_context::expiry::ignored, step);
    return s.link.load(std::memory_order_relaxed) == ws_link::bound ? timer_action::keep : timer_action::stop;
}

// Under the hub's process lock, so that no post is applied meanwhile: bound, ticked by a hub
// timer, and served its early posts; on_bound's settle, through on_ws, watches the socket.
inline bool ws_taker::take_from_workers(loop_context& ctx, connection&) {
    if (holder_ == holder::hub) return true;
    struct args {
        loop_context& ctx;
        ws_taker& t;
    } a{ctx, *this};
    self_.hub_->exclusive(
        [](void* p) {
            auto& x = *static_cast<args*>(p);
            ws_taker& t = x.t;
            t.bind();
            t.holder_ = holder::hub;
            std::shared_ptr<ws_state> s = t.self_.s_;
            t.self_.hub_->add_timer(t.tick_ms_, t.tick_ms_, [s](loop_context& c) { return ws_hub_tick(c, *s); });
            auto step = [](ws_taker& w, door& d, connection& at) { return w.on_bound(d, at); };
            on_ws(x.ctx, *s, loop_context::expiry::ignored, step, true);  // t may be gone after this
        },
        &a);
    return true;
}

} // namespace skiff::detail

#endif // SKIFF_WEBSOCKET_TAKER_HPP
