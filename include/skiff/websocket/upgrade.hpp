// A WebSocket connection behind the engine's door (server/handover.hpp): the upgrade a route's
// handler asks for, the taker that runs the connection afterwards, and the handle (peer) that
// sends on it from the loop or from any thread.
//
//   skiff::websocket::handlers echo;
//   echo.on_message = [](ws::peer& p, std::string_view data, ws::kind k) { p.send(data, k); };
//   app.get("/echo", ws::upgrade(echo));                      // or, in any handler:
//   if (token_ok(req)) ws::accept(req, res, shared_handlers, "chat.v1"); else res.status(401).end();
//
//   accept()       checks the handshake (RFC 6455 §4.2.1: 400, 405, or 426 with the version),
//                  writes the 101 head and hands the connection to a ws_taker once the
//                  handler returns (as defer() does); a handler that does not call it answers
//                  as usual, which is how an upgrade is refused
//   ws_taker       reads frames (message_reader), answers pings, echoes a close and closes
//                  after it, fails with the reader's code (1002, 1007, 1009), closes idle
//                  connections and, when the server stops, closes every WebSocket with 1001
//   peer           send() and close() from the loop (inside a callback: straight into the
//                  batch) or any thread (posted to the loop's hub, async/hub.hpp); each send
//                  says queued, backpressure (past options::write_high_water) or dropped (past
//                  the backlog limit, or the connection is closing or gone)
//
// The engine knows none of this: a program that never upgrades compiles none of it (every
// function is inline and reached only from accept(); tests/compile/no_feature_symbols.cmake).
//
// Deadlines: the taker keeps its connection on the `paused` deadline, which calls it once a
// tick (options: a tick is a tenth of the shortest timeout, 5-250 ms), and decides itself:
// the idle deadline (handlers::idle_timeout, else options::idle_timeout, counted from the last
// read; a quiet client is pinged at half of it, handlers::keepalive), the stop
// (door::stopping()), and the close handshake's wait (linger_timeout).
// While output is parked the session's write deadline stands instead (the client does not read).
//
// Not yet: the shared policy (accept() answers 501 there: a connection belongs to whichever
// worker serves its event, and a send from another thread has no safe way to it yet); deciding
// the upgrade later from another thread; broadcast without a copy per peer.
//
// Invariants: ws_state::taker names the taker exactly while the connection is handed to it
// (bound in begin(), cleared by unlink() before the connection closes or is given back), and
// only the loop's thread touches it; a posted send that finds it cleared is dropped. Bytes are
// written into the loop's batch only by code that flushes them before its event ends (settle()),
// so a callback that is not followed by a flush (on_drain, on_close) runs with ws_current unset
// and its sends are posted. The peer's phase only moves forward: open, closing, closed.
#ifndef SKIFF_WEBSOCKET_UPGRADE_HPP
#define SKIFF_WEBSOCKET_UPGRADE_HPP

#include "skiff/async/hub.hpp"
#include "skiff/detail/guarded_call.hpp"
#include "skiff/http/request.hpp"
#include "skiff/http/response.hpp"
#include "skiff/http/response_access.hpp"
#include "skiff/poller/poll_event.hpp"
#include "skiff/server/connection.hpp"
#include "skiff/server/handover.hpp"
#include "skiff/server/loop_hub.hpp"
#include "skiff/server/options.hpp"
#include "skiff/websocket/frame.hpp"
#include "skiff/websocket/frame_writer.hpp"
#include "skiff/websocket/handshake.hpp"
#include "skiff/websocket/message_reader.hpp"

#include <atomic>       // what any thread reads of a WebSocket
#include <chrono>       // std::chrono::milliseconds
#include <cstddef>      // std::size_t
#include <cstdint>      // std::int64_t, std::uint8_t, std::uint64_t
#include <functional>   // the application's callbacks
#include <memory>       // std::shared_ptr
#include <string>       // a frame posted from another thread
#include <string_view>  // std::string_view
#include <utility>      // std::move

