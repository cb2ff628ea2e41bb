// The request a handler sees: views into the connection's buffer, valid until the handler
// returns. Parameters, query and form values are percent-decoded into arenas the request
// owns; their capacity is set at start-up and kept, so steady-state requests allocate nothing.
#ifndef SKIFF_HTTP_REQUEST_HPP
#define SKIFF_HTTP_REQUEST_HPP

#include "skiff/detail/ascii.hpp"
#include "skiff/http/method.hpp"
#include "skiff/http/request_head.hpp"
#include "skiff/http/route_params.hpp"
#include "skiff/http/url.hpp"

#include <charconv>     // std::from_chars for typed parameters
#include <cstddef>      // std::size_t
#include <optional>     // std::optional from percent_decode, typed parameters
#include <string>       // std::string as the decoding arena
#include <string_view>  // std::string_view
#include <system_error> // std::errc from std::from_chars
#include <type_traits>  // what a typed parameter may be
#include <vector>       // std::vector for fields and decoded pairs

namespace skiff {

// A whole decimal integer of type T: digits, a '-' first for a signed T, nothing else (no
// '+', no spaces, no trailing bytes), within T's range; empty otherwise.
template <class T>
std::optional<T> parse_integer(std::string_view text) noexcept {
    static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>,
                  "skiff: typed parameters are integers (int, long long, unsigned, std::size_t, ...)");
    T value{};
    const char* end = text.data() + text.size();
    auto [stop, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || ec != std::errc() || stop != end) return std::nullopt;
    return value;
}

struct query_pair {
    std::string_view key;
    std::string_view value;
};

// The values of every field line with one name, in order: what request::header_values()
// returns, to read with a range-for. Views into the request; it allocates nothing and is
// valid while the request is. (No iterator traits: they need <iterator>, which skiff does
// not otherwise include.)
class field_values {
public:
    class iterator {
    public:
        iterator(const header_field* at, const header_field* end, std::string_view name) noexcept
            : at_(at), end_(end), name_(name) {
            skip();
        }
        std::string_view operator*() const noexcept { return at_->value; }
        iterator& operator++() noexcept {
            ++at_;
            skip();
            return *this;
        }
        bool operator==(const iterator& o) const noexcept { return at_ == o.at_; }
        bool operator!=(const iterator& o) const noexcept { return at_ != o.at_; }

    private:
        void skip() noexcept {
            while (at_ != end_ && !detail::iequals(at_->name, name_)) ++at_;
        }
        const header_field* at_;
        const header_field* end_;
        std::string_view name_;
    };

    field_values(const header_field* first, const header_field* last, std::string_view name) noexcept
        : first_(first), last_(last), name_(name) {}
    iterator begin() const noexcept { return {first_, last_, name_}; }
    iterator end() const noexcept { return {last_, last_, name_}; }
    bool empty() const noexcept { return begin() == end(); }

private:
    const header_field* first_;
    const header_field* last_;
    std::string_view name_;
};

namespace detail { struct request_access; }

class request {
public:
    std::string_view method() const noexcept { return head_.method_name; }
    skiff::method verb() const noexcept { return head_.verb; }
    std::string_view target() const noexcept { return head_.target; }
    std::string_view path() const noexcept { return head_.path; }          // raw, as matched
    std::string_view query_string() const noexcept { return head_.query; }  // raw, without '?'
    std::string_view host() const noexcept { return head_.host; }
    int version_minor() const noexcept { return head_.version_minor; }
    bool keep_alive() const noexcept { return head_.keep_alive; }
    std::string_view body() const noexcept { return head_.body; }

    // The first field with this name (case-insensitive), or an empty view. For a field that
    // is a comma list (If-None-Match, Accept-Encoding, Cache-Control...), use header_values():
    // a client may split one list over several lines (RFC 9110 §5.3), and the first holds
    // only part of it.
    std::string_view header(std::string_view name) const noexcept {
        const header_field* f = find_field(name);
        return f ? f->value : std::string_view();
    }
    bool has_header(std::string_view name) const noexcept { return find_field(name) != nullptr; }
    // Every line of this field, in order: together one list, as if joined by ", ".
    //   for (std::string_view line : req.header_values("if-none-match")) ...
    field_values header_values(std::string_view name) const noexcept { return {begin(), end(), name}; }

    // Every field line, in order, as sent.
    const header_field* begin() const noexcept { return head_.fields; }
    const header_field* end() const noexcept { return head_.fields + head_.field_count; }
    std::size_t header_count() const noexcept { return head_.field_count; }

    // A route parameter, percent-decoded; empty when the route has no such parameter.
    std::string_view param(std::string_view name) const noexcept {
        for (std::size_t i = 0; i < params_.count; ++i)
            if (params_.items[i].name == name) return params_.items[i].value;
        return {};
    }
    const route_params& params() const noexcept { return params_; }
    // The route parameter as an integer (parse_integer); empty when absent, not a number, or
    // out of T's range. response.hpp's require_param answers 400 instead.
    template <class T>
    std::optional<T> param_as(std::string_view name) const noexcept {
        return parse_integer<T>(param(name));
    }

    // The first query value for key (keys compare after decoding), decoded; empty if absent.
    std::string_view query(std::string_view key) { return find_pair(queries(), key); }
    bool has_query(std::string_view key) { return has_pair(queries(), key); }
    // The first query value for key as an integer, as param_as.
    template <class T>
    std::optional<T> query_as(std::string_view key) {
        return parse_integer<T>(query(key));
    }
    // Every key=value pair of the query string, decoded, in order.
    const std::vector<query_pair>& queries() {
        if (!query_parsed_) {
            reserve_arena();
            decode_pairs(head_.query, arena_, query_pairs_);
        }
        query_parsed_ = true;
        return query_pairs_;
    }

