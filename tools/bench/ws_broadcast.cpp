// Issue 32's target "one 32-byte message broadcast to 10,000 connections under 50 ms on one
// loop", measured from outside. One program: the server (single policy, pinned to one CPU)
// serves `/ws` and keeps every peer in a list; a forked child on another CPU upgrades N
// clients (10,000 by default), then R times asks `GET /broadcast`, whose handler sends one
// 32-byte text message to every peer from the loop (peer::send outside the peer's own
// callbacks: each send is posted to the loop's hub and written when the hub's task runs, one
// copy of the frame per peer, as websocket/upgrade.hpp says), and times each client's frame.
//
// Times are one clock in both processes, so the child subtracts the server's: from the
// handler's first send (t0) to the moment the child has read each client's frame
// (CLOCK_MONOTONIC), and to the kernel's receive stamp of each frame (SO_TIMESTAMPNS,
// CLOCK_REALTIME; on loopback taken as the server's send() hands the packet over), which says
// when the server wrote it whatever the child's own pace of reading. Printed per round: the
// handler's time to make the N sends (posting them), when the last frame was written, the
// first, median and last client's frame read, and sends the handler saw dropped; then the
// median and range of each over the rounds.
//
//   g++ -std=c++17 -O2 -DNDEBUG -Iinclude tools/bench/ws_broadcast.cpp -o /tmp/ws_broadcast -pthread
//   /tmp/ws_broadcast [--clients 10000] [--rounds 20] [--server-cpu 0] [--client-cpu 1] [--floor]
//
// --floor answers the same clients from a bare blocking server that writes the frame with one
// send() per client in a plain loop: what the kernel alone costs here.
#include <skiff/skiff.hpp>

#include <arpa/inet.h>    // htons, inet_pton
#include <netinet/in.h>   // sockaddr_in
#include <netinet/tcp.h>  // TCP_NODELAY for the control connection
#include <sched.h>        // sched_setaffinity: server and clients on CPUs of their own
#include <sys/epoll.h>    // the child waits on every client at once
#include <sys/resource.h> // RLIMIT_NOFILE for 10,000 connections each side
#include <sys/socket.h>   // the clients; recvmsg with SO_TIMESTAMPNS
#include <sys/wait.h>     // waitpid
#include <unistd.h>       // fork, read, write

#include <algorithm>  // std::sort, std::max_element
#include <chrono>     // the room's idle timeout
#include <cstdint>    // std::int64_t
#include <cstdio>     // the report
#include <cstdlib>    // atoi
#include <cstring>    // strcmp, memcpy of the stamp
#include <ctime>      // clock_gettime: CLOCK_MONOTONIC is one clock for both processes
#include <string>       // requests and answers
#include <string_view>  // on_close's reason
#include <utility>      // std::move
#include <vector>     // the peers, the clients, the rounds

namespace ws = skiff::websocket;

namespace {

constexpr std::size_t message_bytes = 32;
constexpr std::size_t frame_bytes = 2 + message_bytes;  // RFC 6455 §5.2: a 2-byte head below 126 bytes

std::int64_t now_ns() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

void pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    ::sched_setaffinity(0, sizeof set, &set);
}

struct settings {
    int clients = 10'000;
    int rounds = 20;
    int server_cpu = 0;
    int client_cpu = 1;
    bool floor = false;  // a bare blocking server instead of skiff (serve_floor)
};

// ---- the child: the clients ----------------------------------------------------------------

int connect_to(std::uint16_t port) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        std::perror("ws_broadcast: connect");
        ::_exit(1);
    }
    return fd;
}

void send_all(int fd, const std::string& s) {
    for (std::size_t at = 0; at < s.size();) {
        ssize_t n = ::write(fd, s.data() + at, s.size() - at);
        if (n <= 0) ::_exit(1);
        at += static_cast<std::size_t>(n);
    }
}

// One HTTP answer on a blocking connection: the head, then Content-Length bytes of body.
std::string read_answer(int fd) {
    std::string got;
    char buf[4096];
    std::size_t end = std::string::npos, length = 0;
    while (end == std::string::npos || got.size() < end + 4 + length) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n <= 0) ::_exit(1);
        got.append(buf, static_cast<std::size_t>(n));
        if (end != std::string::npos || (end = got.find("\r\n\r\n")) == std::string::npos) continue;
        std::size_t at = got.find("Content-Length: ");
        length = at < end ? std::strtoul(got.c_str() + at + 16, nullptr, 10) : 0;
    }
    return got;
}

std::string body_of(const std::string& answer) { return answer.substr(answer.find("\r\n\r\n") + 4); }

