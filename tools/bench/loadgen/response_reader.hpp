// Incremental HTTP/1.1 response reader for the load generator. It finds where each response
// ends (Content-Length or chunked framing) and reports the status, the body length and whether
// the server said it will close. Body bytes are counted, never kept; only a head that a read
// cut in two is copied (into head_), so a steady stream of small responses copies nothing.
// Responses without a length (read until close) are rejected: every server measured here
// frames its responses, and one that does not could not be told apart from a lost response.
#ifndef SKIFF_BENCH_LOADGEN_RESPONSE_READER_HPP
#define SKIFF_BENCH_LOADGEN_RESPONSE_READER_HPP

#include <cstddef>     // std::size_t
#include <cstdint>     // std::int64_t
#include <cstring>     // std::memcmp
#include <string>      // head_ holds a head split across reads
#include <string_view> // header names and values

namespace loadgen {

struct response_info {
    int status = 0;
    std::int64_t body_length = 0;
    bool close = false;   // "Connection: close": the server ends the connection after this one
};

enum class read_status { need_more, complete, bad };

class response_reader {
public:
    // Consumes bytes from [p, end). Returns how many were used; `status` says whether a whole
    // response ended there (then info() describes it and the next call starts a new one), more
    // bytes are needed, or the bytes are not a response this reader understands.
    std::size_t feed(const char* p, const char* end, read_status& status) {
        status = read_status::need_more;
        const char* start = p;
        while (p < end && status == read_status::need_more) {
            switch (state_) {
            case state::head: p += feed_head(p, end, status); break;
            case state::body: p += feed_body(p, end, status); break;
            default: p += feed_chunked(p, end, status); break;
            }
        }
        return static_cast<std::size_t>(p - start);
    }

    const response_info& info() const noexcept { return info_; }

    // Forget any partial response (the connection was closed and will be opened again).
    void reset() {
        state_ = state::head;
        head_.clear();
    }

    static constexpr std::size_t max_head = 64 * 1024;

private:
    enum class state { head, body, chunk_size, chunk_data, chunk_data_end, trailers };

    std::size_t feed_head(const char* p, const char* end, read_status& status) {
        std::string_view in(p, static_cast<std::size_t>(end - p));
        if (head_.empty()) {
            auto at = in.find("\r\n\r\n");
            if (at != std::string_view::npos) return start_body(in.substr(0, at + 4), status);
            head_.assign(in);
            return in.size();
        }
        // The terminator may straddle the old tail and the new bytes: search from 3 back.
        std::size_t old = head_.size();
        head_.append(in);
        auto at = head_.find("\r\n\r\n", old > 3 ? old - 3 : 0);
        if (at == std::string::npos) {
            if (head_.size() > max_head) status = read_status::bad;
            return in.size();
        }
        std::size_t used = at + 4 - old;
        std::string whole = std::move(head_);
        head_.clear();
        start_body(std::string_view(whole).substr(0, at + 4), status);
        return used;
    }

    // Parses a complete head and sets up the body; returns head.size().
    std::size_t start_body(std::string_view head, read_status& status) {
        info_ = {};
        chunked_ = false;
        remaining_ = 0;
        if (!parse_head(head)) {
            status = read_status::bad;
            return head.size();
        }
        if (chunked_) {
            state_ = state::chunk_size;
            chunk_left_ = 0;
        } else if (remaining_ == 0) {
            status = read_status::complete;
        } else {
            state_ = state::body;
        }
        return head.size();
    }

    bool parse_head(std::string_view head) {
        // "HTTP/1.x NNN": the status code sits at a fixed offset.
        if (head.size() < 12 || head.compare(0, 7, "HTTP/1.") != 0 || head[8] != ' ') return false;
        int code = 0;
        for (int i = 9; i < 12; ++i) {
            char c = head[static_cast<std::size_t>(i)];
            if (c < '0' || c > '9') return false;
            code = code * 10 + (c - '0');
        }
        info_.status = code;
        bool has_length = false;
        std::size_t line = head.find("\r\n") + 2;
        while (line + 2 < head.size()) {
            std::size_t eol = head.find("\r\n", line);
            if (!parse_field(head.substr(line, eol - line), has_length)) return false;
            line = eol + 2;
        }
        // RFC 9112 6.3: 1xx, 204 and 304 have no body; the rest need a length or chunked.
        bool bodiless = code < 200 || code == 204 || code == 304;
        if (bodiless) remaining_ = 0;
        return bodiless || chunked_ || has_length;
    }

