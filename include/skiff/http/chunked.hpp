// The chunked transfer coding (RFC 9112 §7.1), decoded in place as an explicit state machine.
//
// The decoder owns no buffer. The caller keeps the body region of its buffer: its first
// kept() bytes are what earlier calls decoded, and new raw bytes are appended after them.
// Each call decodes what arrived, moving chunk data down over the framing it replaces, so the
// region never holds more than the decoded body plus one read. Every byte of framing is read
// once, so any split of the input gives the same result.
//
// Strict: chunk sizes are 1*HEXDIG with no whitespace and no more than 64 bits; extensions
// are skipped but must follow their grammar (RFC 9112 §7.1.1): *( BWS ";" BWS name
// [ BWS "=" BWS value ] ), name a token, value a token or a quoted-string with no CR or LF;
// CRLF is required after the size line, after the data and after each trailer line. Trailer fields are parsed, counted against
// max_header_bytes (431) and then dropped: handlers do not see them.
#ifndef SKIFF_HTTP_CHUNKED_HPP
#define SKIFF_HTTP_CHUNKED_HPP

#include "skiff/detail/ascii.hpp"
#include "skiff/detail/scan.hpp"
#include "skiff/http/parse_status.hpp"

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint64_t, std::uint32_t, std::uint8_t
#include <cstring>  // std::memmove

namespace skiff {

class chunked_decoder {
public:
    // body[0, len): kept() decoded bytes followed by new raw input.
    // complete: the body is body[0, size()); consumed is where the message ends in body.
    // incomplete: all input was used; keep body[0, kept()) and append the next bytes after it.
    // error: bad_request, or content_too_large as soon as a chunk would pass max_body.
    parse_status decode(char* body, std::size_t len, const parse_limits& limits, std::size_t& consumed) noexcept {
        std::size_t src = decoded_;
        while (src < len) {
            if (state_ == state::data) {
                src += copy_data(body, src, len);
                continue;
            }
            parse_status s = step(body[src++], limits);
            if (s == parse_status::complete) consumed = src;
            if (s != parse_status::incomplete) return s;
        }
        return parse_status::incomplete;
    }

    // Decoded body bytes, at the start of the region: also what the caller must keep of it.
    std::size_t size() const noexcept { return decoded_; }

    // For a caller that streams the body: it takes the decoded bytes (the region's first
    // size()), and the next call's region starts with new raw input. max_body then bounds
    // what one call decodes (each chunk, and the chunks of that call together); the caller
    // counts the total.
    std::size_t take() noexcept {
        std::size_t n = decoded_;
        decoded_ = 0;
        return n;
    }

private:
    enum class state : std::uint8_t {
        size, size_lf, data, data_cr, data_lf, trailer_start, trailer_name, trailer_value, trailer_lf, end_lf,
        // the extensions, in the order their grammar reads them
        ext_semicolon,  // BWS after the size: a ';' must follow
        ext_name_start, // after ';': BWS, then a token
        ext_name,
        ext_name_bws,   // BWS after a name: '=' or ';' must follow
        ext_value_start,// after '=': BWS, then a token or a quoted-string
        ext_token,
        ext_quoted,
        ext_quoted_pair,
        ext_value_end,  // right after a closing quote: CR, ';' or BWS
        ext_value_bws,  // BWS after a value: ';' must follow
        ext_bad,        // what a step answers for a byte the grammar has no place for
    };

    // Longest size line accepted, every byte before its CRLF counted (digits, ';' and
    // extensions): extensions are rare and never big.
    static constexpr std::uint32_t max_size_line = 4096;

    std::size_t copy_data(char* body, std::size_t src, std::size_t len) noexcept {
        std::size_t n = len - src < left_ ? len - src : static_cast<std::size_t>(left_);
        if (src != decoded_) std::memmove(body + decoded_, body + src, n);
        decoded_ += n;
        left_ -= n;
        if (left_ == 0) state_ = state::data_cr;
        return n;
    }

    parse_status step(char c, const parse_limits& limits) noexcept {
        switch (state_) {
        case state::size: return size_char(c);
        case state::size_lf: return size_end(c, limits);
        case state::data_cr: return expect(c, '\r', state::data_lf);
        case state::data_lf: return expect(c, '\n', state::size);
        default:
            if (state_ >= state::ext_semicolon) return ext_char(c);
            return trailer_char(c, limits);
        }
    }

    parse_status expect(char c, char want, state next) noexcept {
        if (c != want) return parse_status::bad_request;
        state_ = next;
        line_ = 0;
        return parse_status::incomplete;
    }

    parse_status size_char(char c) noexcept {
        int d = detail::hex_value(c);
        if (d >= 0) {
            if (left_ > (~std::uint64_t{0} >> 4)) return parse_status::bad_request;  // would pass 64 bits
            left_ = left_ * 16 + static_cast<std::uint64_t>(d);
            return ++line_ > max_size_line ? parse_status::bad_request : parse_status::incomplete;
        }
        if (line_ == 0) return parse_status::bad_request;  // no digits (or whitespace before them)
        if (c == '\r') { state_ = state::size_lf; return parse_status::incomplete; }
        state_ = state::ext_semicolon;
        return ext_char(c);
    }

