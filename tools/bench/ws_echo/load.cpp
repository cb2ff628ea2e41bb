// ws_echo load generator: N WebSocket connections, each a closed loop of one masked text
// frame out and its whole echo back (RFC 6455), on one thread with epoll. The accept key
// comes from skiff's own handshake code (skiff/websocket/handshake.hpp, no server in it); every
// other byte is written here.
//
//   load HOST PORT PATH CONNECTIONS SECONDS MESSAGE_SIZE WARMUP_SECONDS
//
// Every connection does the HTTP upgrade (status 101 and Sec-WebSocket-Accept checked), then
// sends one text message of MESSAGE_SIZE bytes, waits for the complete echoed message (type
// and payload checked), and sends the next. When every connection is open, WARMUP_SECONDS
// run uncounted; then a line "warm" is printed (and flushed) and echoes are counted for
// SECONDS; then one line of JSON:
//
//   {"messages": N, "seconds": S, "errors": E, "connections": C}
//
// messages: echoes completed and verified inside the window; seconds: the window as measured
// (CLOCK_MONOTONIC); errors: connections that failed (connect, upgrade, a wrong echo, a close
// from the server); connections: those still open at the end. Exit status 0 when errors is 0.
// ws_echo_bench.py reads the server's CPU time when it sees "warm" and the JSON line.
#include <skiff/websocket/handshake.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <vector>

namespace {

double now_s() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

bool iequals_prefix(const std::string& s, std::size_t at, const char* word) {
    std::size_t n = std::strlen(word);
    if (s.size() < at + n) return false;
    for (std::size_t i = 0; i < n; ++i) {
        char a = s[at + i], b = word[i];
        if (a >= 'A' && a <= 'Z') a = char(a - 'A' + 'a');
        if (b >= 'A' && b <= 'Z') b = char(b - 'A' + 'a');
        if (a != b) return false;
    }
    return true;
}

enum class phase { connecting, upgrading, open, dead };

struct conn {
    int fd = -1;
    phase st = phase::connecting;
    std::string out;          // bytes not yet written
    std::size_t out_off = 0;
    bool want_out = false;    // EPOLLOUT registered
    std::string in;           // bytes read, not yet parsed
    std::string accept;       // the Sec-WebSocket-Accept we expect
    std::string sent;         // payload of the message in flight
    std::string msg;          // payload gathered from the echo's frames
    int msg_opcode = -1;      // opcode of the echo's first frame, -1 when none started
    std::uint64_t seq = 0;
};

struct loadgen {
    int ep = -1;
    std::vector<conn> conns;
    std::size_t msg_size = 32;
    std::mt19937_64 rng{std::random_device{}()};
    bool counting = false;
    bool sending = true;
    std::uint64_t messages = 0;
    std::uint64_t errors = 0;
    std::size_t opened = 0;  // connections that reached phase::open
    std::size_t settled = 0; // connections open or dead (the connect phase ends when all are)

    void fail(conn& c, const char* why) {
        if (c.st == phase::dead) return;
        if (errors < 5) std::fprintf(stderr, "load: connection %zu: %s\n", std::size_t(&c - conns.data()), why);
        if (c.st != phase::open) ++settled;
        c.st = phase::dead;
        ++errors;
        epoll_ctl(ep, EPOLL_CTL_DEL, c.fd, nullptr);
        close(c.fd);
        c.fd = -1;
    }

    void set_out(conn& c, bool on) {
        if (c.want_out == on) return;
        epoll_event ev{};
        ev.events = EPOLLIN | (on ? EPOLLOUT : 0u);
        ev.data.u64 = std::size_t(&c - conns.data());
        epoll_ctl(ep, EPOLL_CTL_MOD, c.fd, &ev);
        c.want_out = on;
    }

    void flush(conn& c) {
        while (c.out_off < c.out.size()) {
            ssize_t n = send(c.fd, c.out.data() + c.out_off, c.out.size() - c.out_off, MSG_NOSIGNAL);
            if (n > 0) { c.out_off += std::size_t(n); continue; }
            if (n < 0 && errno == EINTR) continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) { set_out(c, true); return; }
            fail(c, "send failed");
            return;
        }
        c.out.clear();
        c.out_off = 0;
        set_out(c, false);
    }

    // A client frame: FIN set, the mask bit set and a fresh 4-byte masking key (RFC 6455 5.2, 5.3).
    void queue_frame(conn& c, int opcode, const std::string& payload) {
        std::uint64_t len = payload.size();
        c.out.push_back(char(0x80 | opcode));
        if (len < 126) {
            c.out.push_back(char(0x80 | len));
        } else if (len <= 0xffff) {
            c.out.push_back(char(0x80 | 126));
            c.out.push_back(char((len >> 8) & 0xff));
            c.out.push_back(char(len & 0xff));
        } else {
            c.out.push_back(char(0x80 | 127));
            for (int i = 7; i >= 0; --i) c.out.push_back(char((len >> (i * 8)) & 0xff));
        }
        std::uint32_t key = std::uint32_t(rng());
        unsigned char k[4] = {std::uint8_t(key >> 24), std::uint8_t(key >> 16), std::uint8_t(key >> 8), std::uint8_t(key)};
        c.out.append(reinterpret_cast<const char*>(k), 4);
        std::size_t at = c.out.size();
        c.out.append(payload);
        for (std::size_t i = 0; i < len; ++i) c.out[at + i] = char(std::uint8_t(c.out[at + i]) ^ k[i & 3]);
    }

