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
// A route that takes its body unread (a streamed upload) is run once the head is in, and a
// handler that answers later (response::defer), streams or sends a file leaves what will answer;
// either way the connection is handed through the door (session_door.hpp) to that taker, of
// which the session knows nothing more. While a connection is handed it parses nothing more
// (the simplest rule that keeps answers in request order): what was read stays in its tail.
// The server's own error answers and what observers are told are session_reports.hpp's;
// input buffers, input_buffers.hpp's.
//
// Invariants: once a connection is closed (fate::closed) it is not touched again, since under
// the shared policy another thread may already have its slot. Requests on one connection are
// answered in order; a connection whose answers pass write_high_water stops being read until
// the client takes them, so a client that pipelines without reading cannot grow server memory.
#ifndef SKIFF_ENGINE_SESSION_HPP
#define SKIFF_ENGINE_SESSION_HPP

#include "skiff/config.hpp"
#include "skiff/detail/byte_buffer.hpp"
#include "skiff/detail/guarded_call.hpp"
#include "skiff/engine/connection.hpp"
#include "skiff/engine/connection_set.hpp"
#include "skiff/engine/deadlines.hpp"
#include "skiff/engine/handover.hpp"
#include "skiff/engine/hooks.hpp"
#include "skiff/engine/input_buffers.hpp"
#include "skiff/engine/loop_hub.hpp"
#include "skiff/engine/loop_time.hpp"
#include "skiff/engine/options.hpp"
#include "skiff/engine/report.hpp"
#include "skiff/engine/session_door.hpp"
#include "skiff/engine/session_reports.hpp"
#include "skiff/engine/writer.hpp"
#include "skiff/http/parse_status.hpp"
#include "skiff/http/request.hpp"
#include "skiff/http/request_head.hpp"
#include "skiff/http/response.hpp"
#include "skiff/http/response_access.hpp"
#include "skiff/http/status.hpp"
#include "skiff/platform/socket.hpp"
#include "skiff/poller/poll_event.hpp"
#include "skiff/router/router.hpp"

#include <cstddef>       // std::size_t
#include <cstdint>       // std::int64_t, std::uint8_t
#include <cstring>       // std::memchr, std::memcpy
#include <string>        // pushed bytes
#include <string_view>   // std::string_view
#include <sys/socket.h>  // recv, shutdown

namespace skiff::detail {

template <class Set>
class session {
    using conn = typename Set::conn;
    friend class session_door<session>;     // the door: what a handed connection is offered
    friend class session_reports<session>;  // error answers, and what the observers are told
    // Under the shared policy a connection is its worker's while that waits (door::workers_wait).
    static constexpr bool workers_wait = Set::hands_over_deferred;

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
        input_.open(opt_.max_request_line + opt_.max_header_bytes + 4, read_size);
        scratch_.reserve_more(read_size);
        writer_.open(read_size, output_account{&set_});
        request_access::init(req_, opt_.max_headers, opt_.max_request_line);
        set_.limit_budget(opt_.max_buffered);  // the runner may have given this loop less
        hub_anchor& a = set_.anchor();
        a.open(set_.poller(), opt_, set_.budget_limit());
        response_access::lend(res_, a);
    }

    void begin_stop() noexcept { serving_ = serving::until_stop; }
    // Which loop this is (response_event::loop): set by the runner, 0 unless threaded.
    void number(std::size_t loop) noexcept { reports_.number(loop); }

