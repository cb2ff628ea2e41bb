// Fuzz target for the request parser (message_parser over parse_head and chunked_decoder).
// Input: one byte that picks the limits (odd: the tight test limits, so that small inputs
// reach every limit; even: the defaults) and seeds the split points, then the byte stream.
//
// Beyond "no crash" (ASan, UBSan and the guard pages of support/guard_page.hpp), every run
// asserts properties, and aborts with a message when one fails:
//  - the stream gives the same result fed whole, cut at input-chosen points, and (when short)
//    byte by byte, following the kept() protocol exactly as the event loop does;
//  - parsing allocates nothing;
//  - what is accepted obeys the grammar: methods and field names are tokens, values hold no
//    CTL and no outer whitespace, one Host in HTTP/1.1, never Content-Length with
//    Transfer-Encoding, a Content-Length body is the declared bytes of the input;
//  - each message re-serialised ("name:value" lines, one chunk) parses to the same message,
//    and the stream cut right after a message parses to that message alone.
#include "support/split_feed.hpp"

// Only the parts it drives; the single-header configuration has no parts on its include
// path, so there it takes the whole file.
#ifdef SKIFF_TEST_SINGLE_HEADER
#include <skiff/skiff.hpp>
#else
#include <skiff/http/message_parser.hpp>
#endif

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint8_t, std::uint64_t
#include <cstdio>       // std::fprintf for property failures
#include <cstdlib>      // std::abort, std::malloc, std::free
#include <new>          // std::bad_alloc, replaced operator new/delete
#include <string>       // std::string for re-serialised messages
#include <string_view>  // std::string_view
#include <vector>       // std::vector for the parse buffer and cut points

namespace {

std::size_t allocations = 0;

} // namespace

