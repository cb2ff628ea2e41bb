// The pushed output of one memory budget that clients have not taken (push streams, deferred.
// hpp's push_stream, and WebSocket sends, websocket/taker.hpp), in the order it stalled, and the
// bytes it holds together: what keeps slow subscribers from stalling everyone. Each holder is a
// stalled_output, which its feature embeds; the engine knows no feature's type.
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
// Invariants: a holder is in the line exactly while it holds a nonzero charge, and names its
// connection meanwhile; held() is the sum of the charges in line. Not thread-safe: touched only
// by the thread serving pushed output at that moment (the loop's; under shared, the one
// holding the hub's process lock), like a deferred_state's other loop-side fields (loop_hub.hpp).
#ifndef SKIFF_ENGINE_PUSH_LEDGER_HPP
#define SKIFF_ENGINE_PUSH_LEDGER_HPP

#include <cstddef>  // std::size_t

namespace skiff::detail {

struct connection;

// One holder's place in the line: its charge (0: not in line), its neighbours, stalled before
// and after it, and the connection to close if it is shed.
struct stalled_output {
    std::size_t stalled_bytes = 0;
    stalled_output* stalled_prev = nullptr;
    stalled_output* stalled_next = nullptr;
    connection* stalled_conn = nullptr;
};

class push_ledger {
    using Stream = stalled_output;

public:
    void set_share(std::size_t bytes) noexcept { share_ = bytes; }
    std::size_t share() const noexcept { return share_; }
    std::size_t held() const noexcept { return held_; }
    bool over() const noexcept { return held_ > share_; }

    // The stream that stalled longest ago, or nullptr when none holds anything.
    Stream* oldest() const noexcept { return head_; }

    // s's unsent output on c now holds `bytes`. From nothing it joins the line at its end (it
    // stalled now); to nothing it leaves (it caught up); otherwise it keeps its place.
    void note(Stream& s, std::size_t bytes, connection& c) noexcept {
        s.stalled_conn = &c;
        note(s, bytes);
    }
    void forget(Stream& s) noexcept { note(s, 0); }

private:
    void note(Stream& s, std::size_t bytes) noexcept {
        if (s.stalled_bytes == 0 && bytes != 0) link(s);
        else if (s.stalled_bytes != 0 && bytes == 0) unlink(s);
        held_ = held_ - s.stalled_bytes + bytes;
        s.stalled_bytes = bytes;
    }

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
