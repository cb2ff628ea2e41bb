// Feeds a byte stream to skiff::message_parser the way the event loop does (serve() and
// keep_tail(): parse every complete message, keep buf[0, kept(len)) of an incomplete one and
// append the next read to it), with the stream cut into pieces at chosen points, and every
// buffer handed to parse() placed against a PROT_NONE guard page. The result is comparable:
// what was parsed is copied out of the buffer, and each message's end is an offset in the
// stream, so feeding whole, at every split point and byte by byte must give equal results.
//
// Also here: the table-case type the parser tests share, and check_case(), which runs one
// case through every feeding and compares the whole-stream result with its expectations.
#ifndef SKIFF_TESTS_SUPPORT_SPLIT_FEED_HPP
#define SKIFF_TESTS_SUPPORT_SPLIT_FEED_HPP

#include "support/guard_page.hpp"

// Only the parser (the parser tests compile in about a second); the single-header
// configuration has no parts on its include path, so there it takes the whole file.
#ifdef SKIFF_TEST_SINGLE_HEADER
#include <skiff/skiff.hpp>
#else
#include <skiff/http/message_parser.hpp>
#endif

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t
#include <memory>       // std::unique_ptr for the reused guarded region
#include <string>       // std::string, std::to_string
#include <string_view>  // std::string_view
#include <tuple>        // std::tie for comparisons
#include <utility>      // std::pair
#include <vector>       // std::vector

namespace skiff_test {

using skiff::parse_status;

// Short names for the table columns.
namespace statuses {
inline constexpr auto ok = parse_status::complete;
inline constexpr auto more = parse_status::incomplete;
inline constexpr auto bad = parse_status::bad_request;
inline constexpr auto r413 = parse_status::content_too_large;
inline constexpr auto r414 = parse_status::uri_too_long;
inline constexpr auto r417 = parse_status::expectation_failed;
inline constexpr auto r431 = parse_status::fields_too_large;
inline constexpr auto r501 = parse_status::not_implemented;
inline constexpr auto r505 = parse_status::version_not_supported;
} // namespace statuses

// Small limits, so that tests reach each one with inputs that fit on a line:
// request line 32, header section 64, 4 field lines, body 16.
inline constexpr skiff::parse_limits tight{32, 64, 4, 16};

inline const char* to_string(parse_status s) {
    switch (s) {
    case parse_status::complete: return "complete";
    case parse_status::incomplete: return "incomplete";
    case parse_status::bad_request: return "400";
    case parse_status::content_too_large: return "413";
    case parse_status::uri_too_long: return "414";
    case parse_status::expectation_failed: return "417";
    case parse_status::fields_too_large: return "431";
    case parse_status::not_implemented: return "501";
    case parse_status::version_not_supported: return "505";
    case parse_status::body_follows: return "body follows";
    }
    return "?";
}

inline const char* to_string(skiff::body_framing f) {
    return f == skiff::body_framing::none ? "none" : f == skiff::body_framing::length ? "length" : "chunked";
}

// One parsed message, copied out of the parser's buffer.
struct message {
    std::string method, target, path, query, host;
    int version_minor = 0;
    std::vector<std::pair<std::string, std::string>> fields;
    std::string body;
    bool keep_alive = false;
    bool expect_continue = false;
    skiff::body_framing framing = skiff::body_framing::none;
    std::uint64_t content_length = 0;
    std::size_t end = 0;  // offset in the stream just past the message (0 for a head alone)

    auto tied() const {
        return std::tie(method, target, path, query, host, version_minor, fields, body, keep_alive, expect_continue,
                        framing, content_length, end);
    }
    bool operator==(const message& o) const { return tied() == o.tied(); }
    bool operator!=(const message& o) const { return !(*this == o); }
};

struct feed_result {
    parse_status status = parse_status::complete;  // complete: the stream ended between messages
    std::vector<message> messages;                 // every complete message, in order
    bool pending_head = false;                     // incomplete, and the pending message's head is in
    message head;                                  // that head, as parse() reported it (no body)
    std::string stray_view;                        // a view that pointed outside the buffer, if any

