// refused_connections: a refused connection gets its 503 and the end of the server's side at
// once, is read and dropped while it lingers, and is closed when it closes, when its linger
// ends, or at once past lingering_refusals_max. Over socket pairs, on a clock the test sets.
#ifdef SKIFF_TEST_SINGLE_HEADER
#include <skiff/skiff.hpp>
#else
#include <skiff/engine/refusals.hpp>
#endif

#include <doctest/doctest.h>

#include <cerrno>
#include <fcntl.h>
#include <memory>
#include <string>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

namespace {

using skiff::detail::refused_connections;

// A connected pair: `server` non-blocking, as accepted connections are; `client` blocking.
struct pair_of_ends {
    int server = -1;
    int client = -1;
    pair_of_ends() {
        int fds[2];
        REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
        server = fds[0];
        client = fds[1];
        ::fcntl(server, F_SETFL, ::fcntl(server, F_GETFL) | O_NONBLOCK);
    }
    ~pair_of_ends() { ::close(client); }  // the server's end is the refusals' to close
    pair_of_ends(const pair_of_ends&) = delete;
    pair_of_ends& operator=(const pair_of_ends&) = delete;

    // Everything the server sent, up to its end of writing.
    std::string read_all() const {
        std::string all;
        char buf[512];
        for (ssize_t n; (n = ::recv(client, buf, sizeof buf, 0)) > 0;) all.append(buf, static_cast<std::size_t>(n));
        return all;
    }
    // Whether the server's end is still open: a send to a closed end fails (EPIPE).
    bool server_open() const { return ::send(client, "x", 1, MSG_NOSIGNAL) == 1; }
};

} // namespace

TEST_CASE("a refused connection gets its 503 and the end, then lingers until its time is up") {
    refused_connections refused;
    pair_of_ends p;
    std::string body(20000, 'b');  // sent before the refusal, as an upload is: read and dropped
    REQUIRE(::send(p.client, body.data(), body.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(body.size()));
    refused.refuse(p.server, 1000);
    CHECK(p.read_all() == skiff::detail::refusal_text);  // then EOF: the write side is shut
    CHECK(p.server_open());
    refused.on_tick(1000 + skiff::detail::refusal_linger_ms - 1);
    CHECK(p.server_open());
    CHECK_FALSE(refused.empty());
    refused.on_tick(1000 + skiff::detail::refusal_linger_ms);
    CHECK(refused.empty());
    CHECK_FALSE(p.server_open());
}

TEST_CASE("a refused connection that closes is closed at the next tick") {
    refused_connections refused;
    pair_of_ends p;
    refused.refuse(p.server, 0);
    CHECK_FALSE(refused.empty());
    ::shutdown(p.client, SHUT_WR);
    refused.on_tick(1);
    CHECK(refused.empty());
}

TEST_CASE("past lingering_refusals_max a refusal closes at once, after its 503") {
    refused_connections refused;
    std::vector<std::unique_ptr<pair_of_ends>> pairs;
    for (std::size_t i = 0; i <= skiff::detail::lingering_refusals_max; ++i) {
        pairs.push_back(std::make_unique<pair_of_ends>());
        refused.refuse(pairs.back()->server, 0);
    }
    for (std::size_t i = 0; i < skiff::detail::lingering_refusals_max; ++i) CHECK(pairs[i]->server_open());
    const pair_of_ends& last = *pairs.back();
    CHECK(last.read_all() == skiff::detail::refusal_text);
    CHECK_FALSE(last.server_open());
    refused.close_all();
    CHECK(refused.empty());
    CHECK_FALSE(pairs.front()->server_open());
}
