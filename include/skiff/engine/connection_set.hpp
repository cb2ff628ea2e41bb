// What a connection set offers the event loop and its session: the one interface behind which the threading
// policies differ. The loop (event_loop.hpp) is written once against it; local_set (single),
// sharded_set (sharded) and shared_set (shared) implement it, and is_connection_set checks
// each at compile time, so a member that one set lacks or spells differently fails the build
// here rather than in whichever policy a program happens to instantiate.
//
//   conn, wait_batch                 the connection type; events one wait may take
//   open(now, tick)                  the poller and the timers
//   add_listener(fd, transport)      one more listening socket (none: a loop fed by another)
//   poller()                         to wait on and to wake
//   anchor(), hands_over_deferred    the loop's services (engine/loop_hub.hpp), and whether a
//                                    connection waiting on a deferred answer is handed to the
//                                    hub's processor when its event is done (shared) or stays
//                                    with its loop (single, sharded)
//   the memory budget                options::max_buffered (memory_budget.hpp): each loop's
//                                    own (local_set, sharded_set) or one for every worker
//                                    behind a lock (shared_set, shared_budget.hpp); the
//                                    session asks either the same, never which it is:
//     limit_budget(bytes), budget_limit()  at most bytes (the runner splits it between
//                                    sharded loops); the limit, for push output's share
//     budget_full()                  no new request is read now (asked on every fresh read)
//     try_grow(c, n, own)            c, holding own, takes n more for its input; false:
//                                    refused, and the set notes what c asked for
//     take_memory(n)                 parked output: taken whatever the budget holds
//     give_back(n)                   n came back: connections waiting read again
//     wait_for_memory(c)             c, refused, is not read until memory comes back
//     waits_for_memory(c)            c waits, unwatched, in this loop's line (a shared
//                                    set's parked connection has no owner, so never)
//     forget_waiting(c)              c closes: it leaves the line
//   is_listener(data), listener(data), port(),
//   accept_round_done(listener), pause_accepting(), resume_accepting()
//                                    the listeners (listener_list.hpp): the one an event is
//                                    for, re-armed after its round (one-shot), all paused
//                                    while descriptors run out
//   hand_off(fd)                     true when another loop takes an accepted connection
//   add, remove, watch, arm          a connection's slot, interest and deadline
//   take_ownership(c), event_over(c, ctx)
//                                    around each event (the shared set's hand-over: a handed
//                                    connection's taker may keep it from the workers);
//   event_done(c)                    re-armed after a handed connection's turn (shared)
//   take_expired(c)                  a deadline another thread found passed (shared only)
//   expire(now, on_expired)          deadlines passed by now
//   close_an_idle(close)             at the connection limit: an idle keep-alive connection
//                                    is closed to make room (true), now through close(c)
//                                    (local) or by its owner at once (shared); false: none
//   has_deadlines(), tick_ms(), size()
//   stop_requested(woken, admit)     after each wait: stop now? (may admit handed-over fds)
//   once_at_stop(fn)                 fn() once for the whole server (the on_stop hooks); a
//                                    loop that comes second waits until it has returned
//   begin_stop(deadline, settle)     stop listening; settle(c) each connection it owns
//   drained(now)                     the loop may return
//   close_remaining(close)           after the loop: close what outlived the stop deadline
#ifndef SKIFF_ENGINE_CONNECTION_SET_HPP
#define SKIFF_ENGINE_CONNECTION_SET_HPP

#include "skiff/detail/unique_fd.hpp"
#include "skiff/engine/connection.hpp"
#include "skiff/engine/listener_list.hpp"
#include "skiff/platform/socket.hpp"

#include <cstddef>      // std::size_t
#include <cstdint>      // std::int64_t, std::uint8_t
#include <type_traits>  // std::void_t, std::true_type, std::is_base_of_v
#include <utility>      // std::declval

