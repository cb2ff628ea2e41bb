// The handler behind basic_server::serve_dir: a directory's files answered with their type,
// validators (ETag, Last-Modified) and the conditional and range requests they allow, the
// body sent by response::file (sendfile on Linux).
//
// Not here: directory listings (a directory without its index file is 404), compression on
// the fly (only precompressed siblings, name.br and name.gz, are offered), multiple ranges
// (answered whole, 200), or caching policy (no Cache-Control is set; add it with header()
// in middleware).
//
// Confinement, the invariant: nothing outside root is ever opened. Requests the router or this
// handler refuse with 400: a ".." segment, raw or %2e%2e (the router, before the handler runs),
// a NUL (the parser or the router), a %2f inside a segment, a backslash raw or %5c. A path that
// resolves (realpath, symlinks followed) outside root is 404, as if it were not there, and
// so is anything that is not a regular file or a directory. The resolved path is opened
// with O_NOFOLLOW, so its last component cannot be swapped for a link between the check and
// the open; a directory component swapped in that window is not caught (openat2's
// RESOLVE_BENEATH would close it, where the kernel has it).
//
// Hidden files (a segment starting with '.': .git, .env) are 404 unless static_options::hidden
// says served; a first ".well-known" is served either way.
//
// A file that exists but cannot be opened is not 404, which a cache may keep (RFC 9110
// §15.1): out of descriptors or memory, 503 with Retry-After (the server is short of them
// for now; nginx answers 500); no permission, 403.
#ifndef SKIFF_FILES_SERVE_DIR_HPP
#define SKIFF_FILES_SERVE_DIR_HPP

#include "skiff/detail/date_cache.hpp"
#include "skiff/detail/unique_fd.hpp"
#include "skiff/files/conditional.hpp"
#include "skiff/files/file_send.hpp"
#include "skiff/files/mime.hpp"
#include "skiff/http/request.hpp"
#include "skiff/http/response.hpp"

#include <cerrno>       // why open failed
#include <climits>      // PATH_MAX
#include <cstdint>      // std::uint64_t
#include <cstdlib>      // realpath, free
#include <ctime>        // std::time_t
#include <fcntl.h>      // open, O_NOFOLLOW
#include <memory>       // std::unique_ptr for realpath's result
#include <string>       // std::string paths
#include <string_view>  // std::string_view
#include <sys/stat.h>   // fstat
#include <utility>      // std::move

namespace skiff {

// Whether a path with a segment starting with '.' (.git, .env, .htpasswd) is served. refused,
// the default (as actix-files and Express's serve-static): 404, as if absent, but for a first
// segment ".well-known" (RFC 8615: ACME challenges, security.txt). served: as nginx and Go's
// FileServer serve them.
enum class hidden_files : std::uint8_t { refused, served };

struct static_options {
    std::string index = "index.html";  // what a directory URL answers with
    bool precompressed = true;         // offer name.br / name.gz when the client accepts them
    hidden_files hidden = hidden_files::refused;
};

namespace detail {

// A file opened under root, and what fstat said of it.
struct opened_file {
    unique_fd fd;
    struct stat st{};
};

// realpath(3), or "" when the path does not resolve.
inline std::string resolved_path(const std::string& path) {
    std::unique_ptr<char, void (*)(void*)> real(::realpath(path.c_str(), nullptr), std::free);
    return real ? std::string(real.get()) : std::string();
}

// Whether rel (the decoded path under the prefix) names a hidden file or directory: a segment
// that starts with '.', but for a first ".well-known" (hidden_files).
inline bool names_hidden(std::string_view rel) noexcept {
    for (bool first = true;; first = false) {
        std::size_t slash = rel.find('/');
        std::string_view segment = rel.substr(0, slash);
        if (!segment.empty() && segment.front() == '.' && !(first && segment == ".well-known")) return true;
        if (slash == std::string_view::npos) return false;
        rel.remove_prefix(slash + 1);
    }
}

inline bool lies_under(std::string_view path, std::string_view root) noexcept {
    if (path.substr(0, root.size()) != root) return false;
    return path.size() == root.size() || path[root.size()] == '/' || root == "/";
}

// What opening a path under root came to.
enum class open_result : std::uint8_t {
    opened,     // a regular file or a directory, in out
    absent,     // not there, outside root, or neither a file nor a directory: 404
    forbidden,  // there, but the server may not read it: 403
    exhausted,  // there, but no descriptor or memory is left to open it now: 503
};

// Opens path when it resolves under root to a regular file or a directory.
inline open_result open_under(const std::string& root, const std::string& path, opened_file& out) {
    std::string real = resolved_path(path);
    if (real.empty() || !lies_under(real, root)) return open_result::absent;
    unique_fd fd(::open(real.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));  // a FIFO must not block
    if (!fd) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOMEM) return open_result::exhausted;
        return errno == EACCES || errno == EPERM ? open_result::forbidden : open_result::absent;
    }
    if (::fstat(fd.get(), &out.st) != 0) return open_result::absent;
    if (!S_ISREG(out.st.st_mode) && !S_ISDIR(out.st.st_mode)) return open_result::absent;
    out.fd = std::move(fd);
    return open_result::opened;
}

