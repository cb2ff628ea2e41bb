// The WebSocket taker while an upgrade is decided later (taker.hpp has the class).
//
// An upgrade decided later (websocket::accept_later) starts in the `deciding` stage: nothing
// is written, what the client sends is kept (ws_deciding, within ws_deciding_bytes), and each
// tick looks at the decision's deadline and the stop (503). The decision comes as a post does
// (under shared, kept in ws_state::early until the hub holds the connection): the 101, and the
// WebSocket opens; or the refusal, written as a late answer once the connection is no longer
// handed (refuse()).
//
// Not here: the decision's handle (upgrade.hpp: pending_upgrade), or how it travels
// (taker_hub.hpp).
#ifndef SKIFF_WEBSOCKET_TAKER_LATER_HPP
#define SKIFF_WEBSOCKET_TAKER_LATER_HPP

#include "skiff/engine/handover.hpp"
#include "skiff/http/response.hpp"
#include "skiff/http/response_access.hpp"
#include "skiff/websocket/handshake.hpp"
#include "skiff/websocket/peer.hpp"
#include "skiff/websocket/taker.hpp"

#include <cstdint>      // std::int64_t
#include <string>       // the 101 head
#include <string_view>  // std::string_view
#include <utility>      // std::move

namespace skiff::detail {

// What the client sends before the 101 is kept for the WebSocket, within ws_deciding_bytes.
inline fate ws_taker::keep_for_later(door& d, connection& c, const read_result& r) {
    std::string& kept = side_->deciding->early_bytes;
    if (kept.size() + r.size > ws_deciding_bytes) return d.close(c);
    kept.append(r.data, r.size);
    return settle(d, c);
}

// Each tick: no decision by options::deferred_timeout, or the server stops: 503.
inline fate ws_taker::decide_by_deadline(door& d, connection& c, std::int64_t now) {
    if (d.stopping() || now >= side_->deciding->deadline_ms) return refuse(d, c, 503, "Service Unavailable\n");
    arm_tick(d, c);
    return fate::open;
}

// The upgrade refused: an HTTP answer with the fields the chain set, then the connection
// closes (the client may have sent frames already). The connection is no longer handed
// first, as an upload's late answer does (upload.hpp); this taker is freed after the event.
inline fate ws_taker::refuse(door& d, connection& c, int status, std::string_view body) {
    answer_context ctx;
    ctx.close = true;
    ctx.head_fields = std::move(side_->deciding->fields);
    unlink();
    d.finish(c);
    d.answer(c, ctx, [status, body](response& res) { res.status(status).text(body); });
    return d.after_write(c, d.flush(c));
}

// The decision on an upgrade decided later: the 101 and the WebSocket opens (the bytes the
// client sent meanwhile are read now), or the refusal, after which the connection closes.
inline fate ws_taker::on_decision(door& d, connection& c, ws_decision& what) {
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

} // namespace skiff::detail

#endif // SKIFF_WEBSOCKET_TAKER_LATER_HPP
