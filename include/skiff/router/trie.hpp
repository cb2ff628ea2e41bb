// The route trie: one node per path segment, built at start-up, searched without allocating.
//
// Patterns are split on '/': "/users/:id/files/*rest" is the static segment "users", the
// parameter "id", the static "files" and the wildcard "rest" (the remainder of the path,
// possibly empty; only last). "/" is the one empty segment, so "/users" and "/users/" are
// different routes. Matching is on the raw path: "%2F" inside a segment does not split it.
//
// Precedence at each segment is static, then parameter, then wildcard, whatever the order of
// registration; when a branch dead-ends deeper down, the search backtracks and tries the next
// kind (iteratively, with a fixed-size stack: a route has at most max_route_depth segments).
// A branch only counts as a match if it has a handler for the method, so "GET /users/new"
// and "POST /users/:id" both work for their methods.
#ifndef SKIFF_ROUTER_TRIE_HPP
#define SKIFF_ROUTER_TRIE_HPP

#include "skiff/http/method.hpp"

#include <array>        // std::array for method slots and the search stack
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint32_t, std::uint16_t
#include <cstring>      // std::memcmp
#include <string>       // std::string for labels and error messages (start-up only)
#include <string_view>  // std::string_view
#include <utility>      // std::move
#include <vector>       // std::vector for nodes (start-up only)

namespace skiff {

inline constexpr std::size_t max_route_params = 16;
inline constexpr std::size_t max_route_depth = 32;

struct route_param {
    std::string_view name;
    std::string_view value;  // raw: the request decodes it
};

struct route_params {
    std::array<route_param, max_route_params> items;
    std::size_t count = 0;
};

namespace detail {

// Bit i is method_names[i]; `other_bit` means some extension method is registered.
using method_mask = std::uint16_t;
inline constexpr method_mask other_bit = 1u << known_method_count;

struct trie_child {
    std::string label;
    std::uint32_t node;
};

struct trie_node {
    std::vector<trie_child> statics;
    std::vector<std::uint32_t> hash_table;  // index into statics + 1, when statics is large
    std::uint32_t param = 0;                 // child node index, 0 when none (0 is the root)
    std::uint32_t wildcard = 0;
    std::string name;                        // parameter or wildcard name
    std::string origin;                      // first pattern that created this param/wildcard
    std::array<std::uint32_t, known_method_count> slots{};  // handler index + 1, 0 when none
    std::vector<std::pair<std::string, std::uint32_t>> others;  // extension methods
    std::array<std::string, known_method_count> slot_patterns;  // for conflict messages
    method_mask methods = 0;
};

// Hash of a segment for the static-children table: length and three bytes, enough to spread
// typical route names without reading the whole segment.
inline std::uint32_t segment_hash(const char* s, std::size_t n) noexcept {
    if (n == 0) return 0;
    auto b = [&](std::size_t i) { return static_cast<std::uint32_t>(static_cast<unsigned char>(s[i])); };
    return static_cast<std::uint32_t>(n) * 0x9e3779b1u ^ (b(0) * 31u + b(n / 2) * 131u + b(n - 1) * 1031u);
}

// Nodes with more static children than this get a hash table (measured: a linear scan of
// short labels beats hashing below about eight).
inline constexpr std::size_t linear_children = 8;

// What a search found. `handler` is the registered index + 1 (0: none for this method);
// `allowed` has a bit per method that some route matching the whole path accepts, so a 0
// handler with a non-zero `allowed` is a 405, and a 0 `allowed` is a 404.
struct trie_match {
    std::uint32_t handler = 0;
    method_mask allowed = 0;
};

class route_trie {
public:
    route_trie() : nodes_(1) {}

    // Adds (method, pattern) -> index. Returns an error message naming the cause (and the
    // earlier pattern it conflicts with), or an empty string on success.
    std::string insert(std::string_view method_name, std::string_view pattern, std::uint32_t index) {
        std::string err = check_pattern(pattern);
        if (!err.empty()) return err;
        std::uint32_t at = 0;
        std::string_view rest = pattern.substr(1);
        for (;;) {
            std::size_t slash = rest.find('/');
            std::string_view seg = rest.substr(0, slash);
            err = descend(at, seg, pattern);
            if (!err.empty()) return err;
            if (slash == std::string_view::npos) break;
            rest.remove_prefix(slash + 1);
        }
        return set_slot(nodes_[at], method_name, pattern, index);
    }

