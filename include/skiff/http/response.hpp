// The response a handler writes. It serialises straight into the loop's output buffer, after
// the responses to earlier requests of the same read, so a batch leaves in one write.
//
// Headers set with header() are written at once (so temporaries are safe to pass); the status
// line, Date, Content-Type, Content-Length and Connection are put in front of them when the
// body is given, since only then are they known. A response is sent once: the first of
// text(), json(), html(), body(), end() or stream() wins and later calls are ignored. A handler
// that sends nothing gets its status with an empty body.
//
// When the head is written: at the send call above, into the output buffer; but nothing
// leaves before the handler chain (its middleware included, middleware/stack.hpp) has
// returned, so a header() after the send is inserted into that head (a move of the body bytes
// behind it: only a response that adds a field late pays the copy). For a stream the head can
// still grow until its first bytes go out, which is after the chain returns too. Where the
// head ends is noted when it is written, so a late field needs no scan for it. Fields kept
// aside for the head (the built-ins'), and those held for a later head: response_access.hpp.
//
// skiff frames every body itself: Content-Length (none on 1xx, 204 and 304), or, for a stream
// of unknown length, chunked (HTTP/1.1) or the end of the connection (HTTP/1.0). A
// Content-Length or Transfer-Encoding set with header() is dropped; "Connection: close" is
// honoured (the connection closes after this response); a field with an invalid name or a
// value holding CR, LF or NUL is dropped, so a handler cannot split the response.
#ifndef SKIFF_HTTP_RESPONSE_HPP
#define SKIFF_HTTP_RESPONSE_HPP

#include "skiff/config.hpp"
#include "skiff/detail/ascii.hpp"
#include "skiff/detail/byte_buffer.hpp"
#include "skiff/detail/date_cache.hpp"
#include "skiff/detail/scan.hpp"
#include "skiff/detail/unique_fd.hpp"
#include "skiff/http/response_head.hpp"
#include "skiff/http/status.hpp"

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t
#include <cstring>      // std::memcpy, std::memmove
#include <functional>   // std::function for streamed bodies
#include <optional>     // std::optional: a stream's length, when it is known
#include <string_view>  // std::string_view
#include <utility>      // std::move

namespace skiff {

// Produces a streamed body piece by piece: writes up to `capacity` bytes at `buf` and returns
// how many; 0 means the body is complete. Called on the loop's thread whenever the client has
// read what was sent before, so a slow reader holds only about one piece in server memory.
using body_source = std::function<std::size_t(char* buf, std::size_t capacity)>;

class deferred;  // async/deferred.hpp

namespace detail {
struct response_access;
struct pending_body;    // engine/handover.hpp
struct hub_anchor;      // engine/loop_hub.hpp
struct deferred_state;
class handed;           // engine/handed.hpp
class file_send;        // files/file_send.hpp
class stream_send;      // stream/stream_send.hpp

} // namespace detail

class response {
public:
    // A final status is 200-599: a code outside 100-599 is not HTTP, and a 1xx is interim
    // (RFC 9110 §15.2), after which the client would wait for the real answer. Others are 500.
    response& status(int code) noexcept {
        if (!sent_) status_ = code >= 200 && code <= 599 ? code : 500;
        return *this;
    }
    int status() const noexcept { return status_; }

    // Adds a header field (written as given). See the file comment for what is dropped.
    response& header(std::string_view name, std::string_view value) {
        if (!detail::valid_field(name, value)) return *this;
        if (sent_) return late_header(name, value);
        if (!note_special(name, value)) return *this;
        std::size_t size = field_size(name, value);
        put_field(out_->prepare(size), name, value);
        out_->commit(size);
        return *this;
    }

    void text(std::string_view body) { send_known(body, detail::known_type::plain); }
    void json(std::string_view body) { send_known(body, detail::known_type::json); }
    void html(std::string_view body) { send_known(body, detail::known_type::html); }
    void body(std::string_view body, std::string_view content_type = "application/octet-stream") {
        send(body, content_type.empty() ? "application/octet-stream" : content_type);
    }
    // Sends the status with no content (Content-Length: 0 where a body is allowed).
    void end() { send_known({}, detail::known_type::none); }

