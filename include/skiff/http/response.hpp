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
// leaves before the handler chain (its middleware included, server/middleware.hpp) has
// returned, so a header() after the send is inserted into that head (a move of the body bytes
// behind it: only a response that adds a field late pays the copy). For a stream the head can
// still grow until its first bytes go out, which is after the chain returns too.
//
// An answer whose head is written later (a deferred one, or a route that streams its request
// body and answers at its end) leaves the chain with fields written and no head: those bytes
// must not stay in the output buffer, where the next bytes of the batch would follow them to
// the client ahead of any status line. They are taken out whole (response_access::hold_fields)
// into the answer's own state, with what they told the head (a Content-Type, a Date), and put
// back (restore_fields) in front of the fields the answer adds when its head is written. (A
// Connection: close among them is not a field but a flag, not held: the session reads it when
// the chain returns, and a deferred answer's connection closes after it all the same.) A field added to a deferred answer after defer() returned is dropped: its head is
// the handle's to write (deferred::header).
//
// skiff frames every body itself: Content-Length (none on 1xx, 204 and 304), or, for a stream
// of unknown length, chunked (HTTP/1.1) or the end of the connection (HTTP/1.0). A
// Content-Length or Transfer-Encoding set with header() is dropped; "Connection: close" is
// honoured (the connection closes after this response); a field with an invalid name or a
// value holding CR, LF or NUL is dropped, so a handler cannot split the response.
#ifndef SKIFF_HTTP_RESPONSE_HPP
#define SKIFF_HTTP_RESPONSE_HPP

#include "skiff/detail/ascii.hpp"
#include "skiff/detail/byte_buffer.hpp"
#include "skiff/detail/date_cache.hpp"
#include "skiff/detail/unique_fd.hpp"
#include "skiff/detail/scan.hpp"
#include "skiff/http/status.hpp"

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t
#include <cstring>      // std::memcpy, std::memmove
#include <functional>   // std::function for streamed bodies
#include <memory>       // std::unique_ptr for a file body
#include <optional>     // std::optional: a stream's length, when it is known
#include <string>       // held_fields: a later head's fields, kept until it is written
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
struct pending_body;    // server/handover.hpp
struct hub_anchor;      // server/loop_hub.hpp
struct deferred_state;
class handed;           // server/handed.hpp
class file_send;        // files/file_send.hpp

// How a response's content is delimited, as the head says it (RFC 9112 §6.3).
enum class response_framing : std::uint8_t {
    no_content,      // 1xx, 204, 304: no length, no body
    content_length,  // Content-Length: the body that follows
    chunked,         // Transfer-Encoding: chunked (a stream of unknown length, HTTP/1.1)
    until_close,     // neither: the body ends when the connection closes
};

// The fixed text of a head, named once so that each width is the length of its own text.
namespace head_text {
inline constexpr std::string_view crlf = "\r\n";
inline constexpr std::string_view field_separator = ": ";
inline constexpr std::string_view content_type = "Content-Type: ";
inline constexpr std::string_view content_length = "Content-Length: ";
inline constexpr std::string_view chunked = "Transfer-Encoding: chunked\r\n";
inline constexpr std::string_view close = "Connection: close\r\n";
inline constexpr std::string_view keep_alive = "Connection: keep-alive\r\n";
inline constexpr std::string_view version = "HTTP/1.1 ";
inline constexpr std::string_view empty_reason = " \r\n";
inline constexpr std::size_t status_digits = 3;  // status() keeps codes in 100-599
inline constexpr std::size_t status_line_room = version.size() + status_digits + empty_reason.size();
inline constexpr std::size_t max_decimal_digits = 20;  // of a std::uint64_t
} // namespace head_text

constexpr std::size_t length_of(std::string_view s) noexcept { return s.size(); }

// Decimal digits of v, written backwards ending at `end`; returns the first digit.
inline char* format_decimal(char* end, std::uint64_t v) noexcept {
    // Two digits a step from a table of "00".."99": half the divisions of a digit at a time.
    static constexpr char pairs[] =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
        "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
        "8081828384858687888990919293949596979899";
    while (v >= 100) {
        std::size_t i = static_cast<std::size_t>(v % 100) * 2;
        v /= 100;
        *--end = pairs[i + 1];
        *--end = pairs[i];
    }
    if (v >= 10) {
        std::size_t i = static_cast<std::size_t>(v) * 2;
        *--end = pairs[i + 1];
        *--end = pairs[i];
        return end;
    }
    *--end = static_cast<char>('0' + v);
    return end;
}