// Raw bytes of the path that decoding would hide: %2f (a '/' inside a segment), a backslash
// raw or as %5c (a separator on other systems, and a classic traversal spelling).
inline bool raw_path_refused(std::string_view raw) noexcept {
    if (raw.find('\\') != std::string_view::npos) return true;
    for (std::size_t at = raw.find('%'); at != std::string_view::npos; at = raw.find('%', at + 1)) {
        std::string_view code = raw.substr(at + 1, 2);
        if (iequals_lower(code, "2f") || iequals_lower(code, "5c") || code == "00") return true;
    }
    return false;
}

#if defined(__APPLE__)
inline const timespec& mtime_of(const struct stat& st) noexcept { return st.st_mtimespec; }
#else
inline const timespec& mtime_of(const struct stat& st) noexcept { return st.st_mtim; }
#endif // __APPLE__

inline std::uint64_t mtime_ns(const struct stat& st) noexcept {
    const timespec& t = mtime_of(st);
    return static_cast<std::uint64_t>(t.tv_sec) * 1000000000u + static_cast<std::uint64_t>(t.tv_nsec);
}

// A strong tag, "size-mtime" in hex (nanoseconds), and for a precompressed sibling its
// coding ("-gzip"): it changes with any rewrite the file system dates, and a sibling's never
// equals the plain file's, even where `gzip -k` gave it the same time and size (RFC 9110
// §8.8.3: a strong tag names one representation).
inline std::string make_etag(const struct stat& st, std::string_view coding) {
    auto hex = [](std::uint64_t v) {
        char digits[16];
        char* p = digits + sizeof digits;
        do {
            *--p = "0123456789abcdef"[v & 15];
            v >>= 4;
        } while (v != 0);
        return std::string(p, static_cast<std::size_t>(digits + sizeof digits - p));
    };
    std::string tag = '"' + hex(static_cast<std::uint64_t>(st.st_size)) + '-' + hex(mtime_ns(st));
    if (!coding.empty()) tag.append("-").append(coding);
    return tag + '"';
}

inline std::string http_date(std::time_t t) {
    date_cache line;
    line.update(t);
    return std::string(line.line().substr(6, 29));  // "Date: " ... "\r\n" taken off
}

// The raw path with each run of '/' made one, as nginx's merge_slashes does: "//docs" is
// "/docs". A Location built from it starts with exactly one '/' before a segment, so no client
// can read it as a network-path reference ("//docs/" is the host "docs", RFC 3986 §4.2) and
// leave the site; '\' (which browsers read as '/') never gets here (raw_path_refused).
inline std::string merged_slashes(std::string_view raw) {
    std::string out = "/";
    for (char c : raw)
        if (c != '/' || out.back() != '/') out += c;
    return out;
}