    // Sends a body produced by `source` as the client reads it (see body_source). With a
    // length the body is framed by Content-Length and must be exactly that long (a source
    // that ends early closes the connection); without one it is chunked (HTTP/1.1) or ends
    // with the connection (HTTP/1.0).
    // A template only so that a program that never calls it compiles none of it (the
    // producing is stream/stream_send.hpp's, which the connection is handed to).
    template <class Sender = detail::stream_send>
    void stream(std::string_view content_type, body_source source, std::optional<std::uint64_t> length = {}) {
        if (sent_) return;
        detail::response_framing f = stream_head(content_type, length);
        if (f != detail::response_framing::no_content)
            taker_ = new Sender(std::move(source), f, length.value_or(0));  // the loop owns it from here
    }

    // Sends `length` bytes of the open file `fd` from `offset`, framed by Content-Length
    // (even on a connection that closes after it), and takes the descriptor: closed when
    // sent, when the client goes, or at once for HEAD or a status without content. On Linux
    // the kernel copies it (sendfile), after the head and every earlier response of the batch
    // have left. A file that shrinks meanwhile closes the connection, as a short stream does.
    // A template only so that a program that never calls it compiles none of it (the
    // sending is files/file_send.hpp's, which the connection is handed to).
    template <class Sender = detail::file_send>
    void file(int fd, std::uint64_t offset, std::uint64_t length, std::string_view content_type) {
        detail::unique_fd owned(fd);
        if (sent_) return;
        using framing = detail::response_framing;
        bool content = status_allows_body(status_);
        write_head(content ? content_type : std::string_view(), length,
                   content ? framing::content_length : framing::no_content, 0);
        if (!content || omit_body_ || length == 0) return;
        taker_ = new Sender(typename Sender::body{std::move(owned), offset, length});  // the loop owns it from here
    }

    // Answers later: returns a handle that any thread completes (async/deferred.hpp), and the
    // response itself is done. Requests pipelined behind this one wait until the answer is
    // written. A template only so that a program that never calls it compiles none of it.
    template <class Deferred = skiff::deferred>
    Deferred defer() {
        return Deferred(*this);
    }

    bool sent() const noexcept { return sent_; }
    // Asks for the connection to close after this response.
    void close_connection() noexcept { close_ = true; }
    bool closes_connection() const noexcept { return close_; }

private:
    friend struct detail::response_access;
    friend class skiff::deferred;

    // A streamed body's head. Returns how the body that follows is framed: no_content when
    // none does (HEAD, a status without content). HTTP/1.0 has no chunked coding: a body of
    // unknown length ends with the connection.
    detail::response_framing stream_head(std::string_view content_type, std::optional<std::uint64_t> length) {
        using framing = detail::response_framing;
        bool content = status_allows_body(status_);
        if (content && !length && http10_) close_ = true;
        framing f = !content ? framing::no_content
                    : !length ? (http10_ ? framing::until_close : framing::chunked)
                    : close_  ? framing::until_close
                              : framing::content_length;
        bool with_length = f == framing::content_length;
        write_head(content ? content_type : std::string_view(), with_length ? *length : 0, f, 0);
        return content && !omit_body_ ? f : framing::no_content;
    }

    // A field after the head was written (by middleware after the handler): inserted before
    // the blank line that ends the head. Fields skiff frames itself are not changed late.
    response& late_header(std::string_view name, std::string_view value) {
        if (deferred_ != nullptr || detail::is_framing_field(name)) return *this;
        if (char* p = late_room(field_size(name, value))) put_field(p, name, value);
        return *this;
    }

