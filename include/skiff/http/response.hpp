// The response a handler writes. It serialises straight into the loop's output buffer, after
// the responses to earlier requests of the same read, so a batch leaves in one write.
//
// Headers set with header() are written at once (so temporaries are safe to pass); the status
// line, Date, Content-Type, Content-Length and Connection are put in front of them when the
// body is given, since only then are they known. A response is sent once: the first of
// text(), json(), body() or end() wins and later calls are ignored. A handler that sends
// nothing gets its status with an empty body.
//
// skiff frames every body itself: Content-Length always (none on 1xx, 204 and 304), never
// chunked. A Content-Length or Transfer-Encoding set with header() is dropped; "Connection:
// close" is honoured (the connection closes after this response); a field value holding CR,
// LF or NUL is dropped, so a handler cannot split the response.
#ifndef SKIFF_HTTP_RESPONSE_HPP
#define SKIFF_HTTP_RESPONSE_HPP

#include "skiff/detail/ascii.hpp"
#include "skiff/detail/byte_buffer.hpp"
#include "skiff/detail/date_cache.hpp"
#include "skiff/http/status.hpp"

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t
#include <cstring>      // std::memcpy, std::memmove
#include <string_view>  // std::string_view

namespace skiff {

namespace detail {
struct response_access;

// Decimal digits of v, written backwards ending at `end`; returns the first digit.
inline char* format_decimal(char* end, std::uint64_t v) noexcept {
    do {
        *--end = static_cast<char>('0' + v % 10);
        v /= 10;
    } while (v != 0);
    return end;
}

inline char* put(char* p, std::string_view s) noexcept {
    std::memcpy(p, s.data(), s.size());
    return p + s.size();
}
} // namespace detail

class response {
public:
    response& status(int code) noexcept {
        if (!sent_) status_ = code;
        return *this;
    }
    int status() const noexcept { return status_; }

    // Adds a header field (written as given). See the file comment for what is dropped.
    response& header(std::string_view name, std::string_view value) {
        if (sent_ || !valid_field(name, value) || !note_special(name, value)) return *this;
        char* p = out_->prepare(name.size() + value.size() + 4);
        p = detail::put(p, name);
        p = detail::put(p, ": ");
        p = detail::put(p, value);
        detail::put(p, "\r\n");
        out_->commit(name.size() + value.size() + 4);
        return *this;
    }

    void text(std::string_view body) { send(body, "text/plain"); }
    void json(std::string_view body) { send(body, "application/json"); }
    void html(std::string_view body) { send(body, "text/html; charset=utf-8"); }
    void body(std::string_view body, std::string_view content_type = "application/octet-stream") {
        send(body, content_type.empty() ? "application/octet-stream" : content_type);
    }
    // Sends the status with no content (Content-Length: 0 where a body is allowed).
    void end() { send({}, {}); }

    bool sent() const noexcept { return sent_; }
    // Asks for the connection to close after this response.
    void close_connection() noexcept { close_ = true; }
    bool closes_connection() const noexcept { return close_; }

private:
    friend struct detail::response_access;

    static bool valid_field(std::string_view name, std::string_view value) noexcept {
        if (name.empty()) return false;
        for (char c : name)
            if (!detail::is_tchar(c)) return false;
        for (char c : value)
            if (c == '\r' || c == '\n' || c == '\0') return false;
        return true;
    }

    // Fields skiff writes itself. Returns false when the field must not be written as given.
    bool note_special(std::string_view name, std::string_view value) noexcept {
        switch (name.size()) {
        case 4:
            if (detail::iequals_lower(name, "date")) has_date_ = true;
            return true;
        case 10:
            if (!detail::iequals_lower(name, "connection")) return true;
            if (detail::iequals_lower(value, "close")) close_ = true;
            return false;
        case 12:
            if (detail::iequals_lower(name, "content-type")) has_type_ = true;
            return true;
        case 14: return !detail::iequals_lower(name, "content-length");
        case 17: return !detail::iequals_lower(name, "transfer-encoding");
        default: return true;
        }
    }

    void send(std::string_view body, std::string_view type) {
        if (sent_) return;
        sent_ = true;
        bool content = status_allows_body(status_);
        if (!content) body = {};
        if (has_type_ || !content) type = {};
        char length[24];
        char* digits = detail::format_decimal(length + sizeof length, body.size());
        std::string_view cl(digits, static_cast<std::size_t>(length + sizeof length - digits));
        std::string_view reason = reason_phrase(status_);
        std::size_t prefix = 15 + reason.size() + (has_date_ ? 0 : detail::date_cache::line_size) +
                             (type.empty() ? 0 : type.size() + 16) + (content ? cl.size() + 18 : 0) +
                             (close_ ? 19 : 0);
        std::size_t fields = out_->size() - start_;
        std::size_t bytes = prefix + 2 + (omit_body_ ? 0 : body.size());
        out_->reserve_more(bytes);
        char* at = out_->data() + start_;
        if (fields != 0) std::memmove(at + prefix, at, fields);
        char* p = write_status(at, reason);
        if (!has_date_) p = detail::put(p, date_->line());
        if (!type.empty()) p = detail::put(detail::put(detail::put(p, "Content-Type: "), type), "\r\n");
        if (content) p = detail::put(detail::put(detail::put(p, "Content-Length: "), cl), "\r\n");
        if (close_) p = detail::put(p, "Connection: close\r\n");
        p = detail::put(p + fields, "\r\n");
        if (!omit_body_) detail::put(p, body);
        out_->commit(bytes);
    }

    // "HTTP/1.1 200 OK\r\n": 15 bytes plus the reason phrase.
    char* write_status(char* p, std::string_view reason) const noexcept {
        p = detail::put(p, "HTTP/1.1 ");
        p[0] = static_cast<char>('0' + status_ / 100 % 10);
        p[1] = static_cast<char>('0' + status_ / 10 % 10);
        p[2] = static_cast<char>('0' + status_ % 10);
        p[3] = ' ';
        return detail::put(detail::put(p + 4, reason), "\r\n");
    }

    detail::byte_buffer* out_ = nullptr;
    const detail::date_cache* date_ = nullptr;
    std::size_t start_ = 0;  // where this response begins in *out_
    int status_ = 200;
    bool omit_body_ = false;  // HEAD: headers as for GET, no content
    bool close_ = false;
    bool sent_ = false;
    bool has_type_ = false;
    bool has_date_ = false;
};

namespace detail {

// The loop's side of response: binding to the output buffer, and rolling back what a
// throwing handler left half-written.
struct response_access {
    static void start(response& r, byte_buffer& out, const date_cache& date, bool head, bool close) noexcept {
        r = response{};
        r.out_ = &out;
        r.date_ = &date;
        r.start_ = out.size();
        r.omit_body_ = head;
        r.close_ = close;
    }
    static void discard(response& r) noexcept {
        r.out_->resize(r.start_);
        bool head = r.omit_body_, close = r.close_;
        start(r, *r.out_, *r.date_, head, close);
    }
};

} // namespace detail
} // namespace skiff

#endif // SKIFF_HTTP_RESPONSE_HPP
