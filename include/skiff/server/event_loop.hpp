// One event loop: it waits on a set of connections, and owns the buffers they share. This is
// the hot path, and it reads top to bottom:
//
//   run()          wait for readiness, read the clock once, dispatch each event, expire deadlines
//   on_readable()  one read into the loop's scratch buffer (or behind a connection's leftover)
//   serve()        parse every complete request in it, route, run handlers; responses are
//                  appended to the loop's output buffer in request order
//   flush()        one send() for the whole batch; a short write parks the rest on the
//                  connection and waits for writability (and stops reading above high water)
//
// Level-triggered readiness and one read per event: reading again until EAGAIN would cost a
// system call per request for nothing, since the next wait reports what is left. Interest is
// changed only when a write falls short and when it drains, never per request.
//
// The policy decides where the connections live (local_set: this loop's own; shared_set: one
// set every thread of a shared server waits on) and whether a wake-up means stop (single) or
// "look at the stop flag and the inbox" (sharded, shared). Nothing else differs.
#ifndef SKIFF_SERVER_EVENT_LOOP_HPP
#define SKIFF_SERVER_EVENT_LOOP_HPP

#include "skiff/config.hpp"
#include "skiff/detail/byte_buffer.hpp"
#include "skiff/detail/date_cache.hpp"
#include "skiff/detail/unique_fd.hpp"
#include "skiff/http/parse_status.hpp"
#include "skiff/http/request_head.hpp"
#include "skiff/http/request.hpp"
#include "skiff/http/response.hpp"
#include "skiff/http/status.hpp"
#include "skiff/platform/socket.hpp"
#include "skiff/poller/poller.hpp"
#include "skiff/router/router.hpp"
#include "skiff/server/connection.hpp"
#include "skiff/server/local_set.hpp"
#include "skiff/server/options.hpp"
#include "skiff/server/policy.hpp"
#include "skiff/server/shard_link.hpp"
#include "skiff/server/shared_set.hpp"

#include <cerrno>        // errno values from accept, recv, send
#include <chrono>        // steady_clock for deadlines
#include <cstddef>       // std::size_t
#include <cstdint>       // std::int64_t
#include <cstring>       // std::memchr, std::memcpy
#include <ctime>         // std::time for the Date line
#include <mutex>         // std::lock_guard for the sharded inbox
#include <sys/socket.h>  // recv, shutdown
#include <system_error>  // std::error_code
#include <type_traits>   // std::conditional_t
#include <unistd.h>      // close
#include <utility>       // std::move, std::swap
#include <vector>        // std::vector for the inbox swap