    // Opens `size` bytes before the blank line that ends the head written, moving the body
    // behind them; returns where they are. The head's end is as the writer noted it for an
    // answer with fields kept aside (the built-ins': no scan); for any other, found by a scan
    // of this response's bytes, so the plain 200 stores nothing more (measured: noting it
    // cost the contract app 9 instructions a request). Null when no head of ours is there.
    SKIFF_ALWAYS_INLINE char* late_room(std::size_t size) {
        if (SKIFF_UNLIKELY(aside_ == detail::head_aside::none) && !find_head_end()) return nullptr;
        std::size_t tail = out_->size() - head_end_;
        out_->reserve_more(size);
        char* p = out_->data() + head_end_;
        detail::move_up(p + size, p, tail);
        out_->commit(size);
        head_end_ += size;
        return p;
    }

    // The scan late_room() makes for a head whose end was not noted; false when no head of
    // ours is in the buffer.
    SKIFF_NOINLINE bool find_head_end() noexcept {
        std::string_view written(out_->data() + start_, out_->size() - start_);
        std::size_t blank = written.find("\r\n\r\n");
        if (blank == std::string_view::npos) return false;
        head_end_ = start_ + blank + detail::head_text::crlf.size();
        aside_ = detail::head_aside::noted;
        extras_ = 0;
        return true;
    }

    // The fields kept aside for the head (the file comment), in the order added: the
    // start-up block first when it came first, then the room's. Only while aside_ is not none.
    SKIFF_ALWAYS_INLINE char* put_extras(char* p) const noexcept {
        if (fixed_ != nullptr) p = detail::put(p, fixed_->lines);         // short ones (Vary): inline moves
        if (extra_size_ != 0) p = detail::put(p, {extra_, extra_size_});  // no call under 33 bytes
        return p;
    }

    static std::size_t field_size(std::string_view name, std::string_view value) noexcept {
        namespace text = detail::head_text;
        return name.size() + text::field_separator.size() + value.size() + text::crlf.size();
    }
    // "name: value\r\n" at p, which has field_size() bytes of room.
    static void put_field(char* p, std::string_view name, std::string_view value) noexcept {
        namespace text = detail::head_text;
        p = detail::put(p, name);
        p = detail::put(p, text::field_separator);
        p = detail::put(p, value);
        detail::put(p, text::crlf);
    }

    // put_field() inlined into its caller, so that a constant name is copied as a constant
    // (the built-ins' fields: measured, request_id() 42 -> 10 instructions for its line).
#if defined(__GNUC__)
    [[gnu::always_inline]]
#endif // __GNUC__
    static void put_line(char* p, std::string_view name, std::string_view value) noexcept {
        p = detail::put(p, name);
        std::memcpy(p, ": ", 2);
        p = detail::put(p + 2, value);
        std::memcpy(p, "\r\n", 2);
    }

    // Fields skiff writes itself. Returns false when the field must not be written as given.
    bool note_special(std::string_view name, std::string_view value) noexcept {
        using detail::length_of;
        switch (name.size()) {
        case length_of("date"):
            if (detail::iequals_lower(name, "date")) has_date_ = true;
            return true;
        case length_of("connection"):
            if (!detail::iequals_lower(name, "connection")) return true;
            if (detail::iequals_lower(value, "close")) close_ = true;
            return false;
        case length_of("content-type"):
            if (detail::iequals_lower(name, "content-type")) has_type_ = true;
            return true;
        case length_of("content-length"): return !detail::iequals_lower(name, "content-length");
        case length_of("transfer-encoding"): return !detail::iequals_lower(name, "transfer-encoding");
        default: return true;
        }
    }

    // The common answer, a 200 with nothing written before it and nothing to add to it,
    // takes its head pre-composed; any other goes through write_head().
    void send_known(std::string_view body, detail::known_type t) {
        bool plain = status_ == 200 && !sent_ && !close_ && !http10_ && out_->size() == start_;
        if (plain) {
            if (aside_ == detail::head_aside::none) return send_ok<detail::head_end::unnoted>(body, t);
            // Nothing kept aside, a late field to come (the response timer's): the plain head, its
            // end noted (measured: response_timer() +171 -> +162 instructions a request).
            if (extras_ == 0) return send_ok<detail::head_end::noted>(body, t);
            return send_ok_aside(body, t);
        }
        send(body, detail::known_type_names[static_cast<std::size_t>(t)]);
    }