    bool operator==(const feed_result& o) const {
        return status == o.status && messages == o.messages && pending_head == o.pending_head &&
               (!pending_head || head == o.head) && stray_view == o.stray_view;
    }
    bool operator!=(const feed_result& o) const { return !(*this == o); }
};

// Long strings shortened for failure messages.
inline std::string abbrev(const std::string& s) {
    return s.size() <= 80 ? s : s.substr(0, 60) + "...(" + std::to_string(s.size()) + " bytes)";
}

inline std::string describe(const message& m) {
    std::string s = m.method + " " + abbrev(m.target) + " 1." + std::to_string(m.version_minor) +
                    " path=" + abbrev(m.path) + " query=" + abbrev(m.query) + " host=" + m.host +
                    " framing=" + to_string(m.framing) + " keep=" + std::to_string(m.keep_alive) +
                    " expect=" + std::to_string(m.expect_continue) + " end=" + std::to_string(m.end) + " fields=[";
    for (const auto& f : m.fields) s += f.first + ":" + abbrev(f.second) + ";";
    return s + "] body=" + abbrev(m.body);
}

inline std::string describe(const feed_result& r) {
    std::string s = std::string(to_string(r.status)) + ", " + std::to_string(r.messages.size()) + " message(s)";
    for (const auto& m : r.messages) s += "\n  " + describe(m);
    if (r.pending_head) s += "\n  pending head: " + describe(r.head);
    if (!r.stray_view.empty()) s += "\n  view outside the buffer: " + r.stray_view;
    return s;
}

namespace detail {

// The parser's views must point into the buffer it was given. The one exception is the
// literal "/" that stands for the empty path of an absolute-form target (RFC 9112 §3.2.2).
inline bool inside(std::string_view v, const char* lo, const char* hi) {
    return v.empty() || (v.data() >= lo && v.data() + v.size() <= hi);
}

inline std::string stray_view(const skiff::request_head& h, const char* lo, const char* hi) {
    const std::pair<const char*, std::string_view> views[] = {
        {"method", h.method_name}, {"target", h.target}, {"query", h.query}, {"host", h.host}, {"body", h.body}};
    for (const auto& v : views)
        if (!inside(v.second, lo, hi)) return v.first;
    if (!inside(h.path, lo, hi) && h.path != "/") return "path";
    for (std::uint32_t i = 0; i < h.field_count; ++i)
        if (!inside(h.fields[i].name, lo, hi) || !inside(h.fields[i].value, lo, hi)) return "field";
    return {};
}

inline message capture(const skiff::request_head& h) {
    message m;
    m.method = std::string(h.method_name);
    m.target = std::string(h.target);
    m.path = std::string(h.path);
    m.query = std::string(h.query);
    m.host = std::string(h.host);
    m.version_minor = h.version_minor;
    for (std::uint32_t i = 0; i < h.field_count; ++i)
        m.fields.emplace_back(std::string(h.fields[i].name), std::string(h.fields[i].value));
    m.body = std::string(h.body);
    m.keep_alive = h.keep_alive;
    m.expect_continue = h.expect_continue;
    m.framing = h.framing;
    m.content_length = h.content_length;
    return m;
}

// One guarded region per thread, replaced only when a longer stream comes: mapping a fresh
// one for every feeding would cost four system calls each time (the fuzzer feeds often).
inline guarded_region& region_for(std::size_t size) {
    thread_local std::unique_ptr<guarded_region> region;
    if (!region || region->capacity() < size) region = std::make_unique<guarded_region>(size);
    return *region;
}

// The parser state of one connection, fed piece by piece.
class feeder {
public:
    feeder(std::size_t capacity, const skiff::parse_limits& limits, bool at_start)
        : region_(region_for(capacity)), limits_(limits), fields_(limits.max_headers), at_start_(at_start) {}

