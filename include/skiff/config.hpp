// Platform detection and the few macros skiff uses. Macros live here and in version.hpp only.
//
// SKIFF_HAS_EPOLL / SKIFF_HAS_KQUEUE choose the poller backend, in this one place. Defining
// SKIFF_USE_KQUEUE forces the kqueue backend (the Linux test build does this against a shim).
// SKIFF_HAS_EXCEPTIONS is 0 under -fno-exceptions: the one try/catch (around user handlers)
// then compiles out. detail::debug_build says whether NDEBUG is unset.
#ifndef SKIFF_CONFIG_HPP
#define SKIFF_CONFIG_HPP

#if defined(SKIFF_USE_KQUEUE)
#define SKIFF_HAS_KQUEUE 1
#elif defined(__linux__)
#define SKIFF_HAS_EPOLL 1
#elif defined(__APPLE__) || defined(__FreeBSD__) || defined(__OpenBSD__) || defined(__NetBSD__) || \
    defined(__DragonFly__)
#define SKIFF_HAS_KQUEUE 1
#else
#error "skiff needs epoll (Linux) or kqueue (macOS, the BSDs)"
#endif // platform

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#define SKIFF_HAS_EXCEPTIONS 1
#else
#define SKIFF_HAS_EXCEPTIONS 0
#endif // exceptions

#if defined(__GNUC__) || defined(__clang__)
#define SKIFF_LIKELY(x) __builtin_expect(!!(x), 1)
#define SKIFF_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define SKIFF_LIKELY(x) (x)
#define SKIFF_UNLIKELY(x) (x)
#endif // branch hints

// For the few hot-path functions whose call GCC would otherwise keep, and the rare paths kept
// out of a hot caller (each use says what it saved, measured with callgrind): a call costs a
// prologue, an epilogue and the arguments; an inlined rare path costs the caller registers.
#if defined(__GNUC__) || defined(__clang__)
#define SKIFF_ALWAYS_INLINE [[gnu::always_inline]] inline
#define SKIFF_NOINLINE [[gnu::noinline]]
#else
#define SKIFF_ALWAYS_INLINE inline
#define SKIFF_NOINLINE
#endif // inlining

// Whether assertions are on (no NDEBUG): a deferred answer dropped without completing says so
// on stderr only then. A constant, so that code tests it with if constexpr, not #if.
namespace skiff::detail {
#if defined(NDEBUG)
inline constexpr bool debug_build = false;
#else
inline constexpr bool debug_build = true;
#endif // NDEBUG
} // namespace skiff::detail

#endif // SKIFF_CONFIG_HPP