    // Layout: [block, copied whole][length digits]["\r\n\r\n"][body]. The room reserved
    // covers the whole block copy as well as the bytes that really follow its size.
    template <detail::head_end End>
    void send_ok(std::string_view body, detail::known_type t) {
        sent_ = true;
        heads_.refresh(*date_);
        std::size_t copied = omit_body_ ? 0 : body.size();
        constexpr std::string_view end_of_head = "\r\n\r\n";
        char* start = out_->prepare(detail::ok_heads::room + detail::head_text::max_decimal_digits +
                                    end_of_head.size() + copied);
        std::memcpy(start, heads_.block(t), detail::ok_heads::room);  // constant size: inline moves
        char* p = detail::put_decimal(start + heads_.size(t), body.size());
        if constexpr (End == detail::head_end::noted) head_end_ = start_ + static_cast<std::size_t>(p - start) + detail::head_text::crlf.size();
        std::memcpy(p, end_of_head.data(), end_of_head.size());
        p = detail::put(p + end_of_head.size(), body.substr(0, copied));
        out_->commit(static_cast<std::size_t>(p - start));
    }

    // send_ok() with the fields kept aside between the length and the blank line, and the
    // head's end noted: [block][digits]["\r\n"][extras]["\r\n"][body].
    void send_ok_aside(std::string_view body, detail::known_type t) {
        namespace text = detail::head_text;
        sent_ = true;
        heads_.refresh(*date_);
        std::size_t copied = omit_body_ ? 0 : body.size();
        char* start = out_->prepare(detail::ok_heads::room + text::max_decimal_digits + 2 * text::crlf.size() +
                                    extras_ + copied);
        std::memcpy(start, heads_.block(t), detail::ok_heads::room);  // constant size: inline moves
        char* p = detail::put_decimal(start + heads_.size(t), body.size());
        std::memcpy(p, text::crlf.data(), text::crlf.size());
        p = put_extras(p + text::crlf.size());
        head_end_ = start_ + static_cast<std::size_t>(p - start);
        std::memcpy(p, text::crlf.data(), text::crlf.size());
        p = detail::put(p + text::crlf.size(), body.substr(0, copied));
        out_->commit(static_cast<std::size_t>(p - start));
    }

    void send(std::string_view body, std::string_view type) {
        if (sent_) return;
        bool content = status_allows_body(status_);
        if (!content) body = {};
        std::size_t copied = omit_body_ ? 0 : body.size();
        using framing = detail::response_framing;
        char* p = write_head(content ? type : std::string_view(), body.size(),
                             content ? framing::content_length : framing::no_content, copied);
        detail::put(p, body.substr(0, copied));
        out_->commit(copied);
    }

