// Threading policies, chosen at compile time: basic_server<Policy>. What a program does not
// choose is not compiled into it: `single` instantiates no std::thread, atomic or mutex.
//
//   single   one thread, one loop (the caller's thread runs it).
//   sharded  N loops, one per thread, each with its own SO_REUSEPORT listener (or, with
//            options::reuse_port = false, one acceptor handing connections round-robin); a
//            connection stays on its loop for life. Highest throughput; a busy loop cannot
//            borrow an idle core.
//   shared   N threads wait on one set of connections (one-shot readiness), so any idle
//            thread takes the next ready connection. Lower tail latency when request costs
//            are uneven; one extra system call per request to re-arm the connection.
//
// To derive your own, inherit from one of these; the traits below see through the derivation.
#ifndef SKIFF_POLICY_POLICY_HPP
#define SKIFF_POLICY_POLICY_HPP

#include <type_traits>  // std::is_base_of_v

namespace skiff {

struct single {};
struct sharded {};
struct shared {};

namespace detail {

template <class P>
inline constexpr bool is_single = std::is_base_of_v<single, P>;
template <class P>
inline constexpr bool is_sharded = std::is_base_of_v<sharded, P>;
template <class P>
inline constexpr bool is_shared = std::is_base_of_v<shared, P>;

template <class P>
inline constexpr bool is_policy = (is_single<P> + is_sharded<P> + is_shared<P>) == 1;

} // namespace detail
} // namespace skiff

#endif // SKIFF_POLICY_POLICY_HPP
