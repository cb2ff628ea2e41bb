// A WebSocket connection behind the engine's door (engine/handover.hpp): the upgrade a route's
// handler asks for, the taker that runs the connection afterwards, and the handle (peer) that
// sends on it from the loop or from any thread.
//
//   skiff::websocket::handlers echo;
//   echo.on_message = [](ws::peer& p, std::string_view data, ws::kind k) { p.send(data, k); };
//   app.get("/echo", ws::upgrade(echo));                      // or, in any handler:
//   if (token_ok(req)) ws::accept(req, res, shared_handlers, "chat.v1"); else res.status(401).end();
//   pool.submit([up = ws::accept_later(req, res, shared_handlers)]() mutable { up.accept(); });
//
//   accept()       checks the handshake (RFC 6455 §4.2.1: 400, 405, or 426 with the version and Upgrade),
//                  writes the 101 head and hands the connection to a ws_taker once the
//                  handler returns (as defer() does); a handler that does not call it answers
//                  as usual, which is how an upgrade is refused
//   accept_later() the same checks, and the answer put off: a pending_upgrade accepts or
//                  refuses from any thread (503 past deferred_timeout or at stop)
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
// The parts: peer.hpp (what the application holds), taker.hpp and its parts (the
// connection's reading, deadlines and the steps the hub brings), this file (the upgrade, and
// the peer's sending).
//
// Every policy serves WebSocket. Under shared, where any worker may serve a connection's next
// event, the loop hub's processor takes each WebSocket from the workers once the upgrade's
// event is over and serves it from then on, one step at a time under its process lock: its
// reads and writes (the hub watches its socket), its tick (a hub timer) and the peers' posts
// (taker_hub.hpp says how).
//
// accept_later() puts the decision off: a pending_upgrade decides from any thread, and until
// then the connection waits in the taker's `deciding` stage (taker_later.hpp). (One message
// to many peers: broadcast.hpp.)
//
// Invariants: a WebSocket's state is its taker's (one block, peer.hpp); the link is bound
// while the taker serves the connection (from begin(), or under shared from
// take_from_workers(), until unlink() before the connection closes or is given back), and
// only the thread that serves the connection touches the taker's part (the loop's, or the
// hub's processor); a posted send that finds the link finished is dropped. Bytes are
// written into the loop's batch only by code that flushes them before its event ends (settle()),
// so a callback that is not followed by a flush (on_drain, on_close) runs with ws_current.state unset
// and its sends are posted. The peer's phase only moves forward: open, closing, closed.
#ifndef SKIFF_WEBSOCKET_UPGRADE_HPP
#define SKIFF_WEBSOCKET_UPGRADE_HPP

#include "skiff/async/hub.hpp"
#include "skiff/engine/loop_hub.hpp"
#include "skiff/http/request.hpp"
#include "skiff/http/response.hpp"
#include "skiff/http/response_access.hpp"
#include "skiff/websocket/frame.hpp"
#include "skiff/websocket/frame_writer.hpp"
#include "skiff/websocket/handshake.hpp"
#include "skiff/websocket/peer.hpp"
#include "skiff/websocket/taker.hpp"
#include "skiff/websocket/taker_frames.hpp"
#include "skiff/websocket/taker_hub.hpp"
#include "skiff/websocket/taker_later.hpp"

#include <cstdint>      // std::uint32_t, std::uint64_t
#include <memory>       // std::shared_ptr
#include <mutex>        // a loop's routes, looked up by the workers of a shared server
#include <string>       // a frame posted from another thread
#include <string_view>  // std::string_view
#include <utility>      // std::move
#include <vector>       // a loop's routes

