// Stops a server on SIGINT and SIGTERM (Ctrl-C, `kill`, systemd, docker stop) for as long as
// a stop_on_signals object lives:
//
//   skiff::server app;
//   ... routes, listen ...
//   skiff::stop_on_signals stopper(app);  // after the server, so that it goes first
//   return app.run();                     // 0 after the drain
//
// Why a class and not a handler in each program: a handler that calls a server through a plain
// pointer outlives the server. A second Ctrl-C (or a supervisor that repeats SIGTERM) arriving
// while main destroys the server then calls into freed memory; the examples did, and crashed
// about one time in five under sharded when signalled in a burst. Here the destructor first
// takes the server away from the handler, then waits for a handler still running on another
// thread to leave, then restores the handlers that were there before.
//
// Not here: other signals, a second signal that forces an exit (a drain is bounded by
// stop_timeout already), Windows. One stop_on_signals at a time per process (the handler has
// one slot); a second one throws std::logic_error (without exceptions: abort()).
//
// Invariants: the handler touches only lock-free atomics and basic_server::request_stop(),
// which is one atomic store and a write(2) to each loop's wake descriptor, so it is
// async-signal-safe on any thread. `target_` is null whenever no server may be called.
#ifndef SKIFF_APP_STOP_SIGNALS_HPP
#define SKIFF_APP_STOP_SIGNALS_HPP

#include "skiff/config.hpp"

#include <atomic>
#include <csignal>
#include <cstdio>     // without exceptions: the message before abort()
#include <cstdlib>    // std::abort
#include <stdexcept>  // std::logic_error

#include <signal.h>  // sigaction: std::signal cannot say what it replaced without a race

namespace skiff {

namespace detail {

// As route_error does (router/route_error.hpp): an exception, or without them a message and
// abort(), since a second stopper would silently take the first one's signals.
#if SKIFF_HAS_EXCEPTIONS
[[noreturn]] inline void second_stopper() { throw std::logic_error("skiff::stop_on_signals: one at a time per process"); }
#else
[[noreturn]] inline void second_stopper() {
    std::fputs("skiff: stop_on_signals: one at a time per process\n", stderr);
    std::abort();
}
#endif // SKIFF_HAS_EXCEPTIONS

} // namespace detail

class stop_on_signals {
public:
    template <class Server>
    explicit stop_on_signals(Server& server) : stop_{&request_stop<Server>, &server} {
        const stop_target* none = nullptr;
        if (!slot().compare_exchange_strong(none, &stop_)) detail::second_stopper();
        struct sigaction on {};
        on.sa_handler = &on_signal;
        on.sa_flags = SA_RESTART;  // a blocking read elsewhere in the program is not cut short
        sigemptyset(&on.sa_mask);
        sigaction(SIGINT, &on, &before_int_);
        sigaction(SIGTERM, &on, &before_term_);
    }

    ~stop_on_signals() {
        slot().store(nullptr);
        // A handler that loaded the target just before may still be calling it on another
        // thread; the server lives until it has left. A handler on this thread cannot be
        // mid-call here: it would have finished before this thread went on.
        while (in_handler().load() != 0) {
        }
        sigaction(SIGINT, &before_int_, nullptr);
        sigaction(SIGTERM, &before_term_, nullptr);
    }

    stop_on_signals(const stop_on_signals&) = delete;
    stop_on_signals& operator=(const stop_on_signals&) = delete;

private:
    struct stop_target {
        void (*stop)(void*) noexcept;
        void* server;
    };

    template <class Server>
    static void request_stop(void* server) noexcept {
        static_cast<Server*>(server)->request_stop();
    }

    static void on_signal(int) {
        in_handler().fetch_add(1);
        if (const stop_target* t = slot().load()) t->stop(t->server);
        in_handler().fetch_sub(1);
    }

    // Function-local statics: one slot for the whole program, header-only, no ODR trouble.
    static std::atomic<const stop_target*>& slot() noexcept {
        static std::atomic<const stop_target*> target{nullptr};
        return target;
    }
    static std::atomic<int>& in_handler() noexcept {
        static std::atomic<int> count{0};
        return count;
    }

    stop_target stop_;
    struct sigaction before_int_ {};
    struct sigaction before_term_ {};
};

} // namespace skiff

#endif // SKIFF_APP_STOP_SIGNALS_HPP
