// The protocol side of a connection (what redis keeps in networking.c, apart from its ae.c
// loop): read, parse, route, respond, keep the tail, and move the connection from phase to
// phase (connection.hpp has the diagram). Each event handler returns the connection's fate,
// so the caller knows whether it may still touch it.
//
//   on_readable()  one read into the loop's scratch buffer (or behind a connection's leftover)
//   serve()        parse every complete request in it, route, run handlers; responses are
//                  appended to the writer's batch in request order
//   keep_tail()    an incomplete request's bytes move into the connection; nothing else does
//   after_write()  given what the writer did, what to wait for next (a switch over the phase)
//
// It does not wait for events, accept, or know the threading policy: the loop (event_loop.hpp)
// calls it, and the connection set (Set) registers interest and deadlines. It sends nothing
// itself: the writer (writer.hpp) does.
//
// A route that takes its body unread (a streamed upload, server/upload.hpp) is run once the
// head is in (route_body()), and a handler that answers later (response::defer) leaves what
// will answer; either way the connection is handed through the door of handover.hpp
// (phase::handed) to that taker, of which the session knows nothing more: the taker reads,
// writes and waits through the door, and gives the connection back when it is done. While a
// connection is handed it parses nothing more (the simplest rule that keeps answers in request
// order): what was read stays in its tail.
//
// Invariants: once a connection is closed (fate::closed) it is not touched again, since under
// the shared policy another thread may already have its slot. Requests on one connection are
// answered in order; a connection whose answers pass write_high_water stops being read until
// the client takes them, so a client that pipelines without reading cannot grow server memory.
#ifndef SKIFF_SERVER_SESSION_HPP
#define SKIFF_SERVER_SESSION_HPP

#include "skiff/config.hpp"
#include "skiff/detail/buffer_pool.hpp"
#include "skiff/detail/byte_buffer.hpp"
#include "skiff/detail/guarded_call.hpp"
#include "skiff/http/parse_status.hpp"
#include "skiff/http/request.hpp"
#include "skiff/http/request_head.hpp"
#include "skiff/http/response.hpp"
#include "skiff/http/status.hpp"
#include "skiff/platform/socket.hpp"
#include "skiff/poller/poll_event.hpp"
#include "skiff/router/router.hpp"
#include "skiff/server/connection.hpp"
#include "skiff/server/connection_set.hpp"
#include "skiff/server/handover.hpp"
#include "skiff/server/hooks.hpp"
#include "skiff/server/loop_hub.hpp"
#include "skiff/server/loop_time.hpp"
#include "skiff/server/options.hpp"
#include "skiff/server/report.hpp"
#include "skiff/server/writer.hpp"

#include <chrono>        // std::chrono::steady_clock, for a response hook
#include <cstddef>       // std::size_t
#include <cstdint>       // std::int64_t, std::uint8_t
#include <cstring>       // std::memchr, std::memcpy
#include <optional>      // a stream's length
#include <string>        // pushed bytes
#include <string_view>   // std::string_view
#include <sys/socket.h>  // recv, shutdown

namespace skiff::detail {

// While the server stops, every answer says Connection: close.
enum class serving : std::uint8_t { normally, until_stop };

template <class Set>
class session {
    using conn = typename Set::conn;

    // Where the writer charges parked output (writer.hpp): the set's memory budget, whose
    // returns wake connections waiting for it.
    struct output_account {
        Set* set = nullptr;
        void take(std::size_t n) { set->take_memory(n); }
        void give(std::size_t n) { set->give_back(n); }
    };
    using writer_type = writer<output_account>;

public:
    session(const options& opt, const router& routes, Set& set, const loop_time& time) noexcept
        : opt_(opt), router_(routes), set_(set), time_(time) {}

    // Allocates every buffer the hot path uses, once.
    void open() {
        limits_ = {opt_.max_request_line, opt_.max_header_bytes, opt_.max_headers, opt_.max_body};
        limits_.hold_bodies = router_.streams_any() ? body_hold::ask : body_hold::never;
        head_capacity_ = opt_.max_request_line + opt_.max_header_bytes + 4;
        pool_.set_size(head_capacity_);
        scratch_.reserve_more(read_size);
        writer_.open(read_size, output_account{&set_});
        request_access::init(req_, opt_.max_headers, opt_.max_request_line);
        set_.limit_budget(opt_.max_buffered);  // the runner may have given this loop less
        hub_anchor& a = set_.anchor();
        a.poller = &set_.poller();
        a.deferred_timeout_ms = opt_.deferred_timeout.count();
        a.push_limit = static_cast<std::int64_t>(opt_.max_push_buffer);
        a.push_high_water = opt_.write_high_water;
        a.pushes.set_share(set_.budget_limit() / 2);  // push output's share (push_ledger.hpp says why half)
        response_access::lend(res_, a);
    }

    void begin_stop() noexcept { serving_ = serving::until_stop; }
    // Which loop this is (response_event::loop): set by the runner, 0 unless threaded.
    void number(std::size_t loop) noexcept { loop_ = loop; }

