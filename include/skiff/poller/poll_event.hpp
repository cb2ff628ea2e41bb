// What both poller backends share: the interest mask, the registration mode and the event a
// wait reports. Backends translate to and from kernel flags at their edge, so the loop above
// never sees EPOLL* or EV_* names (the redis ae_*.c pattern).
#ifndef SKIFF_POLLER_POLL_EVENT_HPP
#define SKIFF_POLLER_POLL_EVENT_HPP

#include <cstdint> // std::uint8_t

namespace skiff::detail {

// Interest bits: what readiness a descriptor is watched for.
enum interest : std::uint8_t { watch_none = 0, watch_read = 1, watch_write = 2 };

// level: reported while ready (one owner per descriptor: single and sharded loops).
// oneshot: reported once, then disarmed until modify() re-arms it (the shared policy, where
//          several threads wait on one set and exactly one of them must own a ready descriptor).
enum class poll_mode : std::uint8_t { level, oneshot };

struct poll_event {
    void* data;           // what add() registered with the descriptor
    bool readable;        // also set on hang-up and error, so the reader finds out by reading
    bool writable;        // also set on error, so a parked write finds out by writing
};

} // namespace skiff::detail

#endif // SKIFF_POLLER_POLL_EVENT_HPP
