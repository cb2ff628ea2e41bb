// A streaming multipart/form-data parser (RFC 7578 on RFC 2046 §5.1): the body is fed in
// pieces of any size, as they arrive, and the parts come out as events:
//
//   auto boundary = skiff::multipart_boundary(req.header("content-type"));  // optional
//   skiff::multipart_parser mp(*boundary);
//   mp.feed(piece, sink);   // sink.on_part(part), sink.on_data(bytes), sink.on_part_end()
//   mp.finish();            // complete only if the close delimiter was seen
//
// A part's head (its header lines) is gathered whole, up to max_head_bytes, and reported with
// its Content-Disposition name and filename and its Content-Type; its content is reported
// in pieces as it arrives, never gathered, so a file part costs no memory whatever its size.
// A delimiter split across pieces is found all the same: bytes that may begin one are held
// back (they are a prefix of the delimiter itself, so holding them copies nothing) and
// reported as content if the delimiter does not follow. Every split of the input gives the
// same events, with the content cut at other places.
//
// Strict where a server must be: the boundary must be 1-70 bchars (RFC 2046 §5.1.1); every
// part must have Content-Disposition: form-data with a name (RFC 7578 §4.2); a head over
// max_head_bytes, more than max_parts parts, or a body that ends before the close delimiter
// is an error (the caller answers 400). Tolerant where clients differ: a preamble and an
// epilogue are skipped, spaces and tabs after a delimiter (transport padding) too.
//
// Not here: filename* (RFC 7578 §4.2 says not to use it), charset conversion, nested
// multipart/mixed, or deciding where a file goes: filenames are reported as sent, so a
// caller that writes files must sanitise them (examples/upload.cpp shows how).
//
// Invariants: the views given to the sink are valid only during the call; the part's fields
// stay valid until its on_part_end(). After an error, feed() does nothing and returns it again.
#ifndef SKIFF_HTTP_MULTIPART_HPP
#define SKIFF_HTTP_MULTIPART_HPP

#include "skiff/detail/ascii.hpp"
#include "skiff/detail/scan.hpp"

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint8_t
#include <cstring>      // std::memchr
#include <optional>     // a boundary that may be absent
#include <string>       // the delimiter and a part's head
#include <string_view>  // std::string_view

namespace skiff {

// What a part's head said. filename is empty for a plain field (has_filename tells an empty
// filename="" from none).
struct multipart_part {
    std::string_view name;
    std::string_view filename;
    std::string_view content_type;  // empty when absent: text/plain by RFC 7578 §4.4
    bool has_filename = false;
};

enum class multipart_status : std::uint8_t {
    incomplete,  // more of the body is needed
    complete,    // the close delimiter was seen; anything after it is epilogue
    bad_request  // the framing is broken: answer 400
};

namespace detail {

// RFC 2046 §5.1.1: bcharsnospace := DIGIT / ALPHA / "'" / "(" / ")" / "+" / "_" / "," /
// "-" / "." / "/" / ":" / "=" / "?"; a boundary may also hold spaces, but not end in one.
constexpr bool is_bchar_nospace(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           std::string_view("'()+_,-./:=?").find(c) != std::string_view::npos;
}

inline bool valid_boundary(std::string_view b) {
    if (b.empty() || b.size() > 70 || b.back() == ' ') return false;
    for (char c : b)
        if (c != ' ' && !is_bchar_nospace(c)) return false;
    return true;
}

// One `; name=value` parameter after a media type or disposition type. A quoted value keeps
// its backslash escapes in the view; unquote() removes them. Advances s past it.
struct header_param {
    std::string_view name;
    std::string_view value;
    bool quoted = false;
};

inline std::optional<header_param> next_param(std::string_view& s) {
    s = trim_ows(s);
    if (s.empty() || s.front() != ';') return std::nullopt;
    s = trim_ows(s.substr(1));
    std::size_t eq = s.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    header_param p{trim_ows(s.substr(0, eq)), {}, false};
    s = trim_ows(s.substr(eq + 1));
    if (!s.empty() && s.front() == '"') {
        std::size_t i = 1;
        while (i < s.size() && s[i] != '"') i += s[i] == '\\' ? 2 : 1;
        if (i >= s.size()) return std::nullopt;  // no closing quote
        p.value = s.substr(1, i - 1);
        p.quoted = true;
        s.remove_prefix(i + 1);
        return p;
    }
    std::size_t end = s.find(';');
    p.value = trim_ows(s.substr(0, end));
    s.remove_prefix(end == std::string_view::npos ? s.size() : end);
    return p;
}

inline std::string unquote(const header_param& p) {
    if (!p.quoted) return std::string(p.value);
    std::string out;
    for (std::size_t i = 0; i < p.value.size(); ++i) {
        if (p.value[i] == '\\' && i + 1 < p.value.size()) ++i;
        out += p.value[i];
    }
    return out;
}

// Skips the type before the parameters (`multipart/form-data`, `form-data`), returning it.
inline std::string_view take_type(std::string_view& s) {
    std::size_t semi = s.find(';');
    std::string_view type = trim_ows(s.substr(0, semi));
    s.remove_prefix(semi == std::string_view::npos ? s.size() : semi);
    return type;
}

} // namespace detail

// The boundary of a multipart/form-data Content-Type, or nothing when the type is another or
// the boundary is missing or not valid (RFC 2046 §5.1.1). The view points into content_type
// (without its quotes; a valid boundary has no backslashes).
inline std::optional<std::string_view> multipart_boundary(std::string_view content_type) {
    if (!detail::iequals(detail::take_type(content_type), "multipart/form-data")) return std::nullopt;
    while (auto p = detail::next_param(content_type)) {
        if (!detail::iequals(p->name, "boundary")) continue;
        if (!detail::valid_boundary(p->value)) return std::nullopt;
        return p->value;
    }
    return std::nullopt;
}

class multipart_parser {
public:
    static constexpr std::size_t default_max_head_bytes = 8 * 1024;
    static constexpr std::size_t default_max_parts = 1000;