    fate on_readable(conn& c) {
        if (c.state >= phase::lingering) return on_other_readable(c);
        bool fresh = c.in.empty();
        if (fresh && SKIFF_UNLIKELY(set_.budget_full())) return wait_for_memory(c);
        std::size_t room = scratch_.capacity();
        if (!fresh) {
            room = make_room(c);
            if (SKIFF_UNLIKELY(room == 0)) return wait_for_memory(c);
        }
        char* buf = fresh ? scratch_.data() : c.in.data();
        std::size_t have = fresh ? 0 : c.in.size();
        ssize_t n = ::recv(c.fd, buf + have, room, 0);
        if (n <= 0) {
            if (n < 0 && retry_later()) return fate::open;
            return on_eof(c, n == 0);
        }
        std::size_t len = have + static_cast<std::size_t>(n);
        if (!fresh) c.in.resize(len);
        // A head arriving in pieces is parsed again only when a line ends in the new bytes or
        // the buffer is full, so a client sending one byte at a time costs a scan of each byte,
        // not a re-parse per byte.
        if (!fresh && !c.parser.head_complete() && len < head_capacity_ &&
            std::memchr(buf + have, '\n', static_cast<std::size_t>(n)) == nullptr)
            return fate::open;
        std::size_t used = serve(c, buf, len);
        keep_tail(c, buf, fresh, len, used);
        return after_write(c, writer_.flush(c));
    }

    // Writable: send parked output; else produce more of a stream; else answer the requests
    // that waited for the client to take earlier answers.
    fate on_writable(conn& c) {
        if (!c.out.empty()) {
            write_status w = writer_.write_parked(c);
            if (SKIFF_UNLIKELY(c.state == phase::handed)) c.stream->taker->on_sent(door_, c);
            return after_write(c, w);
        }
        if (c.state == phase::streaming) return pump(c);
        if (c.state != phase::waiting) return after_write(c, write_status::drained);
        c.state = phase::reading;
        std::size_t len = c.in.size();
        std::size_t used = serve(c, c.in.data(), len);
        keep_tail(c, c.in.data(), false, len, used);
        return after_write(c, writer_.flush(c));
    }

    // A deadline passed: a request still arriving is answered 408 (RFC 9110 §15.5.9); any
    // other connection closes.
    fate on_deadline(conn& c) {
        if (SKIFF_UNLIKELY(c.deadline == deadline_kind::paused)) return on_handed_deadline(c);
        bool request_started = !c.in.empty() || c.parser.head_complete();
        bool answer_408 = (c.deadline == deadline_kind::header || c.deadline == deadline_kind::body) &&
                          request_started && c.out.empty() && takes_requests(c.state);
        if (c.deadline == deadline_kind::write) discard_unsent_on_close(c.fd);  // it stopped reading
        if (!answer_408) return close(c);
        set_.forget_waiting(c);
        answer_error(c, 408, phase::closing, rejection::timeout, {c.in.data(), c.in.size()});  // no draining
        release_in(c);
        return after_write(c, writer_.flush(c));
    }

    // stop() on a loop that owns its connections: idle ones close now; one with a request in
    // progress or output to write finishes that (with Connection: close), then closes.
    // A handed connection finishes too (its answer says Connection: close), as any request in progress.
    fate settle_for_stop(conn& c) {
        if (!c.in.empty() || c.state == phase::lingering) return fate::open;
        bool working = c.state == phase::streaming || c.state == phase::handed;
        if (c.out.empty() && !working) return close(c);
        close_after_output(c, phase::closing);
        return fate::open;
    }

    // An event for a connection watched for nothing. For one waiting on its answer that had
    // stopped watching, only an error or a hang-up is reported so: it is gone. Any other is a
    // slot closed earlier in the same wait's batch (stop() settles connections before the
    // batch is dispatched), whose stale event must leave it alone.
    // One waiting for memory (memory_budget.hpp) is not watched either, and gone likewise.
    fate on_unwatched_event(conn& c) {
        bool may_wait_unwatched = c.state == phase::body || c.state == phase::handed;
        if (!may_wait_unwatched && !set_.waits_for_memory(c)) return fate::open;
        if (c.fd < 0) return fate::open;
        return close(c);
    }

    // Whatever of c's output is still in the loop's batch goes with it: the batch holds only
    // the current connection's answers (the writer's invariant), and the next connection's
    // flush would otherwise send them (a recycled connection once got a closed one's head).
    fate close(conn& c) {
        writer_.batch().clear();
        if (c.stream && c.stream->taker) c.stream->taker->abandon();
        set_.forget_waiting(c);
        if (c.in.capacity() != 0) release_in(c);
        writer_.forget(c);
        set_.remove(c);
        if (SKIFF_UNLIKELY(static_cast<bool>(opt_.on_connection))) opt_.on_connection(connection_change::closed, loop_);
        return fate::closed;
    }

