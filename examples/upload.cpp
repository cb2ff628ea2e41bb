// Uploads streamed to disk as they arrive (app.upload): memory stays at a piece or so,
// whatever the size of the file.
//
//   PUT  /files/:name  the raw body to DIR/name; 201 with the byte count as text ("1048576")
//   POST /form         multipart/form-data: each file part to DIR/<its filename>; 200 with
//                      [{"name":"field","filename":"a.txt","size":N},...] (application/json),
//                      plain fields listed with "filename":"" and their size
//
// A name (or filename) that is empty, longer than 255 bytes, starts with ".", or holds "/",
// "\", ".." or a control character (NUL, CR, LF) is refused 400, so nothing is written outside
// DIR and no upload can name another's temporary file. Each upload writes a file of its own (DIR/.upload-XXXXXX, made with mkstemp: O_EXCL),
// flushed to disk and renamed over the final name only once the whole body is in: a reader
// of DIR/name sees the old file or the whole new one, never a part. Two uploads to one name
// never share a file; the one that finishes last is the one kept (PUT replaces). A client
// that goes mid-upload removes its own temporary file and nothing else, so a stored file
// stays stored. A form's files are renamed into place after its last part, one after another
// (only a failing disk can stop that partway: 500, and those renamed stay); a form with more
// than 16 files, or with one filename twice, is refused 400 with nothing written.
//
// Limits: MAX_BYTES (default 64 MiB) per upload, a PUT body or a whole form: 413 when the
// declared length says more, or as soon as a chunked body passes it. DISK_RESERVE (default
// 64 MiB): an upload starts only if the file system would keep that much free after every
// upload in progress wrote all it may (its declared length, else MAX_BYTES); else 507.
// Env: PORT (default 8080), DIR (default ./uploads, created if missing). Ctrl-C stops.
#include <skiff/skiff.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>  // mkstemp, strtoull
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <sys/statvfs.h>  // statvfs: the free space
#include <unistd.h>       // write, fsync, close, unlink
#include <vector>

namespace {

constexpr std::size_t max_name_bytes = 255;  // NAME_MAX on Linux file systems
constexpr std::size_t max_form_files = 16;    // each file is flushed to disk (fsync) on the loop

bool safe_name(std::string_view name) {
    auto control = [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; };
    return !name.empty() && name.size() <= max_name_bytes && name.front() != '.' &&
           name.find_first_of("/\\") == std::string_view::npos && name.find("..") == std::string_view::npos &&
           std::none_of(name.begin(), name.end(), control);  // NUL, CR, LF and the rest
}

// One upload's own file: DIR/.upload-XXXXXX, created by mkstemp (O_EXCL, so no other upload
// has it), renamed to its final name by publish() once whole; removed otherwise. Only this
// object ever removes this name, so an upload that fails takes nothing else with it.
class staged_file {
public:
    explicit staged_file(const std::string& dir) : temp_(dir + "/.upload-XXXXXX") {
        fd_ = ::mkstemp(&temp_[0]);
        if (fd_ < 0) temp_.clear();
    }
    staged_file(const staged_file&) = delete;
    staged_file& operator=(const staged_file&) = delete;
    ~staged_file() { discard(); }

    bool ok() const { return fd_ >= 0 && !failed_; }
    void write(std::string_view bytes) {
        size_ += bytes.size();
        while (ok() && !bytes.empty()) {
            ssize_t n = ::write(fd_, bytes.data(), bytes.size());
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) failed_ = true;
            else bytes.remove_prefix(static_cast<std::size_t>(n));
        }
    }
    // True when every byte is on the disk (fsync), before anyone is told it is stored.
    bool finish() {
        if (fd_ < 0) return false;
        bool good = !failed_ && ::fsync(fd_) == 0;
        good = ::close(fd_) == 0 && good;
        fd_ = -1;
        failed_ = !good;
        return good;
    }
    // The finished file under `path`, replacing what was there in one step (rename(2)).
    bool publish(const std::string& path) {
        if (fd_ >= 0 || failed_ || temp_.empty() || std::rename(temp_.c_str(), path.c_str()) != 0) return false;
        temp_.clear();
        return true;
    }
    void discard() {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
        if (!temp_.empty()) ::unlink(temp_.c_str());
        temp_.clear();
    }
    std::uint64_t size() const { return size_; }

private:
    std::string temp_;  // empty once published or removed
    int fd_ = -1;
    std::uint64_t size_ = 0;
    bool failed_ = false;
};

