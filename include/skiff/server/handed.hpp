// What a feature that takes a connection over implements (server/handover.hpp has the door it
// is given and the whole protocol), and the fate every event handler returns. Kept apart from
// handover.hpp so that a connection (connection.hpp) can own a handed state by its base.
#ifndef SKIFF_SERVER_HANDED_HPP
#define SKIFF_SERVER_HANDED_HPP

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint8_t

namespace skiff::detail {

struct connection;
struct pending_body;
class door;

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
};

} // namespace skiff::detail

#endif // SKIFF_SERVER_HANDED_HPP
