// The route trie: one node per path segment, built at start-up, searched without allocating.
//
// Patterns are split on '/': "/users/:id/files/*rest" is the static segment "users", the
// parameter "id", the static "files" and the wildcard "rest". A segment that starts with ':'
// is a parameter: it matches one non-empty segment. One that starts with '*' is a wildcard:
// it matches the rest of the path, '/' included, possibly empty, and must be last.
//
// The rules a user sees:
//  - Matching is on the raw path, byte for byte: "%2F" inside a segment does not split it,
//    and "/a%20b" matches the static "/a%20b", not "/a b". Parameter values are handed over
//    raw here; the request percent-decodes them before the handler runs.
//  - A trailing slash is part of the path: "/users" and "/users/" are different routes, as
//    are "/a/b" and "/a//b" (an empty segment is a segment). router::set_trailing_slash()
//    can register every route under both spellings instead (see router.hpp). A wildcard
//    matches what follows its slash: "/files/*p" matches "/files/" (p empty), not "/files".
//  - Precedence at each segment is static, then parameter, then wildcard, whatever the
//    order of registration. When a branch dead-ends deeper down, or its route has no handler
//    for the method, the search backtracks and tries the next kind, so "GET /users/new" and
//    "POST /users/:id" both work for their methods. HEAD is served by GET where no HEAD
//    handler is registered on the same node (RFC 9110 §9.3.2).
//  - Registration fails, naming both patterns, for the same (method, pattern) twice and for
//    two parameter (or wildcard) names at one position: otherwise the name a handler sees
//    would depend on which route matched.
//
// The search is an iterative depth-first walk with a fixed stack (max_route_depth entries),
// so a hostile path costs at most a few steps per route segment and never recurses. A path
// can also be looked up whole among the routes made only of static segments
// (find_static_route(), static_paths.hpp), which the router tries first.
//
// Not here: handlers, the 404/405/OPTIONS answers (router.hpp), the Allow value
// (allow_list.hpp), a pattern's segments and its own rules (pattern.hpp), error messages
// (route_error.hpp) and byte compares (detail/bytes.hpp).
#ifndef SKIFF_ROUTER_TRIE_HPP
#define SKIFF_ROUTER_TRIE_HPP

#include "skiff/detail/bytes.hpp"
#include "skiff/detail/optional_index.hpp"
#include "skiff/http/method.hpp"
#include "skiff/http/route_params.hpp"
#include "skiff/router/allow_list.hpp"
#include "skiff/router/node_link.hpp"
#include "skiff/router/pattern.hpp"
#include "skiff/router/route_error.hpp"
#include "skiff/router/static_paths.hpp"

#include <array>        // std::array for method slots and the search stack
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint32_t, std::uint16_t, std::uint8_t
#include <string>       // std::string for labels and error messages (start-up only)
#include <string_view>  // std::string_view
#include <utility>      // std::pair
#include <vector>       // std::vector for nodes (start-up only)

namespace skiff {
namespace detail {

// Bit i is method_names[i]; `other_bit` means some extension method is registered.
using method_mask = std::uint16_t;
inline constexpr method_mask other_bit = 1u << known_method_count;

// A registered route (its handler's index), or none.
using route_id = optional_index<struct route_tag>;
// An entry of a node's static-children hash table: an index into its statics, or empty.
using static_slot = optional_index<struct static_tag>;

struct trie_child {
    std::string label;
    node_link node;
};

// What the search reads, plus the index of the route that created a parameter node (to name
// it in a conflict); the patterns themselves live apart (route_trie::shown_), so a node
// spans fewer cache lines (the GitHub route set makes 173 nodes, all walked per iteration).
struct trie_node {
    std::vector<trie_child> statics;
    std::vector<static_slot> hash_table;  // when statics is large
    node_link param;
    node_link wildcard;
    std::string name;                     // of the parameter or wildcard this node is
    std::array<route_id, known_method_count> slots{};  // by method: the route, or none
    std::vector<std::pair<std::string, route_id>> others;  // extension methods, in order
    route_id origin;                      // a parameter node: the route that made it
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

// What a search found. `handler` is the route for this method, or none; `allowed` has a bit
// per method that some route matching the whole path accepts, so no handler with a non-zero
// `allowed` is a 405, and a 0 `allowed` is a 404.
struct trie_match {
    route_id handler;
    method_mask allowed = 0;
};

class route_trie {
public:
    route_trie() : nodes_(1) {}