// RFC 6455 §1.3's sample key; the 101 head is all the server sends until the first broadcast.
int upgraded_client(std::uint16_t port) {
    int fd = connect_to(port);
    send_all(fd, "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n");
    std::string head = read_answer(fd);  // no Content-Length: the head alone
    if (head.compare(0, 13, "HTTP/1.1 101 ") != 0) ::_exit(1);
    return fd;
}

struct round_result {
    std::int64_t post_ns = 0;  // the handler's time to make every send
    std::int64_t first_ns = 0, median_ns = 0, last_ns = 0;  // receipts after the first send
    std::int64_t sent_ns = 0;  // the kernel's stamp of the last frame the server wrote, after the first send
    long received = 0, dropped = 0;
};

// One read, and the kernel's time (CLOCK_REALTIME, SO_TIMESTAMPNS) of the last packet it took:
// on loopback the packet is stamped as the server's send() hands it over, so the stamp says when
// the server wrote it, apart from when the child got round to reading it.
ssize_t read_stamped(int fd, char* buf, std::size_t size, std::int64_t& stamp) {
    iovec iov{buf, size};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(timespec))];
    msghdr m{};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = control;
    m.msg_controllen = sizeof control;
    ssize_t r = ::recvmsg(fd, &m, 0);
    for (cmsghdr* c = CMSG_FIRSTHDR(&m); r > 0 && c != nullptr; c = CMSG_NXTHDR(&m, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS) continue;
        timespec ts{};
        std::memcpy(&ts, CMSG_DATA(c), sizeof ts);
        stamp = static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
    }
    return r;
}

struct receipt {
    std::vector<std::int64_t> read_at;  // CLOCK_MONOTONIC: the child has the whole frame
    std::vector<std::int64_t> sent_at;  // CLOCK_REALTIME: the kernel's stamp of its last packet
};

// Reads every client's next frame (got[k] reaches `want` bytes), noting when each is whole.
// Fewer than the clients when 10 s pass first.
receipt receipts(int ep, const std::vector<int>& fds, std::vector<std::size_t>& got, std::size_t want) {
    receipt out;
    out.read_at.reserve(fds.size());
    out.sent_at.reserve(fds.size());
    epoll_event ev[1024];
    char buf[256];
    std::int64_t give_up = now_ns() + 10'000'000'000;
    while (out.read_at.size() < fds.size() && now_ns() < give_up) {
        int n = ::epoll_wait(ep, ev, 1024, 100);
        for (int i = 0; i < n; ++i) {
            std::uint32_t k = ev[i].data.u32;
            std::int64_t stamp = 0;
            ssize_t r = read_stamped(fds[k], buf, sizeof buf, stamp);
            if (r <= 0) continue;  // EAGAIN; a closed client never completes and shows as missing
            bool before = got[k] < want;
            got[k] += static_cast<std::size_t>(r);
            if (!before || got[k] < want) continue;
            out.read_at.push_back(now_ns());
            out.sent_at.push_back(stamp);
        }
    }
    return out;
}

round_result one_round(int control, int ep, const std::vector<int>& fds, std::vector<std::size_t>& got, int r) {
    send_all(control, "GET /broadcast HTTP/1.1\r\nHost: x\r\n\r\n");
    receipt got_now = receipts(ep, fds, got, frame_bytes * static_cast<std::size_t>(r));
    long long t0 = 0, t1 = 0, sent = 0, dropped = 0, t0_real = 0;
    std::sscanf(body_of(read_answer(control)).c_str(), "%lld %lld %lld %lld %lld", &t0, &t1, &sent, &dropped, &t0_real);
    round_result out;
    out.post_ns = t1 - t0;
    out.received = static_cast<long>(got_now.read_at.size());
    out.dropped = static_cast<long>(dropped);
    if (got_now.read_at.empty()) return out;
    std::vector<std::int64_t>& at = got_now.read_at;  // in the order read: already sorted
    out.sent_ns = *std::max_element(got_now.sent_at.begin(), got_now.sent_at.end()) - t0_real;
    out.first_ns = at.front() - t0;
    out.median_ns = at[at.size() / 2] - t0;
    out.last_ns = at.back() - t0;
    return out;
}

double ms(std::int64_t ns) { return static_cast<double>(ns) / 1e6; }