    explicit multipart_parser(std::string_view boundary, std::size_t max_head_bytes = default_max_head_bytes,
                              std::size_t max_parts = default_max_parts)
        : delimiter_("\r\n--"), max_head_bytes_(max_head_bytes), max_parts_(max_parts) {
        delimiter_.append(boundary.data(), boundary.size());
        // The first delimiter may open the body, with no CRLF before it: start as if one was seen.
        matched_ = 2;
        if (!detail::valid_boundary(boundary)) state_ = state::failed;
    }

    // Feeds the next piece of the body. Sink has on_part(const multipart_part&),
    // on_data(std::string_view) and on_part_end().
    template <class Sink>
    multipart_status feed(std::string_view piece, Sink& sink) {
        std::size_t i = 0;
        while (i < piece.size() && state_ < state::done) i = step(piece, i, sink);
        return status();
    }

    // The body has ended: complete only if the close delimiter was seen.
    multipart_status finish() noexcept {
        if (state_ != state::done) state_ = state::failed;
        return status();
    }

    multipart_status status() const noexcept {
        return state_ == state::done     ? multipart_status::complete
               : state_ == state::failed ? multipart_status::bad_request
                                         : multipart_status::incomplete;
    }

private:
    // preamble -> (delimiter) -> after_delimiter -> padding/head -> content -> (delimiter) ...
    // ... -> after_delimiter -> "--" -> done. failed is final.
    enum class state : std::uint8_t {
        preamble,        // before the first delimiter: skipped
        after_delimiter, // "--" closes, else padding then CRLF opens a part
        close_dash,      // saw the first '-' of "--"
        padding,         // spaces or tabs, then CR
        padding_lf,      // LF after the CR
        head,            // the part's header lines, gathered
        content,         // the part's content, reported in pieces
        done,
        failed
    };

    template <class Sink>
    std::size_t step(std::string_view in, std::size_t i, Sink& sink) {
        switch (state_) {
        case state::preamble:
        case state::content: return scan(in, i, sink);
        case state::head: return gather_head(in, i, sink);
        default: return framing(in[i], sink), i + 1;
        }
    }

    // Content (or preamble): looks for the delimiter, reporting the bytes that are not part of
    // it. A '\r' may start one; since no later byte of the delimiter is '\r' (bchars exclude
    // it), a mismatch restarts the match at that byte alone, so no backtracking is needed.
    template <class Sink>
    std::size_t scan(std::string_view in, std::size_t i, Sink& sink) {
        std::size_t run = i;  // start of the content bytes not yet reported
        while (i < in.size()) {
            if (matched_ == 0) {
                const void* cr = std::memchr(in.data() + i, '\r', in.size() - i);
                if (cr == nullptr) {
                    i = in.size();
                    break;
                }
                i = static_cast<std::size_t>(static_cast<const char*>(cr) - in.data());
            }
            if (in[i] == delimiter_[matched_]) {
                if (matched_ == 0) report(sink, in.substr(run, i - run));
                ++i;
                if (++matched_ == delimiter_.size()) return on_delimiter(sink), i;
                continue;
            }
            // Not the delimiter after all: what was held back is content.
            report(sink, std::string_view(delimiter_).substr(0, matched_));
            matched_ = 0;
            run = i;
        }
        if (matched_ == 0) report(sink, in.substr(run, i - run));
        return in.size();
    }