    // Writes the head in front of the fields header() already wrote, leaving `reserve` bytes
    // of room after it; returns where the body goes.
    // `length` is written only with framing::content_length.
    char* write_head(std::string_view type, std::uint64_t length, detail::response_framing framing,
                     std::size_t reserve) {
        namespace text = detail::head_text;
        sent_ = true;
        if (has_type_) type = {};
        bool with_length = framing == detail::response_framing::content_length;
        bool chunked = framing == detail::response_framing::chunked;
        char line_room[text::status_line_room];
        std::string_view line = status_line(line_room);
        char length_room[text::max_decimal_digits];
        char* digits = detail::format_decimal(length_room + sizeof length_room, length);
        std::string_view cl(digits, static_cast<std::size_t>(length_room + sizeof length_room - digits));
        std::size_t prefix = line.size() + (has_date_ ? 0 : detail::date_cache::line_size) +
                             (type.empty() ? 0 : text::content_type.size() + type.size() + text::crlf.size()) +
                             (with_length ? text::content_length.size() + cl.size() + text::crlf.size() : 0) +
                             (chunked ? text::chunked.size() : 0) + (close_ ? text::close.size() : 0) +
                             (keeps_http10_alive() ? text::keep_alive.size() : 0) +
                             (aside_ == detail::head_aside::none ? 0 : extras_);
        std::size_t fields = out_->size() - start_;  // written by header(), to follow the prefix
        out_->reserve_more(prefix + text::crlf.size() + reserve);
        char* p = out_->data() + start_;
        if (fields != 0) std::memmove(p + prefix, p, fields);
        p = detail::put(p, line);
        if (!has_date_) {  // a fixed size: copied inline
            std::memcpy(p, date_->data(), detail::date_cache::line_size);
            p += detail::date_cache::line_size;
        }
        if (!type.empty()) p = detail::put(detail::put(detail::put(p, text::content_type), type), text::crlf);
        if (with_length) p = detail::put(detail::put(detail::put(p, text::content_length), cl), text::crlf);
        if (chunked) p = detail::put(p, text::chunked);
        if (close_) p = detail::put(p, text::close);
        if (keeps_http10_alive()) p = detail::put(p, text::keep_alive);
        if (aside_ != detail::head_aside::none) {
            p = put_extras(p);
            head_end_ = static_cast<std::size_t>(p + fields - out_->data());
        }
        p = detail::put(p + fields, text::crlf);
        out_->commit(prefix + text::crlf.size());
        return p;
    }

    // RFC 9112 §9.3: an HTTP/1.0 client closes unless the response says keep-alive.
    bool keeps_http10_alive() const noexcept { return http10_ && !close_; }

    // The listed line, or "HTTP/1.1 NNN \r\n" (empty reason) built in room.
    std::string_view status_line(char (&room)[detail::head_text::status_line_room]) const noexcept {
        namespace text = detail::head_text;
        std::string_view known = known_status_line(status_);
        if (!known.empty()) return known;
        char* digits_end = detail::put(room, text::version) + text::status_digits;
        detail::format_decimal(digits_end, static_cast<std::uint64_t>(status_));
        return {room, static_cast<std::size_t>(detail::put(digits_end, text::empty_reason) - room)};
    }

    detail::byte_buffer* out_ = nullptr;
    const detail::date_cache* date_ = nullptr;
    detail::ok_heads heads_;  // kept across requests: start() leaves it alone
    std::size_t start_ = 0;  // where this response begins in *out_
    // Fields kept aside for the head, and where it ends; all but aside_ valid only while
    // aside_ is not none (start() resets aside_ alone: one store a request).
    std::size_t head_end_ = 0;  // with aside_ noted: where the head's blank line begins in *out_
    std::size_t extras_ = 0;    // bytes kept aside (fixed_'s and extra_'s)
    const detail::field_block* fixed_ = nullptr;  // the start-up block added first, or none
    std::size_t extra_size_ = 0;                  // bytes of extra_ in use
    char extra_[detail::extra_field_room];        // per-request fields for the head
    detail::hub_anchor* anchor_ = nullptr;       // the loop's, lent once (response_access::lend)
    detail::deferred_state* deferred_ = nullptr;  // set by defer(): its middleware hooks (on_settled)
    detail::handed* taker_ = nullptr;  // set by defer(): what the connection is handed to; the loop takes it
    detail::pending_body* body_ = nullptr;        // lent while a route whose body is unread runs
    int status_ = 200;
    bool omit_body_ = false;  // HEAD: headers as for GET, no content
    bool http10_ = false;     // the request was HTTP/1.0: no chunked coding
    bool close_ = false;
    bool sent_ = false;
    bool has_type_ = false;
    bool has_date_ = false;
    detail::head_aside aside_ = detail::head_aside::none;
};

} // namespace skiff

#endif // SKIFF_HTTP_RESPONSE_HPP