template <std::size_t N>
inline void move_bytes(char* to, const char* from) noexcept {
    char word[N];
    std::memcpy(word, from, N);  // constant sizes: compiled to plain loads and stores
    std::memcpy(to, word, N);
}

// Copies s to p and returns the end. The strings of a response head are short (a status
// line, a type, a few digits): two overlapping word moves copy them without a call to
// memcpy. Measured with the Date line's fixed-size copy: write_head 216 -> 193 instructions a
// response (callgrind, contract app, pipelined GET /). Reads only s itself: an empty view may
// even hold a null pointer.
#if defined(__GNUC__)
[[gnu::always_inline]]  // measured: GCC 12 otherwise calls it, at 12 instructions a call
#endif // __GNUC__
inline char* put(char* p, std::string_view s) noexcept {
    std::size_t n = s.size();
    const char* from = s.data();
    if (n > 32) {
        std::memcpy(p, from, n);
    } else if (n > 16) {
        move_bytes<16>(p, from);
        move_bytes<16>(p + n - 16, from + n - 16);
    } else if (n >= 8) {
        move_bytes<8>(p, from);
        move_bytes<8>(p + n - 8, from + n - 8);
    } else if (n >= 4) {
        move_bytes<4>(p, from);
        move_bytes<4>(p + n - 4, from + n - 4);
    } else if (n >= 2) {
        move_bytes<2>(p, from);
        move_bytes<2>(p + n - 2, from + n - 2);
    } else if (n == 1) {
        *p = *from;
    }
    return p + n;
}

// The decimal digits of v written at p, in place (their count first): no staging copy.
inline char* put_decimal(char* p, std::uint64_t v) noexcept {
    // Most bodies are under 10,000 bytes: their digit count takes compares, not divisions.
    std::size_t n = v < 10 ? 1 : v < 100 ? 2 : v < 1000 ? 3 : v < 10000 ? 4 : 5;
    for (std::uint64_t t = v / 100000; t != 0; t /= 10) ++n;
    format_decimal(p + n, v);
    return p + n;
}

// Fields header() wrote for a head that is written later (see the file comment), and what
// they told that head. Empty for a chain that wrote none.
struct held_fields {
    std::string bytes;  // "name: value\r\n" lines, as header() wrote them
    bool has_type = false;
    bool has_date = false;
};

// The content types of text(), json() and html(), and none (end()): each has a pre-composed
// 200 head (ok_heads).
enum class known_type : std::uint8_t { plain, json, html, none };
inline constexpr std::size_t known_type_count = 4;
inline constexpr std::string_view known_type_names[known_type_count] = {"text/plain", "application/json",
                                                                       "text/html; charset=utf-8", ""};

// "HTTP/1.1 200 OK\r\n", the Date line, the Content-Type field and "Content-Length: ", one
// block per known type, recomposed when the Date line changes (once a second). A 200 head is
// then one constant-size copy and the length digits, where the general write_head() makes
// eight copies of run-time sizes (measured: contract app keep-alive 1,714 -> 1,605 instructions
// a request). Each block lies in `room` bytes, copied whole: the bytes past its size are
// overwritten by what follows.
class ok_heads {
public:
    static constexpr std::size_t room = 112;  // 110 for html, the longest

    void refresh(const date_cache& date) noexcept {
        if (date.generation() == generation_) return;
        generation_ = date.generation();
        for (std::size_t t = 0; t < known_type_count; ++t) compose(t, date);
    }
    const char* block(known_type t) const noexcept { return blocks_[static_cast<std::size_t>(t)]; }
    std::size_t size(known_type t) const noexcept { return sizes_[static_cast<std::size_t>(t)]; }

private:
    void compose(std::size_t t, const date_cache& date) noexcept {
        namespace text = head_text;
        std::string_view type = known_type_names[t];
        char* p = put(blocks_[t], known_status_line(200));
        p = put(p, date.line());
        if (!type.empty()) p = put(put(put(p, text::content_type), type), text::crlf);
        p = put(p, text::content_length);
        sizes_[t] = static_cast<std::uint8_t>(p - blocks_[t]);
    }

