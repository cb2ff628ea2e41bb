// The header section (RFC 9112 §5, RFC 9110 §5): field lines, then the fields that decide
// framing and connection handling (Host, Content-Length, Transfer-Encoding, Connection,
// Expect), checked together when the section ends. Other fields are kept as views, unread.
// Each field line is read in one pass (name, colon, OWS, value, CRLF) and noted only once
// it is whole. Invariant: reads stay within [p, end); the word loads that recognise a name
// overlap inside the name, never past it, so no padding is assumed.
#ifndef SKIFF_HTTP_FIELDS_HPP
#define SKIFF_HTTP_FIELDS_HPP

#include "skiff/config.hpp"
#include "skiff/detail/ascii.hpp"
#include "skiff/detail/bytes.hpp"
#include "skiff/detail/scan.hpp"
#include "skiff/http/crlf.hpp"
#include "skiff/http/host.hpp"
#include "skiff/http/parse_status.hpp"
#include "skiff/http/request_head.hpp"

#include <cstddef>      // std::size_t, offsetof
#include <cstdint>      // std::uint64_t, std::uint32_t, std::uint8_t
#include <cstring>      // std::memcpy: the flags as one word
#include <string_view>  // std::string_view
#include <type_traits>  // std::is_standard_layout_v

namespace skiff::detail {

// Facts gathered field by field, checked together once the section ends.
struct field_facts {
    std::uint32_t host_count = 0;
    std::uint32_t coding_count = 0;  // transfer codings listed, over every Transfer-Encoding
    std::uint32_t chunked_count = 0;
    std::uint64_t length = 0;        // Content-Length, when has_length
    bool host_from_target = false;   // absolute-form: the target's authority wins (§3.2.2)
    // The eight flags below, together: all false unless Content-Length, Transfer-Encoding,
    // Connection or Expect was noted (framing_noted() reads them as one word).
    bool has_length = false;
    bool has_coding = false;
    bool chunked_last = false;
    bool coding_unsupported = false;
    bool conn_close = false;
    bool conn_keep_alive = false;
    bool expect_continue = false;
    bool expect_other = false;
};

// Whether any of the flags from has_length to expect_other is set: one 8-byte load of their
// bytes (copied as the object's bytes, which offsetof names in this standard-layout struct).
inline bool framing_noted(const field_facts& f) noexcept {
    constexpr std::size_t first = offsetof(field_facts, has_length);
    static_assert(std::is_standard_layout_v<field_facts>, "offsetof needs a standard-layout struct");
    static_assert(offsetof(field_facts, expect_other) == first + 7, "the eight flags are adjacent");
    std::uint64_t flags = 0;
    std::memcpy(&flags, reinterpret_cast<const char*>(&f) + first, sizeof flags);
    return flags != 0;
}

// RFC 9110 §8.6: Content-Length = 1*DIGIT. No sign, no space, no list, no overflow.
inline bool parse_content_length(std::string_view v, std::uint64_t& out) noexcept {
    if (v.empty()) return false;
    constexpr std::uint64_t max = ~std::uint64_t{0};
    std::uint64_t n = 0;
    for (char c : v) {
        if (!is_digit(static_cast<unsigned char>(c))) return false;
        auto d = static_cast<std::uint64_t>(c - '0');
        if (n > (max - d) / 10) return false;
        n = n * 10 + d;
    }
    out = n;
    return true;
}

// Calls on_item(item) for each non-empty element of a comma list (RFC 9110 §5.6.1), trimmed.
template <class OnItem>
inline bool for_each_list_item(std::string_view v, OnItem on_item) noexcept {
    for (;;) {
        std::size_t comma = v.find(',');
        std::string_view item = trim_ows(v.substr(0, comma));
        if (!item.empty() && !on_item(item)) return false;
        if (comma == std::string_view::npos) return true;
        v.remove_prefix(comma + 1);
    }
}

// A transfer coding: a token, optionally followed by OWS ";" parameters (RFC 9112 §7).
inline bool note_coding(std::string_view item, field_facts& f) noexcept {
    const char* tok_end = scan_tchars(item.data(), item.data() + item.size());
    std::string_view token = item.substr(0, static_cast<std::size_t>(tok_end - item.data()));
    std::string_view after = trim_ows(item.substr(token.size()));
    if (token.empty() || (!after.empty() && after.front() != ';')) return false;
    ++f.coding_count;
    f.chunked_last = after.empty() && iequals_token(token, "chunked");  // chunked takes no parameters
    if (f.chunked_last) ++f.chunked_count;
    else f.coding_unsupported = true;
    return true;
}

inline bool note_connection(std::string_view item, field_facts& f) noexcept {
    if (iequals_token(item, "close")) f.conn_close = true;
    else if (iequals_token(item, "keep-alive")) f.conn_keep_alive = true;
    return true;
}

// RFC 9110 §10.1.1: Expect = #expectation, and 100-continue is the only one defined. An
// empty element asks for nothing (§5.6.1), so "Expect:" alone is not a 417.
inline bool note_expectation(std::string_view item, field_facts& f) noexcept {
    (iequals_token(item, "100-continue") ? f.expect_continue : f.expect_other) = true;
    return true;
}

// host_ok: v is uri-host [ ":" port ] (RFC 9112 §3.2), found while the value was scanned.
inline parse_status note_host(std::string_view v, bool host_ok, request_head& h, field_facts& f) noexcept {
    if (++f.host_count > 1) return parse_status::bad_request;  // RFC 9112 §3.2
    if (!host_ok) return parse_status::bad_request;
    if (!f.host_from_target) h.host = v;
    return parse_status::complete;
}

inline parse_status note_length(std::string_view v, field_facts& f) noexcept {
    std::uint64_t n = 0;
    if (!parse_content_length(v, n)) return parse_status::bad_request;
    if (f.has_length && n != f.length) return parse_status::bad_request;  // §6.3 item 5
    f.has_length = true;
    f.length = n;
    return parse_status::complete;
}

enum class field_kind : std::uint8_t { other, host, expect, connection, content_length, transfer_encoding };

// n == lower, ASCII case-insensitively, for a field name of 4 or more bytes and a lower-case
// literal of the same length: overlapping word loads from both ends, never outside n, folded
// to immediates once inlined. The 0x20 bit is exact here because n holds only tchars and
// lower only letters and '-' (no tchar but '-' maps to '-' under | 0x20).
// Measured (callgrind, parser_bench), with the fused field line below that uses it: short
// request 861 -> 748 instructions a parse, browser 2,955 -> 2,902.
inline bool name_is(const char* n, const char* lower, std::size_t len) noexcept {
    constexpr std::uint32_t case4 = 0x20202020u;
    constexpr std::uint64_t case8 = 0x2020202020202020u;
    if (len < 8) return (load4(n) | case4) == load4(lower) && (load4(n + len - 4) | case4) == load4(lower + len - 4);
    for (std::size_t i = 0; i + 8 < len; i += 8)
        if ((load8(n + i) | case8) != load8(lower + i)) return false;
    return (load8(n + len - 8) | case8) == load8(lower + len - 8);
}

// The fields that change how the message is read, picked out by length and one or two
// word compares; most fields fail at the switch.
inline field_kind field_kind_of(std::string_view n) noexcept {
    const char* d = n.data();
    switch (n.size()) {
    case 4: return name_is(d, "host", 4) ? field_kind::host : field_kind::other;
    case 6: return name_is(d, "expect", 6) ? field_kind::expect : field_kind::other;
    case 10: return name_is(d, "connection", 10) ? field_kind::connection : field_kind::other;
    case 14: return name_is(d, "content-length", 14) ? field_kind::content_length : field_kind::other;
    case 17: return name_is(d, "transfer-encoding", 17) ? field_kind::transfer_encoding : field_kind::other;
    default: return field_kind::other;
    }
}

// The framing fields but Host, which parse_field_line notes itself (it is in every request).
inline parse_status note_field(field_kind kind, std::string_view v, field_facts& f) noexcept {
    switch (kind) {
    case field_kind::expect:
        for_each_list_item(v, [&](std::string_view i) { return note_expectation(i, f); });
        break;
    case field_kind::connection:
        // "keep-alive" alone is what browsers send: one compare instead of the list walk
        // (measured: 715-byte request 3,104 -> 3,019 instructions). name_is is exact for a
        // value too: it holds no CTL, so only 'K' folds onto 'k' and nothing onto '-'.
        if (v.size() == 10 && name_is(v.data(), "keep-alive", 10)) f.conn_keep_alive = true;
        else for_each_list_item(v, [&](std::string_view i) { return note_connection(i, f); });
        break;
    case field_kind::content_length: return note_length(v, f);
    case field_kind::transfer_encoding:
        f.has_coding = true;
        if (!for_each_list_item(v, [&](std::string_view i) { return note_coding(i, f); }))
            return parse_status::bad_request;
        break;
    case field_kind::host:
    case field_kind::other: break;
    }
    return parse_status::complete;
}

// The ends of v[0, e) without leading or trailing OWS. Every byte there is a field-value
// byte (HTAB or 0x20 and above), so "at most 0x20" is exactly SP or HTAB: one compare a byte.
inline const char* trim_ows_back(const char* v, const char* e) noexcept {
    while (e != v && static_cast<unsigned char>(e[-1]) <= 0x20) --e;
    return e;
}
inline const char* trim_ows_front(const char* v, const char* e) noexcept {
    while (v != e && static_cast<unsigned char>(*v) <= 0x20) ++v;
    return v;
}

// field-name ":" OWS field-value OWS CRLF, p advanced past it, and noted if it is a framing
// field: one pass that validates the name, finds the colon, trims OWS and recognises the
// field. RFC 9112 §5.1: no whitespace between name and colon; §5.2: a line that starts with
// whitespace (obs-fold) is rejected; both fail here as "the name does not end in ':'".
// OWS is trimmed inside the scanned value (after the one SP most lines have), so it costs a
// compare, not a bounded loop of its own. A Host value is scanned for reg-name characters
// first (RFC 3986 §3.2.2): it nearly always ends there, at the CR, so it is validated as it
// is found; a port, an IP literal or a '%' stops that scan short, and then the whole value
// is checked against the grammar (http/host.hpp). The line
// is read whole before anything is noted, so a bad line is 400 and an unfinished one
// incomplete just as for any other field.
inline parse_status parse_field_line(const byte_scans& scan, const char*& pos, const char* end, header_field& f,
                                     request_head& h, field_facts& facts) noexcept {
    const char* p = pos;
    const char* name = p;
    p = scan.tchars(p, end);
    if (p == end) return parse_status::incomplete;
    if (p == name || *p != ':') return parse_status::bad_request;
    f.name = std::string_view(name, static_cast<std::size_t>(p - name));
    field_kind kind = field_kind_of(f.name);
    const char* value = ++p;
    if (value != end && *value == ' ') ++value;
    const char* host_end = value;
    if (kind != field_kind::host) p = scan.field_chars(value, end);
    else {
        host_end = scan.reg_name_chars(value, end);
        p = host_end != end && *host_end == '\r' ? host_end : scan.field_chars(host_end, end);
    }
    const char* value_end = trim_ows_back(value, p);
    value = trim_ows_front(value, value_end);
    parse_status s = expect_crlf(p, end);  // a CTL, bare CR or bare LF in the value fails here
    if (s != parse_status::complete) return s;
    f.value = std::string_view(value, static_cast<std::size_t>(value_end - value));
    pos = p;
    if (kind == field_kind::other) return parse_status::complete;
    if (kind != field_kind::host) return note_field(kind, f.value, facts);
    return note_host(f.value, host_end >= value_end || valid_authority(f.value, port_rule::optional), h, facts);
}

// Field lines up to and including the empty line, p advanced past it.
// RFC 9110 §15.5.20: the section, its final CRLF included, must fit in max_header_bytes
// (431). As for the request line, only that window is parsed, so the answer depends on its
// bytes alone and any split of the stream gives the same one.
SKIFF_ALWAYS_INLINE parse_status parse_fields(const char*& pos, const char* end, request_head& h, header_field* fields,
                                 const parse_limits& limits, field_facts& facts) noexcept {
    const char* window = cap(pos, end, limits.max_header_bytes);
    const char* p = pos;
    std::uint32_t count = 0;  // in a register, not h.field_count, through the loop
    const std::size_t max_headers = limits.max_headers;  // not reloaded after each store to a field
    parse_status s = parse_status::complete;
    const byte_scans scan;
    // A line that starts with LF is 400 as a name that does not end in ':', except past the
    // count limit, where it is 400 rather than 431 (the end of the head, however malformed).
    while (p != window && *p != '\r') {
        if (count == max_headers && *p != '\n') return parse_status::fields_too_large;
        s = parse_field_line(scan, p, window, fields[count], h, facts);
        if (s != parse_status::complete) break;
        ++count;
    }
    h.field_count = count;
    if (s == parse_status::complete) s = expect_crlf(p, window);
    if (s == parse_status::incomplete && static_cast<std::size_t>(window - pos) == limits.max_header_bytes)
        return parse_status::fields_too_large;  // still open where the window ends
    if (s == parse_status::complete) pos = p;
    return s;
}

// RFC 9110 §9.3.6: CONNECT asks for a tunnel. Its target is authority-form only (RFC 9112
// §3.2.3), it has no content, and what follows its head would be the tunnel's bytes, not a
// request: so a body declared for it is 400, and the connection closes after its answer
// (skiff opens no tunnel: the router answers 501 unless the program routes CONNECT). Framing
// it by a Content-Length would read the tunnel's bytes as a body, which a proxy that strips
// the field (HAProxy does) would read as the next request. parse_head calls it after
// check_fields (measured: 4 instructions a GET; noting CONNECT as Connection: close instead
// cost 3 on the 68-byte request and 19 on a browser's, which lost an inlining).
SKIFF_NOINLINE inline parse_status check_connect(request_head& h) noexcept {
    if (!h.path.empty()) return parse_status::bad_request;  // origin-form (an authority leaves no path)
    bool declares_body = h.framing == body_framing::chunked || (h.framing == body_framing::length && h.content_length != 0);
    if (declares_body) return parse_status::bad_request;
    h.framing = body_framing::none;
    h.keep_alive = false;
    return parse_status::complete;
}

// Checks made once every field is known; sets framing, content length, keep-alive and
// expect-continue (parse_head leaves them for this to set).
inline parse_status check_fields(request_head& h, const field_facts& f) noexcept {
    bool v11 = h.version_minor == 1;
    if (v11 && f.host_count == 0) return parse_status::bad_request;  // RFC 9112 §3.2
    h.framing = body_framing::none;
    h.content_length = f.length;
    // No Content-Length, Transfer-Encoding, Connection or Expect, as in most requests: what
    // the checks below would conclude from their defaults, without reading each one.
    if (!framing_noted(f)) {
        h.expect_continue = false;
        h.keep_alive = v11;
        return parse_status::complete;
    }
    if (f.has_coding) {
        if (f.has_length) return parse_status::bad_request;      // §6.1: a smuggling signature
        if (!v11) return parse_status::bad_request;              // §6.1: framing is faulty in 1.0
        if (f.coding_count == 0) return parse_status::bad_request;
        // §6.3 item 4: chunked not the final coding (or bare, with parameters): the body's
        // length cannot be known, so 400 and close; chunked twice (§7.1) likewise. Only a
        // coding it does not know, before a final chunked, is 501 (§6.1).
        if (!f.chunked_last || f.chunked_count != 1) return parse_status::bad_request;
        if (f.coding_unsupported) return parse_status::not_implemented;
        h.framing = body_framing::chunked;
    } else if (f.has_length) {
        h.framing = body_framing::length;
    }
    // RFC 9110 §10.1.1: expectations in HTTP/1.0 requests are ignored.
    if (v11 && f.expect_other) return parse_status::expectation_failed;
    h.expect_continue = v11 && f.expect_continue;
    h.keep_alive = v11 ? !f.conn_close : (f.conn_keep_alive && !f.conn_close);
    return parse_status::complete;
}

} // namespace skiff::detail

#endif // SKIFF_HTTP_FIELDS_HPP
