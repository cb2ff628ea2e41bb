// What the hub brings a WebSocket taker (taker.hpp has the class): the peers' sends and
// closes, and an upgrade's decision, posted from any thread and applied on the loop that
// serves the connection; and under shared, the hub's hold on the connection.
//
// Under shared any worker may serve a connection's next event, and the set's reaper wakes an
// expired connection only by shutting its socket down, so neither can run a WebSocket, whose
// peers post to it from any thread and which needs a tick. Once the upgrade's event is over the
// hub's processor takes the connection from the workers (take_from_workers), as it does a
// deferred answer's: it watches the socket (async_hub::hold_counted_socket) and runs the tick
// on a hub timer, so every step of a shared WebSocket (a read, a write, a tick, a post) runs
// under the hub's process lock, one at a time. The set's deadline is then only a backstop
// (`awaited`, pushed back each tick) that the reaper would act on if the hub stalled. What
// peers posted before the hub held it is kept (ws_state::early) and sent first, in order.
//
// Not here: the peer's side of a post (upgrade.hpp: peer::send), or one frame to many
// (broadcast.hpp).
#ifndef SKIFF_WEBSOCKET_TAKER_HUB_HPP
#define SKIFF_WEBSOCKET_TAKER_HUB_HPP

#include "skiff/async/hub.hpp"
#include "skiff/engine/connection.hpp"
#include "skiff/engine/handover.hpp"
#include "skiff/engine/loop_hub.hpp"
#include "skiff/websocket/peer.hpp"
#include "skiff/websocket/taker.hpp"

#include <atomic>       // std::memory_order
#include <memory>       // std::shared_ptr, std::make_unique
#include <string>       // a close's reason
#include <string_view>  // std::string_view
#include <utility>      // std::move

namespace skiff::detail {

inline void ws_socket_ready(loop_context& ctx, void* owner);

// ---- what the hub brings, on the loop that serves the connection ---------------------------

// Runs step(taker, door, connection) if s is bound to a taker; else the post is dropped.
// Under shared the hub then watches the socket again while it still holds the connection
// (`fired`: the step answered the watch's readiness, which one-shot disarmed).
template <class Step>
void on_ws(loop_context& ctx, ws_state& s, loop_context::expiry e, Step& step, bool fired = false) {
    if (s.link.load(std::memory_order_relaxed) != ws_link::bound) return;
    ws_taker& t = taker_of(s);
    connection& c = *t.conn();
    serve_taker<ws_taker>(ctx, c, e, step);
    if (s.link.load(std::memory_order_relaxed) == ws_link::bound) t.watch_again(c, fired);  // else t and c are gone
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
    s.take_queued(frame.size());
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

// ---- the hub's steps, under shared (each under its process lock) ----------------------

// Once a tick: as on_deadline, unless output is parked (the write deadline stands).
inline fate ws_taker::on_hub_tick(door& d, connection& c) {
    if (d.parked(c) != 0) return fate::open;
    return on_deadline(d, c);
}

// The socket the hub watches is ready: parked output goes first, then a read, as the
// loop serves a connection's event (writable, then readable). A readiness the wait
// reported before a later step re-aimed the watch may find nothing to do: the write and
// the read then say so (drained, retry), and the watch is set again.
inline fate ws_taker::on_socket_ready(door& d, connection& c) {
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
inline fate ws_taker::on_bound(door& d, connection& c) {
    std::unique_ptr<ws_early> early = std::move(this->early);
    if (early == nullptr) return settle(d, c);
    if (early->decision != nullptr) {
        if (on_decision(d, c, *early->decision) == fate::closed) return fate::closed;
        if (stage_ != stage::open) return fate::open;  // refused: the connection is no longer this taker's
    }
    take_queued(early->frames.size());
    if (stage_ == stage::open && !early->frames.empty()) d.write(early->frames);
    if (stage_ == stage::open && early->close_asked) start_close(d, early->code, early->reason);
    return settle(d, c);
}

// After a step, while the hub holds the connection: its socket watched again if the watch
// fired or the connection now waits for something else (one-shot: a watch that did not
// fire still stands).
inline void ws_taker::watch_again(connection& c, bool fired) {
    if (holder_ != holder::hub || (!fired && c.watching == watched_)) return;
    watched_ = c.watching;
    route->hub->hold_counted_socket(state(), &ws_socket_ready, c.fd, c.watching);
}

// Under the hub's process lock, so that no post is applied meanwhile: bound, ticked by a hub
// timer, and served its early posts; on_bound's settle, through on_ws, watches the socket.
inline void ws_taker::hand_to_hub(loop_context& ctx) {
    struct args {
        loop_context& ctx;
        ws_taker& t;
    } a{ctx, *this};
    route->hub->exclusive(
        [](void* p) {
            auto& x = *static_cast<args*>(p);
            ws_taker& t = x.t;
            t.bind();
            t.holder_ = holder::hub;
            ws_ref s = ws_ref::share(&t);
            t.route->hub->add_timer(t.tick_ms_, t.tick_ms_, [s](loop_context& c) { return ws_hub_tick(c, *s); });
            auto step = [](ws_taker& w, door& d, connection& at) { return w.on_bound(d, at); };
            on_ws(x.ctx, *s, loop_context::expiry::ignored, step, true);  // t may be gone after this
        },
        &a);
}

} // namespace skiff::detail

#endif // SKIFF_WEBSOCKET_TAKER_HUB_HPP