void report(const std::vector<round_result>& rounds, int clients) {
    std::vector<std::int64_t> last, written, post;
    for (std::size_t i = 0; i < rounds.size(); ++i) {
        const round_result& x = rounds[i];
        std::printf("round %2zu: posting %6.2f ms  last written %6.2f ms  read: first %6.2f  median %6.2f  last %6.2f ms"
                    "  received %ld/%d  dropped %ld\n",
                    i + 1, ms(x.post_ns), ms(x.sent_ns), ms(x.first_ns), ms(x.median_ns), ms(x.last_ns), x.received,
                    clients, x.dropped);
        last.push_back(x.received == clients ? x.last_ns : INT64_MAX);
        written.push_back(x.received == clients ? x.sent_ns : INT64_MAX);
        post.push_back(x.post_ns);
    }
    for (auto* v : {&last, &written, &post}) std::sort(v->begin(), v->end());
    auto mid = [](const std::vector<std::int64_t>& v) { return ms(v[v.size() / 2]); };
    std::printf("%d clients, %zu rounds, median [min-max]: last written %.2f ms [%.2f-%.2f]; last read %.2f ms [%.2f-%.2f];"
                " posting %.2f ms [%.2f-%.2f]\n",
                clients, rounds.size(), mid(written), ms(written.front()), ms(written.back()), mid(last),
                ms(last.front()), ms(last.back()), mid(post), ms(post.front()), ms(post.back()));
    std::fflush(stdout);
}

