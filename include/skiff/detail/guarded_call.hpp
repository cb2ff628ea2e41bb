// The one exception boundary: user code (a handler, a stream's source) that throws is caught
// here, and the server answers 500 or ends the stream and goes on. Under -fno-exceptions the
// guard compiles to a plain call. Library code itself never throws on the hot path.
#ifndef SKIFF_DETAIL_GUARDED_CALL_HPP
#define SKIFF_DETAIL_GUARDED_CALL_HPP

#include "skiff/config.hpp"

#if SKIFF_HAS_EXCEPTIONS
#include <exception>  // std::exception, for what() in an error hook
#endif

namespace skiff::detail {

#if SKIFF_HAS_EXCEPTIONS
// Inlined by force: with a second caller of the session's own instance (its response hook's
// path) GCC called it instead, 16 instructions a request (callgrind, contract app).
template <class Fn, class OnError>
SKIFF_ALWAYS_INLINE void call_guarded(Fn&& fn, OnError&& on_error) {
    try {
        fn();
    } catch (...) {
        on_error();
    }
}

// Inside call_guarded's on_error: what the exception in flight says, for an error hook.
inline const char* describe_current_exception() noexcept {
    try {
        throw;
    } catch (const std::exception& e) {
        return e.what();
    } catch (...) {
        return "unknown exception";
    }
}
#else
template <class Fn, class OnError>
void call_guarded(Fn&& fn, OnError&&) {
    fn();
}

inline const char* describe_current_exception() noexcept { return "unknown exception"; }
#endif // SKIFF_HAS_EXCEPTIONS

} // namespace skiff::detail

#endif // SKIFF_DETAIL_GUARDED_CALL_HPP
