// WebSocket on the same loop as HTTP (skiff/websocket/upgrade.hpp):
//
//   GET /                  200, a line of text
//   GET /www/chat.html     a chat page for a browser: served here so that it finds /chat on the
//                          host it came from; the files of $ROOT (default: this example's
//                          www/) at /www/, by serve_dir, sent from the file (sendfile)
//   ws://HOST:PORT/echo    every complete message comes back whole, with its type (text or
//                          binary); messages up to 16 MiB (longer: closed with 1009)
//   ws://HOST:PORT/chat    every text message goes to every client connected to /chat (the
//                          sender too); binary messages are ignored; up to 64 KiB each
//
// Env: PORT (default 8080), POLICY (single, sharded or shared; default single), ROOT (the
// page's directory). Ctrl-C stops, closing every WebSocket with 1001.
//
// Limits, so that no client can grow the server without bound: an echo client holds at most
// one message being gathered (16 MiB) and one echo waiting for it to read (the loop stops
// reading a client whose output waits, so a sender that does not read gets no more echoes
// queued); a chat client that does not read has messages dropped past 1 MiB waiting for it
// (peer::send says dropped), and the room never blocks on it. One that sends without reading
// meets the loop's rule first: its own messages come back to it, and past write_high_water
// (64 KiB) of output waiting for it, it is not read until it reads (TCP pushes back on the
// sender); the others go on receiving what the rest say. 256 connections at most.
#include <skiff/skiff.hpp>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#ifndef WEBSOCKET_WWW
#define WEBSOCKET_WWW "www"  // examples/CMakeLists.txt gives the source directory's www/
#endif

namespace ws = skiff::websocket;

namespace {

constexpr std::uint64_t echo_max = 16 * 1024 * 1024;

// The clients connected to /chat. Joined and left on the loop that serves each client; said to
// from any loop (under sharded, the clients are spread over two; under shared, the callbacks
// run on whichever worker holds the loop hub). The list is copied out of the
// lock before sending, so no send runs under it.
class chat_room {
public:
    void join(const ws::peer& p) {
        std::lock_guard<std::mutex> g(lock_);
        members_.push_back(p);
    }
    void leave(const ws::peer& p) {
        std::lock_guard<std::mutex> g(lock_);
        for (auto it = members_.begin(); it != members_.end(); ++it) {
            if (*it != p) continue;
            *it = members_.back();
            members_.pop_back();
            return;
        }
    }
    void say(std::string_view text) {
        std::vector<ws::peer> now;
        {
            std::lock_guard<std::mutex> g(lock_);
            now = members_;
        }
        (void)ws::broadcast(now, text, ws::kind::text);  // the frame built once; dropped for one that does not read
    }

private:
    std::mutex lock_;
    std::vector<ws::peer> members_;
};

ws::handlers echo_handlers() {
    ws::handlers h;
    h.max_message = echo_max;
    h.max_backlog = echo_max + 1024 * 1024;  // one echo always fits (see the file comment)
    h.on_message = [](ws::peer& p, std::string_view data, ws::kind k) { (void)p.send(data, k); };
    return h;
}

ws::handlers chat_handlers(chat_room& room) {
    ws::handlers h;
    h.max_message = 64 * 1024;
    h.on_open = [&room](ws::peer& p) { room.join(p); };
    h.on_close = [&room](ws::peer& p, ws::close_code, std::string_view) { room.leave(p); };
    h.on_message = [&room](ws::peer&, std::string_view data, ws::kind k) {
        if (k == ws::kind::text) room.say(data);
    };
    return h;
}

template <class Policy>
int serve(std::uint16_t port, const std::string& root) {
    chat_room room;  // outlives the server: a loop may still run a callback until run() returns
    skiff::options opt;
    opt.workers = 2;
    opt.max_connections = 256;
    skiff::basic_server<Policy> app(opt);
    app.get("/", [](skiff::request&, skiff::response& res) { res.text("WebSocket at /echo and /chat\n"); });
    app.get("/echo", ws::upgrade(echo_handlers()));
    app.get("/chat", ws::upgrade(chat_handlers(room)));
    // Under a prefix, so that / keeps its line of text (the contract above) and the page's
    // relative links (style.css) resolve beside it.
    app.serve_dir("/www", root);
    if (auto ec = app.listen(port)) {
        std::fprintf(stderr, "websocket: cannot listen on 127.0.0.1:%u: %s\n", port, ec.message().c_str());
        return 1;
    }
    skiff::stop_on_signals stopper(app);  // SIGINT, SIGTERM: stop; declared after app, so it goes first
    std::printf("websocket: serving http://127.0.0.1:%u/ (ws: /echo, /chat; page: /www/chat.html)\n", app.port());
    std::fflush(stdout);
    return app.run();
}

} // namespace

int main() {
    auto port_or_none = skiff::port_from_env("PORT", 8080);
    if (!port_or_none) {
        std::fprintf(stderr, "websocket: PORT must be a number from 0 to 65535\n");
        return 1;
    }
    std::uint16_t port = *port_or_none;
    const char* root_env = std::getenv("ROOT");
    std::string root = root_env && *root_env ? root_env : WEBSOCKET_WWW;
    const char* policy = std::getenv("POLICY");
    if (policy != nullptr && std::string(policy) == "sharded") return serve<skiff::sharded>(port, root);
    if (policy != nullptr && std::string(policy) == "shared") return serve<skiff::shared>(port, root);
    return serve<skiff::single>(port, root);
}