namespace skiff::detail {

#if SKIFF_HAS_EXCEPTIONS
// The one exception boundary: a handler that throws gets a 500, and the server goes on.
template <class Fn, class OnError>
void call_guarded(Fn&& fn, OnError&& on_error) {
    try {
        fn();
    } catch (...) {
        on_error();
    }
}
#else
template <class Fn, class OnError>
void call_guarded(Fn&& fn, OnError&&) {
    fn();
}
#endif // SKIFF_HAS_EXCEPTIONS

inline std::int64_t monotonic_ms() noexcept {
    using namespace std::chrono;
    return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

// A tick of about a tenth of the shortest deadline: fine enough for tests that set 200 ms,
// coarse enough that a server with idle connections wakes a few times a second at most.
inline std::int64_t tick_for(const options& o) noexcept {
    auto shortest = o.header_timeout;
    for (auto d : {o.body_timeout, o.idle_timeout, o.write_timeout, o.linger_timeout})
        if (d < shortest) shortest = d;
    std::int64_t t = shortest.count() / 10;
    return t < 5 ? 5 : t > 250 ? 250 : t;
}

template <class Policy>
class event_loop {
    using set_type = std::conditional_t<is_shared<Policy>, shared_set<Policy>, local_set>;
    using conn = typename set_type::conn;
    using link_type = std::conditional_t<is_sharded<Policy>, shard_link<event_loop>, no_link>;

public:
    // single, sharded: the loop owns its connections.
    event_loop(const options& opt, const router& routes) : opt_(opt), router_(routes), set_(own_set_) {}
    // shared: every thread's loop serves the server's one set.
    event_loop(const options& opt, const router& routes, shared_set<Policy>& set)
        : opt_(opt), router_(routes), set_(set) {}
    event_loop(const event_loop&) = delete;
    event_loop& operator=(const event_loop&) = delete;

    // Prepares the loop and allocates every buffer the hot path uses. `listener` may be empty
    // (a sharded loop fed by the acceptor; a shared loop, whose listener is in the set).
    std::error_code open(unique_fd listener) {
        now_ = monotonic_ms();
        if constexpr (!is_shared<Policy>) {
            if (auto ec = set_.open(now_, tick_for(opt_))) return ec;
            listener_ = std::move(listener);
            if (listener_)
                if (auto ec = set_.poller().add(listener_.get(), &listener_, watch_read)) return ec;
            port_ = listener_ ? local_port(listener_.get()) : 0;
        }
        limits_ = {opt_.max_request_line, opt_.max_header_bytes, opt_.max_headers, opt_.max_body};
        head_capacity_ = opt_.max_request_line + opt_.max_header_bytes + 4;
        pool_.set_size(head_capacity_);
        scratch_.reserve_more(scratch_size);
        out_.reserve_more(scratch_size);
        request_access::init(req_, opt_.max_headers, opt_.max_request_line);
        date_.update(std::time(nullptr));
        if (max_connections_ > opt_.max_connections) max_connections_ = opt_.max_connections;
        return {};
    }

    // Serves until stop(), then drains: answers what was read, closes idle connections, and
    // returns when none is left or stop_timeout has passed.
    void run() {
        poll_event events[epoll_batch];
        while (!drained()) {
            bool woken = false;
            int n = set_.poller().wait(events, epoll_batch, wait_timeout(), woken);
            tick_clock();
            if (woken || is_shared<Policy>) on_wake();
            for (int i = 0; i < n; ++i) dispatch(events[i]);
            set_.expire(now_, [this](conn& c) { on_deadline(c); });
            if (accept_paused_ && now_ >= accept_retry_at_) resume_accepting();
        }
        if constexpr (!is_shared<Policy>) set_.for_each([this](conn& c) { close_now(c); });
    }

    // Ends the loop's current wait; thread- and async-signal-safe. For single this is stop;
    // sharded servers set their stop flag first (see on_wake).
    void wake() noexcept { set_.poller().wake(); }

    // The port listened on, kept from open(): any thread may ask, while the listener itself
    // belongs to the loop's thread (which closes it on stop).
    std::uint16_t port() const noexcept { return port_; }
    void set_connection_limit(std::size_t n) noexcept { max_connections_ = n; }
    link_type& link() noexcept { return link_; }
    // After every worker has returned: a connection the acceptor handed to this loop after it
    // had drained is answered 503 and closed (the loop is stopping), not left open.
    void refuse_inbox() { adopt_inbox(); }

private:
    static constexpr std::size_t scratch_size = 64 * 1024;
    static constexpr int epoll_batch = 256;

    void tick_clock() noexcept {
        now_ = monotonic_ms();
        date_.update(std::time(nullptr));
    }

    int wait_timeout() const noexcept {
        if (!set_.has_deadlines() && !stopping_ && !accept_paused_) return -1;
        return static_cast<int>(set_.tick_ms());
    }

    // single: a wake-up means stop. sharded: take handed-over connections, then look at the
    // stop flag. shared (every turn, as a wake reaches one thread only): look at the flag.
    void on_wake() {
        if constexpr (is_single<Policy>) {
            begin_stop();
        } else if constexpr (is_sharded<Policy>) {
            adopt_inbox();
            if (link_.stop != nullptr && link_.stop->load(std::memory_order_relaxed)) begin_stop();
        } else {
            if (set_.stop_requested()) begin_stop();
        }
    }

    // Once c is closed it must not be touched: under the shared policy another thread may
    // already have been given its slot for a new connection. closed_ says whether it was.
    void dispatch(const poll_event& ev) {
        if (ev.data == listener_data()) return accept_all();
        conn& c = *static_cast<conn*>(ev.data);
        set_type::take_ownership(c);
        closed_ = nullptr;
        if constexpr (is_shared<Policy>) {
            if (set_type::take_expired(c)) {
                on_deadline(c);
                if (closed_ != &c) set_.event_done(c);
                return;
            }
        }
        if (ev.writable && (c.watching & watch_write)) on_writable(c);
        if (closed_ != &c && ev.readable && (c.watching & watch_read)) on_readable(c);
        if (closed_ != &c) set_.event_done(c);
    }

    // ---- accept -------------------------------------------------------------------------

    void* listener_data() noexcept {
        if constexpr (is_shared<Policy>) return &set_.listener;
        else return &listener_;
    }
    int listener_fd() const noexcept {
        if constexpr (is_shared<Policy>) return set_.listener.get();
        else return listener_.get();
    }

    void accept_all() {
        for (;;) {
            int fd = accept_nonblocking(listener_fd());
            if (fd >= 0) {
                hand_off(fd);
                continue;
            }
            if (errno == EINTR || errno == ECONNABORTED) continue;
            // Out of descriptors or memory: stop watching the listener instead of spinning on
            // it; accepting resumes when a connection closes, or after a pause.
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) return pause_accepting();
            break;  // EAGAIN: the queue is empty
        }
        if constexpr (is_shared<Policy>) rearm_listener();
    }

    // sharded with an acceptor: the next loop in turn takes the connection.
    void hand_off(int fd) {
        if constexpr (is_sharded<Policy>) {
            if (!link_.peers.empty()) {
                event_loop* to = link_.peers[link_.next++ % link_.peers.size()];
                if (to != this) {
                    {
                        std::lock_guard<std::mutex> g(to->link_.lock);
                        to->link_.inbox.push_back(fd);
                    }
                    return to->wake();
                }
            }
        }
        start_connection(fd);
    }

    void adopt_inbox() {
        if constexpr (is_sharded<Policy>) {
            std::vector<int> fds;
            {
                std::lock_guard<std::mutex> g(link_.lock);
                std::swap(fds, link_.inbox);
            }
            for (int fd : fds) start_connection(fd);
        }
    }

    void start_connection(int fd) {
        if (set_.size() >= max_connections_ || stopping_) return reject_busy(fd);
        prepare_connection(fd);
        set_.add(fd, deadline_kind::header, now_ + opt_.header_timeout.count());
    }

    // Over the connection limit: a fixed 503, written without waiting, then close.
    static void reject_busy(int fd) noexcept {
        static constexpr char busy[] =
            "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        [[maybe_unused]] auto n = send_some(fd, busy, sizeof busy - 1);
        ::close(fd);
    }

    void pause_accepting() noexcept {
        accept_paused_ = true;
        accept_retry_at_ = now_ + 100;
        if constexpr (!is_shared<Policy>) set_.poller().modify(listener_fd(), listener_data(), watch_none);
    }

    void resume_accepting() noexcept {
        accept_paused_ = false;
        if constexpr (is_shared<Policy>) rearm_listener();
        else if (listener_) set_.poller().modify(listener_fd(), listener_data(), watch_read);
    }

    void rearm_listener() noexcept {
        if constexpr (is_shared<Policy>)
            if (!accept_paused_ && set_.listener_open.load(std::memory_order_relaxed))
                set_.poller().modify(listener_fd(), listener_data(), watch_read, poll_mode::oneshot);
    }

    // ---- read and serve -----------------------------------------------------------------

    void on_readable(conn& c) {
        if (c.lingering) return discard_input(c);
        bool fresh = c.in.empty();
        std::size_t room = fresh ? scratch_.capacity() : make_room(c);
        char* buf = fresh ? scratch_.data() : c.in.data();
        std::size_t have = fresh ? 0 : c.in.size();
        ssize_t n = ::recv(c.fd, buf + have, room, 0);
        if (n <= 0) {
            if (n < 0 && retry_later()) return;
            return on_eof(c, n == 0);
        }
        std::size_t len = have + static_cast<std::size_t>(n);
        if (!fresh) c.in.resize(len);
        // A head arriving in pieces is parsed again only when a line ends in the new bytes or
        // the buffer is full, so a client sending one byte at a time costs a scan of each byte,
        // not a re-parse per byte.
        if (!fresh && !c.parser.head_complete() && len < head_capacity_ &&
            std::memchr(buf + have, '\n', static_cast<std::size_t>(n)) == nullptr)
            return;
        serve(c, buf, len);
        keep_tail(c, buf, fresh, len);
        flush(c);
    }

    // Room to read behind a connection's leftover bytes: the rest of the head, else the rest
    // of the declared body up to one read's worth. Memory follows the bytes that arrive, not
    // what a head declares, so idle clients that declare large bodies reserve little.
    std::size_t make_room(conn& c) {
        std::size_t want = scratch_size;
        if (!c.parser.head_complete()) want = head_capacity_ > c.in.size() ? head_capacity_ - c.in.size() : 1;
        else if (c.parser.declared_size() > c.in.size() && c.parser.declared_size() - c.in.size() < scratch_size)
            want = static_cast<std::size_t>(c.parser.declared_size() - c.in.size());
        c.in.reserve_more(want);
        return c.in.room();
    }

    // Parses and answers every complete request in buf[0, len), stopping after one that
    // closes the connection or streams its body, or once the answers pass write_high_water:
    // later requests wait in the connection until the answers are written, so responses stay
    // in order and a client that pipelines without reading cannot grow server memory.
    // Leaves consumed_ at the end of the last request answered.
    void serve(conn& c, char* buf, std::size_t len) {
        std::size_t off = 0;
        request_head& head = request_access::head(req_);
        while (off < len && !c.close_after && !c.stream) {
            if (out_.size() + c.out.size() - c.out_sent >= opt_.write_high_water) {  // the rest waits for the client
                c.resume = true;
                break;
            }
            parse_result r = c.parser.parse(buf + off, len - off, head, request_access::fields(req_), limits_);
            if (r.status == parse_status::complete) {
                respond(c);
                off += r.consumed;
                c.parser.reset();
                c.head_seen = false;
                c.deadline = deadline_kind::idle;  // a request that follows starts its own deadline
                continue;
            }
            if (r.status == parse_status::incomplete) {
                on_partial(c, head);
                break;
            }
            answer_error(c, *http_status(r.status));  // neither complete nor incomplete: an error
        }
        consumed_ = off;
    }

    // A request has begun but is not complete: start its deadline, and once its head is in,
    // act on Expect before the body is sent (RFC 9110 §10.1.1).
    void on_partial(conn& c, request_head& head) {
        if (!c.parser.head_complete()) {
            if (c.deadline != deadline_kind::header || c.in.empty())
                arm(c, deadline_kind::header, opt_.header_timeout.count());
            return;
        }
        if (c.head_seen) return;
        c.head_seen = true;
        arm(c, deadline_kind::body, opt_.body_timeout.count());
        if (!head.expect_continue) return;
        if (router_.has_route(head.verb, head.method_name, head.path)) {
            static constexpr char interim[] = "HTTP/1.1 100 Continue\r\n\r\n";
            out_.append(interim, sizeof interim - 1);
            return;
        }
        head.keep_alive = false;  // the unsent body would follow: say so, and close after
        respond(c);               // 404 or 405 now, without reading a body the client has not sent
        c.linger = true;
    }

    void respond(conn& c) {
        request_head& head = request_access::head(req_);
        request_access::reset(req_);
        bool close = !head.keep_alive || stopping_;
        response_access::start(res_, out_, date_, head.verb == method::head, close, head.version_minor == 0);
        call_guarded([&] { router_.serve(req_, res_); },
                     [&] {
                         response_access::discard(res_);
                         res_.status(500).text("Internal Server Error\n");
                     });
        if (!res_.sent()) res_.end();
        if (res_.closes_connection()) c.close_after = true;
        if (response_access::streaming(res_))
            c.stream.reset(new stream_state{response_access::take_source(res_),
                                            response_access::stream_length(res_).value_or(unknown_length),
                                            response_access::stream_chunked(res_)});
    }

    // A framing or limit error: the stream can no longer be trusted, so answer and close,
    // draining what the client still sends so that it reads the answer, not a reset.
    void answer_error(conn& c, int status) {
        response_access::start(res_, out_, date_, false, true, false);
        std::string_view reason = reason_phrase(status);
        char text[64];
        std::size_t n = reason.size() < sizeof text - 1 ? reason.size() : sizeof text - 1;
        std::memcpy(text, reason.data(), n);
        text[n++] = '\n';
        res_.status(status).text({text, n});
        c.close_after = c.linger = true;
    }

    // After serve(): the bytes of an incomplete request stay with the connection; when there
    // are none, its buffer goes back to the pool and the idle deadline starts.
    void keep_tail(conn& c, char* buf, bool fresh, std::size_t len) {
        std::size_t off = consumed_;
        if (c.close_after || off == len) {
            if (c.close_after && off < len) c.linger = true;  // unread requests: drain them
            if (c.in.capacity() != 0) pool_.release(c.in);
            if (!c.close_after) arm(c, deadline_kind::idle, opt_.idle_timeout.count());
            return;
        }
        std::size_t keep = c.parser.kept(len - off);
        if (fresh) {
            pool_.acquire(c.in);
            c.in.append(buf + off, keep);
        } else {
            c.in.consume(off);
            c.in.resize(keep);
        }
    }

    // ---- write --------------------------------------------------------------------------

    // Sends the batch's responses in one call; parks what the socket did not take.
    void flush(conn& c) {
        if (!out_.empty()) {
            if (!c.out.empty()) {
                c.out.append(out_.data(), out_.size());
                out_.clear();
                return write_parked(c);
            }
            if (!send_or_park(c)) return;
            if (!c.out.empty()) arm(c, deadline_kind::write, opt_.write_timeout.count());
        }
        after_write(c);
    }

    // Sends out_ to c and parks in c.out what the socket did not take. False when the send
    // failed and the connection was closed.
    bool send_or_park(conn& c) {
        ssize_t n = send_some(c.fd, out_.data(), out_.size());
        if (n < 0 && !retry_later()) {
            out_.clear();
            close_now(c);
            return false;
        }
        std::size_t sent = n < 0 ? 0 : static_cast<std::size_t>(n);
        if (sent < out_.size()) c.out.append(out_.data() + sent, out_.size() - sent);
        out_.clear();
        return true;
    }

    // After a failed recv or send: the socket is merely not ready (or a signal interrupted).
    static bool retry_later() noexcept { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR; }

    // Writable: send parked output; else produce more of a stream; else answer the requests
    // that waited behind a finished stream.
    void on_writable(conn& c) {
        if (!c.out.empty()) return write_parked(c);
        if (c.stream) return pump(c);
        if (!c.resume) return after_write(c);
        c.resume = false;
        std::size_t len = c.in.size();
        serve(c, c.in.data(), len);
        keep_tail(c, c.in.data(), false, len);
        flush(c);
    }

    // Sends up to a few batches of a streamed body, then yields to other connections; a
    // short write parks the rest and the next writability continues. While a stream runs the
    // connection is not read, so at most about one batch per connection waits in memory.
    void pump(conn& c) {
        for (int round = 0; round < 4; ++round) {
            produce(c);
            if (!c.stream) {  // the end: send it, then serve what waited behind the stream
                c.resume = !c.in.empty();
                return flush(c);
            }
            if (!send_or_park(c)) return;
            if (!c.out.empty()) break;
        }
        arm(c, deadline_kind::write, opt_.write_timeout.count());
        after_write(c);
    }

    // Appends the next piece of c's stream to out_ (chunk framing included); at the end, the
    // last chunk, and the stream is released. A source that throws or ends short leaves the
    // framing unfinished, so the connection closes after what was sent.
    void produce(conn& c) {
        stream_state& s = *c.stream;
        std::size_t cap = s.left < scratch_size ? static_cast<std::size_t>(s.left) : scratch_size;
        std::size_t n = 0;
        bool failed = false;
        call_guarded([&] { n = cap == 0 ? 0 : s.source(scratch_.data(), cap); }, [&] { failed = true; });
        if (n > cap) n = cap;
        if (s.chunked && n != 0) append_chunk_size(n);
        out_.append(scratch_.data(), n);
        if (s.chunked && n != 0) out_.append("\r\n", 2);
        if (s.left != unknown_length) s.left -= n;
        if (n != 0 && s.left != 0 && !failed) return;
        bool truncated = failed || (s.left != unknown_length && s.left != 0);
        if (s.chunked && !truncated) out_.append("0\r\n\r\n", 5);
        if (truncated || (!s.chunked && s.left == unknown_length)) c.close_after = true;
        c.stream.reset();
    }

    void append_chunk_size(std::size_t n) {
        char hex[20];
        char* p = hex + sizeof hex - 2;
        p[0] = '\r';
        p[1] = '\n';
        do {
            *--p = "0123456789abcdef"[n & 15];
            n >>= 4;
        } while (n != 0);
        out_.append(p, static_cast<std::size_t>(hex + sizeof hex - p));
    }

    void write_parked(conn& c) {
        ssize_t n = send_some(c.fd, c.out.data() + c.out_sent, c.out.size() - c.out_sent);
        if (n < 0) {
            if (!retry_later()) return close_now(c);
            n = 0;  // nothing went, yet new output may have passed the high-water mark
        }
        c.out_sent += static_cast<std::size_t>(n);
        if (c.out_sent == c.out.size()) {
            c.out.release();
            c.out_sent = 0;
        } else if (n > 0) {
            arm(c, deadline_kind::write, opt_.write_timeout.count());  // progress: a new stall deadline
        }
        after_write(c);
    }

    // Sets interest and deadline for what the connection waits for next.
    void after_write(conn& c) {
        std::size_t pending = c.out.size() - c.out_sent;
        if (pending != 0) {
            bool keep_reading =
                pending < opt_.write_high_water && !c.close_after && !c.read_eof && !c.stream && !c.resume;
            return set_.watch(c, static_cast<std::uint8_t>(watch_write | (keep_reading ? watch_read : 0)));
        }
        if (c.stream || c.resume) return set_.watch(c, watch_write);  // continue on writability
        if (c.close_after) return finish(c);
        if (c.read_eof) return close_now(c);
        set_.watch(c, watch_read);
        if (c.deadline == deadline_kind::write)
            arm(c, c.in.empty() ? deadline_kind::idle : deadline_kind::header,
                (c.in.empty() ? opt_.idle_timeout : opt_.header_timeout).count());
    }

    // ---- close --------------------------------------------------------------------------

    void on_eof(conn& c, bool clean) {
        if (!clean) return close_now(c);  // reset by the peer
        c.read_eof = true;
        if (c.out.empty() && !c.stream) return close_now(c);
        set_.watch(c, watch_write);  // a half-closed client still gets what it asked for
    }

    // Closes once the output is written: at once, or after draining unread input.
    void finish(conn& c) {
        if (!c.linger) return close_now(c);
        ::shutdown(c.fd, SHUT_WR);
        c.lingering = true;
        set_.watch(c, watch_read);
        arm(c, deadline_kind::linger, opt_.linger_timeout.count());
    }

    void discard_input(conn& c) {
        ssize_t n = ::recv(c.fd, scratch_.data(), scratch_.capacity(), 0);
        if (n == 0 || (n < 0 && !retry_later())) close_now(c);
    }

    void close_now(conn& c) {
        if (c.in.capacity() != 0) pool_.release(c.in);
        closed_ = &c;
        set_.remove(c);
        if (accept_paused_) resume_accepting();
    }

    // ---- deadlines ----------------------------------------------------------------------

    void arm(conn& c, deadline_kind kind, std::int64_t ms) noexcept {
        c.deadline = kind;
        set_.arm(c, now_ + ms);
    }

    void on_deadline(conn& c) {
        bool request_started = !c.in.empty() || c.parser.head_complete();
        bool answer_408 = (c.deadline == deadline_kind::header || c.deadline == deadline_kind::body) &&
                          request_started && c.out.empty() && !c.close_after && !c.lingering;
        if (c.deadline == deadline_kind::write) discard_unsent_on_close(c.fd);  // it stopped reading
        if (!answer_408) return close_now(c);
        answer_error(c, 408);  // RFC 9110 §15.5.9
        pool_.release(c.in);
        c.linger = false;      // the client is not sending: close once the answer is out
        flush(c);
    }

    // ---- stop ---------------------------------------------------------------------------

    void begin_stop() {
        if (stopping_) return;
        stopping_ = true;
        std::int64_t deadline = now_ + opt_.stop_timeout.count();
        if constexpr (is_shared<Policy>) {
            // Other threads may still be in accept_all() with this descriptor, so it is not
            // closed (its number could be reused under them) but shut: Linux then stops
            // listening, and new connections are refused. The runner closes it after joining.
            if (set_.begin_stop(deadline)) {
                set_.listener_open.store(false);
                set_.poller().remove(set_.listener.get());
                ::shutdown(set_.listener.get(), SHUT_RDWR);
            }
            return;  // the reaper closes idle connections (see shared_set.hpp)
        } else {
            stop_deadline_ = deadline;
            if (listener_) {
                set_.poller().remove(listener_.get());
                listener_.reset();
            }
            // A request in progress is answered (with Connection: close, since stopping_ is
            // set); parked output is written first; idle connections close now.
            set_.for_each([this](conn& c) {
                if (!c.in.empty() || c.lingering) return;
                if (c.out.empty() && !c.stream) return close_now(c);
                c.close_after = true;
            });
        }
    }

    bool drained() const noexcept {
        if constexpr (is_shared<Policy>) {
            if (!set_.stopping()) return false;
            return set_.size() == 0 || now_ >= set_.stop_deadline() + 2 * set_.tick_ms();
        } else {
            return stopping_ && (set_.size() == 0 || now_ >= stop_deadline_);
        }
    }

    const options& opt_;
    const router& router_;
    std::conditional_t<is_shared<Policy>, no_link, local_set> own_set_;
    set_type& set_;
    unique_fd listener_;
    [[maybe_unused]] link_type link_;
    buffer_pool pool_;
    byte_buffer scratch_;  // every fresh read lands here
    byte_buffer out_;      // responses to the current batch
    request req_;
    response res_;
    date_cache date_;
    parse_limits limits_;
    std::size_t head_capacity_ = 0;
    std::size_t consumed_ = 0;
    const conn* closed_ = nullptr;  // the connection dispatch() is on, once closed
    std::size_t max_connections_ = static_cast<std::size_t>(-1);
    std::int64_t now_ = 0;
    std::int64_t stop_deadline_ = 0;
    std::int64_t accept_retry_at_ = 0;
    std::uint16_t port_ = 0;
    bool stopping_ = false;
    bool accept_paused_ = false;
};

} // namespace skiff::detail

#endif // SKIFF_SERVER_EVENT_LOOP_HPP
