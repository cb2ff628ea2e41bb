// Every runtime limit and deadline of a server, with the defaults a public-facing server can
// trust. Threading is chosen at compile time by the policy (policy.hpp), not here.
#ifndef SKIFF_ENGINE_OPTIONS_HPP
#define SKIFF_ENGINE_OPTIONS_HPP

#include "skiff/engine/hooks.hpp"
#include "skiff/http/parse_status.hpp"

#include <chrono>      // std::chrono::milliseconds
#include <cstddef>     // std::size_t
#include <cstdint>     // std::uint64_t
#include <functional>  // std::function for the worker start hook and the observers
#include <string_view> // what a handler threw
#include <vector>      // std::vector of CPUs

namespace skiff {

class request;   // http/request.hpp
class response;  // http/response.hpp

struct options {
    // Request limits (RFC 9110 §15.5 statuses). The defaults are parse_limits' own (8 KiB,
    // 8 KiB, 100, 1 MiB), taken from it so that the two cannot drift apart.
    std::size_t max_request_line = parse_limits{}.max_request_line;  // longer request line: 414
    std::size_t max_header_bytes = parse_limits{}.max_header_bytes;  // longer header section: 431
    std::size_t max_headers = parse_limits{}.max_headers;            // more field lines: 431
    std::uint64_t max_body = parse_limits{}.max_body;                // larger body, declared or chunked: 413

    // Deadlines. Header: the whole header section must arrive within it, counted from the first
    // byte of the request (408, then close). Body: the whole body must arrive within it, counted
    // from the end of the head (408, then close). Idle: a keep-alive connection with no request
    // in progress is closed silently. Write: a response that makes no progress for this long is
    // abandoned and the connection closed.
    std::chrono::milliseconds header_timeout{10'000};
    std::chrono::milliseconds body_timeout{30'000};
    std::chrono::milliseconds idle_timeout{60'000};
    std::chrono::milliseconds write_timeout{30'000};
    // After an error response, how long unread request bytes are drained before closing, so
    // the client reads the response instead of a reset.
    std::chrono::milliseconds linger_timeout{2'000};
    // stop(): how long connections with work in flight may take to finish; run() then returns.
    std::chrono::milliseconds stop_timeout{10'000};
    // stop(): how long deferred answers may still complete and push streams still be written
    // to, after the on_stop hooks ran. Then each answer not completed is answered 503 with
    // Connection: close, and each push stream is ended with its last chunk (docs/stopping.md).
    std::chrono::milliseconds stop_grace{250};
    // A deferred answer (response::defer) not completed within this is answered 503 Service
    // Unavailable by the server (the handler's work, not an upstream the server proxies, ran
    // late; 504 would name a gateway) and its late completion is dropped. 0: no deadline.
    std::chrono::milliseconds deferred_timeout{30'000};

    // At this many, a new connection takes the place of the connection idle longest between
    // requests (closed, as its idle deadline would close it); with none idle, it is answered
    // 503 and closed at once.
    std::size_t max_connections = 10'000;
    // Unsent output above which a connection stops reading requests until the client reads;
    // also the buffered bytes above which a push stream's write() says backlogged.
    std::size_t write_high_water = 64 * 1024;
    // A push stream's bytes held for a client that does not read them (queued and unsent
    // together): beyond this the stream is closed and so is its connection. Many subscribers
    // together are bounded by max_buffered below, not by this alone.
    std::size_t max_push_buffer = 1024 * 1024;
    // The kernel send buffer (SO_SNDBUF) of a connection once it carries a push stream; 0
    // leaves the kernel's own sizing. Left to itself Linux grows it to megabytes per socket,
    // output that max_push_buffer and max_buffered do not see and that every close of a
    // subscriber that stopped reading must free at once (with 2,000 of them, tens of ms of
    // one loop's time). 64 KiB keeps an event stream's pace (64 KiB a round trip) while the
    // rest of what a slow client has not taken waits where the budget counts it.
    std::size_t push_socket_buffer = 64 * 1024;
    // Request bytes all connections together may buffer beyond their standard request buffer
    // (bodies being read, requests queued behind a slow reader), and response bytes parked for
    // clients that have not taken them. Past it, a connection whose buffer would grow is not
    // read, nor is any new request, until memory is given back: the server slows instead of
    // running out, and one that cannot go on within its body deadline is answered 408. Split
    // evenly between the loops under sharded; one count for every worker under shared. A
    // single body larger than the budget is still read when nothing else holds any.
    // Push streams' unsent output (response::defer().stream()) may hold half of it: past that
    // the stream whose client stalled longest is closed, its unsent bytes dropped, so that
    // subscribers who do not read never stop the server reading anyone's requests.
    std::size_t max_buffered = 64 * 1024 * 1024;
    int listen_backlog = 1024;

    // Threads for the sharded and shared policies: 0 means one per CPU. Ignored by single.
    unsigned workers = 0;
    // Pin worker i to cpus[i % cpus.size()]; with pin_workers and no list, worker i to CPU i.
    bool pin_workers = false;
    std::vector<int> cpus;
    // Called on each worker thread before it serves (thread-local set-up); argument: index.
    std::function<void(unsigned)> on_worker_start;
    // sharded: one SO_REUSEPORT listener per loop (true), or one acceptor thread handing
    // connections round-robin to the loops (false; also used where SO_REUSEPORT is missing).
    bool reuse_port = true;

    // Observers (engine/hooks.hpp). Usually set through basic_server::on_response, on_error
    // and serve_metrics, which chain several; set them before run() or start(). Each is
    // tested only where it is called, so an unset one costs a test of an empty function.
    // on_response: every response the server queues, with its rejection reason.
    std::function<void(const response_event&)> on_response;
    // on_error: a handler threw; what() (or "unknown exception"), before the 500 is queued.
    // Also a stream's source that threw (its body is cut; the head has left, so no 500): the
    // request then has only its method and target, its head being gone.
    std::function<void(std::string_view what, const request&)> on_error;
    // on_rejection: the server answers a request itself (a rejection, or the 500 after a
    // throw); fields the hook adds with header() go on that answer (request id, security
    // headers), and a body it writes (res.json(...), res.html(...)) replaces the plain text
    // one. The status is the server's: a hook that changes it gets the plain answer. Not
    // called for the fixed 503 at accept.
    std::function<void(response&, rejection)> on_rejection;
    // on_connection: a connection was admitted or closed, on loop `loop`.
    std::function<void(connection_change, std::size_t loop)> on_connection;
    // on_stop: stop() has begun; called once, on a serving thread, before push streams and
    // deferred answers are ended (set through basic_server::on_stop).
    std::function<void()> on_stop;
};

} // namespace skiff

#endif // SKIFF_ENGINE_OPTIONS_HPP
