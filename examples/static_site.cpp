// A static web site: the directory in $ROOT (default: this example's www/, a page with a
// stylesheet, an image and a short video) served at / by serve_dir, with sendfile, ETag,
// Range and precompressed siblings. Where it listens, in order:
//   - the sockets systemd passed (socket activation: LISTEN_FDS and LISTEN_PID set);
//   - else the Unix socket path in $SOCKET (mode 0660), for a proxy in front;
//   - else TCP 127.0.0.1:$PORT (default 8080).
// With $ACCESS_LOG set, each answer is appended to that file as "METHOD TARGET STATUS", so a
// test can see from outside what a browser asked for and what it got.
// Ctrl-C or SIGTERM stops it gracefully.
#include <skiff/skiff.hpp>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#ifndef STATIC_SITE_WWW
#define STATIC_SITE_WWW "www"  // examples/CMakeLists.txt gives the source directory's www/
#endif

static std::string env_or(const char* name, const char* fallback) {
    const char* v = std::getenv(name);
    return v && *v ? v : fallback;
}

// One line per answer, flushed at once so that a reader sees it while the server runs.
static void log_answers(skiff::server& app, const std::string& path) {
    std::shared_ptr<std::FILE> log(std::fopen(path.c_str(), "a"), [](std::FILE* f) {
        if (f) std::fclose(f);
    });
    if (!log) return;
    app.use([log](skiff::request& req, skiff::response& res, const skiff::next& next) {
        next();
        std::fprintf(log.get(), "%.*s %.*s %d\n", static_cast<int>(req.method().size()), req.method().data(),
                     static_cast<int>(req.target().size()), req.target().data(), res.status());
        std::fflush(log.get());
    });
}

// Returns where it listens, or "" after printing why it cannot.
static std::string listen(skiff::server& app) {
    if (std::getenv("LISTEN_FDS")) {
        if (auto ec = app.listen_systemd()) {
            std::fprintf(stderr, "static_site: socket activation: %s\n", ec.message().c_str());
            return "";
        }
        return "the sockets systemd passed";
    }
    if (const char* socket = std::getenv("SOCKET")) {
        if (auto ec = app.listen_unix(socket)) {
            std::fprintf(stderr, "static_site: cannot listen on %s: %s\n", socket, ec.message().c_str());
            return "";
        }
        return std::string("unix:") + socket;
    }
    auto port = skiff::port_from_env("PORT", 8080);
    if (!port) {
        std::fprintf(stderr, "static_site: PORT must be a number from 0 to 65535\n");
        return "";
    }
    if (auto ec = app.listen(*port)) {
        std::fprintf(stderr, "static_site: cannot listen on 127.0.0.1:%u: %s\n", unsigned{*port}, ec.message().c_str());
        return "";
    }
    return "http://127.0.0.1:" + std::to_string(app.port()) + "/";
}

int main() {
    skiff::server app;
    std::string root = env_or("ROOT", STATIC_SITE_WWW);
    if (const char* log = std::getenv("ACCESS_LOG")) log_answers(app, log);
    app.serve_dir("/", root);
    std::string where = listen(app);
    if (where.empty()) return 1;
    skiff::stop_on_signals stopper(app);  // SIGINT, SIGTERM: stop; declared after app, so it goes first
    std::printf("static_site: serving %s on %s\n", root.c_str(), where.c_str());
    std::fflush(stdout);
    return app.run();
}