    // A handed connection's turn that comes from elsewhere (loop_context::serve_handed: an
    // answer made on another thread), on the thread that serves c.
    fate serve_handed(conn& c, loop_context::handed_call call, void* arg) {
        fate f = call(door_, c, arg);
        retired_.reset();  // a taker that finished during the call
        return f;
    }

private:
    static constexpr std::size_t read_size = 64 * 1024;

    // ---- read and serve -----------------------------------------------------------------

    // Room to read behind a connection's leftover bytes: the rest of the head, else the rest
    // of the declared body, or one read's worth of a chunked one. Where the memory budget is
    // kept, a declared body is reserved whole at its first growth, so a body once granted
    // never waits again and bodies cannot each hold part of the budget and all wait for more;
    // the budget, not the client, bounds what declared bodies reserve. 0: refused, wait.
    std::size_t make_room(conn& c) {
        std::size_t want = read_size;
        std::uint64_t declared = c.parser.declared_size();
        if (!c.parser.head_complete()) want = head_capacity_ > c.in.size() ? head_capacity_ - c.in.size() : 1;
        else if (declared > c.in.size())
            want = static_cast<std::size_t>(declared - c.in.size());
        if (c.in.room() < want && !grow_within_budget(c, want)) return 0;
        return c.in.room();
    }

    // ---- the memory budget (the set keeps it: connection_set.hpp) -----------------------

    // What an input buffer of this capacity counts: all of it once it grew past both a pool
    // buffer and one read's worth (what the tail of a fresh read may need, bounded per
    // connection already), else nothing. So a waiting connection holds none of the budget.
    std::size_t charge_of(std::size_t capacity) const noexcept {
        std::size_t free_size = pool_.buffer_size() > read_size ? pool_.buffer_size() : read_size;
        return capacity > free_size ? capacity : 0;
    }

    // Grows c's input buffer for want more bytes, if the budget grants what the growth
    // counts; false, and nothing taken, when it does not.
    bool grow_within_budget(conn& c, std::size_t want) {
        std::size_t before = charge_of(c.in.capacity());
        std::size_t after = charge_of(c.in.capacity_after_reserving(want));
        if (after > before && !set_.try_grow(c, after - before, before)) return false;
        c.in.reserve_more(want);
        return true;
    }

    void release_in(conn& c) {
        std::size_t charge = charge_of(c.in.capacity());
        pool_.release(c.in);
        if (charge != 0) set_.give_back(charge);  // waiting connections read again
    }

    // Not read until memory is given back; its body deadline keeps running.
    fate wait_for_memory(conn& c) {
        set_.wait_for_memory(c);
        return fate::open;
    }

    // Parses and answers every complete request in buf[0, len) while the connection takes
    // requests (not after one that closes it or streams its body), and while the answers stay
    // under write_high_water. Returns the bytes used: the end of the last request answered.
    std::size_t serve(conn& c, char* buf, std::size_t len) {
        std::size_t used = 0;
        request_head& head = request_access::head(req_);
        while (used < len && takes_requests(c.state)) {
            if (writer_.batch().size() + writer_type::pending(c) >= opt_.write_high_water) {
                c.state = phase::waiting;  // the rest waits for the client to read
                break;
            }
            parse_result r = c.parser.parse(buf + used, len - used, head, request_access::fields(req_), limits_);
            if (r.status == parse_status::complete) {
                c.state = phase::reading;  // a body phase, if any, is over
                respond(c, r.consumed);
                used += r.consumed;
                c.parser.reset();
                c.deadline = deadline_kind::idle;  // a request that follows starts its own deadline
                continue;
            }
            if (r.status == parse_status::incomplete) {
                on_partial(c, head);
                break;
            }
            if (r.status == parse_status::body_follows) {  // only where a route streams its body
                used += route_body(c, buf + used, len - used);
                continue;
            }
            answer_error(c, *http_status(r.status), phase::draining, rejection_for(r.status), {buf + used, len - used});
        }
        return used;
    }

    // A request has begun but is not complete: start its deadline, and once its head is in,
    // act on Expect before the body is sent (RFC 9110 §10.1.1).
    void on_partial(conn& c, request_head& head) {
        if (!c.parser.head_complete()) {
            if (c.deadline != deadline_kind::header || c.in.empty()) arm(c, deadline_kind::header);
            return;
        }
        if (c.state == phase::body) return;
        c.state = phase::body;
        arm(c, deadline_kind::body);
        if (!head.expect_continue) return;
        if (router_.has_route(head.verb, head.method_name, head.path)) {
            static constexpr char interim[] = "HTTP/1.1 100 Continue\r\n\r\n";
            writer_.batch().append(interim, sizeof interim - 1);
            return;
        }
        head.keep_alive = false;  // the unsent body would follow: say so, and close after
        respond(c, 0);            // 404 or 405 now, without reading a body the client has not sent
        close_after_output(c, phase::draining);
    }

    // `received`: the request's bytes, for a response hook. With no hook set this is one test
    // of an empty std::function.
    SKIFF_ALWAYS_INLINE void respond(conn& c, std::size_t received) {
        if (SKIFF_UNLIKELY(static_cast<bool>(opt_.on_response))) return respond_observed(c, received);
        answer_request(c);
    }