    // Adds (method, pattern) -> index, or returns why not (the trie is then unchanged).
    std::string insert(std::string_view method_name, std::string_view pattern, std::uint32_t index) {
        std::string err = check(method_name, pattern);
        if (err.empty()) add(method_name, pattern, index, pattern);
        return err;
    }

    // Why insert(method, pattern) would fail, naming both patterns for a conflict; "" if it
    // would succeed. Changes nothing, so several inserts can be checked before any is made.
    std::string check(std::string_view method_name, std::string_view pattern) const {
        std::string err = pattern_error(pattern);
        if (!err.empty()) return err;
        std::uint32_t at = 0;
        segment_reader segments(pattern);
        std::string_view seg;
        bool last = false;
        while (segments.next(seg, last)) {
            segment_kind kind = kind_of(seg);
            node_link next = kind == segment_kind::literal ? find_static(nodes_[at], seg)
                             : kind == segment_kind::param ? nodes_[at].param
                                                           : nodes_[at].wildcard;
            if (!next) return {};  // past a missing node everything is new
            const trie_node& n = nodes_[next.index()];
            if (kind != segment_kind::literal && n.name != seg.substr(1))
                return message({"route '", pattern, "' conflicts with '", shown_[n.origin.index()],
                                "': different parameter names at the same position"});
            at = next.index();
        }
        const std::string* earlier = registered(at, method_name);
        if (earlier == nullptr) return {};
        return message({"route ", method_name, " '", pattern, "' conflicts with ", method_name, " '", *earlier, "'"});
    }

    // Adds a route that check() accepted. `shown` is the pattern to name in later conflicts
    // (the router passes the user's spelling for a route it derived from it).
    void add(std::string_view method_name, std::string_view pattern, std::uint32_t index, std::string_view shown) {
        if (shown_.size() <= index) shown_.resize(index + 1);
        shown_[index] = std::string(shown);
        std::uint32_t at = 0;
        segment_reader segments(pattern);
        std::string_view seg;
        bool last = false, all_static = true;
        while (segments.next(seg, last)) {
            all_static = all_static && kind_of(seg) == segment_kind::literal;
            at = child_or_new(at, seg, index);
        }
        set_slot(at, method_name, index);
        if (all_static) static_paths_.add(pattern, node_link(at));
    }

    // Finds the route for (verb, path); params receives the raw values of the matched route.
    // Allocation-free; safe to call from many threads once inserts are done.
    // With `others`, it also notes the extension methods of every route it passes (for Allow:
    // a search that finds no handler has passed every route matching the path). One search
    // for both keeps the walk compiled once.
    trie_match search(method verb, std::string_view method_name, std::string_view path, route_params& params,
                      allow_list* others = nullptr) const {
        trie_match m;
        visit(path, params, [&](const trie_node& n) {
            m.allowed |= n.methods;
            if (others != nullptr)
                for (const auto& o : n.others) others->add(o.first);
            m.handler = slot(n, verb, method_name);
            return static_cast<bool>(m.handler);
        });
        return m;
    }

    // The route of an all-static pattern that is exactly `path` and has a handler for the
    // method, or none; then search() would find the same route, with no parameters. Tried
    // before search() by the router rather than inside it: in there it kept GCC 12 from
    // inlining the walk, at 27-43 instructions a parameter lookup (small-1param 342 -> 385).
    route_id find_static_route(method verb, std::string_view method_name, std::string_view path) const noexcept {
        node_link at = static_paths_.find(path);
        return at ? slot(nodes_[at.index()], verb, method_name) : route_id::none();
    }

    // Every extension method of every route, in registration order (for OPTIONS *).
    const std::vector<std::string>& other_methods() const noexcept { return other_names_; }

    method_mask all_methods() const noexcept { return all_methods_; }