    template <class Sink>
    void report(Sink& sink, std::string_view bytes) {
        if (state_ == state::content && !bytes.empty()) sink.on_data(bytes);
    }

    template <class Sink>
    void on_delimiter(Sink& sink) {
        matched_ = 0;
        if (state_ == state::content) sink.on_part_end();
        state_ = state::after_delimiter;
    }

    // The bytes between a delimiter and a part's head, one at a time (there are few).
    template <class Sink>
    void framing(char c, Sink&) {
        switch (state_) {
        case state::after_delimiter:
            state_ = c == '-' ? state::close_dash : state::padding;
            if (c != '-') framing_padding(c);
            return;
        case state::close_dash: state_ = c == '-' ? state::done : state::failed; return;
        case state::padding: framing_padding(c); return;
        case state::padding_lf: state_ = c == '\n' ? open_part() : state::failed; return;
        default: state_ = state::failed; return;
        }
    }

    void framing_padding(char c) {
        if (c == ' ' || c == '\t') return;
        state_ = c == '\r' ? state::padding_lf : state::failed;
    }

    state open_part() {
        if (parts_ == max_parts_) return state::failed;
        ++parts_;
        head_.clear();
        return state::head;
    }

    // Gathers the head up to its empty line, then parses it and opens the content.
    template <class Sink>
    std::size_t gather_head(std::string_view in, std::size_t i, Sink& sink) {
        while (i < in.size()) {
            head_ += in[i++];
            if (head_.size() > max_head_bytes_) return state_ = state::failed, in.size();
            bool ended = head_ == "\r\n" || (head_.size() >= 4 && head_.compare(head_.size() - 4, 4, "\r\n\r\n") == 0);
            if (!ended) continue;
            if (!parse_head()) return state_ = state::failed, in.size();
            state_ = state::content;
            sink.on_part(part_);
            return i;
        }
        return i;
    }

    // The head's lines: Content-Disposition (required: form-data with a name) and
    // Content-Type; others are ignored (RFC 7578 §4.8: only these and
    // Content-Transfer-Encoding have meaning here).
    bool parse_head() {
        part_ = multipart_part{};
        name_.clear();
        filename_.clear();
        std::string_view rest(head_);
        bool named = false;
        while (rest.size() > 2) {
            std::size_t eol = rest.find("\r\n");
            std::string_view line = rest.substr(0, eol);
            rest.remove_prefix(eol + 2);
            std::size_t colon = line.find(':');
            if (colon == std::string_view::npos || colon == 0 || !all_tchars(line.substr(0, colon))) return false;
            std::string_view field = line.substr(0, colon), value = detail::trim_ows(line.substr(colon + 1));
            if (value.find_first_of("\r\n") != std::string_view::npos) return false;
            if (detail::iequals(field, "content-disposition")) {
                if (named || !parse_disposition(value)) return false;
                named = true;
            } else if (detail::iequals(field, "content-type")) {
                part_.content_type = value;
            }
        }
        if (!named) return false;
        part_.name = name_;
        if (part_.has_filename) part_.filename = filename_;
        return true;
    }

    static bool all_tchars(std::string_view s) {
        for (char c : s)
            if (!detail::is_tchar(c)) return false;
        return true;
    }

    bool parse_disposition(std::string_view v) {
        if (!detail::iequals(detail::take_type(v), "form-data")) return false;
        bool has_name = false;
        while (auto p = detail::next_param(v)) {
            if (detail::iequals(p->name, "name")) {
                name_ = detail::unquote(*p);
                has_name = true;
            } else if (detail::iequals(p->name, "filename")) {
                filename_ = detail::unquote(*p);
                part_.has_filename = true;
            }
        }
        return has_name && detail::trim_ows(v).empty();  // a malformed parameter leaves text behind
    }

    std::string delimiter_;  // CRLF "--" boundary
    std::string head_;       // the current part's head, while it arrives
    std::string name_;       // unquoted copies that part_ points into
    std::string filename_;
    multipart_part part_;
    std::size_t matched_ = 0;  // bytes of delimiter_ matched so far (held back from content)
    std::size_t max_head_bytes_;
    std::size_t max_parts_;
    std::size_t parts_ = 0;
    state state_ = state::preamble;
};

} // namespace skiff

#endif // SKIFF_HTTP_MULTIPART_HPP