// Room on the disk promised to the uploads in progress. The server is skiff::server (one
// thread), so a plain count. Conservative: bytes already written are counted in the free
// space that shrank and in the promise both, until their upload ends.
class disk_room {
public:
    disk_room(std::string dir, std::uint64_t reserve) : dir_(std::move(dir)), reserve_(reserve) {}

    // A promise of `bytes` more, or none when the file system would keep less than the reserve.
    std::shared_ptr<void> take(std::uint64_t bytes) {
        struct statvfs fs {};
        if (::statvfs(dir_.c_str(), &fs) != 0) return nullptr;
        std::uint64_t free_bytes = static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
        if (free_bytes < reserve_ || free_bytes - reserve_ < promised_ || free_bytes - reserve_ - promised_ < bytes)
            return nullptr;
        promised_ += bytes;
        return std::shared_ptr<void>(this, [this, bytes](void*) { promised_ -= bytes; });  // not null: a promise
    }

private:
    std::string dir_;
    std::uint64_t reserve_;
    std::uint64_t promised_ = 0;
};

struct limits {
    std::uint64_t max_bytes;  // one upload's body
    disk_room* disk;
};

// What an upload may write: its declared length, or the limit when it is chunked. nullptr
// (and 507 already answered) when the disk cannot promise it.
std::shared_ptr<void> room_for(const limits& lim, skiff::request& req, skiff::response& res) {
    std::uint64_t want = lim.max_bytes;
    std::string_view declared = req.header("content-length");
    if (!declared.empty()) want = std::min<std::uint64_t>(want, std::strtoull(std::string(declared).c_str(), nullptr, 10));
    auto room = lim.disk->take(want);
    if (!room) res.status(507).text("not enough room on the disk\n");
    return room;
}

skiff::upload put_file(const std::string& dir, const limits& lim, skiff::request& req, skiff::response& res) {
    std::string_view name = req.param("name");
    if (!safe_name(name)) {
        res.status(400).text("bad file name\n");
        return {};
    }
    auto room = room_for(lim, req, res);
    if (!room) return {};
    auto file = std::make_shared<staged_file>(dir);
    if (!file->ok()) {
        res.status(500).text("cannot create the file\n");
        return {};
    }
    skiff::upload u;
    u.max_body = lim.max_bytes;  // 413 beyond it, and on_abort
    u.on_piece = [file](std::string_view piece) {
        file->write(piece);
        return skiff::piece_status::taken;
    };
    u.on_end = [file, room, path = dir + "/" + std::string(name)](skiff::response& r) {
        if (!file->finish() || !file->publish(path)) return r.status(500).text("write failed\n");
        r.status(201).text(std::to_string(file->size()));
    };
    u.on_abort = [file] { file->discard(); };
    return u;
}

// What POST /form's parts become: files in dir, and an entry for each part. The files wait
// under their temporary names until the form is whole, then are renamed into place.
struct form_sink {
    struct entry {
        std::string name, filename;
        std::uint64_t size = 0;
    };
    struct part_file {
        std::unique_ptr<staged_file> file;
        std::string path;  // where it goes once the form is whole
    };
    std::string dir;
    std::shared_ptr<void> room;  // the disk promise, held until the form ends
    std::vector<entry> entries;
    std::vector<part_file> files;  // the last one is being written while in_file
    bool in_file = false;
    bool refused = false;  // a bad filename, too many files, or one twice: answer 400

