// A handle that shares one object through a count the object keeps itself: one word where
// std::shared_ptr takes two (an object and its control block), for objects that are many,
// small and shared across threads (a WebSocket's state, held by its connection, its peers and
// the posts made to it).
//
// The object has `std::atomic<std::uint32_t> refs`, 1 when it is made (the maker's count,
// which adopt() takes over), and a free function `counted_free(T*)` that argument-dependent
// lookup finds; whoever drops the last count calls it, once, on whatever thread that is.
//
// Not here: weak handles, or more than 2^32 - 1 holders at once.
#ifndef SKIFF_DETAIL_COUNTED_REF_HPP
#define SKIFF_DETAIL_COUNTED_REF_HPP

#include <atomic>   // the object's count
#include <utility>  // std::exchange, std::swap

namespace skiff::detail {

template <class T>
class counted_ref {
public:
    counted_ref() = default;
    // Takes over the count p was made with (or one counted for this handle by hand).
    static counted_ref adopt(T* p) noexcept {
        counted_ref r;
        r.p_ = p;
        return r;
    }
    // A new count on p.
    static counted_ref share(T* p) noexcept {
        if (p != nullptr) p->refs.fetch_add(1, std::memory_order_relaxed);
        return adopt(p);
    }
    counted_ref(const counted_ref& o) noexcept : p_(o.p_) {
        if (p_ != nullptr) p_->refs.fetch_add(1, std::memory_order_relaxed);
    }
    counted_ref(counted_ref&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
    counted_ref& operator=(counted_ref o) noexcept {
        std::swap(p_, o.p_);
        return *this;
    }
    ~counted_ref() { reset(); }

    void reset() noexcept {
        if (T* p = std::exchange(p_, nullptr)) drop(p);
    }
    // Gives the count up to the caller (who drops it later with drop()).
    T* release() noexcept { return std::exchange(p_, nullptr); }
    // Drops one count of p; the last frees it. Acquire-release: the freeing thread sees every
    // write the other holders made before they dropped theirs.
    static void drop(T* p) noexcept {
        if (p->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) counted_free(p);
    }

    T* get() const noexcept { return p_; }
    T& operator*() const noexcept { return *p_; }
    T* operator->() const noexcept { return p_; }
    explicit operator bool() const noexcept { return p_ != nullptr; }

private:
    T* p_ = nullptr;
};

} // namespace skiff::detail

#endif // SKIFF_DETAIL_COUNTED_REF_HPP