    // Whether any route at all accepts this method.
    bool routes_method(method verb, std::string_view name) const noexcept {
        if (verb != method::other) return ((all_methods_ >> static_cast<unsigned>(verb)) & 1u) != 0;
        for (const std::string& o : other_names_)
            if (o == name) return true;
        return false;
    }

private:
    // Depth-first over the nodes that match all of path, in precedence order, calling
    // on_match(node) for each node with handlers until it returns true. params holds the
    // values of the branch being tried, so on success it describes the match.
    //
    // It goes down through the first child that matches (static, else parameter), noting on a
    // small stack each node where another child is left to try; when the way down ends, it
    // takes the latest such alternative. Most lookups push nothing: a node rarely has both a
    // static child that matches and a parameter, or a wildcard.
    template <class OnMatch>
    void visit(std::string_view path, route_params& params, OnMatch on_match) const noexcept {
        if (path.empty() || path.front() != '/') return;
        struct frame {             // a node with a parameter or wildcard child still to try
            std::uint32_t node;
            std::uint32_t pos;     // the segment it would take: [pos, end)
            std::uint32_t end;
            std::uint8_t nparams;  // parameters matched above it
            bool param_tried;
        };
        std::array<frame, max_route_depth> stack;  // frames are ancestors: at most the depth
        std::size_t top = 0;
        const char* const at = path.data();  // [at + pos, at + end) below: no substr() checks
        const auto size = static_cast<std::uint32_t>(path.size());
        std::uint32_t node = 0, pos = 1;  // pos past the end: the path is used up
        std::uint8_t nparams = 0;
        for (;;) {
            const trie_node& n = nodes_[node];
            if (pos <= size) {
                std::uint32_t end = seg_end(path, pos);
                node_link child = find_static(n, {at + pos, end - pos});
                bool param_later = child && n.param;
                if (param_later || n.wildcard) stack[top++] = {node, pos, end, nparams, !param_later};
                if (!child && n.param && end > pos) {  // no static child: the parameter is next
                    params.items[nparams++] = {nodes_[n.param.index()].name, {at + pos, end - pos}};
                    child = n.param;
                }
                if (child) {
                    node = child.index();
                    pos = end + 1;
                    continue;
                }
            } else {
                params.count = nparams;
                if (n.methods != 0 && on_match(n)) return;
            }
            for (;;) {  // back up to the latest parameter or wildcard not yet tried
                if (top == 0) return;
                frame& f = stack[top - 1];
                const trie_node& up = nodes_[f.node];
                if (!f.param_tried && up.param && f.end > f.pos) {  // a parameter is never empty
                    f.param_tried = true;
                    params.items[f.nparams] = {nodes_[up.param.index()].name, {at + f.pos, f.end - f.pos}};
                    node = up.param.index();
                    pos = f.end + 1;
                    nparams = static_cast<std::uint8_t>(f.nparams + 1);
                    break;
                }
                --top;  // f stays intact until the next push
                if (!up.wildcard) continue;
                const trie_node& w = nodes_[up.wildcard.index()];
                params.items[f.nparams] = {w.name, {at + f.pos, size - f.pos}, param_kind::rest};
                params.count = f.nparams + 1u;
                if (w.methods != 0 && on_match(w)) return;
            }
        }
    }

    static std::uint32_t seg_end(std::string_view path, std::uint32_t pos) noexcept {
        const char* p = find_slash(path.data() + pos, path.data() + path.size());
        return static_cast<std::uint32_t>(p - path.data());
    }

    // HEAD falls back to GET (RFC 9110 §9.3.2: the same response, without content).
    static route_id slot(const trie_node& n, method verb, std::string_view name) noexcept {
        if (verb == method::other) {
            for (const auto& o : n.others)
                if (o.first == name) return o.second;
            return route_id::none();
        }
        route_id s = n.slots[static_cast<std::size_t>(verb)];
        if (!s && verb == method::head) s = n.slots[static_cast<std::size_t>(method::get)];
        return s;
    }

