// The WebSocket taker's protocol side (taker.hpp has the class): frames in, through a message
// reader, to the application's callbacks; pongs and close frames out; the close handshake
// and failures (1002, 1007, 1009 from the reader, 1011 when a callback throws).
//
// Memory: an idle WebSocket holds its taker's block (72 bytes, x86-64, its ws_state
// within), no message reader: a read borrows the thread's spare reader (ws_spare_reader()) and gives it back at rest
// before its event ends; only a frame or message left open across reads moves into a reader
// of the connection's own (side_->own), freed once it is at rest again. Either way nothing of one
// connection's reading stays with a thread, so any thread may serve its next event (a worker,
// or under shared the hub's processor).
//
// Not here: when a read happens or output is flushed (taker.hpp: settle()).
#ifndef SKIFF_WEBSOCKET_TAKER_FRAMES_HPP
#define SKIFF_WEBSOCKET_TAKER_FRAMES_HPP

#include "skiff/detail/guarded_call.hpp"
#include "skiff/engine/handover.hpp"
#include "skiff/platform/socket.hpp"
#include "skiff/websocket/frame.hpp"
#include "skiff/websocket/frame_writer.hpp"
#include "skiff/websocket/message_reader.hpp"
#include "skiff/websocket/peer.hpp"
#include "skiff/websocket/taker.hpp"

#include <cstddef>      // std::size_t
#include <memory>       // std::make_unique: a reader of the connection's own
#include <string>       // a close frame
#include <string_view>  // std::string_view
#include <utility>      // std::move

namespace skiff::detail {

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

// The WebSocket opens: on_open, then the bytes that came behind the handshake (and, for an
// upgrade decided later, those sent while it was decided) are read.
inline fate ws_taker::open_now(door& d, connection& c, std::string* sent_meanwhile) {
    stage_ = stage::open;
    mark_ms_ = d.now_ms();
    // As a push stream's: what the client leaves unread waits here, where the budget's
    // line of pushed output sees it, not in a kernel buffer grown to megabytes.
    if (std::size_t buffer = d.settings().push_socket_buffer; buffer != 0) limit_send_buffer(c.fd, buffer);
    {
        callback_scope scope(*this, d);
        const websocket::handlers& h = callbacks();
        websocket::peer me = self();
        if (h.on_open) guarded(d, [&] { h.on_open(me); });
    }
    if (!c.in.empty() && ending_ == ending::none) {  // the bytes behind the handshake
        on_bytes(d, c.in.data(), c.in.size());
        c.in.release();  // a pool buffer the size of a head: not charged to the budget
    }
    if (sent_meanwhile != nullptr && !sent_meanwhile->empty() && ending_ == ending::none)
        on_bytes(d, sent_meanwhile->data(), sent_meanwhile->size());  // while the upgrade was decided
    return settle(d, c);
}

// What a read brought, read with the connection's own reader if a frame or message is
// open across reads, else with the thread's spare one (the file comment says why).
inline void ws_taker::on_bytes(door& d, char* data, std::size_t len) {
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
SKIFF_NOINLINE inline void ws_taker::read_own(door& d, char* data, std::size_t len) {
    ws_side& x = side();
    if (x.own == nullptr) x.own = std::make_unique<websocket::message_reader>(limits());
    read_events(d, *x.own, data, len);
    if (side_ != nullptr && side_->own->at_rest()) {  // (a failure may have ended it: side_ stays)
        side_->own.reset();
        release_side_if_idle();
    }
}

inline websocket::message_limits ws_taker::limits() const noexcept {
    const websocket::handlers& h = callbacks();
    return {h.max_message, h.delivery};
}

// Every event the reader finds, until it needs more or the connection ends. Views handed
// to callbacks point into data or the reader.
inline void ws_taker::read_events(door& d, websocket::message_reader& reader, char* data, std::size_t len) {
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

inline void ws_taker::deliver(door& d, const websocket::message_event& e) {
    if (stage_ != stage::open) return;  // after our close: the client's data is dropped
    websocket::kind k = e.step == websocket::message_step::text ? websocket::kind::text : websocket::kind::binary;
    const websocket::handlers& h = callbacks();
    websocket::peer me = self();
    if (h.delivery == websocket::delivery::pieces) {
        if (h.on_piece) guarded(d, [&] { h.on_piece(me, e.data, k, e.last); });
    } else if (h.on_message) {
        guarded(d, [&] { h.on_message(me, e.data, k); });
    }
}

inline void ws_taker::pong(door& d, std::string_view payload) {
    websocket::frame_head head = websocket::make_frame_head(websocket::opcode::pong, websocket::fin_bit::final, payload.size());
    d.write(head.view());
    d.write(payload);
}

// The client's close frame: echoed (its code, §5.5.1) unless ours went first; either way the
// handshake is done and the connection closes once the output is written.
inline void ws_taker::on_peer_close(door& d, const websocket::message_event& e) {
    if (stage_ == stage::open) write_close(d, e.code, {});
    ending_ = ending::close;
    tell_close(e.code, e.data);
}

inline void ws_taker::fail(door& d, websocket::close_code code) {
    if (stage_ == stage::open) write_close(d, code, {});
    ending_ = ending::linger;
    tell_close(code, {});
}

inline void ws_taker::start_close(door& d, websocket::close_code code, std::string_view reason) {
    if (stage_ != stage::open) return;
    write_close(d, code, reason);
    stage_ = stage::closing;
    mark_ms_ = d.now_ms() + d.settings().linger_timeout.count();
}

inline void ws_taker::write_close(door& d, websocket::close_code code, std::string_view reason) {
    std::string frame;
    websocket::append_close(frame, code, reason);
    d.write(frame);
    stage_ = stage::closing;
    phase.store(ws_phase::closing, std::memory_order_release);
}

// A send said backpressure, and what waits is down to half of write_high_water again: on_drain
// hears it (its sends are posted: no flush follows).
inline void ws_taker::tell_if_drained() {
    const websocket::handlers& h = callbacks();
    if (!h.on_drain || !wants_drain.load(std::memory_order_relaxed)) return;
    if (held() > route->high_water / 2 || !wants_drain.exchange(false, std::memory_order_relaxed)) return;
    posted_sends_scope posted;
    websocket::peer me = self();
    call_guarded([&] { h.on_drain(me); }, [] {});
}

inline void ws_taker::tell_close(websocket::close_code code, std::string_view reason) noexcept {
    if (told_ == told::closed) return;
    told_ = told::closed;
    const websocket::handlers& h = callbacks();
    if (!h.on_close) return;
    posted_sends_scope posted;
    websocket::peer me = self();
    call_guarded([&] { h.on_close(me, code, reason); }, [] {});
}

} // namespace skiff::detail

#endif // SKIFF_WEBSOCKET_TAKER_FRAMES_HPP