    // Appends piece to what was kept and parses as the loop's serve() does. False once an
    // error ended the stream.
    bool feed(std::string_view piece, std::size_t fed_after) {
        std::string bytes = kept_;
        bytes.append(piece.data(), piece.size());
        std::size_t len = bytes.size();
        char* buf = at_start_ ? region_.place_at_start(bytes.data(), len) : region_.place_at_end(bytes.data(), len);
        std::size_t off = 0;
        while (off < len) {
            skiff::parse_result r = parser_.parse(buf + off, len - off, head_, fields_.data(), limits_);
            if (r.status == parse_status::incomplete) {
                note_pending(buf + off, buf + len);
                break;
            }
            if (r.status != parse_status::complete) {
                result_.status = r.status;
                return false;
            }
            note_complete(buf + off, buf + len, fed_after - (len - off - r.consumed));
            off += r.consumed;
            parser_.reset();
        }
        kept_ = off == len ? std::string() : std::string(buf + off, parser_.kept(len - off));
        return true;
    }

    feed_result finish() {
        if (result_.status == parse_status::complete && !kept_.empty()) result_.status = parse_status::incomplete;
        if (result_.status != parse_status::incomplete) result_.pending_head = false;
        return std::move(result_);
    }

private:
    void note_complete(const char* lo, const char* hi, std::size_t end) {
        if (result_.stray_view.empty()) result_.stray_view = stray_view(head_, lo, hi);
        result_.messages.push_back(capture(head_));
        result_.messages.back().end = end;
        result_.pending_head = false;
    }

    // The call on which the head first completes reports it, so the caller can answer Expect.
    void note_pending(const char* lo, const char* hi) {
        if (!parser_.head_complete() || result_.pending_head) return;
        if (result_.stray_view.empty()) result_.stray_view = stray_view(head_, lo, hi);
        result_.pending_head = true;
        result_.head = capture(head_);
    }

