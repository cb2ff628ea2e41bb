// A move-only std::function: what the loop's services (loop_ref::post, after, every, watch)
// and the blocking pool keep, so that a callable holding a move-only handle (a deferred, a
// push_stream, a std::unique_ptr) can be given to them as it is, without a shared_ptr around it.
//
//   detail::unique_function<void()> f = [d = std::move(later)]() mutable { d.text("done"); };
//
// Invariants. A callable that fits small_size bytes, at most max_align_t's alignment, and
// moves without throwing lives inside the object (no allocation: a lambda that owns a
// deferred, 64 bytes with libstdc++, fits); any other is on the heap. A moved-from or default one is
// empty (operator bool false) and must not be called. Not thread-safe: one owner at a time.
#ifndef SKIFF_DETAIL_UNIQUE_FUNCTION_HPP
#define SKIFF_DETAIL_UNIQUE_FUNCTION_HPP

#include <cstddef>      // std::size_t, std::max_align_t
#include <new>          // placement new
#include <type_traits>  // std::decay_t, std::is_invocable_r_v
#include <utility>      // std::forward, std::move

namespace skiff::detail {

template <class Signature>
class unique_function;

template <class R, class... Args>
class unique_function<R(Args...)> {
public:
    unique_function() noexcept = default;
    unique_function(std::nullptr_t) noexcept {}

    template <class F, class Fn = std::decay_t<F>,
              class = std::enable_if_t<!std::is_same_v<Fn, unique_function> && std::is_invocable_r_v<R, Fn&, Args...>>>
    unique_function(F&& f) {  // NOLINT: converting, as std::function's is
        if constexpr (is_small<Fn>) ::new (static_cast<void*>(buf_)) Fn(std::forward<F>(f));
        else *reinterpret_cast<Fn**>(buf_) = new Fn(std::forward<F>(f));
        ops_ = &table_for<Fn>;
    }

    unique_function(unique_function&& o) noexcept { take(o); }
    unique_function& operator=(unique_function&& o) noexcept {
        if (this != &o) {
            reset();
            take(o);
        }
        return *this;
    }
    unique_function& operator=(std::nullptr_t) noexcept {
        reset();
        return *this;
    }
    unique_function(const unique_function&) = delete;
    unique_function& operator=(const unique_function&) = delete;
    ~unique_function() { reset(); }

    explicit operator bool() const noexcept { return ops_ != nullptr; }

    R operator()(Args... args) { return ops_->call(buf_, std::forward<Args>(args)...); }

private:
    // Eight pointers: a lambda that owns a deferred (two shared_ptrs, a status and a vector
    // of fields) and nothing else, the common case, is stored without allocating.
    static constexpr std::size_t small_size = 8 * sizeof(void*);

    template <class Fn>
    static constexpr bool is_small = sizeof(Fn) <= small_size && alignof(Fn) <= alignof(std::max_align_t) &&
                                     std::is_nothrow_move_constructible_v<Fn>;

    struct ops {
        R (*call)(void* self, Args&&... args);
        void (*move_to)(void* from, void* to) noexcept;  // moves, then destroys `from`
        void (*destroy)(void* self) noexcept;
    };

    template <class Fn>
    static Fn& target(void* self) noexcept {
        if constexpr (is_small<Fn>) return *static_cast<Fn*>(self);
        else return **static_cast<Fn**>(self);
    }

    template <class Fn>
    static R call_of(void* self, Args&&... args) {
        return static_cast<R>(target<Fn>(self)(std::forward<Args>(args)...));
    }
    template <class Fn>
    static void move_of(void* from, void* to) noexcept {
        if constexpr (is_small<Fn>) {
            ::new (to) Fn(std::move(target<Fn>(from)));
            target<Fn>(from).~Fn();
        } else {
            *static_cast<Fn**>(to) = *static_cast<Fn**>(from);
        }
    }
    template <class Fn>
    static void destroy_of(void* self) noexcept {
        if constexpr (is_small<Fn>) target<Fn>(self).~Fn();
        else delete *static_cast<Fn**>(self);
    }
    template <class Fn>
    static constexpr ops table_for{&call_of<Fn>, &move_of<Fn>, &destroy_of<Fn>};

    void take(unique_function& o) noexcept {
        if (o.ops_ == nullptr) return;
        o.ops_->move_to(o.buf_, buf_);
        ops_ = o.ops_;
        o.ops_ = nullptr;
    }
    void reset() noexcept {
        if (ops_ == nullptr) return;
        ops_->destroy(buf_);
        ops_ = nullptr;
    }

    alignas(std::max_align_t) unsigned char buf_[small_size];
    const ops* ops_ = nullptr;
};

} // namespace skiff::detail

#endif // SKIFF_DETAIL_UNIQUE_FUNCTION_HPP