[[noreturn]] void run_clients(const settings& s, int from_parent) {
    pin(s.client_cpu);
    std::uint16_t port = 0;
    if (::read(from_parent, &port, sizeof port) != sizeof port) ::_exit(1);
    int ep = ::epoll_create1(0);
    std::vector<int> fds;
    for (int i = 0; i < s.clients; ++i) {
        int fd = upgraded_client(port);
        int on = 1;
        ::setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof on);
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u32 = static_cast<std::uint32_t>(i);
        ::epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
        fds.push_back(fd);
    }
    int control = connect_to(port);
    int one = 1;
    ::setsockopt(control, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    for (int tries = 0; tries < 100; ++tries) {  // every on_open has run (the room is full)
        send_all(control, "GET /members HTTP/1.1\r\nHost: x\r\n\r\n");
        if (std::atoi(body_of(read_answer(control)).c_str()) >= s.clients) break;
        ::usleep(10'000);
    }
    std::vector<std::size_t> got(fds.size(), 0);
    std::vector<round_result> rounds;
    for (int r = 1; r <= s.rounds; ++r) {
        rounds.push_back(one_round(control, ep, fds, got, r));
        ::usleep(100'000);  // the loop at rest between rounds
    }
    report(rounds, s.clients);
    ::_exit(0);
}

// ---- the parent: the server ----------------------------------------------------------------

// The room of /ws. Single policy: joined, left and broadcast to only on the loop's thread, so
// no lock.
struct room {
    std::vector<ws::peer> members;
    std::string message = std::string(message_bytes, 'm');
};

ws::handlers room_handlers(room& r) {
    ws::handlers h;
    h.keepalive = ws::keepalive::none;  // no ping may land between the clients' frames
    h.idle_timeout = std::chrono::minutes(10);
    h.on_open = [&r](ws::peer& p) { r.members.push_back(p); };
    h.on_close = [&r](ws::peer& p, ws::close_code, std::string_view) {
        for (auto& m : r.members) {
            if (m != p) continue;
            m = r.members.back();
            r.members.pop_back();
            return;
        }
    };
    return h;
}

// "t0 t1 sent dropped t0_real": the clock before the first send and after the last, the counts,
// and CLOCK_REALTIME before the first send (the kernel's receive stamps are on that clock).
void broadcast(room& r, skiff::response& res) {
    timespec real{};
    ::clock_gettime(CLOCK_REALTIME, &real);
    std::int64_t t0 = now_ns();
    long dropped = 0;
    for (ws::peer& p : r.members) dropped += p.send(r.message, ws::kind::text) == ws::send_status::dropped ? 1 : 0;
    std::int64_t t1 = now_ns();
    res.text(std::to_string(t0) + " " + std::to_string(t1) + " " + std::to_string(r.members.size()) + " " +
             std::to_string(dropped) + " " +
             std::to_string(static_cast<std::int64_t>(real.tv_sec) * 1'000'000'000 + real.tv_nsec));
}

int serve(const settings& s, int to_child, pid_t child) {
    pin(s.server_cpu);  // before start(): the loop's thread inherits it
    room r;
    skiff::options opt;
    opt.max_connections = static_cast<std::size_t>(s.clients) + 100;
    opt.stop_timeout = std::chrono::milliseconds(500);
    opt.linger_timeout = std::chrono::milliseconds(200);
    skiff::basic_server<skiff::single> app(opt);
    app.get("/ws", ws::upgrade(room_handlers(r)));
    app.get("/members", [&r](skiff::request&, skiff::response& res) { res.text(std::to_string(r.members.size())); });
    app.get("/broadcast", [&r](skiff::request&, skiff::response& res) { broadcast(r, res); });
    if (auto ec = app.listen(0)) {
        std::fprintf(stderr, "ws_broadcast: cannot listen: %s\n", ec.message().c_str());
        return 1;
    }
    if (app.start()) return 1;
    std::uint16_t port = app.port();
    if (::write(to_child, &port, sizeof port) != sizeof port) return 1;
    int status = 0;
    ::waitpid(child, &status, 0);
    app.stop();
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

// ---- --floor: the same protocol from a bare blocking server, no skiff ----------------------
// The cost of the N send() calls alone, on this machine: the parent accepts the clients one at
// a time, answers each upgrade with a fixed 101 head, and on `GET /broadcast` writes the frame
// to every client in a plain loop. The first connection that does not ask for /ws is the
// child's control connection (it comes after every client), served until it closes.

std::string read_head(int fd) {
    std::string got;
    char buf[1024];
    while (got.find("\r\n\r\n") == std::string::npos) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n <= 0) return got;
        got.append(buf, static_cast<std::size_t>(n));
    }
    return got;
}

std::string plain_answer(const std::string& body) {
    return "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

// head: the connection's first request, already read.
void floor_control(int control, std::string head, const std::vector<int>& clients) {
    std::string frame = std::string("\x81") + static_cast<char>(message_bytes) + std::string(message_bytes, 'm');
    for (; !head.empty(); head = read_head(control)) {
        if (head.compare(0, 14, "GET /members H") == 0) {
            send_all(control, plain_answer(std::to_string(clients.size())));
            continue;
        }
        timespec real{};
        ::clock_gettime(CLOCK_REALTIME, &real);
        std::int64_t t0 = now_ns();
        for (int fd : clients) (void)::send(fd, frame.data(), frame.size(), MSG_DONTWAIT);
        std::int64_t t1 = now_ns();
        send_all(control, plain_answer(std::to_string(t0) + " " + std::to_string(t1) + " " + std::to_string(clients.size()) +
                                       " 0 " + std::to_string(static_cast<std::int64_t>(real.tv_sec) * 1'000'000'000 + real.tv_nsec)));
    }
}

int serve_floor(const settings& s, int to_child, pid_t child) {
    pin(s.server_cpu);
    int lfd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    socklen_t len = sizeof a;
    if (::bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(lfd, 1024) != 0) return 1;
    ::getsockname(lfd, reinterpret_cast<sockaddr*>(&a), &len);
    std::uint16_t port = ntohs(a.sin_port);
    if (::write(to_child, &port, sizeof port) != sizeof port) return 1;
    std::vector<int> clients;
    for (;;) {
        int fd = ::accept(lfd, nullptr, nullptr);
        if (fd < 0) return 1;
        std::string head = read_head(fd);
        if (head.compare(0, 8, "GET /ws ") != 0) {
            floor_control(fd, std::move(head), clients);
            break;
        }
        send_all(fd, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n");
        clients.push_back(fd);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

settings parse(int argc, char** argv) {
    settings s;
    for (int i = 1; i < argc; i += 2) {
        if (std::strcmp(argv[i], "--floor") == 0) {
            s.floor = true;
            --i;
            continue;
        }
        if (i + 1 >= argc) break;
        int v = std::atoi(argv[i + 1]);
        if (std::strcmp(argv[i], "--clients") == 0) s.clients = v;
        else if (std::strcmp(argv[i], "--rounds") == 0) s.rounds = v;
        else if (std::strcmp(argv[i], "--server-cpu") == 0) s.server_cpu = v;
        else if (std::strcmp(argv[i], "--client-cpu") == 0) s.client_cpu = v;
    }
    return s;
}

} // namespace

int main(int argc, char** argv) {
    settings s = parse(argc, argv);
    rlimit lim{};
    ::getrlimit(RLIMIT_NOFILE, &lim);
    lim.rlim_cur = lim.rlim_max;  // each side holds one descriptor per client
    ::setrlimit(RLIMIT_NOFILE, &lim);
    if (lim.rlim_cur < static_cast<rlim_t>(s.clients) + 100) {
        std::fprintf(stderr, "ws_broadcast: descriptor limit %lu is below %d clients\n",
                     static_cast<unsigned long>(lim.rlim_cur), s.clients);
        return 1;
    }
    int pipe_fds[2];
    if (::pipe(pipe_fds) != 0) return 1;
    pid_t child = ::fork();  // before any server thread exists
    if (child == 0) {
        ::close(pipe_fds[1]);
        run_clients(s, pipe_fds[0]);
    }
    ::close(pipe_fds[0]);
    return s.floor ? serve_floor(s, pipe_fds[1], child) : serve(s, pipe_fds[1], child);
}
