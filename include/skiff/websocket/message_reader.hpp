// Messages from client frames (RFC 6455 §5.4-§5.7, §8.1): the frame reader's events assembled
// into text and binary messages, delivered whole (up to a size limit) or as pieces, with
// control frames answered between the fragments of a message.
//
// Checks made here, beyond the frame reader's (each fails the connection with the code named):
//  - a continuation frame with no message open, or a new text or binary frame inside one: 1002
//    (§5.4);
//  - a message longer than limits.max_message, in either delivery: 1009, decided from each
//    frame's header before its payload is read;
//  - text that is not UTF-8: 1007 at the first byte that makes it so, even when a character is
//    split between fragments, and when a message ends inside a character (§8.1);
//  - a close frame with a 1-byte payload, or with a code an endpoint may not send: 1002
//    (§5.5.1, §7.4); a close reason that is not UTF-8: 1007.
// Pongs are read and dropped (§5.5.3: an unsolicited pong needs no answer); a ping's payload
// is handed out for the pong to send back. skiff negotiates no extension, so there is no
// decompression here.
// Not here: sending anything (frame_writer.hpp), deadlines, the close handshake's timing.
//
// Invariants: views in an event stay valid until the next call (they point into the caller's
// bytes or into this reader's buffers). After a close or a failure the reader takes no more
// messages: once closed it drops every byte it is given (§5.5.1: the peer sends nothing after
// its close), once failed it uses nothing and answers failed. Memory (held() says how much):
// the reader is 104 bytes (x86-64, libstdc++); beside it, at most max_message for a message
// delivered whole while it spans reads (given back once handed out), and 125 bytes, once, for
// a control frame split over reads; nothing when each message and control frame arrives in
// one read (they are handed out in place).
#ifndef SKIFF_WEBSOCKET_MESSAGE_READER_HPP
#define SKIFF_WEBSOCKET_MESSAGE_READER_HPP

#include "skiff/config.hpp"
#include "skiff/websocket/frame.hpp"
#include "skiff/websocket/frame_reader.hpp"
#include "skiff/websocket/utf8.hpp"

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t, std::uint16_t, std::uint8_t
#include <cstring>      // std::memcpy into the control buffer
#include <memory>       // std::unique_ptr for a control frame split over reads
#include <string>       // std::string for a message that spans frames or reads
#include <string_view>  // std::string_view for what an event carries

namespace skiff::websocket {

enum class delivery : std::uint8_t {
    whole,   // one event per message, after its last byte
    pieces,  // an event per piece as it arrives; `last` marks the message's end
};

struct message_limits {
    // The longest message, whatever its delivery (the same default as a request body's).
    std::uint64_t max_message = 1024 * 1024;
    websocket::delivery delivery = delivery::whole;
};

enum class message_step : std::uint8_t {
    need_more,  // every byte given was used (or dropped after a close)
    text,       // data: the message (UTF-8, checked), or a piece of it (which may end inside
                // a character: the message is checked as a whole, the pieces are not cut to fit)
    binary,
    ping,       // data: the payload to send back in a pong
    close,      // code: the peer's (no_status when it sent none); data: its reason, UTF-8
    failed,     // code: what to close with; the connection is failed (§7.1.7)
};

struct message_event {
    message_step step = message_step::need_more;
    std::string_view data;
    bool last = true;  // text, binary: the message ends here (always, when delivered whole)
    close_code code = close_code::normal;
};

class message_reader {
public:
    explicit message_reader(message_limits limits = {}) : frames_(limits.max_message), delivery_(limits.delivery) {}

    // Reads from data[0, len) (which it may change: payload is unmasked in place) up to the
    // next event; used is set to the bytes taken. Allocates only to buffer a message that
    // spans frames or reads, when it is delivered whole.
    message_event next(char* data, std::size_t len, std::size_t& used) {
        used = 0;
        // A message gathered here was handed out by an earlier call (or cut short by a close
        // or a failure) and is done with: its memory goes back, so an idle connection holds none.
        if (state_ != state::inside && !buffer_.empty()) give_back();
        if (state_ == state::closed) {
            used = len;
            return {};
        }
        if (state_ == state::failed) return failure();
        for (;;) {
            std::size_t step_used = 0;
            frame_event f = frames_.next(data + used, len - used, step_used);
            used += step_used;
            message_event e;
            if (f.step == frame_step::need_more) return e;
            if (f.step == frame_step::failed) return fail(frames_.error());
            e = f.step == frame_step::header ? on_header() : on_payload(f);
            if (e.step != message_step::need_more) return e;
        }
    }

    // At rest: no frame or message open across the bytes given so far, and neither closed nor
    // failed, so a later read needs nothing of this reader. One at rest may be swapped for a
    // fresh one, or serve another connection after limit() (the WebSocket taker lends one per
    // thread on this ground, so that an idle connection carries no reader).
    bool at_rest() const noexcept { return state_ == state::between && frames_.at_frame_start(); }
    // Another connection's limits, for a reader at rest.
    void limit(message_limits limits) noexcept {
        frames_.limit(limits.max_message);
        delivery_ = limits.delivery;
    }
    // A message gathered and handed out already goes back now, rather than on the next call.
    void release_delivered() noexcept {
        if (state_ != state::inside && !buffer_.empty()) give_back();
    }

