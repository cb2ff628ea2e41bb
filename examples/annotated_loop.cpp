// The smallest complete HTTP/1.1 server built from skiff's own parts (the poller, the parser
// and the writer), without skiff::server: one thread, one event loop, keep-alive and
// pipelining. Read it top to bottom if you have never written a server; the real one
// (include/skiff/engine/event_loop.hpp and session.hpp) is this loop with deadlines, limits,
// streams, routing and threading added.
//
//   PORT=8080 ./annotated_loop     then     curl -i http://127.0.0.1:8080/
//
// GET / answers "Hello, World!"; any other request 404; a malformed one 400, then close.
// What it leaves out on purpose: deadlines (a silent client keeps its connection forever),
// the connection limit, request bodies, and graceful stop (Ctrl-C simply ends it).
#include <skiff/skiff.hpp>

#include <cstdio>
#include <cstring>
#include <ctime>
#include <initializer_list>
#include <memory>
#include <string_view>
#include <sys/socket.h>
#include <unistd.h>

namespace sd = skiff::detail;

namespace {

// What one connection needs between reads: the bytes of a request that has not fully arrived
// (the parser keeps none itself), output the socket would not take yet, and the parser state.
// sd::connection holds exactly that (and a little more the real server uses).
using connection = sd::connection;

// Step 3: turn every complete request in buf[0, len) into a response appended to `out`.
// Returns how many bytes were used; what is left is the start of a request still arriving.
std::size_t serve(connection& c, const char* data, std::size_t len, const sd::date_cache& date, sd::byte_buffer& out,
                  bool& close) {
    static constexpr std::string_view ok = "HTTP/1.1 200 OK\r\n";
    static constexpr std::string_view hello = "Content-Type: text/plain\r\nContent-Length: 13\r\n\r\nHello, World!";
    static constexpr std::string_view missing = "HTTP/1.1 404 Not Found\r\n";
    static constexpr std::string_view not_found = "Content-Type: text/plain\r\nContent-Length: 10\r\n\r\nNot Found\n";
    static constexpr std::string_view bad = "HTTP/1.1 400 Bad Request\r\n";
    static constexpr std::string_view bad_rest = "Content-Length: 0\r\nConnection: close\r\n\r\n";
    skiff::request_head head;
    skiff::header_field fields[64];       // the parsed fields point into the read buffer: no copy
    skiff::parse_limits limits;           // the default limits: 8 KiB request line and header section
    char* buf = const_cast<char*>(data);  // the parser may rewrite a chunked body in place
    std::size_t used = 0;
    while (used < len && !close) {
        skiff::parse_result r = c.parser.parse(buf + used, len - used, head, fields, limits);
        if (r.status == skiff::parse_status::incomplete) break;  // wait for more bytes
        if (r.status != skiff::parse_status::complete) {  // the stream cannot be trusted: answer, close
            for (std::string_view part : {bad, date.line(), bad_rest}) out.append(part.data(), part.size());
            close = true;
            break;
        }
        bool found = head.verb == skiff::method::get && head.path == "/";
        // Status line, the Date line (formatted once a second, not per response), the rest.
        for (std::string_view part : {found ? ok : missing, date.line(), found ? hello : not_found})
            out.append(part.data(), part.size());  // after the answers to earlier requests
        close = !head.keep_alive;
        used += r.consumed;
        c.parser.reset();  // ready for the next request on this connection
    }
    return used;
}

// Step 4: one send() for every response of this read. What the socket does not take is
// parked in the connection and sent when the poller says it is writable. Returns false when
// the connection should close now.
bool flush(connection& c, sd::writer<>& w, sd::default_poller& poller) {
    sd::write_status s = w.flush(c);
    if (s == sd::write_status::failed) return false;                               // the client is gone
    if (s == sd::write_status::drained && c.state == sd::phase::closing) return false;  // answered: close
    unsigned watch = s == sd::write_status::drained ? sd::watch_read : sd::watch_write;
    poller.modify(c.fd, &c, watch);  // the real loop calls this only when the interest changes
    return true;
}

// Step 2: readable. One recv() into the loop's scratch buffer, or behind the bytes of an
// incomplete request that the connection kept from the previous read.
bool on_readable(connection& c, sd::byte_buffer& scratch, const sd::date_cache& date, sd::writer<>& w,
                 sd::default_poller& poller) {
    bool fresh = c.in.empty();
    if (!fresh) c.in.reserve_more(16 * 1024);
    char* buf = fresh ? scratch.data() : c.in.data();
    std::size_t have = fresh ? 0 : c.in.size();
    std::size_t room = fresh ? scratch.capacity() : c.in.room();
    ssize_t n = ::recv(c.fd, buf + have, room, 0);
    if (n == 0 || (n < 0 && !sd::retry_later())) return false;  // the client closed, or an error
    if (n < 0) return true;                                      // a spurious wake-up
    std::size_t len = have + static_cast<std::size_t>(n);
    bool close = false;
    std::size_t used = serve(c, buf, len, date, w.batch(), close);
    // Keep only the unparsed tail: an idle connection then owns no buffer at all.
    std::size_t keep = close ? 0 : c.parser.kept(len - used);
    sd::byte_buffer tail;
    tail.append(buf + used, keep);
    c.in = std::move(tail);
    if (close) c.state = sd::phase::closing;  // no more requests: close once the answer is out
    return flush(c, w, poller);
}

} // namespace