namespace skiff::websocket {

enum class kind : std::uint8_t { text, binary };

// What became of a message given to peer::send (uWebSockets' SUCCESS, BACKPRESSURE, DROPPED).
enum class send_status : std::uint8_t {
    queued,        // on its way
    backpressure,  // on its way, but more than options::write_high_water waits: the client is slow
    dropped,       // not sent: the backlog passed its limit, or the connection is closing or gone
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

// As peers see it; only moves forward.
enum class ws_phase : std::uint8_t { open, closing, closed };

// One WebSocket's state, shared by its taker (on the loop) and its peers (any thread).
struct ws_state {
    std::shared_ptr<const websocket::handlers> h;
    std::size_t high_water = 0;  // options::write_high_water
    std::size_t limit = 0;       // the backlog past which sends are dropped
    std::atomic<ws_phase> phase{ws_phase::open};
    std::atomic<std::size_t> queued{0};  // posted from other threads, not yet in the loop's hands
    std::atomic<std::size_t> parked{0};  // written, not yet taken by the socket
    std::atomic<bool> wants_drain{false};
    ws_taker* taker = nullptr;  // loop-side (see the file comment)
};

// The WebSocket whose callback runs on this thread, so that its own sends go straight into
// the loop's batch rather than through the hub.
inline thread_local ws_state* ws_current = nullptr;

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
    std::size_t buffered() const noexcept {
        return s_ ? s_->queued.load(std::memory_order_relaxed) + s_->parked.load(std::memory_order_relaxed) : 0;
    }
    explicit operator bool() const noexcept { return s_ != nullptr; }
    friend bool operator==(const peer& a, const peer& b) noexcept { return a.s_ == b.s_; }
    friend bool operator!=(const peer& a, const peer& b) noexcept { return a.s_ != b.s_; }

private:
    friend class detail::ws_taker;
    peer(std::shared_ptr<detail::ws_state> s, std::shared_ptr<detail::async_hub> hub)
        : s_(std::move(s)), hub_(std::move(hub)) {}

    inline bool post_frame(std::string frame);

    std::shared_ptr<detail::ws_state> s_;
    std::shared_ptr<detail::async_hub> hub_;
};

} // namespace skiff::websocket

namespace skiff::detail {

// The loop's side of one WebSocket connection (the file comment says what it does).
class ws_taker final : public handed {
public:
    ws_taker(websocket::peer self, const websocket::handlers& h)
        : self_(std::move(self)), reader_(websocket::message_limits{h.max_message, h.delivery}) {}
    ~ws_taker() override { unlink(); }

    // Nothing behind the handshake is read here: it waits in c.in for await().
    std::size_t begin(door& d, connection& c, pending_body&, char*, std::size_t) override {
        conn_ = &c;
        state().taker = this;
        const options& o = d.settings();
        std::int64_t idle = state().h->idle_timeout.count();
        idle_ms_ = idle != 0 ? idle : o.idle_timeout.count();
        close_wait_ms_ = o.linger_timeout.count();
        return 0;
    }

    fate on_readable(door& d, connection& c) override {
        read_result r = d.read(c);
        if (r.outcome == read_outcome::retry) return fate::open;
        if (r.outcome == read_outcome::ended) return d.close(c);  // abandon() tells on_close 1006
        on_bytes(d, r.data, r.size);
        return settle(d, c);
    }

    // Once a tick (deadline_kind::paused): the close handshake's wait, the stop, idleness,
    // and the keepalive ping.
    fate on_deadline(door& d, connection& c) override {
        std::int64_t now = d.now_ms();
        if (stage_ == stage::closing && now >= close_due_) return d.close(c);
        if (stage_ == stage::open && (d.stopping() || now >= idle_due_)) {
            callback_scope scope(*this, d);
            bool stop = d.stopping();
            start_close(d, stop ? websocket::close_code::going_away : websocket::close_code::normal, stop ? "server stopping" : "idle");
            return settle(d, c);
        }
        if (stage_ == stage::open && wants_ping(now)) {
            ping_ = ping_state::sent;
            d.write(websocket::make_frame_head(websocket::opcode::ping, websocket::fin_bit::final, 0).view());
            return settle(d, c);
        }
        d.arm(c, deadline_kind::paused);
        return fate::open;
    }

