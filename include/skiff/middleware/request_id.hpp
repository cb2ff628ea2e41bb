// The request id built-in: each request gets an id, sent back as X-Request-Id and visible to
// the handler as current_request_id(req).
//
//   app.use(skiff::request_id());
//   app.get("/", [](skiff::request& req, skiff::response& res) { res.text(skiff::current_request_id(req)); });
//
// An incoming X-Request-Id is kept when valid: 1 to 200 visible ASCII characters (0x21-0x7E:
// no space, no control character, no byte beyond ASCII), so a proxy in front can thread its
// own id through; any other value is replaced by a generated one. A generated id is
// "<16 hex digits>-<decimal count>": a random prefix drawn once per thread, then that
// thread's own count, from 1. Each thread counts its own ids (no atomic, no lock, under any policy);
// prefixes are 64 random bits, so two threads share one only by a chance of about 2^-64 and
// ids are unique within a server.
//
// current_request_id(req) is a view valid while the chain behind the middleware runs: it is
// set before next() and restored after, so a handler on a route without request_id() sees an
// empty view, and a deferred answer must copy the id before the handler returns. The field
// is written before next(), so it is on every answer of the chain, early ones (401) included.
// The field is kept aside for the head (response.hpp), so a 200 stays on the pre-composed
// head; tools/bench/middleware_counts.py measures it alone on a hello route.
//
// Not here: other header names; passing the id on to outgoing calls.
#ifndef SKIFF_MIDDLEWARE_REQUEST_ID_HPP
#define SKIFF_MIDDLEWARE_REQUEST_ID_HPP

#include "skiff/http/request.hpp"
#include "skiff/http/response.hpp"
#include "skiff/http/response_access.hpp"
#include "skiff/middleware/stack.hpp"

#include <chrono>       // a clock reading mixed into the prefix
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t
#include <cstring>      // std::memcpy
#include <memory>       // std::make_shared: the step's (empty) state
#include <string>       // new_request_id
#include <string_view>  // std::string_view
// The system's random bytes for the per-thread prefix, rather than <random>: that header alone
// cost every program that includes skiff 0.25 s and 17 MB of compiler memory, for 8 bytes a
// thread.
#if defined(__linux__)
#include <sys/random.h>  // getrandom
#else
#include <stdlib.h>  // arc4random_buf (macOS, the BSDs)
#endif

namespace skiff {

inline constexpr std::size_t max_request_id_size = 200;

// 1 to max_request_id_size characters, each visible ASCII (0x21-0x7E).
inline bool valid_request_id(std::string_view id) noexcept {
    if (id.empty() || id.size() > max_request_id_size) return false;
    for (char c : id)
        if (c < '!' || c > '~') return false;  // a byte above 0x7F is below '!' where char is signed
    return true;
}

// The id request_id() gave this request; empty outside its chain.
inline std::string_view current_request_id(const request& req) noexcept {
    return detail::request_access::request_id(req);
}

namespace detail {

inline constexpr std::size_t hex_digits = 16;
inline constexpr std::size_t generated_id_room = hex_digits + 1 + head_text::max_decimal_digits;

inline constexpr std::size_t id_prefix_size = hex_digits + 1;

// A thread's ids: the last one given, as text, whose count is counted on in its decimal
// digits (an odometer), so an id costs no division and is copied out whole.
struct id_sequence {
    char text[generated_id_room];  // 16 hex digits, '-', the count's digits; all zero until drawn
    std::uint8_t size;             // bytes of text in use
};

// 64 bits from the system's generator, or 0 should it fail (no getrandom in an old kernel).
#if defined(__linux__)
inline std::uint64_t system_random_bits() noexcept {
    std::uint64_t r = 0;
    return getrandom(&r, sizeof r, 0) == static_cast<ssize_t>(sizeof r) ? r : 0;
}
#else
inline std::uint64_t system_random_bits() noexcept {
    std::uint64_t r = 0;
    arc4random_buf(&r, sizeof r);
    return r;
}
#endif

// The system's bits; the clock and the caller's address (one per thread) keep threads apart
// even where those failed.
inline std::uint64_t random_bits(const void* salt) {
    std::uint64_t r = system_random_bits();
    r ^= static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(salt)) * 0x9e3779b97f4a7c15u;
    return r ^ static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
}

inline void draw_prefix(id_sequence& ids) {
    static constexpr char digits[] = "0123456789abcdef";
    std::uint64_t r = random_bits(&ids);
    for (std::size_t i = 0; i < hex_digits; ++i) ids.text[i] = digits[(r >> (60 - 4 * i)) & 0xF];
    ids.text[hex_digits] = '-';
    ids.text[id_prefix_size] = '0';  // the count so far
    ids.size = id_prefix_size + 1;
}

// This thread's sequence: zero-initialised (no guard, no constructor), drawn on first use.
inline id_sequence& thread_id_sequence() {
    static thread_local id_sequence ids{};
    if (ids.text[0] == '\0') draw_prefix(ids);
    return ids;
}

// Adds one to the count's digits: the last digit nearly always, a carry one step in ten. All
// nines become a one and one more zero (a count of 20 digits, never reached, starts over).
inline void count_on(id_sequence& ids) noexcept {
    char* digits = ids.text + id_prefix_size;
    char* p = ids.text + ids.size;
    while (p != digits && p[-1] == '9') *--p = '0';
    if (p != digits) {
        ++p[-1];
        return;
    }
    *digits = '1';
    if (ids.size < sizeof ids.text) ids.text[ids.size++] = '0';
}

// The next id of this thread, written in room. Measured (middleware_counts.py): request_id()
// +186 -> +155 instructions a request, against formatting the count with divisions.
inline std::string_view generate_request_id(char (&room)[generated_id_room]) {
    id_sequence& ids = thread_id_sequence();
    count_on(ids);
    std::memcpy(room, ids.text, sizeof ids.text);  // a constant size: inline moves
    return {room, ids.size};
}

// Sets the request's id for the rest of the chain; restores the one before (none, or an
// outer request_id()'s) when the chain returns or throws.
class request_id_scope {
public:
    request_id_scope(request& req, std::string_view id) noexcept
        : slot_(request_access::request_id(req)), before_(slot_) {
        slot_ = id;
    }
    request_id_scope(const request_id_scope&) = delete;
    request_id_scope& operator=(const request_id_scope&) = delete;
    ~request_id_scope() { slot_ = before_; }

private:
    std::string_view& slot_;
    std::string_view before_;
};

// The built-in's step: no state of its own (the count is the thread's).
struct request_id_state {
    template <class Next>
    void serve(request& req, response& res, const Next& go) const {
        char room[generated_id_room];
        std::string_view id = token_field(req, "x-request-id");
        if (!valid_request_id(id)) id = generate_request_id(room);
        response_access::add_checked_field(res, "X-Request-Id", id);  // id: visible ASCII
        request_id_scope scope(req, id);
        go();
    }
};

} // namespace detail

// A generated id, as request_id() makes them, for an answer no middleware sees: the server's
// own rejections (basic_server::on_rejection).
inline std::string new_request_id() {
    char room[detail::generated_id_room];
    return std::string(detail::generate_request_id(room));
}

inline middleware request_id() {
    return detail::make_builtin(std::make_shared<const detail::request_id_state>());
}

} // namespace skiff

#endif // SKIFF_MIDDLEWARE_REQUEST_ID_HPP