namespace skiff::detail {

// A route for h on the loop of anchor a, whose hub is given: its limits from the loop's
// options and from h, each at most half of ws_max_held (peer.hpp says why).
inline counted_ref<ws_route> new_ws_route(const hub_anchor& a, std::shared_ptr<async_hub> hub,
                                          std::shared_ptr<const websocket::handlers> h) {
    auto counted = [](std::uint64_t n) { return static_cast<std::uint32_t>(n < ws_max_held / 2 ? n : ws_max_held / 2); };
    auto* r = new ws_route;
    r->high_water = counted(a.push_high_water);
    r->limit = counted(h->max_backlog != 0 ? h->max_backlog : static_cast<std::uint64_t>(a.push_limit));
    r->hub = std::move(hub);
    r->h = std::move(h);
    return counted_ref<ws_route>::adopt(r);
}

// The routes of one loop, one per handlers object (kept by the loop's hub: async_hub::kept),
// so that the connections accept() or upgrade() gives the same handlers on one loop share one.
// Workers of a shared server accept at once, hence the lock. A route no connection holds any
// longer goes at the next lookup, and at most max_kept are kept: handlers made for each
// connection then get a route each, and a lookup stays short.
class ws_routes {
public:
    counted_ref<ws_route> for_handlers(const hub_anchor& a, const std::shared_ptr<async_hub>& hub,
                                       std::shared_ptr<const websocket::handlers> h) {
        std::lock_guard<std::mutex> g(lock_);
        for (std::size_t i = 0; i < routes_.size();) {
            if (routes_[i]->h == h) return routes_[i];
            if (routes_[i]->refs.load(std::memory_order_acquire) == 1) {
                routes_[i] = std::move(routes_.back());
                routes_.pop_back();
            } else {
                ++i;
            }
        }
        counted_ref<ws_route> r = new_ws_route(a, hub, std::move(h));
        if (routes_.size() < max_kept) routes_.push_back(r);
        return r;
    }

private:
    static constexpr std::size_t max_kept = 64;
    std::mutex lock_;
    std::vector<counted_ref<ws_route>> routes_;
};

// The route for h on the loop of anchor a, whose hub is given.
inline counted_ref<ws_route> route_for(const hub_anchor& a, const std::shared_ptr<async_hub>& hub,
                                       std::shared_ptr<const websocket::handlers> h) {
    return hub->kept<ws_routes>().for_handlers(a, hub, std::move(h));
}

} // namespace skiff::detail

namespace skiff::websocket {

inline send_status peer::send(std::string_view data, kind k) {
    opcode op = k == kind::text ? opcode::text : opcode::binary;
    std::size_t size = data.size() + make_frame_head(op, fin_bit::final, data.size()).size;
    std::size_t held = 0;
    if (!admits(size, held)) return send_status::dropped;
    if (detail::ws_current.state == s_.get()) {
        detail::ws_current.taker->send_here(op, data);
    } else {
        std::string frame;
        frame.reserve(size);
        append_frame(frame, op, data);
        if (!post_frame(std::move(frame))) return send_status::dropped;
    }
    return went(held, size);
}

inline bool peer::post_frame(std::string frame) {
    std::size_t size = frame.size();
    s_->add_queued(size);
    bool posted = s_->route->hub->post([s = s_, frame = std::move(frame)](detail::loop_context& ctx) mutable {
        detail::apply_ws_send(ctx, *s, frame);
    });
    if (!posted) s_->take_queued(size);  // the loop is gone
    return posted;
}

inline send_status peer::close(close_code code, std::string_view reason) {
    if (!is_open()) return send_status::dropped;
    if (detail::ws_current.state == s_.get()) {
        detail::ws_current.taker->close_here(code, reason);
        return send_status::queued;
    }
    bool posted = s_->route->hub->post([s = s_, code, r = std::string(reason)](detail::loop_context& ctx) mutable {
        detail::apply_ws_close(ctx, *s, code, r);
    });
    return posted ? send_status::queued : send_status::dropped;
}

// A handshake refused (check_handshake's verdict): its status, and the fields it must carry.
// A 426 names the protocol to upgrade to (RFC 9110 §15.5.22), and so the connection option
// that keeps proxies from forwarding that (§7.8): a Connection field header() would drop.
inline void refuse_handshake(response& res, const handshake_check& check) {
    res.status(check.status);
    if (check.verdict == handshake_verdict::not_get) res.header("Allow", "GET");
    if (check.verdict == handshake_verdict::bad_version) {
        res.header(version_field_name, version);
        res.header("Upgrade", "websocket");
        detail::response_access::add_checked_field(res, "Connection", "upgrade");
    }
    res.text(check.status == 426 ? "Upgrade Required\n" : check.status == 405 ? "Method Not Allowed\n" : "Bad Request\n");
}

// The handshake's checks (check_handshake), for accept() and accept_later(): a request that
// fails them is answered here (refuse_handshake).
inline bool handshake_accepted(const request& req, response& res, handshake_check& check) {
    check = check_handshake(req);
    if (check.verdict == handshake_verdict::accept) return true;
    refuse_handshake(res, check);
    return false;
}

// Accepts the upgrade req asks for (a route's handler calls it after its own checks): false,
// with the answer given (400, 405, 426), when it cannot. The
// fields the chain set so far (middleware's) go into the 101 head; `protocol`, if not empty,
// is the subprotocol chosen (choose_protocol()), and must be a token (else 500). The
// connections given the same handlers on one loop share their route (detail::ws_routes).
inline bool accept(const request& req, response& res, std::shared_ptr<const handlers> h, std::string_view protocol = {}) {
    if (res.sent() || !h) return false;
    handshake_check check;
    if (!handshake_accepted(req, res, check)) return false;
    detail::hub_anchor* a = detail::response_access::anchor(res);
    std::shared_ptr<detail::async_hub> hub = a != nullptr ? detail::async_hub::of(*a) : nullptr;
    std::string head;
    detail::held_fields fields = detail::response_access::hold_fields(res);
    if (!hub || !append_accept_head(head, check.key, protocol, fields.bytes)) {
        res.status(500).text("Internal Server Error\n");
        return false;
    }
    auto* taker = new detail::ws_taker(detail::route_for(*a, hub, std::move(h)));
    detail::response_access::send_head(res, head, 101);
    detail::response_access::hand_over(res, nullptr, taker);
    return true;
}

// An upgrade whose answer is decided later, from any thread (after a database call, say):
// accept() (the 101, then the WebSocket opens and on_open runs), or refuse() with any status
// and a text body (the connection then closes). Move-only; used by one thread at a time.
// Dropped undecided, it refuses with 500, as a deferred answer does; no decision within
// options::deferred_timeout, or the server stopping, refuses with 503. Each returns false
// when the decision was already made (or the handle is empty) or the loop is gone.
class pending_upgrade {
public:
    pending_upgrade() = default;
    pending_upgrade(pending_upgrade&& o) noexcept : s_(std::move(o.s_)) {}
    pending_upgrade& operator=(pending_upgrade&& o) noexcept {
        if (this != &o) {
            drop();
            s_ = std::move(o.s_);
        }
        return *this;
    }
    pending_upgrade(const pending_upgrade&) = delete;
    pending_upgrade& operator=(const pending_upgrade&) = delete;
    ~pending_upgrade() { drop(); }