// Counts allocations, so the property "parsing allocates nothing" can be checked. Every
// unaligned form is replaced, so that libFuzzer's nothrow allocations and these deletes pair
// up (ASan reports a mismatch otherwise); the aligned forms stay the runtime's, as a pair.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    ++allocations;
    return std::malloc(n == 0 ? 1 : n);
}
void* operator new(std::size_t n) {
    if (void* p = operator new(n, std::nothrow)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return operator new(n, std::nothrow); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace {

using skiff::parse_status;
using skiff_test::feed_result;
using skiff_test::message;

void require(bool ok, const char* property, const feed_result& r) {
    if (ok) return;
    std::fprintf(stderr, "property failed: %s\nresult: %s\n", property, skiff_test::describe(r).c_str());
    std::abort();
}

template <class Pred>
bool nonempty_all(std::string_view s, Pred pred) {
    for (char c : s)
        if (!pred(c)) return false;
    return !s.empty();
}

bool all_tchars(std::string_view s) { return nonempty_all(s, skiff::detail::is_tchar); }

// field-value = *field-content with no CTL but HTAB, and no leading or trailing OWS.
bool clean_value(std::string_view v) {
    for (char c : v)
        if (!skiff::detail::is_field_char(c)) return false;
    return v.empty() || (v.front() != ' ' && v.front() != '\t' && v.back() != ' ' && v.back() != '\t');
}

std::size_t count_fields(const message& m, std::string_view lower_name) {
    std::size_t n = 0;
    for (const auto& f : m.fields)
        if (skiff::detail::iequals_lower(f.first, lower_name)) ++n;
    return n;
}

// What any accepted message must satisfy, whatever the input was.
void check_grammar(const message& m, const feed_result& r, const skiff::parse_limits& limits) {
    require(all_tchars(m.method), "the method is a token", r);
    require(nonempty_all(m.target, skiff::detail::is_target_char), "the target is visible ASCII but '#'", r);
    require(m.fields.size() <= limits.max_headers, "no more fields than max_headers", r);
    for (const auto& f : m.fields) {
        require(all_tchars(f.first), "a field name is a token", r);
        require(clean_value(f.second), "a field value holds no CTL and no outer OWS", r);
    }
    require(m.version_minor == 0 || count_fields(m, "host") == 1, "HTTP/1.1 has exactly one Host", r);
    require(count_fields(m, "host") <= 1, "never two Host fields", r);
    bool has_te = count_fields(m, "transfer-encoding") != 0;
    bool has_cl = count_fields(m, "content-length") != 0;
    require(!(has_te && has_cl), "never Content-Length with Transfer-Encoding", r);
    require(m.body.size() <= limits.max_body, "the body fits max_body", r);
    require(m.framing != skiff::body_framing::none || m.body.empty(), "no framing, no body", r);
    require(m.framing != skiff::body_framing::chunked || has_te, "chunked only with Transfer-Encoding", r);
    require(m.version_minor == 1 || !m.expect_continue, "Expect is ignored in HTTP/1.0", r);
}

void check_messages(std::string_view input, const feed_result& r, const skiff::parse_limits& limits) {
    std::size_t prev = 0;
    for (const message& m : r.messages) {
        require(m.end > prev && m.end <= input.size(), "message ends advance inside the input", r);
        check_grammar(m, r, limits);
        if (m.framing == skiff::body_framing::length) {
            require(m.body.size() == m.content_length, "a length body has the declared size", r);
            require(input.substr(m.end - m.body.size(), m.body.size()) == m.body, "a length body is input bytes", r);
        }
        prev = m.end;
    }
    if (r.pending_head) check_grammar(r.head, r, limits);
}

std::string serialise(const message& m) {
    std::string s = m.method + " " + m.target + " HTTP/1." + std::to_string(m.version_minor) + "\r\n";
    for (const auto& f : m.fields) s += f.first + ":" + f.second + "\r\n";
    s += "\r\n";
    if (m.framing == skiff::body_framing::length) s += m.body;
    if (m.framing != skiff::body_framing::chunked) return s;
    if (!m.body.empty()) {
        static const char hex[] = "0123456789abcdef";
        std::string size;
        for (std::size_t n = m.body.size(); n != 0; n /= 16) size.insert(size.begin(), hex[n % 16]);
        s += size + "\r\n" + m.body + "\r\n";
    }
    return s + "0\r\n\r\n";
}

// Each message, alone and re-serialised, parses to itself.
void check_round_trips(std::string_view input, const feed_result& r, const skiff::parse_limits& limits) {
    std::size_t start = 0;
    for (const message& m : r.messages) {
        feed_result alone = skiff_test::feed(input.substr(start, m.end - start), limits);
        require(alone.status == parse_status::complete && alone.messages.size() == 1, "a message parses alone", r);
        message want = m;
        want.end = m.end - start;
        require(alone.messages[0] == want, "a message parses alone to itself", r);
        std::string again = serialise(m);
        feed_result re = skiff_test::feed(again, limits);
        require(re.status == parse_status::complete && re.messages.size() == 1, "a re-serialised message parses", r);
        want.end = again.size();
        require(re.messages[0] == want, "a re-serialised message parses to itself", r);
        start = m.end;
    }
}

// The same stream through message_parser directly, as the loop does for one read, with an
// allocation count around the parse calls only.
void check_no_allocation(std::string_view input, const skiff::parse_limits& limits, const feed_result& r) {
    std::vector<char> buf(input.begin(), input.end());
    std::vector<skiff::header_field> fields(limits.max_headers);
    skiff::request_head head;
    skiff::message_parser parser;
    std::size_t off = 0;
    std::size_t before = allocations;
    while (off < buf.size()) {
        skiff::parse_result p = parser.parse(buf.data() + off, buf.size() - off, head, fields.data(), limits);
        if (p.status != parse_status::complete) break;
        off += p.consumed;
        parser.reset();
    }
    require(allocations == before, "parsing allocates nothing", r);
}

std::size_t mix(std::string_view s, std::size_t seed) {
    std::size_t h = seed * 0x9e3779b97f4a7c15ULL + s.size();
    for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
    return h;
}

void check_splits(std::string_view input, const skiff::parse_limits& limits, std::size_t seed, const feed_result& r) {
    if (input.size() < 2) return;
    std::size_t h = mix(input, seed);
    std::size_t a = 1 + h % (input.size() - 1);
    std::size_t b = 1 + (h >> 20) % (input.size() - 1);
    require(skiff_test::feed(input, limits, {a}) == r, "one cut gives the same result", r);
    if (a != b) {
        std::vector<std::size_t> two = a < b ? std::vector<std::size_t>{a, b} : std::vector<std::size_t>{b, a};
        require(skiff_test::feed(input, limits, two) == r, "two cuts give the same result", r);
    }
    if (input.size() > 96) return;  // byte by byte costs O(n^2): short inputs only
    std::vector<std::size_t> every;
    for (std::size_t k = 1; k < input.size(); ++k) every.push_back(k);
    require(skiff_test::feed(input, limits, every) == r, "byte by byte gives the same result", r);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const skiff::parse_limits limits = (data[0] & 1) ? skiff_test::tight : skiff::parse_limits{};
    std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
    feed_result whole = skiff_test::feed(input, limits);
    require(whole.stray_view.empty(), "every view points into the buffer", whole);
    check_messages(input, whole, limits);
    check_splits(input, limits, data[0] >> 1, whole);
    check_round_trips(input, whole, limits);
    check_no_allocation(input, limits, whole);
    return 0;
}