    guarded_region& region_;
    skiff::parse_limits limits_;
    std::vector<skiff::header_field> fields_;
    skiff::message_parser parser_;
    skiff::request_head head_;
    std::string kept_;  // the connection's buffer between reads
    feed_result result_;
    bool at_start_;
};

} // namespace detail

// Parses `stream` delivered in pieces that start at each of `cuts` (ascending, inside the
// stream), every buffer ending at a guard page (or, with at_start, starting after one).
inline feed_result feed(std::string_view stream, const skiff::parse_limits& limits,
                        const std::vector<std::size_t>& cuts = {}, bool at_start = false) {
    detail::feeder f(stream.size(), limits, at_start);
    std::size_t from = 0;
    for (std::size_t i = 0; i <= cuts.size(); ++i) {
        std::size_t to = i < cuts.size() ? cuts[i] : stream.size();
        if (!f.feed(stream.substr(from, to - from), to)) break;
        from = to;
    }
    return f.finish();
}

struct everywhere_result {
    feed_result whole;
    std::string divergence;  // empty when every feeding agreed with the whole-stream one
};

// A cut deep inside a run of one repeated byte (two of it on each side) parses as the cuts
// beside it do; a limit test's 8 KiB run would otherwise cost 8,000 feedings of 8 KiB each.
// Such cuts are sampled (every 61st), every other point is cut.
inline bool worth_cutting(std::string_view stream, std::size_t k) {
    if (k < 2 || k + 1 >= stream.size() || k % 61 == 0) return true;
    char c = stream[k - 1];
    return stream[k - 2] != c || stream[k] != c || stream[k + 1] != c;
}

// Feeds the stream whole (against the guard page at its end, then at its start), cut once
// at every split point worth cutting (above), and byte by byte; reports the first feeding
// that disagrees.
inline everywhere_result feed_everywhere(std::string_view stream, const skiff::parse_limits& limits) {
    everywhere_result r{feed(stream, limits), {}};
    auto differs = [&](const feed_result& other, const std::string& how) {
        if (other == r.whole || !r.divergence.empty()) return;
        r.divergence = how + " gave " + describe(other) + "\nwhole gave " + describe(r.whole);
    };
    differs(feed(stream, limits, {}, true), "whole at the start guard");
    std::vector<std::size_t> bytes;
    for (std::size_t k = 1; k < stream.size(); ++k) {
        if (worth_cutting(stream, k)) differs(feed(stream, limits, {k}), "split at " + std::to_string(k));
        bytes.push_back(k);
    }
    differs(feed(stream, limits, bytes), "byte by byte");
    return r;
}

// ---- table cases ---------------------------------------------------------------------------

// One table row: the stream, the status that ends it (complete: it ended between messages),
// and checks on the first complete message (or on the pending head when none completed):
// space-separated key=value pairs; a value in single quotes may hold spaces. Keys:
//   method target path query host version body keep expect framing length fields(count)
//   h:NAME (first field so named, case-insensitive)  msgs(count)  head(1: pending head is in)
//   bodies, paths, queries, hosts (every message's, joined by ',')  end (first message's end offset)
struct parse_case {
    std::string_view name;
    std::string_view input;
    parse_status status;
    const char* checks = "";
    skiff::parse_limits limits = {};
};

namespace detail {

inline std::string joined(const feed_result& r, std::string message::*part) {
    std::string s;
    for (const auto& m : r.messages) s += (s.empty() ? "" : ",") + m.*part;
    return s;
}

inline bool iequal(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (skiff::detail::to_lower(a[i]) != skiff::detail::to_lower(b[i])) return false;
    return true;
}

inline std::string field_value(const message& m, std::string_view name) {
    for (const auto& f : m.fields)
        if (iequal(f.first, name)) return f.second;
    return "<absent>";
}

// The value of one check key for this result and message.
inline std::string actual(const feed_result& r, const message& m, const std::string& key) {
    if (key == "method") return m.method;
    if (key == "target") return m.target;
    if (key == "path") return m.path;
    if (key == "query") return m.query;
    if (key == "host") return m.host;
    if (key == "version") return "1." + std::to_string(m.version_minor);
    if (key == "body") return m.body;
    if (key == "keep") return std::to_string(m.keep_alive);
    if (key == "expect") return std::to_string(m.expect_continue);
    if (key == "framing") return to_string(m.framing);
    if (key == "length") return std::to_string(m.content_length);
    if (key == "fields") return std::to_string(m.fields.size());
    if (key == "end") return std::to_string(m.end);
    if (key == "msgs") return std::to_string(r.messages.size());
    if (key == "head") return std::to_string(r.pending_head);
    if (key == "bodies") return joined(r, &message::body);
    if (key == "paths") return joined(r, &message::path);
    if (key == "queries") return joined(r, &message::query);
    if (key == "hosts") return joined(r, &message::host);
    if (key.compare(0, 2, "h:") == 0) return field_value(m, std::string_view(key).substr(2));
    return "<unknown key>";
}

// Splits "k=v k='v w'" into pairs.
inline std::vector<std::pair<std::string, std::string>> parse_checks(std::string_view s) {
    std::vector<std::pair<std::string, std::string>> out;
    std::size_t i = 0;
    while (i < s.size()) {
        if (s[i] == ' ') { ++i; continue; }
        std::size_t eq = s.find('=', i);
        std::string key(s.substr(i, eq - i));
        i = eq == std::string_view::npos ? s.size() : eq + 1;
        std::size_t stop = i < s.size() && s[i] == '\'' ? s.find('\'', ++i) : s.find(' ', i);
        if (stop == std::string_view::npos) stop = s.size();
        out.emplace_back(key, std::string(s.substr(i, stop - i)));
        i = stop + 1;
    }
    return out;
}

} // namespace detail

// Returns "" when the case holds in every feeding, else what went wrong.
inline std::string check_case(const parse_case& c) {
    everywhere_result e = feed_everywhere(c.input, c.limits);
    const feed_result& r = e.whole;
    std::string problems;
    if (!e.divergence.empty()) problems += "feedings disagree: " + e.divergence + "\n";
    if (!r.stray_view.empty()) problems += "a view points outside the buffer: " + r.stray_view + "\n";
    if (r.status != c.status)
        problems += std::string("status ") + to_string(r.status) + ", want " + to_string(c.status) + "\n";
    const message& m = r.messages.empty() ? r.head : r.messages.front();
    for (const auto& kv : detail::parse_checks(c.checks)) {
        std::string got = detail::actual(r, m, kv.first);
        if (got != kv.second) problems += kv.first + "=" + got + ", want " + kv.second + "\n";
    }
    if (!problems.empty()) problems += "parsed: " + describe(r);
    return problems;
}

} // namespace skiff_test

#endif // SKIFF_TESTS_SUPPORT_SPLIT_FEED_HPP