    SKIFF_ALWAYS_INLINE void answer_request(conn& c) {
        request_head& head = request_access::head(req_);
        request_access::reset(req_);
        bool close = !head.keep_alive || serving_ == serving::until_stop;
        response_access::start(res_, writer_.batch(), time_.date, head.verb == method::head, close,
                               head.version_minor == 0);
        call_guarded([&] { router_.serve(req_, res_); },
                     [&] {
                         on_handler_error();
                         answer_internal_error();
                     });
        if (!res_.sent()) res_.end();
        if (response_access::streaming(res_)) start_stream(c);
        else if (SKIFF_UNLIKELY(response_access::hands_over(res_))) hand_over_answer(c);
        if (res_.closes_connection()) close_after_output(c, phase::closing);
    }

    // The handler threw: the error hook sees what it threw and the request, before the 500.
    SKIFF_NOINLINE void on_handler_error() {
        outcome_ = rejection::handler_exception;
        if (!opt_.on_error) return;
        const char* what = describe_current_exception();
        call_guarded([&] { opt_.on_error(what, req_); }, [] {});
    }

    // respond() with a response hook: the answer is timed and measured, then reported (one
    // made later when it is written, through the door).
    SKIFF_NOINLINE void respond_observed(conn& c, std::size_t received) {
        std::size_t start = writer_.batch().size();
        outcome_ = rejection::none;
        auto began = std::chrono::steady_clock::now();
        answer_request(c);
        auto took = std::chrono::steady_clock::now() - began;
        if (response_access::pending_deferred(res_) != nullptr) return;
        const request_head& head = request_access::head(req_);
        response_event e;
        e.reason = outcome_;
        e.status = res_.status();
        e.bytes_sent = writer_.batch().size() - start;
        e.bytes_received = received;
        e.duration = std::chrono::duration_cast<std::chrono::nanoseconds>(took);
        e.method = head.method_name;
        e.target = head.target;
        e.version = version_text(head.version_minor);
        report(c, e);
    }

    void report(conn& c, response_event& e) {
        peer_text peer(c.fd);
        e.peer = peer.view();
        e.loop = loop_;
        call_guarded([&] { opt_.on_response(e); }, [] {});  // a throwing hook must not end the loop
    }

    // Streams and files only, so kept out of respond(): inlined there, it cost every request
    // of the contract app 19 instructions (callgrind, 68 B keep-alive, 1,203 -> 1,185).
    // The request's method and target are kept only where an error hook may need them.
    SKIFF_NOINLINE void start_stream(conn& c) {
        request_origin origin;
        if (opt_.on_error) origin = request_access::origin_of(req_);
        start_stream(c, std::move(origin));
    }
    void start_stream(conn& c, request_origin origin) {
        std::optional<std::uint64_t> length = response_access::stream_length(res_);
        stream_framing framing = length                                 ? stream_framing::sized
                                 : response_access::stream_chunked(res_) ? stream_framing::chunked
                                                                         : stream_framing::until_close;
        c.stream.reset(new stream_state{response_access::take_source(res_), framing, length.value_or(0), phase::reading});
        c.stream->origin = std::move(origin);
        c.state = phase::streaming;
    }

    // A stream's source threw (called inside the catch): the writer cuts the body (its head
    // has left, so there is no 500), and the error hook hears what was thrown, with the
    // request as far as it is kept (its method and target; its head is gone by now).
    SKIFF_NOINLINE void on_source_error(const stream_state& st) {
        if (!opt_.on_error) return;
        const char* what = describe_current_exception();
        request origin;
        request_access::describe(origin, st.origin);
        call_guarded([&] { opt_.on_error(what, origin); }, [] {});
    }

    // A framing or limit error: the stream can no longer be trusted, so answer and close,
    // draining what the client still sends (`how`) so that it reads the answer, not a reset.
    // `why` and `input` (the bytes of the request being rejected) are for a response hook.
    SKIFF_NOINLINE void answer_error(conn& c, int status, phase how, rejection why, std::string_view input) {
        std::size_t start = writer_.batch().size();
        response_access::start(res_, writer_.batch(), time_.date, false, true, false);
        std::string_view reason = reason_phrase(status);
        char text[64];
        std::size_t n = reason.size() < sizeof text - 1 ? reason.size() : sizeof text - 1;
        std::memcpy(text, reason.data(), n);
        text[n++] = '\n';
        res_.status(status);
        if (SKIFF_UNLIKELY(static_cast<bool>(opt_.on_rejection))) decorate_rejection(why, input);
        if (!res_.sent()) res_.text({text, n});  // else the hook rendered its own body
        close_after_output(c, how);
        if (SKIFF_UNLIKELY(static_cast<bool>(opt_.on_response))) report_rejection(c, why, input, writer_.batch().size() - start);
    }

