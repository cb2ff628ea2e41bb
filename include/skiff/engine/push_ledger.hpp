// The push streams (deferred.hpp's push_stream) of one memory budget that hold unsent output,
// in the order they stalled, and the bytes they hold together: what the session consults to
// keep slow subscribers from stalling everyone (session.hpp, shed_slow_pushes).
//
// The rule, and why. Push output a client does not take has its own share of the budget:
// half of max_buffered (this loop's part under sharded). While push output together holds
// more than that, the stream that stalled longest ago (its unsent output has not drained to
// nothing since) is shed: closed at once, its unsent bytes dropped. Reads never stop for it,
// since push output alone cannot fill the budget, so clients that read keep being served.
// This is nginx's send_timeout and uWebSockets' maxBackpressure (a socket that cannot take
// what it is sent is closed, not waited for), and what Go SSE servers do per subscriber
// (drop a subscriber whose channel is full), applied where memory is short rather than per
// stream only (max_push_buffer still bounds each). The oldest-stalled is chosen, not the
// largest, because it is found in constant time and because a subscriber that keeps up
// drains to nothing again and again, so it is always among the youngest: the ones shed are
// those that took nothing for longest.
//
// Invariants: a stream is in the line exactly while it holds a nonzero charge; held() is the
// sum of the charges in line. Not thread-safe: touched only by the thread serving push
// streams at that moment (the loop's; under shared, the one holding the hub's process lock),
// like a deferred_state's other loop-side fields (loop_hub.hpp).
#ifndef SKIFF_ENGINE_PUSH_LEDGER_HPP
#define SKIFF_ENGINE_PUSH_LEDGER_HPP

#include <cstddef>  // std::size_t

namespace skiff::detail {

// Stream: has `Stream* stalled_prev, *stalled_next` and `std::size_t stalled_bytes` (its charge).
template <class Stream>
class push_ledger {
public:
    void set_share(std::size_t bytes) noexcept { share_ = bytes; }
    std::size_t share() const noexcept { return share_; }
    std::size_t held() const noexcept { return held_; }
    bool over() const noexcept { return held_ > share_; }

    // The stream that stalled longest ago, or nullptr when none holds anything.
    Stream* oldest() const noexcept { return head_; }

    // s's unsent output now holds `bytes`. From nothing it joins the line at its end (it
    // stalled now); to nothing it leaves (it caught up); otherwise it keeps its place.
    void note(Stream& s, std::size_t bytes) noexcept {
        if (s.stalled_bytes == 0 && bytes != 0) link(s);
        else if (s.stalled_bytes != 0 && bytes == 0) unlink(s);
        held_ = held_ - s.stalled_bytes + bytes;
        s.stalled_bytes = bytes;
    }
    void forget(Stream& s) noexcept { note(s, 0); }

private:
    void link(Stream& s) noexcept {
        s.stalled_prev = tail_;
        s.stalled_next = nullptr;
        if (tail_) tail_->stalled_next = &s;
        else head_ = &s;
        tail_ = &s;
    }
    void unlink(Stream& s) noexcept {
        if (s.stalled_prev) s.stalled_prev->stalled_next = s.stalled_next;
        else head_ = s.stalled_next;
        if (s.stalled_next) s.stalled_next->stalled_prev = s.stalled_prev;
        else tail_ = s.stalled_prev;
        s.stalled_prev = s.stalled_next = nullptr;
    }

    Stream* head_ = nullptr;  // stalled longest ago
    Stream* tail_ = nullptr;
    std::size_t held_ = 0;
    std::size_t share_ = static_cast<std::size_t>(-1);  // the session sets half of max_buffered
};

} // namespace skiff::detail

#endif // SKIFF_ENGINE_PUSH_LEDGER_HPP
