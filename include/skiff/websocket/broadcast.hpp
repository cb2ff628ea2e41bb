// One message to many WebSockets (skiff::websocket::broadcast), from the loop or any thread:
// the frame is built once and shared, not once per connection. A connection whose callback is
// running on this thread takes it straight into its batch; every other gets it through its
// loop's hub, in one post per hub for all its connections rather than one post (a lock and a
// copy of the frame) per connection. Each loop then copies the frame into the connection's
// output, as the writer needs. What each send would say (dropped past the backlog, backpressure
// past write_high_water, then on_drain) holds for each connection as for peer::send.
//
// Not here: fan-out across processes, or a topic registry (uWebSockets' publish): the
// application keeps its rooms, as examples/websocket.cpp does.
// Invariant: for one connection, a broadcast and the peer::send calls made on one thread
// reach the client in the order they were made (both post to its hub, which applies posts in
// order; on the connection's own loop both write into the batch at once).
#ifndef SKIFF_WEBSOCKET_BROADCAST_HPP
#define SKIFF_WEBSOCKET_BROADCAST_HPP

#include "skiff/async/hub.hpp"
#include "skiff/engine/loop_hub.hpp"
#include "skiff/websocket/frame.hpp"
#include "skiff/websocket/frame_writer.hpp"
#include "skiff/websocket/peer.hpp"
#include "skiff/websocket/taker.hpp"
#include "skiff/websocket/taker_hub.hpp"

#include <cstddef>      // std::size_t
#include <iterator>     // std::begin, std::end
#include <memory>       // std::shared_ptr: the frame, shared by the posts
#include <string>       // the frame
#include <string_view>  // std::string_view
#include <utility>      // std::move
#include <vector>       // the connections of one hub

namespace skiff::detail {

struct peer_access {
    static const ws_ref& state(const websocket::peer& p) noexcept { return p.s_; }
    static bool admits(const websocket::peer& p, std::size_t size, std::size_t& held) noexcept { return p.admits(size, held); }
    static void went(const websocket::peer& p, std::size_t held, std::size_t size) noexcept { (void)p.went(held, size); }
};

// The connections of one hub that a broadcast posts to, with the hub that serves them.
struct broadcast_batch {
    std::shared_ptr<async_hub> hub;
    std::vector<ws_ref> states;
};

// The batch for s's hub, made on its first connection (there are as many hubs as loops: few).
inline broadcast_batch& batch_for(std::vector<broadcast_batch>& batches, const ws_state& s) {
    const std::shared_ptr<async_hub>& hub = s.route->hub;
    for (broadcast_batch& b : batches)
        if (b.hub == hub) return b;
    batches.push_back(broadcast_batch{hub, {}});
    return batches.back();
}

// One hub's post: the frame to each of its connections, in the order given. Returns how
// many connections it did not reach: all of them when the hub is gone (the server stopped),
// whose counts then go back.
inline std::size_t post_batch(broadcast_batch& b, const std::shared_ptr<const std::string>& frame) {
    std::vector<ws_ref> states = std::move(b.states);
    std::vector<ws_state*> counted;  // kept aside: the post may take the list and fail
    counted.reserve(states.size());
    for (const ws_ref& s : states) counted.push_back(s.get());
    bool posted = b.hub->post([states = std::move(states), frame](loop_context& ctx) {
        for (const ws_ref& s : states) apply_ws_send(ctx, *s, *frame);
    });
    if (posted) return 0;
    for (ws_state* s : counted) s->take_queued(frame->size());
    return counted.size();
}

} // namespace skiff::detail

namespace skiff::websocket {

// Sends `data` as one message of kind k to each peer in [first, last) (peers, or anything
// that dereferences to one). Returns for how many it was queued (backpressure included); the
// others were dropped (closing or gone, or past their backlog), as peer::send says.
template <class PeerIt>
std::size_t broadcast(PeerIt first, PeerIt last, std::string_view data, kind k = kind::text) {
    opcode op = k == kind::text ? opcode::text : opcode::binary;
    const std::size_t size = data.size() + make_frame_head(op, fin_bit::final, data.size()).size;
    std::shared_ptr<const std::string> frame;  // made once, on the first peer that posts
    std::vector<detail::broadcast_batch> batches;
    std::size_t queued = 0;
    for (; first != last; ++first) {
        const peer& p = *first;
        std::size_t held = 0;
        if (!detail::peer_access::admits(p, size, held)) continue;  // as peer::send decides
        detail::ws_state* s = detail::peer_access::state(p).get();
        if (detail::ws_current.state == s) {
            detail::ws_current.taker->send_here(op, data);
        } else {
            if (!frame) {
                std::string f;
                f.reserve(size);
                append_frame(f, op, data);
                frame = std::make_shared<const std::string>(std::move(f));
            }
            s->add_queued(size);
            detail::batch_for(batches, *s).states.push_back(detail::peer_access::state(p));
        }
        ++queued;
        detail::peer_access::went(p, held, size);
    }
    for (detail::broadcast_batch& b : batches) queued -= detail::post_batch(b, frame);
    return queued;
}

// The same for a container of peers.
template <class Peers>
std::size_t broadcast(const Peers& peers, std::string_view data, kind k = kind::text) {
    return broadcast(std::begin(peers), std::end(peers), data, k);
}

} // namespace skiff::websocket

#endif // SKIFF_WEBSOCKET_BROADCAST_HPP
