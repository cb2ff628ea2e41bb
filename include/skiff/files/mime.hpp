// The Content-Type of a file, from its name's extension (compared without case), and whether
// that type is worth compressing (which decides Vary: Accept-Encoding for static files).
//
// Not here: sniffing content, or a user's own table (a handler can set Content-Type itself).
// An unknown or missing extension is application/octet-stream, so a browser downloads rather
// than renders what it cannot identify.
#ifndef SKIFF_FILES_MIME_HPP
#define SKIFF_FILES_MIME_HPP

#include "skiff/detail/ascii.hpp"

#include <cstddef>      // std::size_t
#include <string_view>  // std::string_view

namespace skiff {

struct mime_type {
    std::string_view extension;  // lowercase, without the dot
    std::string_view type;
    bool compressible;
};

inline constexpr mime_type mime_types[] = {
    {"html", "text/html; charset=utf-8", true},
    {"htm", "text/html; charset=utf-8", true},
    {"css", "text/css; charset=utf-8", true},
    {"js", "text/javascript; charset=utf-8", true},
    {"mjs", "text/javascript; charset=utf-8", true},
    {"json", "application/json", true},
    {"svg", "image/svg+xml", true},
    {"txt", "text/plain; charset=utf-8", true},
    {"wasm", "application/wasm", true},
    {"png", "image/png", false},
    {"jpg", "image/jpeg", false},
    {"jpeg", "image/jpeg", false},
    {"gif", "image/gif", false},
    {"webp", "image/webp", false},
    {"ico", "image/x-icon", false},
    {"mp4", "video/mp4", false},
    {"webm", "video/webm", false},
    {"woff2", "font/woff2", false},
    {"pdf", "application/pdf", false},
};

inline constexpr mime_type unknown_mime_type = {"", "application/octet-stream", false};

// The entry for the extension of `name` (the text after its last '.' in the last segment).
inline const mime_type& mime_for(std::string_view name) noexcept {
    std::size_t slash = name.rfind('/');
    if (slash != std::string_view::npos) name.remove_prefix(slash + 1);
    std::size_t dot = name.rfind('.');
    if (dot == std::string_view::npos) return unknown_mime_type;
    std::string_view ext = name.substr(dot + 1);
    for (const mime_type& m : mime_types)
        if (m.extension.size() == ext.size() && detail::iequals_lower(ext, m.extension)) return m;
    return unknown_mime_type;
}

} // namespace skiff

#endif // SKIFF_FILES_MIME_HPP
