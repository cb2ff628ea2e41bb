// The port a program is told to listen on by an environment variable (PORT, as the examples
// and most hosting platforms use):
//
//   auto port = skiff::port_from_env("PORT", 8080);
//   if (!port) return 1;  // set, but not a port: say so rather than listen somewhere else
//   if (auto ec = app.listen(*port)) ...
//
// Unset or empty: the fallback. Set: a decimal number from 0 to 65535 (0: any free port), with
// nothing around it; anything else is no port (std::nullopt), where std::atoi would have made
// PORT=70000 port 4464 and PORT=http port 0.
//
// Not here: host names, service names, ranges.
#ifndef SKIFF_APP_PORT_FROM_ENV_HPP
#define SKIFF_APP_PORT_FROM_ENV_HPP

#include <cstdint>   // std::uint16_t, std::uint32_t
#include <cstdlib>   // std::getenv
#include <optional>  // std::optional

namespace skiff {

inline std::optional<std::uint16_t> port_from_env(const char* name, std::uint16_t fallback) {
    const char* text = std::getenv(name);
    if (text == nullptr || *text == '\0') return fallback;
    std::uint32_t port = 0;
    for (const char* p = text; *p != '\0'; ++p) {
        if (*p < '0' || *p > '9' || p - text >= 5) return std::nullopt;  // 5 digits at most: no overflow
        port = port * 10 + static_cast<std::uint32_t>(*p - '0');
    }
    if (port > 65535) return std::nullopt;
    return static_cast<std::uint16_t>(port);
}

} // namespace skiff

#endif // SKIFF_APP_PORT_FROM_ENV_HPP
