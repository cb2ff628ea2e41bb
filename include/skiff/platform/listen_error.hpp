// The errors listen(), listen_unix(), adopt(), listen_systemd() and start() report beyond
// errno: each a std::error_code whose message() names the cause. System call failures stay in
// std::system_category (errno); host name look-ups have their own category, since
// getaddrinfo's EAI_* codes are not errno values and mean nothing read as one.
//
// Not here: opening sockets (platform/listener.hpp). Nothing here throws or allocates, except
// message(), which builds the text.
#ifndef SKIFF_PLATFORM_LISTEN_ERROR_HPP
#define SKIFF_PLATFORM_LISTEN_ERROR_HPP

#include <netdb.h>       // gai_strerror, EAI_* codes
#include <string>        // std::string messages
#include <system_error>  // std::error_code, std::error_category
#include <type_traits>   // std::true_type for is_error_code_enum

namespace skiff {

enum class listen_errc {
    no_systemd_sockets = 1,  // LISTEN_FDS / LISTEN_PID unset, malformed, or for another process
    not_a_listener,          // adopt(): the descriptor is not a socket in the listening state
    not_a_stream,            // adopt(): a datagram or other socket; HTTP needs a stream
    path_not_a_socket,       // listen_unix(): something other than a socket is at the path
    socket_in_use,           // listen_unix(): a server answers on that socket already
    too_many_listeners,      // more than max_listeners on one server
    no_listener,             // run() or start() before any listener was added
    already_started,         // start() twice, or listen() while serving
};

} // namespace skiff

namespace std {
template <>
struct is_error_code_enum<skiff::listen_errc> : true_type {};
} // namespace std

namespace skiff {

inline const std::error_category& listen_category() noexcept {
    struct category : std::error_category {
        const char* name() const noexcept override { return "skiff.listen"; }
        std::string message(int e) const override {
            switch (static_cast<listen_errc>(e)) {
            case listen_errc::no_systemd_sockets:
                return "no sockets passed by systemd (LISTEN_FDS/LISTEN_PID unset or for another process)";
            case listen_errc::not_a_listener: return "descriptor is not a listening socket";
            case listen_errc::not_a_stream: return "descriptor is not a stream socket";
            case listen_errc::path_not_a_socket: return "path exists and is not a socket (left as it is)";
            case listen_errc::socket_in_use: return "another server is listening on this Unix socket";
            case listen_errc::too_many_listeners: return "too many listeners on one server";
            case listen_errc::no_listener: return "no listener: call listen() first";
            case listen_errc::already_started: return "the server is already running";
            }
            return "unknown listen error";
        }
    };
    static const category c;
    return c;
}

inline std::error_code make_error_code(listen_errc e) noexcept { return {static_cast<int>(e), listen_category()}; }

// getaddrinfo's failures (EAI_NONAME: "Name or service not known", ...), by their EAI_* value.
inline const std::error_category& resolve_category() noexcept {
    struct category : std::error_category {
        const char* name() const noexcept override { return "skiff.resolve"; }
        std::string message(int e) const override { return ::gai_strerror(e); }
    };
    static const category c;
    return c;
}

} // namespace skiff

#endif // SKIFF_PLATFORM_LISTEN_ERROR_HPP