    // The rejection hook adds its fields, and may write the body itself (a JSON API's error
    // object); one that throws leaves the answer as it was. The status is the server's: a hook
    // that changed it gets the plain answer instead. The reason is told as the response hook
    // tells it (a 400 whose request line is good is the header's fault).
    SKIFF_NOINLINE void decorate_rejection(rejection why, std::string_view input = {}) {
        response_event e;
        e.reason = why;
        describe_request_line(input, limits_, e);
        int status = res_.status();
        call_guarded([&] { opt_.on_rejection(res_, e.reason); }, [] {});
        if (res_.status() == status) return;
        response_access::discard(res_);
        res_.status(status);
    }

    // A handler threw: its answer so far is discarded, and the 500 goes out decorated.
    SKIFF_NOINLINE void answer_internal_error() {
        std::unique_ptr<handed> dropped(response_access::take_taker(res_));  // it deferred, then threw
        response_access::discard(res_);
        res_.status(500);
        if (opt_.on_rejection) decorate_rejection(rejection::handler_exception);
        if (!res_.sent()) res_.text("Internal Server Error\n");
    }

    SKIFF_NOINLINE void report_rejection(conn& c, rejection why, std::string_view input, std::size_t bytes) {
        response_event e;
        e.reason = why;
        e.status = res_.status();
        e.bytes_sent = bytes;
        e.bytes_received = input.size();
        describe_request_line(input, limits_, e);
        report(c, e);
    }

    // After serve(): the bytes of an incomplete request (or of requests that wait) stay with
    // the connection; when there are none, its buffer goes back to the pool and the idle
    // deadline starts. Inlined: called once per read, 16 instructions a request as a call.
    SKIFF_ALWAYS_INLINE void keep_tail(conn& c, char* buf, bool fresh, std::size_t len, std::size_t used) {
        bool closes = ends_after_output(c);
        if (closes || used == len) {
            if (closes && used < len) close_after_output(c, phase::draining);  // unread requests: drain them
            if (c.in.capacity() != 0) release_in(c);
            if (!closes) arm(c, deadline_kind::idle);
            return;
        }
        std::size_t keep = c.parser.kept(len - used);
        if (fresh) {
            pool_.acquire(c.in);
            c.in.append(buf + used, keep);  // at most a read's worth: outside the budget
        } else {
            c.in.consume(used);
            c.in.resize(keep);
        }
    }

    // ---- after a write ------------------------------------------------------------------

    fate pump(conn& c) {
        phase then = c.stream->then;  // read first: the writer frees the stream at its end
        pump_result r = writer_.pump(c, scratch_.data(), [&] { on_source_error(*c.stream); });
        if (r.end == stream_end::not_yet && r.write != write_status::failed) arm(c, deadline_kind::write);
        if (r.end == stream_end::truncated) then = phase::closing;  // unfinished framing: close after it
        if (r.end != stream_end::not_yet) c.state = then == phase::reading && !c.in.empty() ? phase::waiting : then;
        return after_write(c, r.write);
    }

    // What the connection waits for next, given what the writer did (which also says whether
    // output is pending: only `drained` leaves none). The common case, everything written and
    // the next request awaited, is kept apart so that it inlines: 24 instructions a request
    // less than one function for all cases (callgrind, contract app, keep-alive).
    SKIFF_ALWAYS_INLINE fate after_write(conn& c, write_status w) {
        if (w == write_status::drained && takes_requests(c.state)) return await_request(c);
        return after_write_otherwise(c, w);
    }

    SKIFF_NOINLINE fate after_write_otherwise(conn& c, write_status w) {
        switch (w) {
        case write_status::failed: return close(c);
        case write_status::parked: arm(c, deadline_kind::write); [[fallthrough]];
        case write_status::stalled: return await_writable(c);
        case write_status::drained: break;
        }
        switch (c.state) {
        case phase::reading:
        case phase::body: return await_request(c);
        case phase::waiting:
        case phase::streaming:
            // Go on when writable. Everything written may still sit in a full socket buffer,
            // so the wait is the client's to end: a write deadline, not whatever ran before
            // (the head's, counted from long ago, cut pipelined downloads mid-body).
            arm(c, deadline_kind::write);
            set_.watch(c, watch_write);
            return fate::open;
        case phase::closing: return close(c);
        case phase::draining: return linger(c);
        case phase::lingering: return fate::open;  // has no output
        case phase::handed: return c.stream->taker->await(door_, c);
        }
        return fate::open;
    }

    // Output is parked: wait for writability, and keep reading requests only while the
    // connection takes them and the output stays under write_high_water.
    fate await_writable(conn& c) {
        bool keep_reading = writer_type::pending(c) < opt_.write_high_water && takes_requests(c.state);
        set_.watch(c, static_cast<std::uint8_t>(watch_write | (keep_reading ? watch_read : 0)));
        return fate::open;
    }

    SKIFF_ALWAYS_INLINE fate await_request(conn& c) {
        set_.watch(c, watch_read);
        if (c.deadline == deadline_kind::write) arm(c, c.in.empty() ? deadline_kind::idle : deadline_kind::header);
        return fate::open;
    }

    // ---- close --------------------------------------------------------------------------