    // Finds the route for (verb, path); params receives the raw values of the matched route.
    // Allocation-free; safe to call from many threads once inserts are done.
    trie_match search(method verb, std::string_view method_name, std::string_view path,
                      route_params& params) const noexcept {
        trie_match m;
        visit(path, params, [&](const trie_node& n) {
            m.allowed |= n.methods;
            m.handler = slot(n, verb, method_name);
            return m.handler != 0;
        });
        return m;
    }

    // Calls fn(name) for each extension method of the routes matching path (for Allow).
    template <class Fn>
    void for_each_other_method(std::string_view path, Fn fn) const {
        route_params scratch;
        visit(path, scratch, [&](const trie_node& n) {
            for (const auto& o : n.others) fn(std::string_view(o.first));
            return false;
        });
    }

    method_mask all_methods() const noexcept {
        method_mask all = 0;
        for (const trie_node& n : nodes_) all |= n.methods;
        return all;
    }

private:

    // Depth-first over the nodes that match all of path, in precedence order, calling
    // on_match(node) for each node with handlers until it returns true. params holds the
    // values of the branch being tried, so on success it describes the match.
    template <class OnMatch>
    void visit(std::string_view path, route_params& params, OnMatch on_match) const noexcept {
        if (path.empty() || path.front() != '/') return;
        struct frame {
            std::uint32_t node;
            std::uint32_t pos;      // start of the next segment; past the end: path used up
            std::uint32_t seg_end;
            std::uint8_t stage;     // next kind of child to try: 0 static, 1 param, 2 wildcard
            std::uint8_t nparams;
        };
        std::array<frame, max_route_depth + 2> stack;
        std::size_t top = 0;
        const auto size = static_cast<std::uint32_t>(path.size());
        stack[0] = {0, 1, seg_end(path, 1), 0, 0};
        for (;;) {
            frame& f = stack[top];
            const trie_node& n = nodes_[f.node];
            if (f.pos > size) {  // every segment matched: this node ends the path
                params.count = f.nparams;
                if (n.methods != 0 && on_match(n)) return;
            } else if (f.stage < 3) {
                std::string_view seg = path.substr(f.pos, f.seg_end - f.pos);
                std::uint32_t child = 0;
                const std::uint8_t stage = f.stage++;
                switch (stage) {
                case 0: child = find_static(n, seg); break;
                case 1:
                    if (n.param == 0 || seg.empty()) break;
                    child = n.param;
                    params.items[f.nparams] = {nodes_[child].name, seg};
                    break;
                default:
                    if (n.wildcard == 0) break;
                    params.items[f.nparams] = {nodes_[n.wildcard].name, path.substr(f.pos)};
                    params.count = f.nparams + 1u;
                    if (nodes_[n.wildcard].methods != 0 && on_match(nodes_[n.wildcard])) return;
                    break;
                }
                if (child != 0) {
                    std::uint32_t next = f.seg_end + 1;
                    auto np = static_cast<std::uint8_t>(f.nparams + (stage == 1));
                    stack[++top] = {child, next, next > size ? size : seg_end(path, next), 0, np};
                }
                continue;
            }
            if (top == 0) return;
            --top;
        }
    }

    static std::uint32_t seg_end(std::string_view path, std::uint32_t pos) noexcept {
        std::size_t s = path.find('/', pos);
        return static_cast<std::uint32_t>(s == std::string_view::npos ? path.size() : s);
    }

    // HEAD falls back to GET (RFC 9110 §9.3.2: the same response, without content).
    static std::uint32_t slot(const trie_node& n, method verb, std::string_view name) noexcept {
        if (verb == method::other) {
            for (const auto& o : n.others)
                if (o.first == name) return o.second;
            return 0;
        }
        std::uint32_t s = n.slots[static_cast<std::size_t>(verb)];
        if (s == 0 && verb == method::head) s = n.slots[static_cast<std::size_t>(method::get)];
        return s;
    }

    std::uint32_t find_static(const trie_node& n, std::string_view seg) const noexcept {
        if (n.hash_table.empty()) {
            for (const auto& c : n.statics)
                if (c.label.size() == seg.size() && std::memcmp(c.label.data(), seg.data(), seg.size()) == 0)
                    return c.node;
            return 0;
        }
        std::size_t mask = n.hash_table.size() - 1;
        for (std::size_t i = segment_hash(seg.data(), seg.size()) & mask;; i = (i + 1) & mask) {
            std::uint32_t e = n.hash_table[i];
            if (e == 0) return 0;
            const auto& c = n.statics[e - 1];
            if (c.label.size() == seg.size() && std::memcmp(c.label.data(), seg.data(), seg.size()) == 0)
                return c.node;
        }
    }

