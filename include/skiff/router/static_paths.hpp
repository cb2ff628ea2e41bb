// The whole-path table: every route made only of static segments, by its full path, naming
// the trie node its pattern ends at. One hash and one compare find such a route, where the
// walk takes a scan, a compare and a step per segment plus its set-up (measured, callgrind:
// contract app keep-alive 1,819 -> 1,714 instructions a request; router_bench per lookup
// GitHub 459 -> 446, static 361 -> 218; parameter paths pay the bit test, or the probe when
// some static path has their length: 1 param 342 -> 362, 2 params 485 -> 549).
//
// Not here: precedence, methods, 405 or Allow. The trie stays the authority: the node an
// entry names is the one the walk would reach first (static children come first at every
// segment), so the search may answer from it only when that node has a handler for the
// method; otherwise the walk runs as before.
//
// Invariants: built at start-up, read-only while serving; the table is at most half full, so
// a probe ends at an empty slot; a path of a length no entry has costs one bit test, which
// keeps parameter paths of other lengths from paying a hash (the cost an earlier version of
// this table was dropped for, commit 69eff19).
#ifndef SKIFF_ROUTER_STATIC_PATHS_HPP
#define SKIFF_ROUTER_STATIC_PATHS_HPP

#include "skiff/config.hpp"
#include "skiff/detail/bytes.hpp"
#include "skiff/detail/optional_index.hpp"
#include "skiff/router/node_link.hpp"

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint32_t, std::uint64_t
#include <string>       // std::string: the paths' text (start-up only)
#include <string_view>  // std::string_view
#include <vector>       // std::vector for the table (start-up only)

namespace skiff::detail {

class static_paths {
    using path_slot = optional_index<struct path_tag>;  // an entry's index, or a free slot

public:
    // Notes that the all-static pattern `path` ends at `node`; a path already noted keeps
    // its node (a pattern always ends at the same node).
    void add(std::string_view path, node_link node) {
        if (find(path)) return;
        entries_.push_back({node, static_cast<std::uint32_t>(path.size()), static_cast<std::uint32_t>(text_.size())});
        text_.append(path);
        lengths_ |= length_bit(path.size());
        if (entries_.size() * 2 > table_.size()) rehash(table_.empty() ? 16 : table_.size() * 2);
        else place(entries_.size() - 1);
    }

    // The node whose pattern is exactly `path`, or none.
    node_link find(std::string_view path) const noexcept {
        if ((lengths_ & length_bit(path.size())) == 0) return node_link::none();
        return probe(path);
    }

private:
    // Out of line, so that the walk behind the bit test keeps its registers: inlined, it cost
    // the parameter lookups it does not serve 27 instructions each (small-1param 342 -> 369).
    SKIFF_NOINLINE node_link probe(std::string_view path) const noexcept {
        std::size_t mask = table_.size() - 1;  // not empty: some entry has this length
        for (std::size_t i = hash(path.data(), path.size()) & mask;; i = (i + 1) & mask) {
            path_slot k = table_[i];
            if (!k) return node_link::none();
            const entry& e = entries_[k.index()];
            if (e.length == path.size() && same_bytes(text_.data() + e.offset, path.data(), path.size()))
                return e.node;
        }
    }

    struct entry {
        node_link node;
        std::uint32_t length;
        std::uint32_t offset;  // of its text in text_: offsets stay valid as text_ grows
    };

    static std::uint64_t length_bit(std::size_t n) noexcept { return std::uint64_t{1} << (n < 63 ? n : 63); }

    // Length and three bytes: paths start with '/', and those of one length mostly differ
    // at the end or in the middle. A collision costs a compare, never a wrong answer.
    static std::size_t hash(const char* s, std::size_t n) noexcept {
        auto b = [&](std::size_t i) { return static_cast<std::size_t>(static_cast<unsigned char>(s[i])); };
        return (n * 0x9e3779b1u) ^ (b(n - 1) * 31u + b(n / 2) * 131u + b(n - 1 - n / 4) * 1031u);
    }

    void place(std::size_t k) {
        const entry& e = entries_[k];
        std::size_t mask = table_.size() - 1;
        std::size_t i = hash(text_.data() + e.offset, e.length) & mask;
        while (table_[i]) i = (i + 1) & mask;
        table_[i] = path_slot::of(k);
    }

    void rehash(std::size_t size) {
        table_.assign(size, path_slot::none());
        for (std::size_t k = 0; k < entries_.size(); ++k) place(k);
    }

    std::vector<entry> entries_;
    std::vector<path_slot> table_;  // a power of two in size
    std::string text_;                  // every entry's path, end to end
    std::uint64_t lengths_ = 0;         // bit n: some entry is n bytes long (bit 63: 63 or more)
};

} // namespace skiff::detail

#endif // SKIFF_ROUTER_STATIC_PATHS_HPP