    // The phase the connection ends its current work in: a stream's (or a handed connection's)
    // `then` while there is one.
    static phase& final_phase(conn& c) noexcept { return c.stream ? c.stream->then : c.state; }
    static bool ends_after_output(conn& c) noexcept {
        return c.state >= phase::streaming && final_phase(c) >= phase::closing;  // reading: one compare
    }

    // No more requests: close (or drain, then close) once the output is written. Draining is
    // never weakened to closing.
    static void close_after_output(conn& c, phase how) noexcept {
        phase& p = final_phase(c);
        if (p != phase::draining) p = how;
    }

    fate on_eof(conn& c, bool clean) {
        if (!clean || (c.out.empty() && c.state != phase::streaming)) return close(c);  // reset, or nothing owed
        close_after_output(c, phase::closing);  // a half-closed client still gets what it asked for
        set_.watch(c, watch_write);
        return fate::open;
    }

    fate linger(conn& c) {
        ::shutdown(c.fd, SHUT_WR);
        c.state = phase::lingering;
        set_.watch(c, watch_read);
        arm(c, deadline_kind::linger);
        return fate::open;
    }

    fate discard_input(conn& c) {
        ssize_t n = ::recv(c.fd, scratch_.data(), scratch_.capacity(), 0);
        if (n == 0 || (n < 0 && !retry_later())) return close(c);
        return fate::open;
    }

    // ---- a connection handed to a feature (handover.hpp) ---------------------------------

    // The handler answers later (response::defer): the connection is handed to what defer()
    // left. Kept out of respond(), which must stay small enough to inline into serve(): 29
    // instructions a request when this was inlined into it (callgrind, contract app). The
    // taker that called answer() (door::answer) is not freed here: it is still running.
    SKIFF_NOINLINE void hand_over_answer(conn& c) {
        c.stream.reset(new stream_state{nullptr, stream_framing::sized, 0, phase::reading});
        c.stream->taker.reset(response_access::take_taker(res_));
        c.state = phase::handed;
        pending_body none;
        (void)c.stream->taker->begin(door_, c, none, nullptr, 0);
    }

    // The deadline of a connection that awaits an answer made elsewhere: the hub answers at
    // deferred_timeout; this closes it a write_timeout later if even that answer could not be
    // written.
    std::int64_t awaited_guard_ms() const noexcept {
        std::int64_t d = opt_.deferred_timeout.count();
        return (d == 0 ? std::int64_t{365} * 24 * 3600 * 1000 : d) + opt_.write_timeout.count();
    }

    SKIFF_NOINLINE fate on_other_readable(conn& c) {
        if (c.state == phase::lingering) return discard_input(c);
        fate f = c.stream->taker->on_readable(door_, c);
        retired_.reset();  // a taker that finished during the event (door::finish)
        return f;
    }

    SKIFF_NOINLINE fate on_handed_deadline(conn& c) {
        fate f = c.stream->taker->on_deadline(door_, c);
        retired_.reset();
        return f;
    }

    // A head that declares a body is in, at buf[0, head_size()): offer it to its route if the
    // route takes it unread; else go on buffering it (0 used: the next parse takes the body).
    SKIFF_NOINLINE std::size_t route_body(conn& c, char* buf, std::size_t len) {
        request_head& head = request_access::head(req_);
        if (router_.streams(head.verb, head.method_name, head.path)) return offer_body(c, buf, len);
        if (c.parser.declares_more_than(limits_.max_body)) answer_error(c, 413, phase::draining, rejection::body_too_large, {buf, len});
        return 0;
    }

    // Runs the route on the head with the body lent unread; it leaves a taker (the connection
    // is handed to it), or answers at once and the body is dropped. Returns the bytes used.
    std::size_t offer_body(conn& c, char* buf, std::size_t len) {
        pending_body body = describe_body(c);
        std::size_t head_len = c.parser.head_size();
        bool may_drop = body.framing == body_framing::length && body.declared <= early_answer_drain &&
                        body.declared <= limits_.max_body && !body.expects_continue;
        request_access::reset(req_);
        bool close = body.context.close || serving_ == serving::until_stop || !may_drop;
        std::size_t start = writer_.batch().size();
        response_access::start(res_, writer_.batch(), time_.date, body.context.head_request, close, body.context.http10);
        response_access::lend_body(res_, &body);
        call_guarded([&] { router_.serve(req_, res_); }, [&] { answer_internal_error(); });
        response_access::lend_body(res_, nullptr);
        // An answer deferred before the body is read is not taken up: the route answers here
        // or through its taker (a handler that defers, does so at the body's end).
        std::unique_ptr<handed> unsupported(response_access::take_taker(res_));
        if (body.taker && !res_.sent()) {
            body.context.head_fields = response_access::hold_fields(res_);  // the answer comes after the body
            return head_len + hand_over(c, std::move(body.taker), body, buf + head_len, len - head_len);
        }
        body.taker.reset();
        if (!res_.sent()) res_.end();
        bool reported = !unsupported && static_cast<bool>(opt_.on_response);
        if (SKIFF_UNLIKELY(reported)) report_late(c, body.context, writer_.batch().size() - start);
        if (res_.closes_connection()) {  // a body too large to drop, or 100 Continue asked
            close_after_output(c, phase::draining);
            return len;
        }
        return head_len + hand_over(c, std::unique_ptr<handed>(new body_drop(body.declared)), body, buf + head_len,
                                    len - head_len);
    }

