// One HTTP/1.1 response as the test client read it off the wire: status, reason, header
// fields in the order sent, the body with any chunked framing removed, and the exact bytes.
// read_response() takes the next one from a stream of bytes, the way a client would: the body
// framed by Transfer-Encoding: chunked, then Content-Length, else (a close-delimited body) by
// the end of the stream; none for 1xx, 204, 304 and an answer to HEAD.
//
// It is a checker's parser, not a hardened one: it reads what skiff writes, and calls
// anything else malformed rather than guessing.
#ifndef SKIFF_TESTING_TEST_RESPONSE_HPP
#define SKIFF_TESTING_TEST_RESPONSE_HPP

#include "skiff/detail/ascii.hpp"

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint8_t
#include <string>       // owned copies of what was read
#include <string_view>  // std::string_view
#include <utility>      // std::pair, std::move
#include <vector>       // the header fields

namespace skiff::testing {

struct test_response {
    int status = 0;  // 0: no complete response was there
    std::string reason;
    std::vector<std::pair<std::string, std::string>> headers;  // as sent, in order
    std::string body;  // dechunked
    std::string raw;   // the exact bytes: status line, head and framed body

    explicit operator bool() const noexcept { return status != 0; }

    // The first field named `name` (any case); "" when there is none.
    std::string_view header(std::string_view name) const noexcept {
        for (auto& [n, v] : headers)
            if (same_name(n, name)) return v;
        return {};
    }
    bool has_header(std::string_view name) const noexcept {
        for (auto& [n, v] : headers)
            if (same_name(n, name)) return true;
        return false;
    }

private:
    static bool same_name(std::string_view a, std::string_view b) noexcept {
        if (a.size() != b.size()) return false;
        for (std::size_t i = 0; i < a.size(); ++i)
            if (detail::to_lower(a[i]) != detail::to_lower(b[i])) return false;
        return true;
    }
};

// What the request was, where it decides whether the response has a body.
enum class answer_to : std::uint8_t { other, head };

// Whether the stream read so far holds a whole response.
enum class read_state : std::uint8_t { complete, incomplete, malformed };

// Whether more bytes may still come (a close-delimited body ends with the stream).
enum class stream_end : std::uint8_t { open, closed };

namespace reading {

inline int hex_digit(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// A chunk size; false when it is empty, too long or not hex.
inline bool to_chunk_size(std::string_view s, std::size_t& v) noexcept {
    v = 0;
    if (s.empty() || s.size() > 15) return false;
    for (char c : s) {
        int d = hex_digit(c);
        if (d < 0) return false;
        v = v * 16 + static_cast<std::size_t>(d);
    }
    return true;
}

inline bool to_size(std::string_view s, std::size_t& v) noexcept {
    v = 0;
    if (s.empty() || s.size() > 18) return false;
    for (char c : s) {
        if (c < '0' || c > '9') return false;
        v = v * 10 + static_cast<std::size_t>(c - '0');
    }
    return true;
}

inline std::string_view trimmed(std::string_view s) noexcept {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

// "HTTP/1.1 200 OK\r\n" and the fields up to the empty line; the head's length, or 0.
inline read_state read_head(std::string_view in, test_response& r, std::size_t& head_len) {
    std::size_t end = in.find("\r\n\r\n");
    if (end == std::string_view::npos) return read_state::incomplete;
    head_len = end + 4;
    std::string_view line = in.substr(0, in.find("\r\n"));
    if (line.size() < 12 || line.substr(0, 5) != "HTTP/" || line[8] != ' ') return read_state::malformed;
    std::size_t code = 0;
    if (!to_size(line.substr(9, 3), code) || (line.size() > 12 && line[12] != ' ')) return read_state::malformed;
    r.status = static_cast<int>(code);
    r.reason = std::string(line.size() > 13 ? line.substr(13) : std::string_view{});
    for (std::size_t at = line.size() + 2; at < end + 2;) {
        std::size_t eol = in.find("\r\n", at);
        std::string_view field = in.substr(at, eol - at);
        std::size_t colon = field.find(':');
        if (colon == std::string_view::npos || colon == 0) return read_state::malformed;
        r.headers.emplace_back(std::string(field.substr(0, colon)), std::string(trimmed(field.substr(colon + 1))));
        at = eol + 2;
    }
    return read_state::complete;
}

// The chunks from `at` on into r.body; the framed body's length in `used`.
inline read_state read_chunked(std::string_view in, std::size_t at, test_response& r, std::size_t& used) {
    std::size_t start = at;
    for (;;) {
        std::size_t eol = in.find("\r\n", at);
        if (eol == std::string_view::npos) return read_state::incomplete;
        std::string_view size_text = in.substr(at, eol - at);
        size_text = trimmed(size_text.substr(0, size_text.find(';')));
        std::size_t size = 0;
        if (!to_chunk_size(size_text, size)) return read_state::malformed;
        at = eol + 2;
        if (size == 0) break;
        if (in.size() < at + size + 2) return read_state::incomplete;
        if (in.substr(at + size, 2) != "\r\n") return read_state::malformed;
        r.body.append(in.substr(at, size));
        at += size + 2;
    }
    for (;;) {  // trailer fields, up to the empty line
        std::size_t eol = in.find("\r\n", at);
        if (eol == std::string_view::npos) return read_state::incomplete;
        bool empty_line = eol == at;
        at = eol + 2;
        if (empty_line) break;
    }
    used = at - start;
    return read_state::complete;
}

inline bool has_no_body(int status, answer_to to) noexcept {
    return to == answer_to::head || (status >= 100 && status < 200) || status == 204 || status == 304;
}

// The body after a head of head_len bytes, framed as the head and the request say.
inline read_state read_body(std::string_view in, std::size_t head_len, answer_to to, stream_end end,
                            test_response& r, std::size_t& body_len) {
    body_len = 0;
    if (has_no_body(r.status, to)) return read_state::complete;
    if (!r.header("Transfer-Encoding").empty()) return read_chunked(in, head_len, r, body_len);
    if (r.has_header("Content-Length")) {
        if (!to_size(r.header("Content-Length"), body_len)) return read_state::malformed;
        if (in.size() < head_len + body_len) return read_state::incomplete;
        r.body = std::string(in.substr(head_len, body_len));
        return read_state::complete;
    }
    if (end == stream_end::open) return read_state::incomplete;
    body_len = in.size() - head_len;
    r.body = std::string(in.substr(head_len));
    return read_state::complete;
}

} // namespace reading

// The response at the start of `in` into r, and its length in `used`; r is left empty unless
// the response is complete. A body with neither length nor chunks runs to the end of the
// stream, so it is complete only once the stream is closed.
inline read_state read_response(std::string_view in, answer_to to, stream_end end, test_response& r,
                                std::size_t& used) {
    r = test_response{};
    test_response got;
    std::size_t head_len = 0;
    read_state st = reading::read_head(in, got, head_len);
    std::size_t body_len = 0;
    if (st == read_state::complete) st = reading::read_body(in, head_len, to, end, got, body_len);
    if (st != read_state::complete) return st;
    used = head_len + body_len;
    got.raw = std::string(in.substr(0, used));
    r = std::move(got);
    return st;
}

} // namespace skiff::testing

#endif // SKIFF_TESTING_TEST_RESPONSE_HPP
