// Framing of one request message (RFC 9112 §6): the head, then a body delimited by
// Content-Length or by the chunked coding. The only parse state that outlives a read.
//
// Protocol with the caller (the connection, or a test feeding split input):
//  1. call parse() with every byte of the message received so far at buf[0, len);
//  2. on incomplete, keep buf[0, kept(len)) (chunked bodies shrink as they decode) and call
//     again with the next bytes appended; on complete, the message was buf[0, consumed) and
//     later bytes belong to the next message; then reset().
// 413 is answered from the declared Content-Length alone, before any body byte is buffered.
//
// Not here: the head's syntax (head_parser.hpp) and the chunked coding (chunked.hpp), which
// this drives; no buffer is owned here, the caller keeps the bytes.
#ifndef SKIFF_HTTP_MESSAGE_PARSER_HPP
#define SKIFF_HTTP_MESSAGE_PARSER_HPP

#include "skiff/config.hpp"
#include "skiff/http/chunked.hpp"
#include "skiff/http/head_parser.hpp"
#include "skiff/http/parse_status.hpp"
#include "skiff/http/request_head.hpp"

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint32_t, std::uint64_t
#include <string_view>  // std::string_view

namespace skiff {

class message_parser {
public:
    // complete: h describes the message, h.body included; consumed is its length in buf.
    // incomplete: see the protocol above. After the head first completes, h is filled (without
    //             a body) for that one call, so the caller can act on Expect and route early.
    // error: the status to answer before closing.
    // Small enough to inline into the caller's loop: a request without a body (most of them)
    // costs the head parse and one test; the body paths are out of line. Measured against
    // the old all-in-one wrapper (callgrind, parser_bench short): 730 -> 715 instructions.
    parse_result parse(char* buf, std::size_t len, request_head& h, header_field* fields,
                       const parse_limits& limits) noexcept {
        if (head_len_ != 0) return parse_more(buf, len, h, fields, limits);
        parse_result r = parse_head(buf, len, h, fields, limits);
        if (r.status != parse_status::complete || h.framing == body_framing::none) return r;
        return parse_first(buf, len, h, limits, r.consumed);
    }

    // Bytes of buf[0, len) to keep after an incomplete parse.
    std::size_t kept(std::size_t len) const noexcept {
        return framing_ == body_framing::chunked ? head_len_ + chunked_.size() : len;
    }

    bool head_complete() const noexcept { return head_len_ != 0; }
    std::size_t head_size() const noexcept { return head_len_; }
    body_framing framing() const noexcept { return framing_; }
    bool declares_more_than(std::uint64_t max_body) const noexcept {
        return framing_ == body_framing::length && length_ > max_body;
    }
    // Total bytes the message will take when its length is declared, else 0.
    std::uint64_t declared_size() const noexcept {
        return framing_ == body_framing::length ? head_len_ + length_ : 0;
    }
    void reset() noexcept { *this = message_parser{}; }

private:
    // The head at buf[0, head_len) is in and declares a body.
    // With body_hold::ask it stops there (body_follows, consumed: the head's length); the
    // next parse() goes on with the body, buffered, as if it had not stopped, except that the
    // declared length is then the caller's to check (declares_more_than).
    SKIFF_NOINLINE parse_result parse_first(char* buf, std::size_t len, request_head& h, const parse_limits& limits,
                                            std::size_t head_len) noexcept {
        if (limits.hold_bodies == body_hold::never && h.framing == body_framing::length &&
            h.content_length > limits.max_body)
            return {parse_status::content_too_large, 0};
        head_len_ = static_cast<std::uint32_t>(head_len);
        framing_ = h.framing;
        length_ = h.content_length;
        if (limits.hold_bodies == body_hold::ask) return {parse_status::body_follows, head_len};
        std::size_t end = 0;
        parse_status s = parse_body(buf, len, limits, end);
        if (s != parse_status::complete) return {s, 0};
        h.body = body(buf);
        return {parse_status::complete, end};
    }

    // A later call for a message whose head came in before.
    SKIFF_NOINLINE parse_result parse_more(char* buf, std::size_t len, request_head& h, header_field* fields,
                                           const parse_limits& limits) noexcept {
        std::size_t end = 0;
        parse_status s = parse_body(buf, len, limits, end);
        if (s != parse_status::complete) return {s, 0};
        parse_head(buf, head_len_, h, fields, limits);  // h was reused meanwhile
        h.body = body(buf);
        return {parse_status::complete, end};
    }

    parse_status parse_body(char* buf, std::size_t len, const parse_limits& limits, std::size_t& end) noexcept {
        switch (framing_) {
        case body_framing::none:
            end = head_len_;
            return parse_status::complete;
        case body_framing::length:
            end = head_len_ + static_cast<std::size_t>(length_);
            return len >= end ? parse_status::complete : parse_status::incomplete;
        default: {
            parse_status s = chunked_.decode(buf + head_len_, len - head_len_, limits, end);
            end += head_len_;
            return s;
        }
        }
    }

    std::string_view body(const char* buf) const noexcept {
        std::size_t n = framing_ == body_framing::chunked ? chunked_.size() : static_cast<std::size_t>(length_);
        return {buf + head_len_, n};
    }

    chunked_decoder chunked_;
    std::uint64_t length_ = 0;
    std::uint32_t head_len_ = 0;
    body_framing framing_ = body_framing::none;
};

// The name before the file was named for what it holds; kept so code written against it
// compiles.
using request_parser = message_parser;

} // namespace skiff

#endif // SKIFF_HTTP_MESSAGE_PARSER_HPP
