// An index into a table, or none, in 32 bits: the typed form of "index + 1, 0 means none".
//
// Not here: the tables themselves; each user names its own kind with a tag, so a route index
// cannot be passed where a node index is expected. Invariants: a default-constructed (or
// zero-filled) value is none, so arrays of them start empty at no cost; index() may be read
// only when the value is not none. Stored as index + 1, so testing for none is a test for
// zero and index() is one subtraction, which an array access folds into its address: the
// same instructions as the bare integers this replaces.
#ifndef SKIFF_DETAIL_OPTIONAL_INDEX_HPP
#define SKIFF_DETAIL_OPTIONAL_INDEX_HPP

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint32_t

namespace skiff::detail {

template <class Tag>
class optional_index {
public:
    constexpr optional_index() noexcept = default;
    static constexpr optional_index none() noexcept { return {}; }
    static constexpr optional_index of(std::size_t index) noexcept {
        optional_index i;
        i.stored_ = static_cast<std::uint32_t>(index + 1);
        return i;
    }

    constexpr explicit operator bool() const noexcept { return stored_ != 0; }
    constexpr std::uint32_t index() const noexcept { return stored_ - 1; }

    friend constexpr bool operator==(optional_index a, optional_index b) noexcept { return a.stored_ == b.stored_; }
    friend constexpr bool operator!=(optional_index a, optional_index b) noexcept { return a.stored_ != b.stored_; }

private:
    std::uint32_t stored_ = 0;
};

} // namespace skiff::detail

#endif // SKIFF_DETAIL_OPTIONAL_INDEX_HPP
