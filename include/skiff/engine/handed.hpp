// What a feature that takes a connection over implements (engine/handover.hpp has the door it
// is given and the whole protocol), and the fate every event handler returns. Kept apart from
// handover.hpp so that a connection (connection.hpp) can own a handed state by its base.
#ifndef SKIFF_ENGINE_HANDED_HPP
#define SKIFF_ENGINE_HANDED_HPP

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint8_t
#include <memory>   // std::unique_ptr

namespace skiff::detail {

struct connection;
struct pending_body;
class door;
class loop_context;

// Whether the connection an event handler was given is still there afterwards.
enum class fate : std::uint8_t { open, closed };

// A feature's state for one handed connection.
class handed {
public:
    virtual ~handed() = default;
    // The head was acted on (body says what it declared); data[0, len) followed it in the
    // same read. Returns the bytes that were the taker's (the rest are the next request's).
    virtual std::size_t begin(door& d, connection& c, pending_body& body, char* data, std::size_t len) = 0;
    virtual fate on_readable(door& d, connection& c) = 0;
    virtual fate on_deadline(door& d, connection& c) = 0;
    // Output written (or none): what to wait for next.
    virtual fate await(door& d, connection& c) = 0;
    // The connection closes while handed (the client went, the server stopped or shed it).
    virtual void abandon() noexcept = 0;

    // Output parked earlier was written, some or all (a taker that counts what the client has
    // not taken yet).
    virtual void on_sent(door& d, connection& c) = 0;
    // Under the shared policy, once the event that handed c over is done: a taker whose
    // connection waits on other threads takes it from the workers (true: the workers leave
    // it alone until it is given back through loop_context); else it stays theirs.
    virtual bool take_from_workers(loop_context& ctx, connection& c) = 0;
    // The connection is done with the taker: most delete themselves; one that others still
    // hold a count of (a WebSocket's, which its peers share) ends only its loop-side part.
    virtual void dispose() noexcept = 0;
    // Every taker implements every operation, even as nothing: a default here would leave
    // GCC one overrider in sight, which it calls speculatively, and so compiles that taker
    // into programs that never make it (as loop_hub.hpp explains for the hub).
};

// What owns a taker: the connection while it is handed, and the door until its event is over.
struct handed_disposer {
    void operator()(handed* t) const noexcept { t->dispose(); }
};
using handed_ptr = std::unique_ptr<handed, handed_disposer>;

} // namespace skiff::detail

#endif // SKIFF_ENGINE_HANDED_HPP