    // Heap bytes held beyond the reader itself (for a memory budget): the open message
    // gathered so far, and the control frame buffer once allocated.
    std::size_t held() const noexcept {
        std::size_t message = buffer_.capacity() > std::string().capacity() ? buffer_.capacity() : 0;
        return message + (spill_ ? max_control_payload : 0);
    }

private:
    enum class state : std::uint8_t {
        between,  // no message open: the next data frame must start one
        inside,   // a message is open: the next data frame must continue it
        closed,   // the peer's close frame was read
        failed,
    };

    // Out of line: inlined, it made next() too big to inline into a caller's loop (callgrind:
    // 40 more instructions a 32-byte message).
    SKIFF_NOINLINE void give_back() noexcept { std::string().swap(buffer_); }

    message_event on_header() {
        const frame_header& h = frames_.header();
        if (is_control(h.op)) {
            control_size_ = 0;
            return {};
        }
        bool continues = h.op == opcode::continuation;
        if (continues != (state_ == state::inside)) return fail(close_code::protocol_error);
        if (!continues) start_message(h.op);
        if (h.length > frames_.max_message() - size_) return fail(close_code::message_too_big);
        size_ += h.length;
        return {};
    }

    void start_message(opcode op) {
        type_ = op == opcode::text ? message_step::text : message_step::binary;
        size_ = 0;
        buffer_.clear();
        utf8_.reset();
        state_ = state::inside;
    }

    message_event on_payload(const frame_event& f) {
        const frame_header& h = frames_.header();
        if (is_control(h.op)) return on_control_piece(h.op, f);
        bool ends = f.frame_end && h.fin;
        if (type_ == message_step::text && !utf8_.feed(f.data.data(), f.data.size()))
            return fail(close_code::invalid_payload);
        if (ends && type_ == message_step::text && !utf8_.complete()) return fail(close_code::invalid_payload);
        if (ends) state_ = state::between;
        return deliver(f.data, ends);
    }

    message_event deliver(std::string_view piece, bool ends) {
        if (delivery_ == delivery::pieces) {
            if (piece.empty() && !ends) return {};
            return {type_, piece, ends, close_code::normal};
        }
        // The whole message in this one piece (nothing buffered before it): hand it out in place.
        if (ends && buffer_.empty() && piece.size() == size_) return {type_, piece, true, close_code::normal};
        buffer_.append(piece);
        if (!ends) return {};
        return {type_, buffer_, true, close_code::normal};
    }

    // Nearly always a control frame's payload comes in one piece, handed out in place (a piece
    // that ends the frame with nothing gathered before it is the whole payload). One split
    // over reads is gathered in spill_, allocated the first time: 125 bytes an idle
    // connection need not carry.
    message_event on_control_piece(opcode op, const frame_event& f) {
        if (f.frame_end && control_size_ == 0) return on_control(op, f.data);
        if (!spill_) spill_ = std::make_unique<char[]>(max_control_payload);
        if (!f.data.empty()) std::memcpy(spill_.get() + control_size_, f.data.data(), f.data.size());  // <= 125 in all
        control_size_ = static_cast<std::uint8_t>(control_size_ + f.data.size());
        if (!f.frame_end) return {};
        return on_control(op, {spill_.get(), control_size_});
    }

    message_event on_control(opcode op, std::string_view payload) {
        if (op == opcode::ping) return {message_step::ping, payload, true, close_code::normal};
        if (op == opcode::pong) return {};
        return on_close(payload);
    }

    // §5.5.1: empty, or a 2-byte code (network order) then a UTF-8 reason.
    message_event on_close(std::string_view payload) {
        if (payload.empty()) {
            state_ = state::closed;
            return {message_step::close, {}, true, close_code::no_status};
        }
        if (payload.size() == 1) return fail(close_code::protocol_error);
        auto code = static_cast<std::uint16_t>(static_cast<std::uint8_t>(payload[0]) << 8 |
                                               static_cast<std::uint8_t>(payload[1]));
        if (!is_valid_close_code(code)) return fail(close_code::protocol_error);
        std::string_view reason = payload.substr(2);
        detail::utf8_validator check;  // its own: a close may come inside a text message
        if (!check.feed(reason.data(), reason.size()) || !check.complete()) return fail(close_code::invalid_payload);
        state_ = state::closed;
        return {message_step::close, reason, true, static_cast<close_code>(code)};
    }

    message_event fail(close_code code) {
        error_ = code;
        state_ = state::failed;
        return failure();
    }
    message_event failure() const noexcept { return {message_step::failed, {}, true, error_}; }

    frame_reader frames_;                 // holds the message limit too
    std::string buffer_;                  // the open message so far, when delivered whole
    std::uint64_t size_ = 0;              // declared bytes of the open message's frames so far
    std::unique_ptr<char[]> spill_;       // a control frame split over reads, gathered
    close_code error_ = close_code::normal;
    detail::utf8_validator utf8_;         // the open text message so far
    std::uint8_t control_size_ = 0;       // bytes gathered in spill_
    message_step type_ = message_step::binary;
    websocket::delivery delivery_;
    state state_ = state::between;
};

} // namespace skiff::websocket

#endif // SKIFF_WEBSOCKET_MESSAGE_READER_HPP
