// Where a server listens: host names, IPv6, Unix sockets (mode, stale and live files,
// abstract names), adopted descriptors, systemd socket activation, several listeners at once,
// and the errors each gives instead of a crash. Servers here run with start(), which these
// tests also cover (start_stop.cpp has its own cases).
#include "support/loopback.hpp"

#include <doctest/doctest.h>

#include <cerrno>
#include <cstdlib>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace skiff_test;

namespace {

template <class Policy>
void hello_routes(skiff::basic_server<Policy>& app) {
    app.get("/", [](skiff::request&, skiff::response& res) { res.text("hello"); });
}

skiff::options two_workers() {
    skiff::options opt;
    opt.workers = 2;
    return opt;
}

// One GET / over c; the body of its answer, or "" when none came.
std::string get_root(client& c) {
    c.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    auto rs = read_responses(c, 1);
    return rs.size() == 1 && rs[0].status == 200 ? rs[0].body : std::string();
}

// A socket path unique to this process and test, removed before and after.
struct temp_socket_path {
    std::string path;
    explicit temp_socket_path(const std::string& name)
        : path("/tmp/skiff-test-" + std::to_string(::getpid()) + "-" + name + ".sock") {
        ::unlink(path.c_str());
    }
    ~temp_socket_path() { ::unlink(path.c_str()); }
};

bool exists(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0;
}

// A TCP socket on 127.0.0.1:<ephemeral>, bound; listening when asked. Its port in *port.
int tcp_socket(bool listening, std::uint16_t* port = nullptr) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    if (listening) REQUIRE(::listen(fd, 16) == 0);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    if (port != nullptr) *port = ntohs(a.sin_port);
    return fd;
}

bool is_open(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

} // namespace

TEST_CASE_TEMPLATE("listen(port, \"localhost\") resolves the name and serves on it", Policy, SKIFF_TEST_POLICIES) {
    skiff::basic_server<Policy> app(two_workers());
    hello_routes(app);
    std::error_code ec = app.listen(0, "localhost");
    REQUIRE_MESSAGE(!ec, ec.message());
    REQUIRE(!app.start());
    client c(app.port());  // 127.0.0.1: localhost's IPv4 address is the one bound
    CHECK(get_root(c) == "hello");
    app.stop();
    CHECK(!app.error());
}

// RFC 6761 §6.3: without asking the resolver, so it holds where /etc/hosts is missing (a
// debootstrap chroot, a minimal container) and no resolver knows the name.
TEST_CASE("localhost names are the loopback address whatever the resolver says") {
    struct row {
        const char* host;
        bool loopback;
    };
    const row rows[] = {{"localhost", true}, {"LocalHost", true}, {"localhost.", true}, {"api.localhost", true},
                        {"a.b.LOCALHOST", true}, {"localhost.example", false}, {"mylocalhost", false},
                        {".localhost", false}, {"", false}};
    for (const row& r : rows) {
        CAPTURE(r.host);
        CHECK(skiff::detail::is_localhost_name(r.host) == r.loopback);
    }
    skiff::server app;
    hello_routes(app);
    REQUIRE(!app.listen(0, "api.localhost"));
    REQUIRE(!app.start());
    client c(app.port());
    CHECK(get_root(c) == "hello");
}