    // A decision is still awaited from this handle.
    explicit operator bool() const noexcept { return static_cast<bool>(s_); }

    // `protocol`, if not empty, is the subprotocol chosen (choose_protocol()): a token, else 500.
    bool accept(std::string_view protocol = {}) {
        detail::ws_decision d;
        d.verdict = detail::ws_verdict::accept;
        d.protocol = std::string(protocol);
        return decide(std::move(d));
    }
    // status: 200-599 (else 500); the body is sent as text/plain.
    bool refuse(int status, std::string_view body = {}) {
        detail::ws_decision d;
        d.status = status >= 200 && status <= 599 ? status : 500;
        d.body = std::string(body);
        return decide(std::move(d));
    }

private:
    friend pending_upgrade accept_later(const request&, response&, std::shared_ptr<const handlers>);
    explicit pending_upgrade(detail::ws_ref s) noexcept : s_(std::move(s)) {}

    bool decide(detail::ws_decision d) {
        if (!s_) return false;
        detail::ws_ref s = std::move(s_);
        detail::async_hub& hub = *s->route->hub;
        return hub.post([s = std::move(s), d = std::move(d)](detail::loop_context& ctx) mutable {
            detail::apply_ws_decision(ctx, *s, d);
        });
    }
    void drop() {
        if (s_) (void)refuse(500, "Internal Server Error\n");
    }

    detail::ws_ref s_;  // null once decided
};

// Checks the handshake now (a bad one is answered at once, 400, 405 or 426, and the handle is
// empty), and puts the decision off: the connection waits, reading nothing of the WebSocket,
// until the handle decides. The fields the chain set so far go into the 101 or the refusal.
inline pending_upgrade accept_later(const request& req, response& res, std::shared_ptr<const handlers> h) {
    if (res.sent() || !h) return {};
    handshake_check check;
    if (!handshake_accepted(req, res, check)) return {};
    detail::hub_anchor* a = detail::response_access::anchor(res);
    std::shared_ptr<detail::async_hub> hub = a != nullptr ? detail::async_hub::of(*a) : nullptr;
    if (!hub) {
        res.status(500).text("Internal Server Error\n");
        return {};
    }
    auto later = std::make_unique<detail::ws_deciding>();
    later->key = std::string(check.key);
    later->fields = detail::response_access::hold_fields(res);
    auto* taker = new detail::ws_taker(detail::route_for(*a, hub, std::move(h)), std::move(later));
    detail::ws_ref s = detail::ws_ref::share(taker);
    detail::response_access::send_head(res, {}, 101);  // nothing written now: the decision writes
    detail::response_access::hand_over(res, nullptr, taker);
    return pending_upgrade(std::move(s));
}

// A route handler that upgrades every request it gets (refusing bad handshakes as accept() does).
inline auto upgrade(handlers h) {
    return [shared = std::make_shared<const handlers>(std::move(h))](request& req, response& res) { accept(req, res, shared); };
}

} // namespace skiff::websocket

#endif // SKIFF_WEBSOCKET_UPGRADE_HPP
