// Several registrations of one hook, run as one std::function in the order they were added:
// the server's observers (on_response, on_error, on_rejection, on_connection) and what runs
// when a deferred answer settles (concurrency_limit's slot).
//
// Not here: calling them (the caller decides what a throw means, detail/guarded_call.hpp).
#ifndef SKIFF_DETAIL_CALL_CHAIN_HPP
#define SKIFF_DETAIL_CALL_CHAIN_HPP

#include <functional>  // std::function
#include <utility>     // std::move

namespace skiff::detail {

// `to` calls what it called before, then fn; an empty fn changes nothing.
template <class... Args>
void append_call(std::function<void(Args...)>& to, std::function<void(Args...)> fn) {
    if (!fn) return;
    if (!to) {
        to = std::move(fn);
        return;
    }
    to = [first = std::move(to), then = std::move(fn)](Args... args) {
        first(args...);
        then(args...);
    };
}

} // namespace skiff::detail

#endif // SKIFF_DETAIL_CALL_CHAIN_HPP