TEST_CASE("listen() on an IPv6 literal") {
    skiff::server app;
    hello_routes(app);
    std::error_code ec = app.listen(0, "::1");
    if (ec == std::errc::address_not_available || ec == std::errc::address_family_not_supported) {
        MESSAGE("no IPv6 loopback here: " << ec.message());
        return;
    }
    REQUIRE_MESSAGE(!ec, ec.message());
    CHECK(app.port() != 0);
    REQUIRE(!app.start());
    int fd = ::socket(AF_INET6, SOCK_STREAM, 0);
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_port = htons(app.port());
    a.sin6_addr = in6addr_loopback;
    REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    const char req[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    REQUIRE(::send(fd, req, sizeof req - 1, MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof req - 1));
    char buf[512];
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    ::close(fd);
    REQUIRE(n > 0);
    CHECK(std::string(buf, static_cast<std::size_t>(n)).find("hello") != std::string::npos);
}

TEST_CASE("listen() errors are codes with a message, never a crash") {
    skiff::server app;
    hello_routes(app);
    std::error_code ec = app.listen(0, "no-such-host.invalid");
    CHECK(ec);
    CHECK(std::string(ec.category().name()) == "skiff.resolve");
    CHECK_FALSE(ec.message().empty());
    CHECK(app.listen(0, "").value() != 0);
    CHECK(app.run() == 1);  // nothing listens
    CHECK(app.error() == skiff::listen_errc::no_listener);

    std::uint16_t taken = 0;
    int fd = tcp_socket(true, &taken);
    skiff::server other;
    CHECK(other.listen(taken) == std::errc::address_in_use);
    ::close(fd);
}

TEST_CASE_TEMPLATE("listen_unix(): a real AF_UNIX client is served, the mode is set, the file goes with the server",
                   Policy, SKIFF_TEST_POLICIES) {
    temp_socket_path sock("mode");
    {
        skiff::basic_server<Policy> app(two_workers());
        app.get("/", [](skiff::request& req, skiff::response& res) {
            res.text("unix " + std::string(req.header("host")));
        });
        std::error_code ec = app.listen_unix(sock.path, 0600);
        REQUIRE_MESSAGE(!ec, ec.message());
        CHECK(app.port() == 0);  // no TCP listener
        struct stat st {};
        REQUIRE(::stat(sock.path.c_str(), &st) == 0);
        CHECK(S_ISSOCK(st.st_mode));
        CHECK((st.st_mode & 0777) == 0600);
        REQUIRE(!app.start());
        for (int i = 0; i < 3; ++i) {  // several connections: under sharded, loops share the socket
            client c(unix_address{sock.path});
            c.send("GET / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: y\r\n\r\n");
            auto rs = read_responses(c, 2);
            REQUIRE(rs.size() == 2);
            CHECK(rs[0].body == "unix x");
            CHECK(rs[1].body == "unix y");
        }
    }
    CHECK_FALSE(exists(sock.path));
}

TEST_CASE("listen_unix(): a stale socket file is replaced, a live one or another file is refused") {
    temp_socket_path sock("stale");
    {  // a server that died: its socket file stays, nobody accepts on it
        int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::memcpy(a.sun_path, sock.path.c_str(), sock.path.size() + 1);
        REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
        ::close(fd);
        REQUIRE(exists(sock.path));
    }
    skiff::server first;
    hello_routes(first);
    std::error_code ec = first.listen_unix(sock.path);
    REQUIRE_MESSAGE(!ec, ec.message());
    struct stat st {};
    REQUIRE(::stat(sock.path.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0660);  // the default mode
    REQUIRE(!first.start());

    skiff::server second;  // the first one answers: refused, and the first keeps its file
    hello_routes(second);
    ec = second.listen_unix(sock.path);
    CHECK(ec == skiff::listen_errc::socket_in_use);
    CHECK(ec.message().find("another server") != std::string::npos);
    client c(unix_address{sock.path});
    CHECK(get_root(c) == "hello");

    temp_socket_path plain("plain");
    FILE* f = std::fopen(plain.path.c_str(), "w");
    REQUIRE(f != nullptr);
    std::fclose(f);
    skiff::server third;
    CHECK(third.listen_unix(plain.path) == skiff::listen_errc::path_not_a_socket);
    CHECK(exists(plain.path));  // left alone

    CHECK(third.listen_unix(std::string(200, 'x')) == std::errc::filename_too_long);
    CHECK(third.listen_unix("") == std::errc::filename_too_long);
    CHECK(third.listen_unix("/no/such/dir/x.sock") == std::errc::no_such_file_or_directory);
}

TEST_CASE("listen_unix(\"@name\"): an abstract socket (Linux), no file") {
    if (!skiff::detail::has_abstract_unix_sockets) return;
    std::string name = "@skiff-test-" + std::to_string(::getpid());
    skiff::server app;
    hello_routes(app);
    std::error_code ec = app.listen_unix(name, 0600);
    REQUIRE_MESSAGE(!ec, ec.message());
    CHECK_FALSE(exists(name));
    REQUIRE(!app.start());
    client c(unix_address{name});
    CHECK(get_root(c) == "hello");
}

TEST_CASE_TEMPLATE("adopt(fd): an already-listening socket is served", Policy, SKIFF_TEST_POLICIES) {
    std::uint16_t port = 0;
    int fd = tcp_socket(true, &port);
    skiff::basic_server<Policy> app(two_workers());
    hello_routes(app);
    std::error_code ec = app.adopt(fd);
    REQUIRE_MESSAGE(!ec, ec.message());
    CHECK(app.port() == port);
    REQUIRE(!app.start());
    for (int i = 0; i < 3; ++i) {
        client c(port);
        CHECK(get_root(c) == "hello");
    }
    app.stop();
    CHECK_FALSE(is_open(fd));  // the server owned it
}

TEST_CASE("adopt(fd): what is not a listening stream socket is refused and left open") {
    skiff::server app;
    int bound = tcp_socket(false);
    CHECK(app.adopt(bound) == skiff::listen_errc::not_a_listener);
    CHECK(is_open(bound));
    ::close(bound);
    int udp = ::socket(AF_INET, SOCK_DGRAM, 0);
    CHECK(app.adopt(udp) == skiff::listen_errc::not_a_stream);
    CHECK(is_open(udp));
    ::close(udp);
    int file = ::open("/dev/null", O_RDONLY);
    CHECK(app.adopt(file) == std::errc::not_a_socket);
    ::close(file);
    CHECK(app.adopt(-1) == std::errc::bad_file_descriptor);
    CHECK(app.run() == 1);
}

// Puts a listening socket at descriptor 3 as systemd would. Only where 3 is free, as systemd
// leaves it: something of this process using it (the kqueue test shim's wake-up descriptor,
// say) would break if it were replaced. Once a server has adopted it, the server closes it.
struct systemd_socket {
    std::uint16_t port = 0;
    bool placed = false;
    systemd_socket() {
        if (is_open(3)) return;
        int fd = tcp_socket(true, &port);
        placed = fd == 3 || ::dup2(fd, 3) == 3;
        if (fd != 3) ::close(fd);
    }
};

TEST_CASE("listen_systemd(): adopts LISTEN_FDS from 3 and unsets the variables") {
    systemd_socket sd;
    if (!sd.placed) {
        MESSAGE("descriptor 3 is in use in this process: the systemd test needs it free, as systemd leaves it");
        return;
    }
    ::setenv("LISTEN_PID", std::to_string(::getpid()).c_str(), 1);
    ::setenv("LISTEN_FDS", "1", 1);
    ::setenv("LISTEN_FDNAMES", "http", 1);
    {
        skiff::server app;
        hello_routes(app);
        std::error_code ec = app.listen_systemd();
        REQUIRE_MESSAGE(!ec, ec.message());
        CHECK(std::getenv("LISTEN_PID") == nullptr);
        CHECK(std::getenv("LISTEN_FDS") == nullptr);
        CHECK(std::getenv("LISTEN_FDNAMES") == nullptr);
        CHECK(app.port() == sd.port);
        REQUIRE(!app.start());
        client c(sd.port);
        CHECK(get_root(c) == "hello");
    }
    CHECK_FALSE(is_open(3));  // the server closed what it adopted
}

TEST_CASE("listen_systemd(): nothing passed, or passed to another process") {
    skiff::server app;
    ::unsetenv("LISTEN_PID");
    ::unsetenv("LISTEN_FDS");
    std::error_code ec = app.listen_systemd();
    CHECK(ec == skiff::listen_errc::no_systemd_sockets);
    CHECK(ec.message().find("systemd") != std::string::npos);
    ::setenv("LISTEN_PID", std::to_string(::getpid() + 1).c_str(), 1);
    ::setenv("LISTEN_FDS", "1", 1);
    CHECK(app.listen_systemd() == skiff::listen_errc::no_systemd_sockets);
    CHECK(std::getenv("LISTEN_FDS") == nullptr);  // unset all the same, as sd_listen_fds does
}

TEST_CASE_TEMPLATE("several listeners on one server: TCP, a second TCP, Unix and adopted, all served", Policy,
                   SKIFF_TEST_POLICIES) {
    temp_socket_path sock("several");
    std::uint16_t adopted_port = 0;
    int adopted = tcp_socket(true, &adopted_port);
    std::uint16_t second_port = 0;
    ::close(tcp_socket(true, &second_port));  // a port free a moment ago, for the second TCP listener
    skiff::basic_server<Policy> app(two_workers());
    hello_routes(app);
    REQUIRE(!app.listen(0));
    std::uint16_t first_port = app.port();
    REQUIRE(!app.listen(second_port, "localhost"));
    REQUIRE(!app.listen_unix(sock.path));
    REQUIRE(!app.adopt(adopted));
    CHECK(app.port() == first_port);  // the first TCP listener's
    REQUIRE(!app.start());
    for (int round = 0; round < 2; ++round) {
        client a(first_port);
        CHECK(get_root(a) == "hello");
        client b(second_port);
        CHECK(get_root(b) == "hello");
        client u(unix_address{sock.path});
        CHECK(get_root(u) == "hello");
        client d(adopted_port);
        CHECK(get_root(d) == "hello");
    }
    app.stop();
    CHECK(!app.error());
}

TEST_CASE("more than max_listeners is refused with a clear error") {
    skiff::server app;
    for (std::size_t i = 0; i < skiff::max_listeners; ++i) REQUIRE(!app.listen(0));
    std::error_code ec = app.listen(0);
    CHECK(ec == skiff::listen_errc::too_many_listeners);
}
