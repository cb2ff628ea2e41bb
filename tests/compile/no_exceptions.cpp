// Built with -fno-exceptions: the handler boundary compiles out and the server still serves.
#include <skiff/skiff.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <thread>

int main() {
    skiff::server app;
    app.get("/", [](skiff::request&, skiff::response& res) { res.text("no exceptions"); });
    if (app.listen(0)) return 1;
    std::thread t([&] { app.run(); });
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(app.port());
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    const char req[] = "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    ok = ok && ::send(fd, req, sizeof req - 1, 0) == static_cast<ssize_t>(sizeof req - 1);
    std::string got;
    char buf[512];
    for (ssize_t n; ok && (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) got.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
    app.stop();
    t.join();
    return ok && got.find("\r\n\r\nno exceptions") != std::string::npos ? 0 : 1;
}