    std::uint64_t generation_ = ~std::uint64_t{0};  // none yet: a date_cache starts at 0
    char blocks_[known_type_count][room] = {};
    std::uint8_t sizes_[known_type_count] = {};
};
static_assert(known_status_line(200).size() + date_cache::line_size + head_text::content_type.size() +
                      known_type_names[2].size() + head_text::crlf.size() + head_text::content_length.size() <=
                  ok_heads::room,
              "the longest pre-composed head fits its room");
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
        if (!valid_field(name, value)) return *this;
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
    void stream(std::string_view content_type, body_source source, std::optional<std::uint64_t> length = {}) {
        if (sent_) return;
        using framing = detail::response_framing;
        bool content = status_allows_body(status_);
        if (content && !length && http10_) close_ = true;  // HTTP/1.0 has no chunked coding
        framing f = !content ? framing::no_content
                    : !length ? (http10_ ? framing::until_close : framing::chunked)
                    : close_  ? framing::until_close
                              : framing::content_length;
        bool with_length = f == framing::content_length;
        write_head(content ? content_type : std::string_view(), with_length ? *length : 0, f, 0);
        if (content && !omit_body_) {
            source_ = std::move(source);
            stream_length_ = with_length ? length : std::nullopt;
            stream_chunked_ = f == framing::chunked;
        }
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

    // A field after the head was written (by middleware after the handler): inserted before
    // the blank line that ends the head. Fields skiff frames itself are not changed late. The
    // head's end is found here, by a scan of this response's bytes, rather than noted when the
    // head is written: the send path then stores nothing more (measured: noting it cost the
    // contract app 9 instructions a request).
    response& late_header(std::string_view name, std::string_view value) {
        if (deferred_ != nullptr || is_framing_field(name)) return *this;
        std::string_view written(out_->data() + start_, out_->size() - start_);
        std::size_t blank = written.find("\r\n\r\n");
        if (blank == std::string_view::npos) return *this;  // no head of ours in the buffer
        std::size_t head_end = start_ + blank + detail::head_text::crlf.size();
        std::size_t size = field_size(name, value);
        std::size_t tail = out_->size() - head_end;
        out_->reserve_more(size);
        char* p = out_->data() + head_end;
        std::memmove(p + size, p, tail);
        put_field(p, name, value);
        out_->commit(size);
        return *this;
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

    static bool is_framing_field(std::string_view name) noexcept {
        return detail::iequals_lower(name, "content-length") || detail::iequals_lower(name, "transfer-encoding") ||
               detail::iequals_lower(name, "connection") || detail::iequals_lower(name, "date");
    }

    static bool valid_field(std::string_view name, std::string_view value) noexcept {
        if (name.empty() || !detail::all_tchars(name)) return false;
        for (char c : value)
            if (c == '\r' || c == '\n' || c == '\0') return false;
        return true;
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
        if (plain) return send_ok(body, t);
        send(body, detail::known_type_names[static_cast<std::size_t>(t)]);
    }

    // Layout: [block, copied whole][length digits]["\r\n\r\n"][body]. The room reserved
    // covers the whole block copy as well as the bytes that really follow its size.
    void send_ok(std::string_view body, detail::known_type t) {
        sent_ = true;
        heads_.refresh(*date_);
        std::size_t copied = omit_body_ ? 0 : body.size();
        constexpr std::string_view end_of_head = "\r\n\r\n";
        char* start = out_->prepare(detail::ok_heads::room + detail::head_text::max_decimal_digits +
                                    end_of_head.size() + copied);
        std::memcpy(start, heads_.block(t), detail::ok_heads::room);  // constant size: inline moves
        char* p = detail::put_decimal(start + heads_.size(t), body.size());
        std::memcpy(p, end_of_head.data(), end_of_head.size());
        p = detail::put(p + end_of_head.size(), body.substr(0, copied));
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
                             (keeps_http10_alive() ? text::keep_alive.size() : 0);
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
    body_source source_;     // set by stream(); the loop takes it
    std::optional<std::uint64_t> stream_length_;  // set by stream() with Content-Length framing
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
    bool stream_chunked_ = false;
};

namespace detail {

// The loop's side of response: binding to the output buffer, rolling back what a throwing
// handler left half-written, and taking a stream's source.
struct response_access {
    static void start(response& r, byte_buffer& out, const date_cache& date, bool head, bool close,
                      bool http10 = false) noexcept {
        r.out_ = &out;
        r.date_ = &date;
        r.start_ = out.size();
        r.source_ = nullptr;
        r.status_ = 200;
        r.omit_body_ = head;
        r.http10_ = http10;
        r.close_ = close;
        r.sent_ = r.has_type_ = r.has_date_ = r.stream_chunked_ = false;
        r.deferred_ = nullptr;
    }
    static void discard(response& r) noexcept {
        r.out_->resize(r.start_);
        // A handler that deferred, then threw: its handle answers nothing. Its taker is the
        // loop's to drop (take_taker), as only the loop knows the type.
        r.deferred_ = nullptr;
        start(r, *r.out_, *r.date_, r.omit_body_, r.close_, r.http10_);
    }
    static bool streaming(const response& r) noexcept { return static_cast<bool>(r.source_); }
    static body_source take_source(response& r) noexcept { return std::move(r.source_); }
    // The Content-Length a stream must fill, or nullopt: chunked, or ended by closing.
    static std::optional<std::uint64_t> stream_length(const response& r) noexcept { return r.stream_length_; }
    static bool stream_chunked(const response& r) noexcept { return r.stream_chunked_; }
    static void lend(response& r, hub_anchor& a) noexcept { r.anchor_ = &a; }
    // What the handler handed the connection to (defer()), once; null for any other response.
    // The caller owns it from then on.
    static handed* take_taker(response& r) noexcept {
        handed* t = r.taker_;
        r.taker_ = nullptr;
        return t;
    }
    static bool hands_over(const response& r) noexcept { return r.taker_ != nullptr; }
    static void hand_over(response& r, deferred_state* s, handed* t) noexcept {
        r.deferred_ = s;
        r.taker_ = t;
    }
    // The loop's services, for what binds to them (defer(), a WebSocket's handle); null
    // outside a loop.
    static hub_anchor* anchor(const response& r) noexcept { return r.anchor_; }
    // A head the caller wrote whole (a 101 Switching Protocols, websocket/upgrade.hpp): the
    // response is done, and says `status` to the hooks.
    static void send_head(response& r, std::string_view head, int status) {
        r.out_->append(head.data(), head.size());
        r.status_ = status;
        r.sent_ = true;
    }
    // The answer defer() handed out, left in place (middleware that must outlive the handler).
    static deferred_state* pending_deferred(response& r) noexcept { return r.deferred_; }

    // For fields checked once at start-up (the built-in middleware's): what header() would
    // keep, and adding such a field without header()'s per-call checks.
    static bool checkable_field(std::string_view name, std::string_view value) noexcept {
        return response::valid_field(name, value) && !response::is_framing_field(name) &&
               !iequals_lower(name, "content-type");
    }
    // name and value must pass checkable_field().
    static void add_checked_field(response& r, std::string_view name, std::string_view value) {
        if (r.sent_) {
            r.late_header(name, value);
            return;
        }
        std::size_t size = response::field_size(name, value);
        response::put_field(r.out_->prepare(size), name, value);
        r.out_->commit(size);
    }
    // The fields written for a head not written yet, taken out of the output buffer (which
    // goes on from where this response began) and kept by the caller until the head is.
    static held_fields hold_fields(response& r) {
        held_fields h;
        h.bytes.assign(r.out_->data() + r.start_, r.out_->size() - r.start_);
        h.has_type = r.has_type_;
        h.has_date = r.has_date_;
        r.out_->resize(r.start_);
        return h;
    }
    // Puts held fields back into a response just started (start()), before any other: the
    // head then written takes them as it takes those header() wrote.
    static void restore_fields(response& r, const held_fields& h) {
        if (h.bytes.empty()) return;
        r.out_->append(h.bytes.data(), h.bytes.size());
        r.has_type_ = r.has_type_ || h.has_type;
        r.has_date_ = r.has_date_ || h.has_date;
    }

    // The body not read yet of the request being answered, where the route may take it
    // (server/handover.hpp); null outside the session's call for such a route's head.
    static void lend_body(response& r, pending_body* b) noexcept { r.body_ = b; }
    static pending_body* body(const response& r) noexcept { return r.body_; }
};

} // namespace detail
} // namespace skiff

#endif // SKIFF_HTTP_RESPONSE_HPP