    static std::string check_pattern(std::string_view pattern) {
        if (pattern.empty() || pattern.front() != '/') return "route pattern must start with '/': '" + std::string(pattern) + "'";
        std::size_t depth = 0, params = 0;
        std::vector<std::string_view> names;
        std::string_view rest = pattern.substr(1);
        for (;;) {
            std::size_t slash = rest.find('/');
            std::string_view seg = rest.substr(0, slash);
            if (++depth > max_route_depth) return "route pattern has more than 32 segments: '" + std::string(pattern) + "'";
            if (!seg.empty() && (seg.front() == ':' || seg.front() == '*')) {
                std::string_view name = seg.substr(1);
                if (name.empty()) return "route parameter without a name in '" + std::string(pattern) + "'";
                if (seg.front() == '*' && slash != std::string_view::npos)
                    return "wildcard must be the last segment in '" + std::string(pattern) + "'";
                for (auto n : names)
                    if (n == name) return "parameter '" + std::string(name) + "' appears twice in '" + std::string(pattern) + "'";
                names.push_back(name);
                if (++params > max_route_params) return "route pattern has more than 16 parameters: '" + std::string(pattern) + "'";
            }
            if (slash == std::string_view::npos) return {};
            rest.remove_prefix(slash + 1);
        }
    }

    // Moves `at` to the child for seg, creating it. Two parameters (or wildcards) with
    // different names at one position would make the name a handler sees depend on which
    // route matched first: rejected.
    std::string descend(std::uint32_t& at, std::string_view seg, std::string_view pattern) {
        bool param = !seg.empty() && seg.front() == ':';
        bool wild = !seg.empty() && seg.front() == '*';
        if (!param && !wild) {
            std::uint32_t c = find_static(nodes_[at], seg);
            if (c == 0) c = add_static(at, seg);
            at = c;
            return {};
        }
        std::uint32_t child = param ? nodes_[at].param : nodes_[at].wildcard;
        std::string_view name = seg.substr(1);
        if (child != 0) {
            if (nodes_[child].name != name)
                return "route '" + std::string(pattern) + "' conflicts with '" + nodes_[child].origin +
                       "': different parameter names at the same position";
            at = child;
            return {};
        }
        auto idx = static_cast<std::uint32_t>(nodes_.size());
        nodes_.emplace_back();
        nodes_.back().name = std::string(name);
        nodes_.back().origin = std::string(pattern);
        (param ? nodes_[at].param : nodes_[at].wildcard) = idx;
        at = idx;
        return {};
    }

    std::uint32_t add_static(std::uint32_t at, std::string_view seg) {
        auto idx = static_cast<std::uint32_t>(nodes_.size());
        nodes_.emplace_back();
        trie_node& n = nodes_[at];
        n.statics.push_back({std::string(seg), idx});
        if (n.statics.size() > linear_children) rebuild_hash(n);
        return idx;
    }

    static void rebuild_hash(trie_node& n) {
        std::size_t cap = 16;
        while (cap < n.statics.size() * 2) cap *= 2;
        n.hash_table.assign(cap, 0);
        for (std::size_t k = 0; k < n.statics.size(); ++k) {
            const auto& l = n.statics[k].label;
            std::size_t i = segment_hash(l.data(), l.size()) & (cap - 1);
            while (n.hash_table[i] != 0) i = (i + 1) & (cap - 1);
            n.hash_table[i] = static_cast<std::uint32_t>(k + 1);
        }
    }

    static std::string set_slot(trie_node& n, std::string_view name, std::string_view pattern, std::uint32_t index) {
        method verb = method_from(name);
        std::string* earlier = nullptr;
        if (verb == method::other) {
            for (auto& o : n.others)
                if (o.first == name) return duplicate(name, pattern);
            n.others.emplace_back(std::string(name), index + 1);
            n.methods |= other_bit;
            return {};
        }
        auto i = static_cast<std::size_t>(verb);
        earlier = &n.slot_patterns[i];
        if (n.slots[i] != 0) return "route " + std::string(name) + " '" + std::string(pattern) +
                                    "' conflicts with " + std::string(name) + " '" + *earlier + "'";
        n.slots[i] = index + 1;
        *earlier = std::string(pattern);
        n.methods |= static_cast<method_mask>(1u << i);
        return {};
    }

    static std::string duplicate(std::string_view name, std::string_view pattern) {
        return "route " + std::string(name) + " '" + std::string(pattern) + "' is registered twice";
    }

    std::vector<trie_node> nodes_;
};

} // namespace detail
} // namespace skiff

#endif // SKIFF_ROUTER_TRIE_HPP