    void on_part(const skiff::multipart_part& part) {
        entries.push_back({std::string(part.name), std::string(part.filename), 0});
        if (!part.has_filename || refused) return;
        std::string path = dir + "/" + std::string(part.filename);
        auto same = [&path](const part_file& f) { return f.path == path; };
        if (!safe_name(part.filename) || files.size() == max_form_files || std::any_of(files.begin(), files.end(), same)) {
            refused = true;
            return;
        }
        files.push_back({std::make_unique<staged_file>(dir), std::move(path)});
        in_file = true;
        if (!files.back().file->ok()) refused = true;
    }
    void on_data(std::string_view bytes) {
        entries.back().size += bytes.size();
        if (in_file) files.back().file->write(bytes);
    }
    void on_part_end() {
        if (in_file && !files.back().file->finish()) refused = true;
        in_file = false;
    }
    void on_abort() { remove_all(); }  // the client went: its own temporary files go
    void remove_all() { files.clear(); }
    bool publish_all() {
        bool good = true;
        for (part_file& f : files) good = f.file->publish(f.path) && good;
        return good;
    }
};

std::string as_json(const std::vector<form_sink::entry>& entries) {
    std::string out = "[";
    for (const auto& e : entries) {
        if (out.size() > 1) out += ',';
        out += "{\"name\":" + skiff::json_quote(e.name) + ",\"filename\":" + skiff::json_quote(e.filename) +
               ",\"size\":" + std::to_string(e.size) + "}";
    }
    return out + "]";
}

skiff::upload post_form(const std::string& dir, const limits& lim, skiff::request& req, skiff::response& res) {
    auto boundary = skiff::multipart_boundary(req.header("content-type"));
    if (!boundary) {
        res.status(400).text("expected multipart/form-data with a boundary\n");
        return {};
    }
    form_sink sink;
    sink.dir = dir;
    sink.room = room_for(lim, req, res);
    if (!sink.room) return {};
    skiff::upload u = skiff::multipart_upload<form_sink>(
        *boundary, std::move(sink), [](skiff::response& r, form_sink& s, skiff::multipart_status end) {
            if (end != skiff::multipart_status::complete || s.refused) {
                s.remove_all();
                return r.status(400).text(s.refused ? "bad file name, a name twice, or over 16 files\n"
                                                    : "malformed multipart body\n");
            }
            if (!s.publish_all()) return r.status(500).text("write failed\n");
            r.json(as_json(s.entries));
        });
    u.max_body = lim.max_bytes;  // the whole form, parts and framing: 413 beyond it
    return u;
}

std::uint64_t env_bytes(const char* name, std::uint64_t otherwise) {
    const char* v = std::getenv(name);
    return v ? std::strtoull(v, nullptr, 10) : otherwise;
}

int serve(std::uint16_t port, const std::string& dir) {
    disk_room disk(dir, env_bytes("DISK_RESERVE", 64u << 20));
    limits lim{env_bytes("MAX_BYTES", 64u << 20), &disk};
    skiff::server app;
    app.upload("PUT", "/files/:name",
               [dir, lim](skiff::request& req, skiff::response& res) { return put_file(dir, lim, req, res); });
    app.upload("POST", "/form",
               [dir, lim](skiff::request& req, skiff::response& res) { return post_form(dir, lim, req, res); });
    if (auto ec = app.listen(port)) {
        std::fprintf(stderr, "upload: cannot listen on 127.0.0.1:%u: %s\n", port, ec.message().c_str());
        return 1;
    }
    skiff::stop_on_signals stopper(app);  // SIGINT, SIGTERM: stop; declared after app, so it goes first
    std::printf("upload: serving http://127.0.0.1:%u/ into %s\n", app.port(), dir.c_str());
    std::fflush(stdout);
    return app.run();
}

} // namespace

int main() {
    auto port_or_none = skiff::port_from_env("PORT", 8080);
    if (!port_or_none) {
        std::fprintf(stderr, "upload: PORT must be a number from 0 to 65535\n");
        return 1;
    }
    std::uint16_t port = *port_or_none;
    std::string dir = std::getenv("DIR") ? std::getenv("DIR") : "./uploads";
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
        std::fprintf(stderr, "upload: cannot create %s: %s\n", dir.c_str(), ec.message().c_str());
        return 1;
    }
    return serve(port, dir);
}
