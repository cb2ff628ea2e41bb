// How long each deadline a connection can hold lasts (connection.hpp, deadline_kind), from the
// options: the session arms them, the connection set keeps them, the loop expires them.
//
// Not here: paused, a handed connection's poll, which lasts one tick of the set's timer.
#ifndef SKIFF_ENGINE_DEADLINES_HPP
#define SKIFF_ENGINE_DEADLINES_HPP

#include "skiff/engine/connection.hpp"
#include "skiff/engine/options.hpp"

#include <cstdint>  // std::int64_t

namespace skiff::detail {

// The deadline of a connection that awaits an answer made elsewhere: the hub answers at
// deferred_timeout; this closes it a write_timeout later if even that answer could not be
// written.
inline std::int64_t awaited_guard_ms(const options& opt) noexcept {
    std::int64_t d = opt.deferred_timeout.count();
    return (d == 0 ? std::int64_t{365} * 24 * 3600 * 1000 : d) + opt.write_timeout.count();
}

// Inline, so that a constant kind picks its duration at compile time.
inline std::int64_t duration_of(const options& opt, deadline_kind kind) noexcept {
    switch (kind) {
    case deadline_kind::idle: return opt.idle_timeout.count();
    case deadline_kind::header: return opt.header_timeout.count();
    case deadline_kind::body: return opt.body_timeout.count();
    case deadline_kind::write: return opt.write_timeout.count();
    case deadline_kind::linger: return opt.linger_timeout.count();
    case deadline_kind::awaited: return awaited_guard_ms(opt);
    case deadline_kind::paused: break;  // the set's tick: the session asks the set
    }
    return opt.idle_timeout.count();
}

} // namespace skiff::detail

#endif // SKIFF_ENGINE_DEADLINES_HPP