    void send_next(conn& c) {
        if (!sending) return;
        ++c.seq;
        c.sent.resize(msg_size);
        for (std::size_t i = 0; i < msg_size; ++i) c.sent[i] = char('a' + (c.seq + i) % 26);
        queue_frame(c, 0x1, c.sent);
        flush(c);
    }

    void on_connected(conn& c) {
        int err = 0;
        socklen_t len = sizeof err;
        if (getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) { fail(c, "connect failed"); return; }
        c.st = phase::upgrading;
        flush(c);  // the upgrade request, queued at start
    }

    void on_upgrade_bytes(conn& c) {
        std::size_t end = c.in.find("\r\n\r\n");
        if (end == std::string::npos) {
            if (c.in.size() > 16384) fail(c, "upgrade answer too long");
            return;
        }
        std::string head = c.in.substr(0, end + 2);
        c.in.erase(0, end + 4);
        if (head.compare(0, 12, "HTTP/1.1 101") != 0) { fail(c, "upgrade answer not 101"); return; }
        bool ok = false;
        std::size_t pos = head.find("\r\n");
        while (pos != std::string::npos && pos + 2 < head.size()) {
            std::size_t line = pos + 2;
            std::size_t eol = head.find("\r\n", line);
            if (eol == std::string::npos) break;
            if (iequals_prefix(head, line, "sec-websocket-accept:")) {
                std::string v = head.substr(line + 21, eol - line - 21);
                while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.erase(0, 1);
                while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.pop_back();
                ok = v == c.accept;
            }
            pos = eol;
        }
        if (!ok) { fail(c, "Sec-WebSocket-Accept missing or wrong"); return; }
        c.st = phase::open;
        ++opened;
        ++settled;
    }

    // Server frames: unmasked (RFC 6455 5.1). Data frames gathered to a whole message and
    // checked against the one in flight; a ping answered; a close from the server is an error.
    void on_frames(conn& c) {
        std::size_t off = 0;
        for (;;) {
            std::size_t avail = c.in.size() - off;
            if (avail < 2) break;
            auto b0 = std::uint8_t(c.in[off]), b1 = std::uint8_t(c.in[off + 1]);
            bool fin = b0 & 0x80;
            int opcode = b0 & 0x0f;
            if (b0 & 0x70) { fail(c, "reserved bits set"); return; }
            if (b1 & 0x80) { fail(c, "masked frame from server"); return; }
            std::uint64_t len = b1 & 0x7f;
            std::size_t hdr = 2;
            if (len == 126) {
                if (avail < 4) break;
                len = (std::uint64_t(std::uint8_t(c.in[off + 2])) << 8) | std::uint8_t(c.in[off + 3]);
                hdr = 4;
            } else if (len == 127) {
                if (avail < 10) break;
                len = 0;
                for (int i = 0; i < 8; ++i) len = (len << 8) | std::uint8_t(c.in[off + 2 + i]);
                hdr = 10;
            }
            if (len > (std::uint64_t(1) << 30)) { fail(c, "frame too long"); return; }
            if (avail < hdr + len) break;
            const char* p = c.in.data() + off + hdr;
            off += hdr + std::size_t(len);
            if (opcode >= 0x8) {
                if (opcode == 0x8) { fail(c, "close from server"); return; }
                if (opcode == 0x9) { queue_frame(c, 0xA, std::string(p, std::size_t(len))); flush(c); if (c.st == phase::dead) return; }
                continue;  // pong, or an unknown control frame: ignored
            }
            if (opcode == 0x0) {
                if (c.msg_opcode < 0) { fail(c, "continuation without a message"); return; }
            } else {
                if (c.msg_opcode >= 0) { fail(c, "new message inside a fragmented one"); return; }
                c.msg_opcode = opcode;
                c.msg.clear();
            }
            c.msg.append(p, std::size_t(len));
            if (!fin) continue;
            bool good = c.msg_opcode == 0x1 && c.msg == c.sent;
            c.msg_opcode = -1;
            if (!good) { fail(c, "echo differs from the message sent"); return; }
            if (counting) ++messages;
            send_next(c);
            if (c.st == phase::dead) return;
        }
        c.in.erase(0, off);
    }

