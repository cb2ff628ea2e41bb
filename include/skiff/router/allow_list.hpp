// The Allow field value (RFC 9110 §10.2.1) of a 405 or an automatic OPTIONS answer: method
// names joined by ", ", each listed once, in the order added.
//
// Not here: which methods to list or in what order (router.hpp decides). Invariants: any
// client can ask for a 405, so the value is built in fixed room without allocating; only
// extension methods past the room spill into a string, and value() is always the whole list.
#ifndef SKIFF_ROUTER_ALLOW_LIST_HPP
#define SKIFF_ROUTER_ALLOW_LIST_HPP

#include "skiff/http/fields.hpp"

#include <cstddef>      // std::size_t
#include <cstring>      // std::memcpy
#include <string>       // std::string for the spill
#include <string_view>  // std::string_view

namespace skiff::detail {

class allow_list {
public:
    void add(std::string_view m) {
        if (listed(m)) return;
        if (size_ != 0) append(", ");
        append(m);
    }
    std::string_view value() const noexcept {
        return spill_.empty() ? std::string_view(room_, size_) : std::string_view(spill_);
    }

private:
    bool listed(std::string_view m) const noexcept {
        return !for_each_list_item(value(), [&](std::string_view item) { return item != m; });
    }
    void append(std::string_view s) {
        if (spill_.empty() && size_ + s.size() <= sizeof room_) {
            std::memcpy(room_ + size_, s.data(), s.size());
        } else {
            if (spill_.empty()) spill_.assign(room_, size_);
            spill_ += s;
        }
        size_ += s.size();
    }

    char room_[192];  // all nine known methods take 58
    std::size_t size_ = 0;
    std::string spill_;
};

} // namespace skiff::detail

#endif // SKIFF_ROUTER_ALLOW_LIST_HPP