// As nginx does: the directory's own URL ends in '/', so its page's relative links work. The
// target is the request's path with its empty segments merged (above), then the query.
inline void redirect_to_directory(request& req, response& res) {
    std::string location = merged_slashes(req.path());
    if (location.back() != '/') location += '/';
    if (!req.query_string().empty()) location += '?' + std::string(req.query_string());
    res.status(301).header("Location", location).text("Moved Permanently\n");
}

class static_dir {
public:
    static_dir(std::string prefix, const std::string& root, static_options opt)
        : prefix_(std::move(prefix)), root_(resolved_path(root)), opt_(std::move(opt)) {}

    void operator()(request& req, response& res) const {
        std::string_view raw = req.path();
        if (raw.size() < prefix_.size()) return at_bare_prefix(req, res);
        if (raw.substr(0, prefix_.size()) != prefix_) return not_found(res);
        if (raw_path_refused(raw.substr(prefix_.size()))) return refuse(res);
        std::string_view rel = req.param("path");
        if (rel.find('\\') != std::string_view::npos) return refuse(res);
        if (opt_.hidden == hidden_files::refused && names_hidden(rel)) return not_found(res);
        if (root_.empty()) return not_found(res);
        std::string path = root_ + '/' + std::string(rel);
        opened_file f;
        if (open_result r = open_under(root_, path, f); r != open_result::opened) return not_opened(res, r);
        if (S_ISDIR(f.st.st_mode)) {
            if (raw.empty() || raw.back() != '/') return redirect_to_directory(req, res);
            path = path.back() == '/' ? path + opt_.index : path + '/' + opt_.index;
            if (open_result r = open_under(root_, path, f); r != open_result::opened) return not_opened(res, r);
            if (!S_ISREG(f.st.st_mode)) return not_found(res);
        }
        answer(req, res, path, std::move(f));
    }

private:
    static void not_found(response& res) { res.status(404).text("Not Found\n"); }
    static void not_opened(response& res, open_result r) {
        switch (r) {
        case open_result::forbidden: res.status(403).text("Forbidden\n"); break;
        case open_result::exhausted: res.status(503).header("Retry-After", "1").text("Service Unavailable\n"); break;
        default: not_found(res); break;
        }
    }
    static void refuse(response& res) { res.status(400).text("Bad Request\n"); }

    // The prefix without its slash ("/static", its own route): the root directory's URL
    // without the '/' its pages' links need, so the same 301 as any directory gets.
    void at_bare_prefix(request& req, response& res) const {
        if (root_.empty()) return not_found(res);
        redirect_to_directory(req, res);
    }

    void answer(request& req, response& res, const std::string& path, opened_file f) const {
        const mime_type& type = mime_for(path);
        if (type.compressible) res.header("Vary", "Accept-Encoding");
        std::string_view coding;
        if (type.compressible && opt_.precompressed) coding = pick_precompressed(req, res, path, f);
        std::string etag = make_etag(f.st, coding);
        std::time_t modified = last_modified(res, f.st.st_mtime);
        res.header("ETag", etag).header("Last-Modified", http_date(modified)).header("Accept-Ranges", "bytes");
        if (precondition_fails(req, etag, modified)) return res.status(412).end();
        if (not_modified(req, etag, modified)) return res.status(304).end();
        std::uint64_t size = static_cast<std::uint64_t>(f.st.st_size);
        byte_range range = wanted_range(req, etag, modified, size);
        if (range.kind == range_kind::empty_whole) range.kind = range_kind::none;
        if (range.kind == range_kind::unsatisfiable) {
            return res.status(416).header("Content-Range", "bytes */" + std::to_string(size)).end();
        }
        if (range.kind == range_kind::none) return res.file(f.fd.release(), 0, size, type.type);
        res.status(206).header("Content-Range", "bytes " + std::to_string(range.first) + '-' +
                                                    std::to_string(range.last) + '/' + std::to_string(size));
        res.file(f.fd.release(), range.first, range.last - range.first + 1, type.type);
    }