    bool parse_field(std::string_view field, bool& has_length) {
        auto colon = field.find(':');
        if (colon == std::string_view::npos) return false;
        std::string_view name = field.substr(0, colon);
        std::string_view value = trim(field.substr(colon + 1));
        if (same_name(name, "content-length")) {
            std::int64_t n = 0;
            for (char c : value) {
                if (c < '0' || c > '9' || n > (std::int64_t{1} << 40)) return false;
                n = n * 10 + (c - '0');
            }
            remaining_ = n;
            info_.body_length = n;
            has_length = true;
        } else if (same_name(name, "transfer-encoding")) {
            chunked_ = contains_token(value, "chunked");
        } else if (same_name(name, "connection")) {
            info_.close = contains_token(value, "close");
        }
        return true;
    }

    std::size_t feed_body(const char* p, const char* end, read_status& status) {
        auto have = static_cast<std::int64_t>(end - p);
        std::int64_t used = have < remaining_ ? have : remaining_;
        remaining_ -= used;
        if (remaining_ == 0) {
            state_ = state::head;
            status = read_status::complete;
        }
        return static_cast<std::size_t>(used);
    }

    // RFC 9112 7.1: chunk-size [ext] CRLF data CRLF ... 0 CRLF trailers CRLF. One byte at a
    // time outside the data: chunked responses are off the measured paths.
    std::size_t feed_chunked(const char* p, const char* end, read_status& status) {
        if (state_ == state::chunk_data) {
            auto have = static_cast<std::int64_t>(end - p);
            std::int64_t used = have < chunk_left_ ? have : chunk_left_;
            chunk_left_ -= used;
            if (chunk_left_ == 0) state_ = state::chunk_data_end;
            return static_cast<std::size_t>(used);
        }
        char c = *p;
        if (state_ == state::chunk_size) feed_chunk_size(c, status);
        else if (state_ == state::chunk_data_end) feed_data_end(c, status);
        else feed_trailer(c, status);
        return 1;
    }

    void feed_chunk_size(char c, read_status& status) {
        if (c == '\n') {
            in_extension_ = false;
            info_.body_length += chunk_left_;
            state_ = chunk_left_ == 0 ? state::trailers : state::chunk_data;
            line_length_ = 0;
            return;
        }
        if (c == '\r' || in_extension_) return;
        if (c == ';' || c == ' ' || c == '\t') {
            in_extension_ = true;
            return;
        }
        int digit = hex_value(c);
        if (digit < 0 || chunk_left_ > (std::int64_t{1} << 40)) status = read_status::bad;
        chunk_left_ = chunk_left_ * 16 + digit;
    }

    void feed_data_end(char c, read_status& status) {
        if (c == '\n') state_ = state::chunk_size;
        else if (c != '\r') status = read_status::bad;
    }

    void feed_trailer(char c, read_status& status) {
        if (c == '\r') return;
        if (c != '\n') {
            ++line_length_;
            return;
        }
        if (line_length_ == 0) {
            state_ = state::head;
            status = read_status::complete;
        }
        line_length_ = 0;
    }

    static int hex_value(char c) noexcept {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    }

    static char lower(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }

    static bool same_name(std::string_view a, std::string_view lower_b) noexcept {
        if (a.size() != lower_b.size()) return false;
        for (std::size_t i = 0; i < a.size(); ++i)
            if (lower(a[i]) != lower_b[i]) return false;
        return true;
    }

    // True when the comma-separated list `value` holds `token` (ASCII case-insensitive).
    static bool contains_token(std::string_view value, std::string_view token) noexcept {
        while (!value.empty()) {
            auto comma = value.find(',');
            if (same_name(trim(value.substr(0, comma)), token)) return true;
            if (comma == std::string_view::npos) break;
            value.remove_prefix(comma + 1);
        }
        return false;
    }

    static std::string_view trim(std::string_view s) noexcept {
        while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
        while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
        return s;
    }

    state state_ = state::head;
    std::string head_;
    response_info info_;
    std::int64_t remaining_ = 0;
    std::int64_t chunk_left_ = 0;
    std::size_t line_length_ = 0;
    bool chunked_ = false;
    bool in_extension_ = false;
};

} // namespace loadgen

#endif // SKIFF_BENCH_LOADGEN_RESPONSE_READER_HPP
