// A project that compiles its server once (server.cpp) and runs it here: a request over a
// real socket is answered, so the server compiled elsewhere links and serves.
#include "project.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <string>

namespace {

// One GET over a fresh connection; what the server wrote until it closed.
std::string get(std::uint16_t port) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port);
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    std::string got;
    if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0) {
        const char req[] = "GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
        if (::write(fd, req, sizeof req - 1) == static_cast<ssize_t>(sizeof req - 1)) {
            char buf[512];
            for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) got.append(buf, static_cast<std::size_t>(n));
        }
    }
    if (fd >= 0) ::close(fd);
    return got;
}

} // namespace

int main() {
    skiff::server app;
    app.get("/", [](skiff::request&, skiff::response& res) { res.text("compiled once"); });
    if (app.listen(0)) return 1;
    if (app.start()) return 1;
    std::string answer = get(app.port());
    app.stop();
    bool ok = answer.rfind("HTTP/1.1 200 OK\r\n", 0) == 0 && answer.find("\r\n\r\ncompiled once") != std::string::npos;
    if (!ok) std::fprintf(stderr, "separate_compilation: unexpected answer:\n%s\n", answer.c_str());
    return ok ? 0 : 1;
}
