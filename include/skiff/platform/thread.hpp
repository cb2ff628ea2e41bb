// Thread placement for the multi-threaded policies: CPU count and pinning. Only sharded and
// shared servers call these.
#ifndef SKIFF_PLATFORM_THREAD_HPP
#define SKIFF_PLATFORM_THREAD_HPP

#include <thread>  // std::thread::hardware_concurrency

#if defined(__linux__)
#include <pthread.h>  // pthread_setaffinity_np
#include <sched.h>    // cpu_set_t
#endif // __linux__

namespace skiff::detail {

inline unsigned cpu_count() noexcept {
    unsigned n = std::thread::hardware_concurrency();
    return n == 0 ? 1 : n;
}

#if defined(__linux__)
inline bool pin_current_thread(int cpu) noexcept {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return ::pthread_setaffinity_np(::pthread_self(), sizeof set, &set) == 0;
}
#else
inline bool pin_current_thread(int) noexcept { return false; }  // macOS has no affinity API
#endif // __linux__

} // namespace skiff::detail

#endif // SKIFF_PLATFORM_THREAD_HPP