    // RFC 9110 §8.8.2.1: a modification time ahead of the server's clock is sent as now, and
    // the answer's Date is that same second (the loop's Date may be a second behind).
    static std::time_t last_modified(response& res, std::time_t mtime) {
        std::time_t now = std::time(nullptr);
        if (mtime <= now) return mtime;
        res.header("Date", http_date(now));
        return now;
    }

    // Brotli first (smaller), then gzip: the sibling replaces f, and says its coding, which
    // is returned ("" for none).
    std::string_view pick_precompressed(request& req, response& res, const std::string& path, opened_file& f) const {
        if (!req.has_header("Accept-Encoding")) return {};
        field_values accept = req.header_values("Accept-Encoding");  // a list: every line of it
        struct coding {
            std::string_view name, suffix;
        };
        for (coding c : {coding{"br", ".br"}, coding{"gzip", ".gz"}}) {
            opened_file sibling;
            if (!accepts_coding(accept, c.name)) continue;
            if (open_under(root_, path + std::string(c.suffix), sibling) != open_result::opened) continue;
            if (!S_ISREG(sibling.st.st_mode)) continue;
            f = std::move(sibling);
            res.header("Content-Encoding", c.name);
            return c.name;
        }
        return {};
    }

    // RFC 9110 §13.2.2 steps 1 and 2, before the 304 and the range: If-Match, when present,
    // decides alone; else If-Unmodified-Since (a date that does not parse is no condition).
    static bool precondition_fails(request& req, const std::string& etag, std::time_t mtime) {
        if (req.has_header("If-Match")) return !match_hits(req.header_values("If-Match"), etag);
        std::optional<std::time_t> since = parse_http_date(req.header("If-Unmodified-Since"));
        return since && mtime > *since;
    }

    // RFC 9110 §13.2.2: If-None-Match, when present, decides alone; else If-Modified-Since.
    static bool not_modified(request& req, const std::string& etag, std::time_t mtime) {
        if (req.has_header("If-None-Match")) return none_match_hits(req.header_values("If-None-Match"), etag);
        std::optional<std::time_t> since = parse_http_date(req.header("If-Modified-Since"));
        return since && mtime <= *since;
    }

    // The Range to honour: none when If-Range names another version (a strong tag compared
    // strongly, or a date equal to Last-Modified), so the client gets the whole new file. Range
    // and If-Range are one value each: on two lines they combine (RFC 9110 §5.3) into no valid
    // range set ("bytes=0-1, bytes=5-9") or two validators, so none either (a 200 is allowed).
    static byte_range wanted_range(request& req, const std::string& etag, std::time_t mtime, std::uint64_t size) {
        if (!req.has_header("Range") || lines_of(req, "Range") > 1 || lines_of(req, "If-Range") > 1) return {};
        if (req.has_header("If-Range")) {
            std::string_view cond = trim_ows(req.header("If-Range"));
            bool tag = !cond.empty() && (cond[0] == '"' || cond.substr(0, 2) == "W/");
            std::optional<std::time_t> date = tag ? std::nullopt : parse_http_date(cond);
            bool same = tag ? cond == etag : date && *date == mtime;
            if (!same) return {};
        }
        return parse_range(req.header("Range"), size);
    }

    static std::size_t lines_of(const request& req, std::string_view name) noexcept {
        field_values lines = req.header_values(name);
        std::size_t n = 0;
        for (auto at = lines.begin(); at != lines.end(); ++at) ++n;
        return n;
    }

    std::string prefix_;  // the raw path's start, ending in '/'
    std::string root_;    // resolved at registration; "" when it does not exist (all 404)
    static_options opt_;
};

} // namespace detail
} // namespace skiff

#endif // SKIFF_FILES_SERVE_DIR_HPP
