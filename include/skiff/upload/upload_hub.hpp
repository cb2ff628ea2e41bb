// Under the shared policy, a paused upload waits on the loop hub, not on a worker. Any worker
// may serve a shared connection's next event, and the set's reaper wakes a connection only by
// shutting its socket down, so neither a worker nor the set can look for a resume once a tick
// as the other policies' wheels do (upload.hpp). Instead, when the worker's event is over,
// the paused connection leaves the workers (upload_state::take_from_workers) and a hub timer
// looks once a tick: on the resume it serves the held piece and what follows, through the
// door, and the connection goes back to the workers; at body_timeout or stop it closes it
// (on_abort). No thread waits for the resume.
//
// basic_server<Policy>::upload hands upload_route paused_upload_holder<Policy>:
// hand_paused_to_hub under the shared policy only, so the other policies compile no hub for
// uploads.
//
// Invariant: while the hub holds the connection, nothing else serves it: it is disarmed (no
// event comes for it), and only the hub's timer, under the hub's process lock, steps it. The
// timer stops the tick the connection goes back to the workers or closes, deciding so before
// the step is settled, so it never touches a connection that is no longer its own. A
// connection given back still handed (more body to read) is given back by the timer itself
// (loop_context::give_to_workers), since the settle leaves a handed connection alone.
#ifndef SKIFF_UPLOAD_UPLOAD_HUB_HPP
#define SKIFF_UPLOAD_UPLOAD_HUB_HPP

#include "skiff/async/hub.hpp"
#include "skiff/engine/connection.hpp"
#include "skiff/engine/handover.hpp"
#include "skiff/engine/loop_hub.hpp"
#include "skiff/policy/policy.hpp"
#include "skiff/upload/upload.hpp"

#include <cstdint>  // std::int64_t, std::uint8_t
#include <memory>   // std::shared_ptr

namespace skiff::detail {

// What a tick of the hub's timer left: the pause goes on, the connection goes back to the
// workers still handed to the upload, or it is no longer the hub's to look at (answered,
// serving the next request, or closed: the settle did what was due).
enum class hub_tick : std::uint8_t { keep_looking, give_back, done };

inline void hand_paused_to_hub(hub_anchor& anchor, connection& c, std::int64_t tick_ms) {
    std::shared_ptr<async_hub> hub = async_hub::of(anchor);  // started at listen under shared
    if (!hub) return;  // no descriptor for a notifier: the body deadline (a backstop) ends it
    hub->add_timer(tick_ms, tick_ms, [&c](loop_context& ctx) {
        hub_tick tick = hub_tick::keep_looking;
        auto step = [&tick](upload_state& u, door& d, connection& at) {
            fate f = u.on_hub_tick(d, at);
            // Decided before the settle: after it, c may be a worker's.
            if (f == fate::closed) tick = hub_tick::done;
            else if (u.held_by_hub()) tick = hub_tick::keep_looking;
            else tick = at.state == phase::handed ? hub_tick::give_back : hub_tick::done;
            return f;
        };
        serve_taker<upload_state>(ctx, c, loop_context::expiry::ignored, step);
        // Still the upload's (reading more body, or paused again): the settle left it alone.
        if (tick == hub_tick::give_back) ctx.give_to_workers(c);
        return tick == hub_tick::keep_looking ? timer_action::keep : timer_action::stop;
    });
}

// What basic_server<Policy>::upload gives upload_route: null but under shared.
template <class Policy>
inline constexpr hand_to_hub_fn paused_upload_holder = nullptr;
template <>
inline constexpr hand_to_hub_fn paused_upload_holder<shared> = &hand_paused_to_hub;

} // namespace skiff::detail

#endif // SKIFF_UPLOAD_UPLOAD_HUB_HPP
