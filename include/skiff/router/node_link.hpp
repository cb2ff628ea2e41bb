// A link to a trie node by index, or none: what the trie's children and the whole-path table
// (static_paths.hpp) hold.
//
// Not here: the nodes (trie.hpp). Invariant: the root is node 0 and nobody's child, nor the
// node of any route (a route's pattern has at least one segment), so 0 stands for none and a
// link is the bare index: the walk follows it with no offset to undo.
#ifndef SKIFF_ROUTER_NODE_LINK_HPP
#define SKIFF_ROUTER_NODE_LINK_HPP

#include <cstdint>  // std::uint32_t

namespace skiff::detail {

class node_link {
public:
    constexpr node_link() noexcept = default;
    constexpr explicit node_link(std::uint32_t index) noexcept : index_(index) {}
    static constexpr node_link none() noexcept { return {}; }
    constexpr explicit operator bool() const noexcept { return index_ != 0; }
    constexpr std::uint32_t index() const noexcept { return index_; }

private:
    std::uint32_t index_ = 0;
};

} // namespace skiff::detail

#endif // SKIFF_ROUTER_NODE_LINK_HPP