namespace skiff::detail {

// close_an_idle looks at this many slots per call (connection_pool::for_next_open): a few
// microseconds, paid only by a connection accepted at the limit.
inline constexpr std::size_t reclaim_scan = 256;

// The memory budget's part of the interface, every member the session calls.
template <class S, class = void>
struct has_budget_members : std::false_type {};

template <class S>
struct has_budget_members<
    S, std::void_t<decltype(std::declval<S&>().limit_budget(std::size_t{})),
                   decltype(std::size_t{std::declval<S&>().budget_limit()}),
                   decltype(bool{std::declval<const S&>().budget_full()}),
                   decltype(bool{std::declval<S&>().try_grow(std::declval<typename S::conn&>(), std::size_t{},
                                                             std::size_t{})}),
                   decltype(std::declval<S&>().take_memory(std::size_t{})),
                   decltype(std::declval<S&>().give_back(std::size_t{})),
                   decltype(std::declval<S&>().wait_for_memory(std::declval<typename S::conn&>())),
                   decltype(bool{std::declval<const S&>().waits_for_memory(std::declval<const typename S::conn&>())}),
                   decltype(std::declval<S&>().forget_waiting(std::declval<typename S::conn&>()))>>
    : std::true_type {};

template <class S, class = void>
struct has_set_members : std::false_type {};

template <class S>
struct has_set_members<
    S, std::void_t<typename S::conn, decltype(int{S::wait_batch}),
                   decltype(std::declval<S&>().open(std::int64_t{}, std::int64_t{})),
                   decltype(std::declval<S&>().add_listener(std::declval<unique_fd>(), transport::tcp)),
                   decltype(std::declval<S&>().poller().wake()), decltype(std::declval<S&>().anchor()),
                   decltype(bool{S::hands_over_deferred}),
                   decltype(bool{std::declval<const S&>().is_listener(nullptr)}),
                   decltype(static_cast<listener_slot&>(std::declval<S&>().listener(nullptr))),
                   decltype(std::declval<const S&>().port()),
                   decltype(std::declval<S&>().accept_round_done(std::declval<listener_slot&>())),
                   decltype(std::declval<S&>().pause_accepting()),
                   decltype(std::declval<S&>().resume_accepting()), decltype(bool{std::declval<S&>().hand_off(0)}),
                   decltype(bool{std::declval<S&>().add(0, deadline_kind::idle, std::int64_t{})}),
                   decltype(std::declval<S&>().remove(std::declval<typename S::conn&>())),
                   decltype(std::declval<S&>().watch(std::declval<typename S::conn&>(), std::uint8_t{})),
                   decltype(std::declval<S&>().arm(std::declval<typename S::conn&>(), std::int64_t{})),
                   decltype(S::take_ownership(std::declval<typename S::conn&>())),
                   decltype(std::declval<S&>().event_done(std::declval<typename S::conn&>())),
                   decltype(std::declval<S&>().event_over(std::declval<typename S::conn&>(), std::declval<loop_context&>())),
                   decltype(bool{S::take_expired(std::declval<typename S::conn&>())}),
                   decltype(std::declval<S&>().expire(std::int64_t{}, std::declval<void (*)(typename S::conn&)>())),
                   decltype(bool{std::declval<S&>().close_an_idle(std::declval<void (*)(typename S::conn&)>())}),
                   decltype(bool{std::declval<const S&>().has_deadlines()}), decltype(std::declval<const S&>().tick_ms()),
                   decltype(std::declval<const S&>().size()),
                   decltype(bool{std::declval<S&>().stop_requested(true, std::declval<void (*)(int)>())}),
                   decltype(std::declval<S&>().once_at_stop(std::declval<void (*)()>())),
                   decltype(std::declval<S&>().begin_stop(std::int64_t{}, std::declval<void (*)(typename S::conn&)>())),
                   decltype(bool{std::declval<const S&>().drained(std::int64_t{})}),
                   decltype(std::declval<S&>().close_remaining(std::declval<void (*)(typename S::conn&)>()))>>
    : std::true_type {};

// Its connection type must be a connection, so that the session and the writer serve it as one.
template <class S>
inline constexpr bool is_connection_set =
    has_set_members<S>::value && has_budget_members<S>::value && std::is_base_of_v<connection, typename S::conn>;

} // namespace skiff::detail

#endif // SKIFF_ENGINE_CONNECTION_SET_HPP