    // The same for an application/x-www-form-urlencoded body (whatever the Content-Type says;
    // check it first if it matters). body() stays as sent.
    std::string_view form(std::string_view key) { return find_pair(form_pairs(), key); }
    const std::vector<query_pair>& form_pairs() {
        if (!form_parsed_) {
            form_arena_.clear();
            if (form_arena_.capacity() < head_.body.size()) form_arena_.reserve(head_.body.size());
            decode_pairs(head_.body, form_arena_, form_pairs_);
        }
        form_parsed_ = true;
        return form_pairs_;
    }

private:
    friend struct detail::request_access;

    const header_field* find_field(std::string_view name) const noexcept {
        for (const header_field& f : *this)
            if (detail::iequals(f.name, name)) return &f;
        return nullptr;
    }

    static std::string_view find_pair(const std::vector<query_pair>& pairs, std::string_view key) noexcept {
        for (const query_pair& p : pairs)
            if (p.key == key) return p.value;
        return {};
    }
    static bool has_pair(const std::vector<query_pair>& pairs, std::string_view key) noexcept {
        for (const query_pair& p : pairs)
            if (p.key == key) return true;
        return false;
    }

    // arena_ holds the decoded parameters and query of one request. Decoding never lengthens,
    // so room for the raw path and query holds them all; it is taken before the first write
    // (init() takes it once for the largest request line), and no later write moves the bytes
    // earlier views point at.
    void reserve_arena() {
        std::size_t need = head_.path.size() + head_.query.size();
        if (arena_.empty() && arena_.capacity() < need) arena_.reserve(need);
    }

    // Appends the decoded keys and values to arena, whose capacity must already hold them all,
    // so earlier views stay valid.
    static void decode_pairs(std::string_view raw, std::string& arena, std::vector<query_pair>& out) {
        out.clear();
        for_each_pair(raw, [&](std::string_view k, std::string_view v) {
            out.push_back({decode_into(arena, k), decode_into(arena, v)});
        });
    }
    static std::string_view decode_into(std::string& arena, std::string_view raw) {
        std::size_t at = arena.size();
        arena.resize(at + raw.size());
        std::size_t n = form_decode(raw, &arena[at]);
        arena.resize(at + n);
        return {arena.data() + at, n};
    }

    request_head head_;
    route_params params_;
    std::vector<header_field> fields_;  // storage for head_.fields, sized to max_headers
    std::string arena_;                 // decoded params and query: never more than the target
    std::vector<query_pair> query_pairs_;
    std::string form_arena_;
    std::vector<query_pair> form_pairs_;
    // Set by the request_id() middleware while the rest of its chain runs, empty otherwise
    // (server/builtin_middleware.hpp); never touched per request by the loop.
    std::string_view request_id_;
    bool query_parsed_ = false;
    bool form_parsed_ = false;
};

namespace detail {

// What is kept of a request whose head is gone by the time its answer can fail (a streamed
// body's source runs after the next request was parsed), for the error hook: its method and
// target, copied only where that hook is set.
struct request_origin {
    std::string method;
    std::string target;
};

// The loop's side of request: set-up at start, reset per request, parameter decoding.
struct request_access {
    static void init(request& r, std::size_t max_headers, std::size_t max_target) {
        r.fields_.resize(max_headers);
        r.arena_.reserve(max_target + 16);
        r.query_pairs_.reserve(16);
    }
    static request_head& head(request& r) noexcept { return r.head_; }
    static header_field* fields(request& r) noexcept { return r.fields_.data(); }
    static route_params& params(request& r) noexcept { return r.params_; }
    static std::string_view& request_id(request& r) noexcept { return r.request_id_; }
    static std::string_view request_id(const request& r) noexcept { return r.request_id_; }

    static request_origin origin_of(const request& r) { return {std::string(r.head_.method_name), std::string(r.head_.target)}; }
    // r (fresh) as the error hook sees a request whose head is gone: method, target, path and
    // query from o, which must outlive r; no fields, no body.
    static void describe(request& r, const request_origin& o) noexcept {
        std::string_view target = o.target;
        std::size_t q = target.find('?');
        r.head_.method_name = o.method;
        r.head_.target = target;
        r.head_.path = target.substr(0, q);
        r.head_.query = q == std::string_view::npos ? std::string_view() : target.substr(q + 1);
    }

    // Ready for a new message: drops decoded data from the last one.
    static void reset(request& r) noexcept {
        r.arena_.clear();
        r.query_parsed_ = false;
        r.form_parsed_ = false;
        r.params_.count = 0;
    }

    // Percent-decodes the matched parameters in place of their raw views. False (answer 400):
    // an invalid escape, or a value route_params.hpp says a handler must not see. The full
    // check runs only on values that had a '%'. Allocates only for a request that init() did
    // not size.
    static bool decode_params(request& r) {
        for (std::size_t i = 0; i < r.params_.count; ++i) {
            route_param& p = r.params_.items[i];
            if (p.value.find('%') == std::string_view::npos) {
                if (!raw_param_allowed(p.value, p.kind)) return false;
                continue;
            }
            r.reserve_arena();
            std::size_t at = r.arena_.size();
            r.arena_.resize(at + p.value.size());  // within the reserved capacity
            std::optional<std::size_t> n = percent_decode(p.value, &r.arena_[at]);
            if (!n) return false;
            r.arena_.resize(at + *n);
            p.value = {r.arena_.data() + at, *n};
            if (!param_value_allowed(p.value, p.kind)) return false;
        }
        return true;
    }
};

} // namespace detail
} // namespace skiff

#endif // SKIFF_HTTP_REQUEST_HPP