    pending_body describe_body(conn& c) {
        const request_head& head = request_access::head(req_);
        pending_body body;
        body.framing = c.parser.framing();
        body.declared = head.content_length;
        body.limits = limits_;
        body.expects_continue = head.expect_continue;
        body.context.head_request = head.verb == method::head;
        body.context.http10 = head.version_minor == 0;
        body.context.close = !head.keep_alive;
        if (opt_.on_error || opt_.on_response) body.context.origin = request_access::origin_of(req_);  // for the hooks, later
        return body;
    }

    std::size_t hand_over(conn& c, std::unique_ptr<handed> taker, pending_body& body, char* data, std::size_t len) {
        c.parser.reset();
        c.stream.reset(new stream_state{nullptr, stream_framing::sized, 0, phase::reading});
        c.stream->taker = std::move(taker);
        c.state = phase::handed;
        std::size_t used = c.stream->taker->begin(door_, c, body, data, len);
        retired_.reset();
        return used;
    }

    // A late answer (door::answer, a handed connection's), for a response hook: its request's
    // head is gone by then, so its method and target are those kept in the context.
    SKIFF_NOINLINE void report_late(conn& c, const answer_context& ctx, std::size_t bytes) {
        response_event e;
        e.status = res_.status();
        e.bytes_sent = bytes;
        e.method = ctx.origin.method;
        e.target = ctx.origin.target;
        e.version = version_text(ctx.http10 ? 0 : 1);
        report(c, e);
    }

    // What the door (handover.hpp) offers a taker, in the session's terms. Not templated on
    // the policy in its interface, so the features behind it are compiled once.
    class session_door final : public door {
    public:
        explicit session_door(session& s) noexcept : s_(s) {}

        read_result read(connection& c) override {
            ssize_t n = ::recv(c.fd, s_.scratch_.data(), s_.scratch_.capacity(), 0);
            if (n > 0) return {read_outcome::got, s_.scratch_.data(), static_cast<std::size_t>(n)};
            return {n < 0 && retry_later() ? read_outcome::retry : read_outcome::ended};
        }
        void write(std::string_view bytes) override { s_.writer_.batch().append(bytes.data(), bytes.size()); }
        void watch(connection& c, std::uint8_t interest) override { s_.set_.watch(own(c), interest); }
        void arm(connection& c, deadline_kind kind) override { s_.arm(own(c), kind); }
        std::int64_t now_ms() const noexcept override { return s_.time_.now_ms; }
        const options& settings() const noexcept override { return s_.opt_; }
        bool workers_wait() const noexcept override { return Set::hands_over_deferred; }
        void finish(connection& c) override {
            s_.retired_ = std::move(c.stream->taker);
            c.state = c.stream->then;
            c.stream.reset();
        }
        void answer(connection& c, answer_context& ctx, const std::function<void(response&)>& fn) override {
            s_.answer_late(own(c), ctx, fn);
        }
        void reject(connection& c, int status, rejection why) override {
            s_.answer_error(own(c), status, phase::draining, why, {});
        }
        fate serve_after(connection& c, char* data, std::size_t len, std::size_t used) override {
            conn& x = own(c);
            if (takes_requests(x.state)) used += s_.serve(x, data + used, len - used);
            s_.keep_tail(x, data, true, len, used);
            return s_.after_write(x, s_.writer_.flush(x));
        }
        fate serve_waiting(connection& c) override {
            conn& x = own(c);
            if (takes_requests(x.state)) {
                std::size_t len = x.in.size();
                std::size_t used = s_.serve(x, x.in.data(), len);
                s_.keep_tail(x, x.in.data(), false, len, used);
            }
            return s_.after_write(x, s_.writer_.flush(x));
        }
        fate close(connection& c) override { return s_.close(own(c)); }

        bool stopping() const noexcept override { return s_.serving_ == serving::until_stop; }
        push_framing answer_push(connection& c, answer_context& ctx, const std::function<void(response&)>& fn) override {
            return s_.answer_push(own(c), ctx, fn);
        }
        void write_piece(push_framing framing, std::string_view bytes) override {
            stream_framing f = framing == push_framing::chunked ? stream_framing::chunked : stream_framing::until_close;
            s_.writer_.append_piece(f, bytes.data(), bytes.size());
        }
        void write_last_chunk() override { s_.writer_.append_last_chunk(); }
        write_status flush(connection& c) override { return s_.writer_.flush(own(c)); }
        write_status write_parked(connection& c) override { return s_.writer_.write_parked(own(c)); }
        fate after_write(connection& c, write_status w) override { return s_.after_write(own(c), w); }
        std::size_t parked(const connection& c) const noexcept override { return writer_type::pending(c); }
        peek_outcome peek(connection& c) override {
            char byte;
            ssize_t n = ::recv(c.fd, &byte, 1, MSG_PEEK);
            if (n > 0) return peek_outcome::bytes;
            if (n == 0) return peek_outcome::ended;
            return retry_later() ? peek_outcome::retry : peek_outcome::failed;
        }
        char* scratch(std::size_t& size) noexcept override {
            size = s_.scratch_.capacity();
            return s_.scratch_.data();
        }
        void close_after_output(connection& c) override { session::close_after_output(own(c), phase::closing); }
        void linger_after_output(connection& c) override { session::close_after_output(own(c), phase::draining); }
        void answered(connection& c) override { s_.answered(own(c)); }

