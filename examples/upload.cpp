// Uploads streamed to disk as they arrive (app.upload): memory stays at a piece or so,
// whatever the size of the file.
//
//   PUT  /files/:name  the raw body to DIR/name; 201 with the byte count as text ("1048576")
//   POST /form         multipart/form-data: each file part to DIR/<its filename>; 200 with
//                      [{"name":"field","filename":"a.txt","size":N},...] (application/json),
//                      plain fields listed with "filename":"" and their size
//
// A name (or filename) that is empty, ".", or holds "/", "\", ".." or a NUL is refused 400,
// so nothing is written outside DIR. A client that goes mid-upload leaves no file behind.
// Env: PORT (default 8080), DIR (default ./uploads, created if missing). Ctrl-C stops.
#include <skiff/skiff.hpp>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace {

std::function<void()> stop_server;
void on_signal(int) {
    if (stop_server) stop_server();
}

bool safe_name(std::string_view name) {
    return !name.empty() && name != "." && name.find_first_of(std::string_view("/\\\0", 3)) == std::string_view::npos &&
           name.find("..") == std::string_view::npos;
}

// A file being written; removed unless kept.
class output_file {
public:
    explicit output_file(std::string path) : path_(std::move(path)), f_(std::fopen(path_.c_str(), "wb")) {}
    output_file(const output_file&) = delete;
    output_file& operator=(const output_file&) = delete;
    ~output_file() {
        if (f_) discard();
    }
    bool ok() const { return f_ != nullptr && !failed_; }
    void write(std::string_view bytes) {
        if (f_ && std::fwrite(bytes.data(), 1, bytes.size(), f_) != bytes.size()) failed_ = true;
        size_ += bytes.size();
    }
    // True when the whole file reached the disk.
    bool keep() {
        bool good = ok() && std::fclose(f_) == 0;
        f_ = nullptr;
        if (!good) std::remove(path_.c_str());
        return good;
    }
    void discard() {
        if (f_) std::fclose(f_);
        f_ = nullptr;
        std::remove(path_.c_str());
    }
    std::uint64_t size() const { return size_; }

private:
    std::string path_;
    std::FILE* f_;
    std::uint64_t size_ = 0;
    bool failed_ = false;
};

skiff::upload put_file(const std::string& dir, skiff::request& req, skiff::response& res) {
    std::string_view name = req.param("name");
    if (!safe_name(name)) {
        res.status(400).text("bad file name\n");
        return {};
    }
    auto file = std::make_shared<output_file>(dir + "/" + std::string(name));
    if (!file->ok()) {
        res.status(500).text("cannot create the file\n");
        return {};
    }
    skiff::upload u;
    u.on_piece = [file](std::string_view piece) {
        file->write(piece);
        return skiff::piece_status::taken;
    };
    u.on_end = [file](skiff::response& r) {
        if (!file->keep()) return r.status(500).text("write failed\n");
        r.status(201).text(std::to_string(file->size()));
    };
    u.on_abort = [file] { file->discard(); };
    return u;
}

// What POST /form's parts become: files in dir, and an entry for each part.
struct form_sink {
    struct entry {
        std::string name, filename;
        std::uint64_t size = 0;
    };
    std::string dir;
    std::vector<entry> entries;
    std::unique_ptr<output_file> file;  // the file part being written
    std::vector<std::string> written;   // removed again if the form fails
    bool refused = false;               // a bad filename: answer 400

    void on_part(const skiff::multipart_part& part) {
        entries.push_back({std::string(part.name), std::string(part.filename), 0});
        if (!part.has_filename || refused) return;
        if (!safe_name(part.filename)) {
            refused = true;
            return;
        }
        std::string path = dir + "/" + std::string(part.filename);
        file = std::make_unique<output_file>(path);
        written.push_back(path);
        if (!file->ok()) refused = true;
    }
    void on_data(std::string_view bytes) {
        entries.back().size += bytes.size();
        if (file) file->write(bytes);
    }
    void on_part_end() {
        if (file && !file->keep()) refused = true;
        file.reset();
    }
    void on_abort() { remove_all(); }  // the client went: no half-written files
    void remove_all() {
        file.reset();
        for (const std::string& p : written) std::remove(p.c_str());
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

skiff::upload post_form(const std::string& dir, skiff::request& req, skiff::response& res) {
    auto boundary = skiff::multipart_boundary(req.header("content-type"));
    if (!boundary) {
        res.status(400).text("expected multipart/form-data with a boundary\n");
        return {};
    }
    form_sink sink;
    sink.dir = dir;
    return skiff::multipart_upload<form_sink>(
        *boundary, std::move(sink), [](skiff::response& r, form_sink& s, skiff::multipart_status end) {
            if (end != skiff::multipart_status::complete || s.refused) {
                s.remove_all();
                return r.status(400).text(s.refused ? "bad file name\n" : "malformed multipart body\n");
            }
            r.json(as_json(s.entries));
        });
}

int serve(std::uint16_t port, const std::string& dir) {
    skiff::server app;
    app.upload("PUT", "/files/:name", [dir](skiff::request& req, skiff::response& res) { return put_file(dir, req, res); });
    app.upload("POST", "/form", [dir](skiff::request& req, skiff::response& res) { return post_form(dir, req, res); });
    if (auto ec = app.listen(port)) {
        std::fprintf(stderr, "upload: cannot listen on 127.0.0.1:%u: %s\n", port, ec.message().c_str());
        return 1;
    }
    stop_server = [&app] { app.stop(); };
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    std::printf("upload: serving http://127.0.0.1:%u/ into %s\n", app.port(), dir.c_str());
    std::fflush(stdout);
    return app.run();
}

} // namespace

int main() {
    const char* port_env = std::getenv("PORT");
    auto port = static_cast<std::uint16_t>(port_env ? std::atoi(port_env) : 8080);
    std::string dir = std::getenv("DIR") ? std::getenv("DIR") : "./uploads";
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
        std::fprintf(stderr, "upload: cannot create %s: %s\n", dir.c_str(), ec.message().c_str());
        return 1;
    }
    return serve(port, dir);
}
