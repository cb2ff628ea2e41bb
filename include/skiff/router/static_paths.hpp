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
// Each slot holds its path's key (length, first and last eight bytes), so a path of up to 16
// bytes is found by word compares in the slot itself, with no text compare (measured,
// callgrind: the contract app's "/" 64 -> 43 instructions a probe; keep-alive 1,179 -> 1,158 a request).
//
// Invariants: built at start-up, read-only while serving; the table is at most a quarter
// full, so a probe ends at an empty slot, nearly always the next; a path of a length no entry has costs one bit test, which
// keeps parameter paths of other lengths from paying a hash (the cost an earlier version of
// this table was dropped for, commit 69eff19).
#ifndef SKIFF_ROUTER_STATIC_PATHS_HPP
#define SKIFF_ROUTER_STATIC_PATHS_HPP

#include "skiff/config.hpp"
#include "skiff/detail/bytes.hpp"
#include "skiff/router/node_link.hpp"

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint32_t, std::uint64_t
#include <string>       // std::string: the paths' text (start-up only)
#include <string_view>  // std::string_view
#include <vector>       // std::vector for the table (start-up only)

namespace skiff::detail {

class static_paths {
public:
    // Notes that the all-static pattern `path` ends at `node`; a path already noted keeps
    // its node (a pattern always ends at the same node).
    void add(std::string_view path, node_link node) {
        if (find(path)) return;
        entries_.push_back({node, static_cast<std::uint32_t>(path.size()), static_cast<std::uint32_t>(text_.size())});
        text_.append(path);
        lengths_ |= length_bit(path.size());
        if (entries_.size() * 4 > table_.size()) rehash(table_.empty() ? 16 : table_.size() * 2);
        else place(entries_.back());
    }

    // The node whose pattern is exactly `path`, or none.
    node_link find(std::string_view path) const noexcept {
        if ((lengths_ & length_bit(path.size())) == 0) return node_link::none();
        return probe(path);
    }

private:
    // A path's first and last eight bytes (overlapping inward, zero-filled when shorter): with
    // its length, the whole path up to 16 bytes, so most lookups compare two words and no text.
    struct path_key {
        std::uint64_t head;
        std::uint64_t tail;
    };

    // One slot of the table: the key of its path, so that a probe compares words in the slot
    // it is at, with no second load to reach an entry. An empty slot's node is none.
    struct slot {
        std::uint64_t head = 0;
        std::uint64_t tail = 0;
        std::uint32_t length = 0;
        node_link node;
        std::uint32_t offset = 0;  // of its text in text_, for the middle of a path over 16 bytes
    };

    struct entry {
        node_link node;
        std::uint32_t length;
        std::uint32_t offset;  // of its text in text_: offsets stay valid as text_ grows
    };

    // Out of line, so that the walk behind the bit test keeps its registers: inlined, it cost
    // the parameter lookups it does not serve 27 instructions each (small-1param 342 -> 369).
    SKIFF_NOINLINE node_link probe(std::string_view path) const noexcept {
        const std::size_t n = path.size();
        const path_key k = key_of(path.data(), n);
        for (std::size_t i = hash(k, n) >> shift_;; i = (i + 1) & mask_) {
            const slot& s = table_[i];
            if (s.head == k.head && s.tail == k.tail && s.length == n &&
                (n <= 16 || same_bytes(text_.data() + s.offset + 8, path.data() + 8, n - 16)))
                return s.node;  // an empty slot matches only a path no entry has: none
            if (!s.node) return node_link::none();
        }
    }

    static std::uint64_t length_bit(std::size_t n) noexcept { return std::uint64_t{1} << (n < 63 ? n : 63); }

    // Reads only inside [s, s + n): two words from both ends from 8 bytes on, two halves of
    // one word from 4, and the first, middle and last byte below that (all of 1 to 3 bytes).
    static path_key key_of(const char* s, std::size_t n) noexcept {
        if (n >= 8) return {load8(s), load8(s + n - 8)};
        if (n >= 4) return {load4(s) | std::uint64_t{load4(s + n - 4)} << 32, 0};
        if (n == 0) return {0, 0};
        auto b = [&](std::size_t i) { return std::uint64_t{static_cast<unsigned char>(s[i])}; };
        return {b(0) | b(n / 2) << 8 | b(n - 1) << 16, 0};
    }

    // Multiplicative: the table index is the product's top bits. A collision costs a probe,
    // never a wrong answer.
    static std::uint64_t hash(path_key k, std::size_t n) noexcept {
        return ((k.head * 0xff51afd7ed558ccdull) ^ (k.tail + n)) * 0x9e3779b97f4a7c15ull;
    }

    void place(const entry& e) {
        const char* text = text_.data() + e.offset;
        path_key k = key_of(text, e.length);
        std::size_t i = hash(k, e.length) >> shift_;
        while (table_[i].node) i = (i + 1) & mask_;
        table_[i] = {k.head, k.tail, e.length, e.node, e.offset};
    }

    void rehash(std::size_t size) {
        table_.assign(size, slot{});
        mask_ = size - 1;
        shift_ = 64;
        while (size > 1) size >>= 1, --shift_;
        for (const entry& e : entries_) place(e);
    }

    std::vector<entry> entries_;
    std::vector<slot> table_;     // a power of two in size, at most a quarter full
    std::size_t mask_ = 0;        // table_.size() - 1
    unsigned shift_ = 63;         // 64 - log2(table_.size()): the hash's top bits index it
    std::string text_;            // every entry's path, end to end
    std::uint64_t lengths_ = 0;   // bit n: some entry is n bytes long (bit 63: 63 or more)
};

} // namespace skiff::detail

#endif // SKIFF_ROUTER_STATIC_PATHS_HPP
