// The header section (RFC 9112 §5, RFC 9110 §5): field lines, then the fields that decide
// framing and connection handling (Host, Content-Length, Transfer-Encoding, Connection,
// Expect), checked together when the section ends. Other fields are kept as views, unread.
#ifndef SKIFF_HTTP_FIELDS_HPP
#define SKIFF_HTTP_FIELDS_HPP

#include "skiff/detail/ascii.hpp"
#include "skiff/detail/scan.hpp"
#include "skiff/http/crlf.hpp"
#include "skiff/http/parse_status.hpp"
#include "skiff/http/request_head.hpp"

#include <cstdint>      // std::uint64_t
#include <string_view>  // std::string_view

namespace skiff::detail {

// Facts gathered field by field, checked together once the section ends.
struct field_facts {
    std::uint32_t host_count = 0;
    std::uint32_t coding_count = 0;  // transfer codings listed, over every Transfer-Encoding
    std::uint32_t chunked_count = 0;
    bool host_from_target = false;   // absolute-form: the target's authority wins (§3.2.2)
    bool has_length = false;
    bool has_coding = false;
    bool chunked_last = false;
    bool coding_unsupported = false;
    bool conn_close = false;
    bool conn_keep_alive = false;
    bool expect_continue = false;
    bool expect_other = false;
};

// field-name ":" OWS field-value OWS CRLF, p advanced past it.
// RFC 9112 §5.1: no whitespace between name and colon; §5.2: a line that starts with
// whitespace (obs-fold) is rejected; both fail here as "the name does not end in ':'".
inline parse_status parse_field_line(const char*& pos, const char* end, header_field& f) noexcept {
    const char* p = pos;
    const char* name = p;
    p = scan_tchars(p, end);
    if (p == end) return parse_status::incomplete;
    if (p == name || *p != ':') return parse_status::bad_request;
    f.name = std::string_view(name, static_cast<std::size_t>(p - name));
    ++p;
    while (p != end && is_ows(*p)) ++p;
    const char* value = p;
    p = scan_field_chars(p, end);
    const char* value_end = p;
    parse_status s = expect_crlf(p, end);  // a CTL, bare CR or bare LF in the value fails here
    if (s != parse_status::complete) return s;
    while (value_end > value && is_ows(value_end[-1])) --value_end;
    f.value = std::string_view(value, static_cast<std::size_t>(value_end - value));
    pos = p;
    return parse_status::complete;
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

inline parse_status note_host(std::string_view v, request_head& h, field_facts& f) noexcept {
    if (++f.host_count > 1) return parse_status::bad_request;  // RFC 9112 §3.2
    if (!all_host_chars(v)) return parse_status::bad_request;
    if (!f.host_from_target) h.host = v;
    return parse_status::complete;
}

inline parse_status note_length(std::string_view v, request_head& h, field_facts& f) noexcept {
    std::uint64_t n = 0;
    if (!parse_content_length(v, n)) return parse_status::bad_request;
    if (f.has_length && n != h.content_length) return parse_status::bad_request;  // §6.3 item 5
    f.has_length = true;
    h.content_length = n;
    return parse_status::complete;
}

// A cheap, inlined first look: only a field whose length and first letter fit one of the
// five names below can matter, so the others (most fields) skip the call to note_field.
inline bool may_be_framing_field(std::string_view n) noexcept {
    char first = static_cast<char>(n.empty() ? 0 : n[0] | 0x20);
    switch (n.size()) {
    case 4: return first == 'h';
    case 6: return first == 'e';
    case 10:
    case 14: return first == 'c';
    case 17: return first == 't';
    default: return false;
    }
}

// The fields that change how the message is read, picked out by length first so that the
// common fields cost one switch.
inline parse_status note_field(const header_field& fld, request_head& h, field_facts& f) noexcept {
    std::string_view n = fld.name;
    switch (n.size()) {
    case 4:
        if (iequals_token(n, "host")) return note_host(fld.value, h, f);
        break;
    case 6:
        if (iequals_token(n, "expect"))
            for_each_list_item(fld.value, [&](std::string_view i) { return note_expectation(i, f); });
        break;
    case 10:
        if (iequals_token(n, "connection"))
            for_each_list_item(fld.value, [&](std::string_view i) { return note_connection(i, f); });
        break;
    case 14:
        if (iequals_token(n, "content-length")) return note_length(fld.value, h, f);
        break;
    case 17:
        if (iequals_token(n, "transfer-encoding")) {
            f.has_coding = true;
            auto ok = for_each_list_item(fld.value, [&](std::string_view i) { return note_coding(i, f); });
            if (!ok) return parse_status::bad_request;
        }
        break;
    default:
        break;
    }
    return parse_status::complete;
}

// Field lines up to and including the empty line, p advanced past it.
// RFC 9110 §15.5.20: the section, its final CRLF included, must fit in max_header_bytes
// (431). As for the request line, only that window is parsed, so the answer depends on its
// bytes alone and any split of the stream gives the same one.
inline parse_status parse_fields(const char*& pos, const char* end, request_head& h, header_field* fields,
                                 const parse_limits& limits, field_facts& facts) noexcept {
    const char* window = cap(pos, end, limits.max_header_bytes);
    const char* p = pos;
    parse_status s = parse_status::complete;
    while (s == parse_status::complete && p != window && *p != '\r' && *p != '\n') {
        if (h.field_count == limits.max_headers) return parse_status::fields_too_large;
        header_field& f = fields[h.field_count];
        s = parse_field_line(p, window, f);
        if (s != parse_status::complete) break;
        ++h.field_count;
        if (may_be_framing_field(f.name)) s = note_field(f, h, facts);
    }
    if (s == parse_status::complete) s = expect_crlf(p, window);
    if (s == parse_status::incomplete && static_cast<std::size_t>(window - pos) == limits.max_header_bytes)
        return parse_status::fields_too_large;  // still open where the window ends
    if (s == parse_status::complete) pos = p;
    return s;
}

// Checks made once every field is known; sets framing, keep-alive and expect-continue.
inline parse_status check_fields(request_head& h, const field_facts& f) noexcept {
    bool v11 = h.version_minor == 1;
    if (v11 && f.host_count == 0) return parse_status::bad_request;  // RFC 9112 §3.2
    if (f.has_coding) {
        if (f.has_length) return parse_status::bad_request;      // §6.1: a smuggling signature
        if (!v11) return parse_status::bad_request;              // §6.1: framing is faulty in 1.0
        if (f.coding_count == 0) return parse_status::bad_request;
        if (f.coding_unsupported || f.chunked_count != 1 || !f.chunked_last) return parse_status::not_implemented;
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