int main() {
    auto port_or_none = skiff::port_from_env("PORT", 8080);
    if (!port_or_none) {
        std::fprintf(stderr, "annotated_loop: PORT must be a number from 0 to 65535\n");
        return 1;
    }
    std::uint16_t port = *port_or_none;

    // Step 0: a non-blocking listening socket, registered with the poller (epoll or kqueue).
    sd::endpoint ep;
    sd::make_endpoint("127.0.0.1", port, ep);
    sd::unique_fd listener;
    if (auto ec = sd::open_listener(ep, false, 128, listener)) {
        std::fprintf(stderr, "annotated_loop: cannot listen on 127.0.0.1:%u: %s\n", port, ec.message().c_str());
        return 1;
    }
    sd::default_poller poller;
    if (poller.open() || poller.add(listener.get(), &listener, sd::watch_read)) return 1;
    std::printf("annotated_loop: serving http://127.0.0.1:%u/\n", sd::local_port(listener.get()));
    std::fflush(stdout);

    sd::byte_buffer scratch;  // every read lands here first: one warm buffer for all connections
    scratch.reserve_more(64 * 1024);
    sd::writer<> w;           // builds each read's responses in one batch buffer
    w.open(64 * 1024);
    sd::date_cache date;      // the Date line every response carries (RFC 9110 §6.6.1)

    // Step 1: wait until something is ready, then handle each ready descriptor.
    sd::poll_event events[64];
    for (;;) {
        bool woken = false;
        int n = poller.wait(events, 64, 1000, woken);  // at least once a second, for the Date
        if (n < 0) return 1;  // the poller itself failed: waiting again would fail again
        date.update(std::time(nullptr));
        for (int i = 0; i < n; ++i) {
            if (events[i].data == &listener) {  // new connections: accept every one queued
                for (int fd; (fd = sd::accept_nonblocking(listener.get())) >= 0;) {
                    sd::prepare_connection(fd);  // TCP_NODELAY, no SIGPIPE
                    auto* c = new connection;
                    c->fd = fd;
                    poller.add(fd, c, sd::watch_read);
                }
                continue;
            }
            auto* c = static_cast<connection*>(events[i].data);
            bool open = true;
            if (events[i].writable && !c->out.empty())
                open = w.write_parked(*c) != sd::write_status::failed && flush(*c, w, poller);
            else if (events[i].readable) open = on_readable(*c, scratch, date, w, poller);
            if (!open) {  // Step 5: close. Removing it from the poller first keeps events for it from coming.
                poller.remove(c->fd);
                ::close(c->fd);
                delete c;
            }
        }
    }
}