    static bool same(std::string_view label, std::string_view seg) noexcept {
        return label.size() == seg.size() && same_bytes(label.data(), seg.data(), seg.size());
    }

    node_link find_static(const trie_node& n, std::string_view seg) const noexcept {
        if (n.hash_table.empty()) {
            for (const auto& c : n.statics)
                if (same(c.label, seg)) return c.node;
            return node_link::none();
        }
        std::size_t mask = n.hash_table.size() - 1;
        for (std::size_t i = segment_hash(seg.data(), seg.size()) & mask;; i = (i + 1) & mask) {
            static_slot e = n.hash_table[i];
            if (!e) return node_link::none();
            const trie_child& c = n.statics[e.index()];
            if (same(c.label, seg)) return c.node;
        }
    }

    // The pattern registered for method at node `at`, or nullptr.
    const std::string* registered(std::uint32_t at, std::string_view method_name) const noexcept {
        const trie_node& n = nodes_[at];
        method verb = method_from(method_name);
        route_id h = verb != method::other ? n.slots[static_cast<std::size_t>(verb)] : route_id::none();
        for (const auto& o : n.others)
            if (verb == method::other && o.first == method_name) h = o.second;
        return h ? &shown_[h.index()] : nullptr;
    }

    // The child of `at` for seg, created if missing. check() has ruled out a parameter name
    // that differs from the one already there.
    std::uint32_t child_or_new(std::uint32_t at, std::string_view seg, std::uint32_t index) {
        segment_kind kind = kind_of(seg);
        if (kind == segment_kind::literal) {
            node_link c = find_static(nodes_[at], seg);
            return c ? c.index() : add_static(at, seg);
        }
        bool param = kind == segment_kind::param;
        node_link existing = param ? nodes_[at].param : nodes_[at].wildcard;
        if (existing) return existing.index();
        auto idx = new_node();  // may move nodes_: no reference into it is held across this
        nodes_[idx].name = std::string(seg.substr(1));
        nodes_[idx].origin = route_id::of(index);
        (param ? nodes_[at].param : nodes_[at].wildcard) = node_link(idx);
        return idx;
    }

    std::uint32_t new_node() {
        nodes_.emplace_back();
        return static_cast<std::uint32_t>(nodes_.size() - 1);
    }

    std::uint32_t add_static(std::uint32_t at, std::string_view seg) {
        auto idx = new_node();
        trie_node& n = nodes_[at];
        n.statics.push_back({std::string(seg), node_link(idx)});
        if (n.statics.size() > linear_children) rebuild_hash(n);
        return idx;
    }

    static void rebuild_hash(trie_node& n) {
        std::size_t cap = 16;
        while (cap < n.statics.size() * 2) cap *= 2;
        n.hash_table.assign(cap, static_slot::none());
        for (std::size_t k = 0; k < n.statics.size(); ++k) {
            const auto& l = n.statics[k].label;
            std::size_t i = segment_hash(l.data(), l.size()) & (cap - 1);
            while (n.hash_table[i]) i = (i + 1) & (cap - 1);
            n.hash_table[i] = static_slot::of(k);
        }
    }

    void set_slot(std::uint32_t at, std::string_view name, std::uint32_t index) {
        trie_node& n = nodes_[at];
        method verb = method_from(name);
        method_mask bit = other_bit;
        if (verb == method::other) {
            n.others.emplace_back(std::string(name), route_id::of(index));
            bool known = false;
            for (const std::string& o : other_names_) known = known || o == name;
            if (!known) other_names_.emplace_back(name);
        } else {
            auto i = static_cast<std::size_t>(verb);
            n.slots[i] = route_id::of(index);
            bit = static_cast<method_mask>(1u << i);
        }
        n.methods |= bit;
        all_methods_ |= bit;
    }

    std::vector<trie_node> nodes_;
    std::vector<std::string> shown_;        // by route index: the pattern to name in conflicts
    std::vector<std::string> other_names_;  // every extension method, in registration order
    static_paths static_paths_;             // all-static routes by their whole path
    method_mask all_methods_ = 0;
};

} // namespace detail
} // namespace skiff

#endif // SKIFF_ROUTER_TRIE_HPP