    // One byte of the extensions; every byte before the CR counts toward max_size_line.
    parse_status ext_char(char c) noexcept {
        state next = state_ <= state::ext_name_bws ? ext_name_step(c) : ext_value_step(c);
        if (next == state::ext_bad) return parse_status::bad_request;
        if (next != state::size_lf && ++line_ > max_size_line) return parse_status::bad_request;
        state_ = next;
        return parse_status::incomplete;
    }

    // BWS ";" BWS chunk-ext-name [ BWS "=" ...: the state after c, or ext_bad.
    state ext_name_step(char c) const noexcept {
        switch (state_) {
        case state::ext_semicolon:
            return c == ';' ? state::ext_name_start : detail::is_ows(c) ? state_ : state::ext_bad;
        case state::ext_name_start:
            return detail::is_tchar(c) ? state::ext_name : detail::is_ows(c) ? state_ : state::ext_bad;
        case state::ext_name:
            if (detail::is_tchar(c)) return state_;
            if (c == '\r') return state::size_lf;
            if (c == ';') return state::ext_name_start;
            if (c == '=') return state::ext_value_start;
            return detail::is_ows(c) ? state::ext_name_bws : state::ext_bad;
        default:  // ext_name_bws
            if (c == '=') return state::ext_value_start;
            if (c == ';') return state::ext_name_start;
            return detail::is_ows(c) ? state_ : state::ext_bad;
        }
    }

    // ... BWS chunk-ext-val ], a token or a quoted-string (RFC 9110 §5.6.4: qdtext and
    // quoted-pair, so no CR, LF or other CTL inside).
    state ext_value_step(char c) const noexcept {
        auto u = static_cast<unsigned char>(c);
        bool text = u == '\t' || (u >= 0x20 && u != 0x7f);  // HTAB, SP, VCHAR, obs-text
        switch (state_) {
        case state::ext_value_start:
            if (c == '"') return state::ext_quoted;
            return detail::is_tchar(c) ? state::ext_token : detail::is_ows(c) ? state_ : state::ext_bad;
        case state::ext_token:
            if (detail::is_tchar(c)) return state_;
            if (c == '\r') return state::size_lf;
            if (c == ';') return state::ext_name_start;
            return detail::is_ows(c) ? state::ext_value_bws : state::ext_bad;
        case state::ext_quoted:
            if (c == '"') return state::ext_value_end;
            if (c == '\\') return state::ext_quoted_pair;
            return text ? state_ : state::ext_bad;
        case state::ext_quoted_pair: return text ? state::ext_quoted : state::ext_bad;
        case state::ext_value_end:
            if (c == '\r') return state::size_lf;
            if (c == ';') return state::ext_name_start;
            return detail::is_ows(c) ? state::ext_value_bws : state::ext_bad;
        default:  // ext_value_bws
            if (c == ';') return state::ext_name_start;
            return detail::is_ows(c) ? state_ : state::ext_bad;
        }
    }

    parse_status size_end(char c, const parse_limits& limits) noexcept {
        if (c != '\n') return parse_status::bad_request;
        line_ = 0;
        if (left_ == 0) { state_ = state::trailer_start; return parse_status::incomplete; }
        // Decided from the declared size, before the data is buffered.
        if (left_ > limits.max_body || decoded_ > limits.max_body - left_) return parse_status::content_too_large;
        state_ = state::data;
        return parse_status::incomplete;
    }

    // trailer-section = *( field-line CRLF ) CRLF. line_ counts every byte of it, the final
    // CRLF included, as the head's section is counted against the same limit (431).
    parse_status trailer_char(char c, const parse_limits& limits) noexcept {
        if (++line_ > limits.max_header_bytes) return parse_status::fields_too_large;
        switch (state_) {
        case state::end_lf:
            return c == '\n' ? parse_status::complete : parse_status::bad_request;
        case state::trailer_start:
            if (c == '\r') { state_ = state::end_lf; return parse_status::incomplete; }
            if (!detail::is_tchar(c)) return parse_status::bad_request;  // obs-fold, empty name
            state_ = state::trailer_name;
            return parse_status::incomplete;
        case state::trailer_name:
            if (c == ':') state_ = state::trailer_value;
            else if (!detail::is_tchar(c)) return parse_status::bad_request;
            return parse_status::incomplete;
        case state::trailer_value:
            if (c == '\r') state_ = state::trailer_lf;
            else if (!detail::is_field_char(c)) return parse_status::bad_request;
            return parse_status::incomplete;
        default:  // trailer_lf
            if (c != '\n') return parse_status::bad_request;
            state_ = state::trailer_start;
            return parse_status::incomplete;
        }
    }

    std::uint64_t left_ = 0;     // size being read, then data bytes left in the chunk
    std::size_t decoded_ = 0;    // body bytes decoded so far, at the front of the region
    std::uint32_t line_ = 0;     // bytes of the current size line, or of the trailer section
    state state_ = state::size;
};

} // namespace skiff

#endif // SKIFF_HTTP_CHUNKED_HPP