    void on_readable(conn& c) {
        char buf[65536];
        for (;;) {
            ssize_t n = recv(c.fd, buf, sizeof buf, 0);
            if (n > 0) {
                c.in.append(buf, std::size_t(n));
                if (std::size_t(n) < sizeof buf) break;
                continue;
            }
            if (n == 0) { fail(c, "closed by server"); return; }
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) break;
            fail(c, "recv failed");
            return;
        }
        if (c.st == phase::upgrading) {
            on_upgrade_bytes(c);
            if (c.st != phase::open) return;
            if (sending_started) send_next(c);
            if (c.st != phase::open) return;
        }
        if (c.st == phase::open && !c.in.empty()) on_frames(c);
    }

    bool sending_started = false;

    void poll(double until) {
        epoll_event evs[256];
        double left = until - now_s();
        int ms = left <= 0 ? 0 : int(left * 1000.0) + 1;
        int n = epoll_wait(ep, evs, 256, ms);
        for (int i = 0; i < n; ++i) {
            conn& c = conns[evs[i].data.u64];
            if (c.st == phase::dead) continue;
            if (c.st == phase::connecting) {
                if (evs[i].events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) on_connected(c);
                continue;
            }
            if (evs[i].events & EPOLLOUT) { flush(c); if (c.st == phase::dead) continue; }
            if (evs[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) on_readable(c);
        }
    }
};

} // namespace

int main(int argc, char** argv) {
    if (argc != 8) {
        std::fprintf(stderr, "usage: %s HOST PORT PATH CONNECTIONS SECONDS MESSAGE_SIZE WARMUP_SECONDS\n", argv[0]);
        return 2;
    }
    const char* host = argv[1];
    const char* port = argv[2];
    std::string path = argv[3];
    long nconn = std::atol(argv[4]);
    double seconds = std::atof(argv[5]);
    long msg_size = std::atol(argv[6]);
    double warmup = std::atof(argv[7]);
    if (nconn < 1 || seconds <= 0 || msg_size < 0 || warmup < 0) { std::fprintf(stderr, "load: bad arguments\n"); return 2; }

    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* ai = nullptr;
    if (int rc = getaddrinfo(host, port, &hints, &ai); rc != 0 || ai == nullptr) {
        std::fprintf(stderr, "load: cannot resolve %s:%s: %s\n", host, port, gai_strerror(rc));
        return 2;
    }

    loadgen g;
    g.msg_size = std::size_t(msg_size);
    g.ep = epoll_create1(EPOLL_CLOEXEC);
    g.conns.resize(std::size_t(nconn));
    std::string host_hdr = std::string(host) + ":" + port;
    for (std::size_t i = 0; i < g.conns.size(); ++i) {
        conn& c = g.conns[i];
        std::string raw(16, '\0');
        for (auto& ch : raw) ch = char(g.rng() & 0xff);
        std::string key(skiff::detail::base64_size(raw.size()), '\0');
        skiff::detail::base64_encode(reinterpret_cast<const std::uint8_t*>(raw.data()), raw.size(), key.data());
        skiff::websocket::accept_key_text accept = skiff::websocket::accept_key(key);
        c.accept.assign(accept.data(), accept.size());
        c.out = "GET " + path + " HTTP/1.1\r\nHost: " + host_hdr +
                "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: " + key +
                "\r\nSec-WebSocket-Version: 13\r\n\r\n";
        c.fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (c.fd < 0) { std::perror("load: socket"); return 2; }
        int one = 1;
        setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        epoll_event ev{};
        ev.events = EPOLLIN | EPOLLOUT;
        ev.data.u64 = i;
        c.want_out = true;
        epoll_ctl(g.ep, EPOLL_CTL_ADD, c.fd, &ev);
        if (connect(c.fd, ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS) g.fail(c, "connect failed");
    }
    freeaddrinfo(ai);

    // Connect and upgrade every connection (at most 10 s), then start every loop at once.
    double deadline = now_s() + 10.0;
    while (g.settled < g.conns.size() && now_s() < deadline) g.poll(deadline);
    for (auto& c : g.conns)
        if (c.st != phase::open && c.st != phase::dead) g.fail(c, "upgrade not done in 10 s");
    if (g.opened == 0) {
        std::printf("{\"messages\": 0, \"seconds\": 0, \"errors\": %llu, \"connections\": 0}\n", (unsigned long long)g.errors);
        return 1;
    }
    g.sending_started = true;
    for (auto& c : g.conns)
        if (c.st == phase::open) g.send_next(c);

    double warm_end = now_s() + warmup;
    while (now_s() < warm_end) g.poll(warm_end);
    g.counting = true;
    g.messages = 0;
    double t0 = now_s();
    std::printf("warm\n");
    std::fflush(stdout);
    double end = t0 + seconds;
    while (now_s() < end) g.poll(end);
    double t1 = now_s();
    g.counting = false;
    g.sending = false;
    std::size_t open_now = 0;
    for (auto& c : g.conns) open_now += c.st == phase::open;
    std::printf("{\"messages\": %llu, \"seconds\": %.6f, \"errors\": %llu, \"connections\": %zu}\n",
                (unsigned long long)g.messages, t1 - t0, (unsigned long long)g.errors, open_now);
    std::fflush(stdout);
    for (auto& c : g.conns)
        if (c.fd >= 0) close(c.fd);
    return g.errors == 0 ? 0 : 1;
}