    // The output is written: the first time, the 101 head, so the WebSocket opens and reads
    // the bytes that came behind the handshake; then, wait for the client.
    fate await(door& d, connection& c) override {
        if (stage_ == stage::head_sent) return open_now(d, c);
        d.watch(c, watch_read);
        d.arm(c, deadline_kind::paused);
        return fate::open;
    }

    void abandon() noexcept override {
        if (state().taker != this) return;
        unlink();
        tell_close(websocket::close_code::abnormal, {});
    }

    // Parked output went: the peers see it in buffered(), and on_drain may hear. Its sends are
    // posted (nothing flushes after this call).
    void on_sent(door& d, connection& c) override {
        state().parked.store(d.parked(c), std::memory_order_relaxed);
        tell_if_drained();
    }

    bool take_from_workers(loop_context&, connection&) override { return false; }

    // ---- what the peers reach, on the loop ------------------------------------------------

    // Inside a callback of this connection: straight into the batch (settle() flushes it).
    void send_here(websocket::opcode op, std::string_view payload) {
        websocket::frame_head head = websocket::make_frame_head(op, websocket::fin_bit::final, payload.size());
        door_->write(head.view());
        door_->write(payload);
        state().parked.fetch_add(head.size + payload.size(), std::memory_order_relaxed);
    }
    void close_here(websocket::close_code code, std::string_view reason) { start_close(*door_, code, reason); }

    // A frame posted from elsewhere (any thread), through the hub.
    fate on_post(door& d, connection& c, std::string& frame) {
        if (stage_ != stage::open) return fate::open;  // closing: nothing more goes out
        d.write(frame);
        return settle(d, c);
    }
    fate on_close_post(door& d, connection& c, websocket::close_code code, std::string& reason) {
        if (stage_ != stage::open) return fate::open;
        start_close(d, code, reason);
        return settle(d, c);
    }

    connection* conn() const noexcept { return conn_; }

    // A handle to a new WebSocket (accept()).
    static websocket::peer make_peer(std::shared_ptr<ws_state> s, std::shared_ptr<async_hub> hub) {
        return websocket::peer(std::move(s), std::move(hub));
    }

private:
    // head_sent: the 101 head is on its way; open; closing: our close frame is written and the
    // client's is awaited.
    enum class stage : std::uint8_t { head_sent, open, closing };
    // How the connection ends once its output is written: not yet, closed, or lingering (a
    // failure: the client may still be sending, and must read our close frame, not a reset).
    enum class ending : std::uint8_t { none, close, linger };

    // While a callback runs: its own peer's sends go into the batch through this door.
    struct callback_scope {
        callback_scope(ws_taker& t, door& d) noexcept : prev(ws_current) {
            ws_current = &t.state();
            t.door_ = &d;
        }
        ~callback_scope() { ws_current = prev; }
        callback_scope(const callback_scope&) = delete;
        callback_scope& operator=(const callback_scope&) = delete;
        ws_state* prev;
    };

    ws_state& state() const noexcept { return *peer_state(self_); }
    static ws_state* peer_state(const websocket::peer& p) noexcept { return p.s_.get(); }

    fate open_now(door& d, connection& c) {
        stage_ = stage::open;
        idle_due_ = d.now_ms() + idle_ms_;
        {
            callback_scope scope(*this, d);
            if (state().h->on_open) guarded(d, [&] { state().h->on_open(self_); });
        }
        if (!c.in.empty() && ending_ == ending::none) {  // the bytes behind the handshake
            on_bytes(d, c.in.data(), c.in.size());
            c.in.release();  // a pool buffer the size of a head: not charged to the budget
        }
        return settle(d, c);
    }