    private:
        static conn& own(connection& c) noexcept { return static_cast<conn&>(c); }
        session& s_;
    };

    // Answers a request whose head is gone, as a handler would (door::answer).
    void answer_late(conn& c, answer_context& ctx, const std::function<void(response&)>& fn) {
        std::size_t start = start_late(c, ctx);
        call_guarded([&] { if (fn) fn(res_); },
                     [&] {
                         answer_internal_error();
                     });
        if (!res_.sent()) res_.end();
        bool later = response_access::pending_deferred(res_) != nullptr;  // reported when written
        if (!later && SKIFF_UNLIKELY(static_cast<bool>(opt_.on_response))) report_late(c, ctx, writer_.batch().size() - start);
        if (response_access::streaming(res_)) start_stream(c, std::move(ctx.origin));
        else if (response_access::hands_over(res_)) hand_over_answer(c);
        if (res_.closes_connection()) close_after_output(c, phase::closing);
    }

    // A late answer's head, its body pushed later (door::answer_push).
    push_framing answer_push(conn& c, answer_context& ctx, const std::function<void(response&)>& fn) {
        std::size_t start = start_late(c, ctx);
        fn(res_);
        if (SKIFF_UNLIKELY(static_cast<bool>(opt_.on_response))) report_late(c, ctx, writer_.batch().size() - start);
        bool has_body = response_access::streaming(res_);
        (void)response_access::take_source(res_);
        if (res_.closes_connection()) close_after_output(c, phase::closing);
        if (!has_body) return push_framing::none;
        return response_access::stream_chunked(res_) ? push_framing::chunked : push_framing::until_close;
    }

    // A late answer starts with the fields the chain set before it was put off; it closes the
    // connection if the request asked, if the connection already ends after it, or while the
    // server stops. Returns where it begins in the batch, for a response hook.
    std::size_t start_late(conn& c, const answer_context& ctx) {
        bool close = ctx.close || final_phase(c) >= phase::closing || serving_ == serving::until_stop;
        std::size_t start = writer_.batch().size();
        response_access::start(res_, writer_.batch(), time_.date, ctx.head_request, close, ctx.http10);
        response_access::restore_fields(res_, ctx.head_fields);  // the chain's, held since the head
        return start;
    }

    // The late answer is written (door::answered): as finish(), then on as after a stream.
    void answered(conn& c) {
        if (serving_ == serving::until_stop) close_after_output(c, phase::closing);
        retired_ = std::move(c.stream->taker);
        phase then = c.stream->then;
        c.stream.reset();
        c.state = then == phase::reading && !c.in.empty() ? phase::waiting : then;
        if (c.state == phase::reading || c.state == phase::waiting)
            arm(c, c.in.empty() ? deadline_kind::idle : deadline_kind::header);
    }

    // ---- deadlines ----------------------------------------------------------------------

    // Inlined so that a constant kind picks its duration at compile time.
    SKIFF_ALWAYS_INLINE void arm(conn& c, deadline_kind kind) noexcept {
        c.deadline = kind;
        set_.arm(c, time_.now_ms + duration_of(kind));
    }

    std::int64_t duration_of(deadline_kind kind) const noexcept {
        switch (kind) {
        case deadline_kind::idle: return opt_.idle_timeout.count();
        case deadline_kind::header: return opt_.header_timeout.count();
        case deadline_kind::body: return opt_.body_timeout.count();
        case deadline_kind::write: return opt_.write_timeout.count();
        case deadline_kind::linger: return opt_.linger_timeout.count();
        case deadline_kind::awaited: return awaited_guard_ms();
        case deadline_kind::paused: return set_.tick_ms();
        }
        return opt_.idle_timeout.count();
    }

    const options& opt_;
    const router& router_;
    Set& set_;
    const loop_time& time_;
    writer_type writer_;
    buffer_pool pool_;
    byte_buffer scratch_;  // every fresh read lands here
    request req_;
    response res_;
    parse_limits limits_;
    std::size_t head_capacity_ = 0;
    session_door door_{*this};
    std::unique_ptr<handed> retired_;  // a taker done in this event, freed once it is over
    serving serving_ = serving::normally;
    rejection outcome_ = rejection::none;  // the current answer's, for a response hook
    std::size_t loop_ = 0;
};

} // namespace skiff::detail

#endif // SKIFF_SERVER_SESSION_HPP