    fate on_readable(conn& c) {
        if (c.state >= phase::lingering) return on_other_readable(c);
        bool fresh = c.in.empty();
        if (fresh && SKIFF_UNLIKELY(set_.budget_full())) return wait_for_memory(c);
        std::size_t room = scratch_.capacity();
        if (!fresh) {
            room = input_.make_room(c);
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
        if (!fresh && !c.parser.head_complete() && len < input_.head_capacity() &&
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
            if (SKIFF_UNLIKELY(c.state == phase::handed)) door_.on_sent(c);
            return after_write(c, w);
        }
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
        // A paused taker's tick, or a handed body's deadline: the taker answers (an upload's 408).
        if (SKIFF_UNLIKELY(c.deadline == deadline_kind::paused ||
                           (c.deadline == deadline_kind::body && c.state == phase::handed)))
            return door_.on_deadline(c);
        bool request_started = !c.in.empty() || c.parser.head_complete();
        bool answer_408 = (c.deadline == deadline_kind::header || c.deadline == deadline_kind::body) &&
                          request_started && c.out.empty() && takes_requests(c.state);
        if (c.deadline == deadline_kind::write) discard_unsent_on_close(c.fd);  // it stopped reading
        if (!answer_408) return close(c);
        set_.forget_waiting(c);
        reports_.answer_error(c, 408, phase::closing, rejection::timeout, {c.in.data(), c.in.size()});  // no draining
        input_.release(c);
        return after_write(c, writer_.flush(c));
    }

    // stop() on a loop that owns its connections: idle ones close now; one with a request in
    // progress or output to write finishes that (with Connection: close), then closes.
    // A handed connection finishes too (its answer says Connection: close), as any request in progress.
    fate settle_for_stop(conn& c) {
        if (!c.in.empty() || c.state == phase::lingering) return fate::open;
        bool working = c.state == phase::handed;
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
        if (c.taker) c.taker->abandon();
        set_.forget_waiting(c);
        if (c.in.capacity() != 0) input_.release(c);
        writer_.forget(c);
        set_.remove(c);
        if (SKIFF_UNLIKELY(static_cast<bool>(opt_.on_connection))) opt_.on_connection(connection_change::closed, reports_.loop());
        return fate::closed;
    }

    // A handed connection's turn that comes from elsewhere (loop_context::serve_handed: an
    // answer made on another thread), on the thread that serves c.
    fate serve_handed(conn& c, loop_context::handed_call call, void* arg) { return door_.serve_handed(c, call, arg); }

private:
    static constexpr std::size_t read_size = 64 * 1024;

    // ---- read and serve -----------------------------------------------------------------

    // Not read until memory is given back (input_buffers.hpp); its body deadline keeps running.
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
                used += door_.route_body(c, buf + used, len - used);
                continue;
            }
            reports_.answer_error(c, *http_status(r.status), phase::draining, rejection_for(r.status), {buf + used, len - used});
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
            writer_.batch().append(continue_interim.data(), continue_interim.size());
            return;
        }
        head.keep_alive = false;  // the unsent body would follow: say so, and close after
        respond(c, 0);            // 404 or 405 now, without reading a body the client has not sent
        close_after_output(c, phase::draining);
    }

    // `received`: the request's bytes, for a response hook. With no hook set this is one test
    // of an empty std::function.
    SKIFF_ALWAYS_INLINE void respond(conn& c, std::size_t received) {
        if (SKIFF_UNLIKELY(static_cast<bool>(opt_.on_response))) return reports_.respond_observed(c, received);
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
                         reports_.handler_threw();
                         reports_.answer_internal_error();
                     });
        if (!res_.sent()) res_.end();
        if (SKIFF_UNLIKELY(response_access::hands_over(res_))) door_.hand_over_answer(c);
        if (res_.closes_connection()) close_after_output(c, phase::closing);
    }

    // After serve(): the bytes of an incomplete request (or of requests that wait) stay with
    // the connection; when there are none, its buffer goes back to the pool and the idle
    // deadline starts. Inlined: called once per read, 16 instructions a request as a call.
    SKIFF_ALWAYS_INLINE void keep_tail(conn& c, char* buf, bool fresh, std::size_t len, std::size_t used) {
        bool closes = ends_after_output(c);
        if (closes || used == len) {
            if (closes && used < len) close_after_output(c, phase::draining);  // unread requests: drain them
            if (c.in.capacity() != 0) input_.release(c);
            if (!closes) arm(c, deadline_kind::idle);
            return;
        }
        std::size_t keep = c.parser.kept(len - used);
        if (fresh) {
            input_.keep(c, buf + used, keep);
        } else {
            c.in.consume(used);
            c.in.resize(keep);
        }
    }

    // ---- after a write ------------------------------------------------------------------

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
            // Go on when writable. Everything written may still sit in a full socket buffer,
            // so the wait is the client's to end: a write deadline, not whatever ran before
            // (the head's, counted from long ago, cut pipelined downloads mid-body).
            arm(c, deadline_kind::write);
            set_.watch(c, watch_write);
            return fate::open;
        case phase::closing: return close(c);
        case phase::draining: return linger(c);
        case phase::lingering: return fate::open;  // has no output
        case phase::handed: return door_.await(c);
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

    // The phase the connection ends its current work in: a handed connection's `then` while
    // it is handed.
    static phase& final_phase(conn& c) noexcept { return c.taker ? c.then : c.state; }
    static bool ends_after_output(conn& c) noexcept {
        return c.state >= phase::closing && final_phase(c) >= phase::closing;  // reading: one compare
    }

    // No more requests: close (or drain, then close) once the output is written. Draining is
    // never weakened to closing.
    static void close_after_output(conn& c, phase how) noexcept {
        phase& p = final_phase(c);
        if (p != phase::draining) p = how;
    }

    fate on_eof(conn& c, bool clean) {
        if (!clean || c.out.empty()) return close(c);  // reset, or nothing owed
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

    // ---- a connection handed to a feature (session_door.hpp) -----------------------------

    SKIFF_NOINLINE fate on_other_readable(conn& c) {
        if (c.state == phase::lingering) return discard_input(c);
        return door_.on_readable(c);
    }

    // ---- deadlines ----------------------------------------------------------------------

    // Inlined so that a constant kind picks its duration at compile time (deadlines.hpp).
    SKIFF_ALWAYS_INLINE void arm(conn& c, deadline_kind kind) noexcept {
        c.deadline = kind;
        std::int64_t duration = kind == deadline_kind::paused ? set_.tick_ms() : duration_of(opt_, kind);
        set_.arm(c, time_.now_ms + duration);
    }

    const options& opt_;
    const router& router_;
    Set& set_;
    const loop_time& time_;
    writer_type writer_;
    input_buffers<Set> input_{set_};
    byte_buffer scratch_;  // every fresh read lands here
    request req_;
    response res_;
    parse_limits limits_;
    session_door<session> door_{*this};
    session_reports<session> reports_{*this};
    serving serving_ = serving::normally;
};

} // namespace skiff::detail

#endif // SKIFF_ENGINE_SESSION_HPP