    // What a read brought: every event the reader finds, until it needs more or the
    // connection ends. Views handed to callbacks point into data or the reader.
    void on_bytes(door& d, char* data, std::size_t len) {
        idle_due_ = d.now_ms() + idle_ms_;
        ping_ = ping_state::not_sent;
        callback_scope scope(*this, d);
        std::size_t at = 0;
        while (ending_ == ending::none) {
            std::size_t used = 0;
            websocket::message_event e = reader_.next(data + at, len - at, used);
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
    bool wants_ping(std::int64_t now) const noexcept {
        return state().h->keepalive == websocket::keepalive::ping && ping_ == ping_state::not_sent &&
               now >= idle_due_ - idle_ms_ / 2;
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
        close_due_ = d.now_ms() + close_wait_ms_;
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
        tell_if_drained();
        return d.after_write(c, w);
    }

    void tell_if_drained() {
        ws_state& s = state();
        if (!s.h->on_drain || !s.wants_drain.load(std::memory_order_relaxed)) return;
        std::size_t held = s.queued.load(std::memory_order_relaxed) + s.parked.load(std::memory_order_relaxed);
        if (held > s.high_water / 2 || !s.wants_drain.exchange(false, std::memory_order_relaxed)) return;
        ws_state* outer = ws_current;
        ws_current = nullptr;  // its sends are posted: no flush follows this call
        call_guarded([&] { s.h->on_drain(self_); }, [] {});
        ws_current = outer;
    }

    // Peers' sends are dropped from now on, and posted ones find no taker.
    void unlink() noexcept {
        ws_state& s = state();
        s.phase.store(ws_phase::closed, std::memory_order_release);
        if (s.taker == this) s.taker = nullptr;
    }

    void tell_close(websocket::close_code code, std::string_view reason) noexcept {
        if (told_ == told::closed) return;
        told_ = told::closed;
        const websocket::handlers& h = *state().h;
        if (!h.on_close) return;
        ws_state* outer = ws_current;
        ws_current = nullptr;
        call_guarded([&] { h.on_close(self_, code, reason); }, [] {});
        ws_current = outer;
    }

    enum class told : std::uint8_t { not_yet, closed };
    enum class ping_state : std::uint8_t { not_sent, sent };

    websocket::peer self_;
    websocket::message_reader reader_;
    connection* conn_ = nullptr;
    door* door_ = nullptr;  // the current event's, for send_here()
    std::int64_t idle_ms_ = 0;
    std::int64_t close_wait_ms_ = 0;
    std::int64_t idle_due_ = 0;
    std::int64_t close_due_ = 0;
    stage stage_ = stage::head_sent;
    ending ending_ = ending::none;
    told told_ = told::not_yet;
    ping_state ping_ = ping_state::not_sent;
};

// ---- what the hub brings, on the loop that serves the connection ---------------------------

// Runs step(taker, door, connection) if s still names a taker; else the post is dropped.
template <class Step>
void on_ws(loop_context& ctx, ws_state& s, Step& step) {
    if (s.taker == nullptr) return;
    ctx.serve_handed(
        *s.taker->conn(),
        [](door& d, connection& c, void* p) -> fate {
            return (*static_cast<Step*>(p))(static_cast<ws_taker&>(*c.stream->taker), d, c);
        },
        &step, loop_context::expiry::ignored);
}

inline void apply_ws_send(loop_context& ctx, ws_state& s, std::string& frame) {
    s.queued.fetch_sub(frame.size(), std::memory_order_relaxed);
    auto step = [&frame](ws_taker& t, door& d, connection& c) { return t.on_post(d, c, frame); };
    on_ws(ctx, s, step);
}

inline void apply_ws_close(loop_context& ctx, ws_state& s, websocket::close_code code, std::string& reason) {
    auto step = [&](ws_taker& t, door& d, connection& c) { return t.on_close_post(d, c, code, reason); };
    on_ws(ctx, s, step);
}

} // namespace skiff::detail

namespace skiff::websocket {

inline send_status peer::send(std::string_view data, kind k) {
    if (!is_open()) return send_status::dropped;
    std::size_t held = buffered();
    if (held > s_->limit) return send_status::dropped;
    opcode op = k == kind::text ? opcode::text : opcode::binary;
    std::size_t size = data.size() + make_frame_head(op, fin_bit::final, data.size()).size;
    if (detail::ws_current == s_.get()) {
        s_->taker->send_here(op, data);
    } else {
        std::string frame;
        frame.reserve(size);
        append_frame(frame, op, data);
        if (!post_frame(std::move(frame))) return send_status::dropped;
    }
    if (held + size <= s_->high_water) return send_status::queued;
    s_->wants_drain.store(true, std::memory_order_relaxed);
    return send_status::backpressure;
}

inline bool peer::post_frame(std::string frame) {
    std::size_t size = frame.size();
    s_->queued.fetch_add(size, std::memory_order_relaxed);
    bool posted = hub_->post([s = s_, frame = std::move(frame)](detail::loop_context& ctx) mutable {
        detail::apply_ws_send(ctx, *s, frame);
    });
    if (!posted) s_->queued.fetch_sub(size, std::memory_order_relaxed);  // the loop is gone
    return posted;
}

inline send_status peer::close(close_code code, std::string_view reason) {
    if (!is_open()) return send_status::dropped;
    if (detail::ws_current == s_.get()) {
        s_->taker->close_here(code, reason);
        return send_status::queued;
    }
    bool posted = hub_->post([s = s_, code, r = std::string(reason)](detail::loop_context& ctx) mutable {
        detail::apply_ws_close(ctx, *s, code, r);
    });
    return posted ? send_status::queued : send_status::dropped;
}

// A handshake refused (check_handshake's verdict): its status, and the field it must carry.
inline void refuse_handshake(response& res, const handshake_check& check) {
    res.status(check.status);
    if (check.verdict == handshake_verdict::not_get) res.header("Allow", "GET");
    if (check.verdict == handshake_verdict::bad_version) res.header(version_field_name, version);
    res.text(check.status == 426 ? "Upgrade Required\n" : check.status == 405 ? "Method Not Allowed\n" : "Bad Request\n");
}

// Accepts the upgrade req asks for (a route's handler calls it after its own checks): false,
// with the answer given (400, 405, 426; 501 under the shared policy), when it cannot. The
// fields the chain set so far (middleware's) go into the 101 head; `protocol`, if not empty,
// is the subprotocol chosen (choose_protocol()), and must be a token (else 500).
inline bool accept(const request& req, response& res, std::shared_ptr<const handlers> h, std::string_view protocol = {}) {
    if (res.sent() || !h) return false;
    handshake_check check = check_handshake(req);
    if (check.verdict != handshake_verdict::accept) {
        refuse_handshake(res, check);
        return false;
    }
    detail::hub_anchor* a = detail::response_access::anchor(res);
    if (a != nullptr && a->mode == detail::poll_mode::oneshot) {  // the shared policy (see the file comment)
        res.status(501).text("WebSocket is not served under the shared policy yet\n");
        return false;
    }
    std::shared_ptr<detail::async_hub> hub = a != nullptr ? detail::async_hub::of(*a) : nullptr;
    std::string head;
    detail::held_fields fields = detail::response_access::hold_fields(res);
    if (!hub || !append_accept_head(head, check.key, protocol, fields.bytes)) {
        res.status(500).text("Internal Server Error\n");
        return false;
    }
    auto s = std::make_shared<detail::ws_state>();
    s->h = h;
    s->high_water = a->push_high_water;
    s->limit = h->max_backlog != 0 ? h->max_backlog : static_cast<std::size_t>(a->push_limit);
    detail::response_access::send_head(res, head, 101);
    detail::response_access::hand_over(res, nullptr, new detail::ws_taker(detail::ws_taker::make_peer(std::move(s), std::move(hub)), *h));
    return true;
}

// A route handler that upgrades every request it gets (refusing bad handshakes as accept() does).
inline auto upgrade(handlers h) {
    return [shared = std::make_shared<const handlers>(std::move(h))](request& req, response& res) { accept(req, res, shared); };
}

} // namespace skiff::websocket

#endif // SKIFF_WEBSOCKET_UPGRADE_HPP
