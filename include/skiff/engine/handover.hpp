// The door through which the engine hands a connection to a feature, and back. The session
// knows *that* a connection is handed (phase::handed), never to *what*: the feature's state
// derives from `handed` and says what runs for the connection's events, and it asks the session
// for what it needs through `door`, the session's narrow, policy-free interface. So a feature's
// code is compiled only into programs that use the feature, once, whatever the policy.
//
// Today streamed request bodies (upload/upload.hpp), answers made later, deferred answers and
// push streams (async/answer_wait.hpp), file bodies (files/file_send.hpp) and WebSocket
// connections (websocket/upgrade.hpp) come through it,
// and so does the engine's own small taker, body_drop below (an early answer's unread body).
//
//   the engine -> a handed connection           the handed connection -> the engine (door)
//     begin(door, c, body, bytes)  first bytes    read(c)                 one read into scratch
//     on_readable(door, c)         readable       write(s)                bytes into the batch
//     on_deadline(door, c)         its deadline   watch(c, bits), arm(c, kind)
//     await(door, c)               output written finish(c)               back to serving requests
//     abandon()                    closed         answer(c, ctx, fn)      a late answer, as a handler's
//     on_sent(door, c)             parked output  reject(c, status, why)  an error answer, then close
//                                  went           serve_after(c, ...)     the requests behind it
//     take_from_workers(ctx, c)    shared: the    close(c)
//                                  event is done  answer_push(c, ctx, fn) a late head, its body pushed
//     dispose()                    done with it
//                                                 write_piece, write_last_chunk, flush, after_write,
//                                                 write_parked, parked, peek, scratch, close_after_output,
//                                                 linger_after_output,
//                                                 answered(c)             back to serving, as a response
//
// Invariants: a connection is handed exactly while its phase is `handed`, and then
// c.taker holds the feature's state. finish() gives the state back to the session,
// which frees it when the event that finished it is over (so a taker may finish itself and
// return). abandon() runs once if the connection closes while it is handed; after finish() it
// does not run. A taker touches nothing of its own after calling serve_after(), serve_waiting()
// or close(): the requests served behind it may finish another taker, which frees this one.
#ifndef SKIFF_ENGINE_HANDOVER_HPP
#define SKIFF_ENGINE_HANDOVER_HPP

#include "skiff/engine/connection.hpp"
#include "skiff/engine/handed.hpp"
#include "skiff/engine/hooks.hpp"
#include "skiff/engine/loop_hub.hpp"
#include "skiff/engine/push_ledger.hpp"
#include "skiff/engine/writer.hpp"
#include "skiff/http/parse_status.hpp"
#include "skiff/http/request.hpp"
#include "skiff/http/request_head.hpp"
#include "skiff/http/response.hpp"
#include "skiff/http/response_access.hpp"
#include "skiff/platform/socket.hpp"
#include "skiff/poller/poll_event.hpp"

#include <cstddef>      // std::size_t
#include <cstdint>      // std::int64_t, std::uint8_t, std::uint64_t
#include <functional>   // a late answer's callback
#include <memory>       // std::unique_ptr
#include <string_view>  // std::string_view

namespace skiff {
struct options;
}

namespace skiff::detail {

// What a late answer needs of its request, whose head is gone by the time it is written.
struct answer_context {
    bool head_request = false;
    bool http10 = false;
    bool close = false;       // the request asked to close
    held_fields head_fields;  // what the chain set before the answer was put off (response.hpp)
    request_origin origin;    // the method and target, kept where a hook may need them
};

// One read into the loop's scratch buffer: data[0, size) when `got`.
enum class read_outcome : std::uint8_t { got, retry, ended };
struct read_result {
    read_outcome outcome;
    char* data = nullptr;
    std::size_t size = 0;
};

// What a look at the socket without reading found (door::peek).
enum class peek_outcome : std::uint8_t { bytes, retry, ended, failed };

// How a late answer's pushed body is delimited (door::answer_push): none when it has none (a
// HEAD request, 204, 304).
enum class push_framing : std::uint8_t { none, chunked, until_close };

// A body not read yet, lent to the route that may take it (response_access::lend_body): the
// route leaves its taker here. The session fills the rest.
struct pending_body {
    body_framing framing = body_framing::length;
    std::uint64_t declared = 0;  // length framing: Content-Length
    parse_limits limits;
    bool expects_continue = false;
    answer_context context;
    handed_ptr taker;
};

// What the session that serves a handed connection offers it. Not a template, so that a
// feature is compiled once, not once per policy.
class door {
public:
    virtual read_result read(connection& c) = 0;
    virtual void write(std::string_view bytes) = 0;
    virtual void watch(connection& c, std::uint8_t interest) = 0;
    virtual void arm(connection& c, deadline_kind kind) = 0;
    virtual std::int64_t now_ms() const noexcept = 0;
    virtual const options& settings() const noexcept = 0;
    // Under the shared policy a connection is its worker's while that waits (workers_wait).
    virtual bool workers_wait() const noexcept = 0;
    // The pushed output of this loop's memory budget that clients have not taken (push_ledger.hpp),
    // for a taker whose output a client may leave unread. Under shared, touched only under
    // the hub's process lock.
    virtual push_ledger& pushes() noexcept = 0;
    // The connection is no longer handed: it goes on in c.then; its taker is freed when
    // the current event is over.
    virtual void finish(connection& c) = 0;
    // Answers its request now, as a handler would (fn writes to the response; a stream or a
    // deferred answer included); the head is ctx's.
    virtual void answer(connection& c, answer_context& ctx, const std::function<void(response&)>& fn) = 0;
    // The server's own error answer; the connection then drains and closes.
    virtual void reject(connection& c, int status, rejection why) = 0;
    // After a read into scratch of which `used` bytes were taken: serve the requests behind
    // (if the connection takes requests again), keep the tail, write.
    virtual fate serve_after(connection& c, char* data, std::size_t len, std::size_t used) = 0;
    // The same for requests that waited in the connection's own buffer.
    virtual fate serve_waiting(connection& c) = 0;
    virtual fate close(connection& c) = 0;

    // For answers made elsewhere and written later (async/answer_wait.hpp).
    // The server stops: every answer says Connection: close.
    virtual bool stopping() const noexcept = 0;
    // A late answer's head, as answer() writes it, for a body of `content_type` pushed piece by
    // piece: fields gives the status and the fields.
    virtual push_framing answer_push(connection& c, answer_context& ctx, const std::function<void(response&)>& fields,
                                     std::string_view content_type) = 0;
    virtual void write_piece(push_framing framing, std::string_view bytes) = 0;
    virtual void write_last_chunk() = 0;
    // The batch to the socket, and what the connection waits for next given what was written.
    virtual write_status flush(connection& c) = 0;
    virtual write_status write_parked(connection& c) = 0;
    virtual fate after_write(connection& c, write_status w) = 0;
    // Output written by neither: the client has not taken it yet.
    virtual std::size_t parked(const connection& c) const noexcept = 0;
    virtual peek_outcome peek(connection& c) = 0;
    // The loop's scratch buffer, for bytes on their way within one event (size: its capacity).
    virtual char* scratch(std::size_t& size) noexcept = 0;
    // No more requests: the connection closes once its output is written.
    virtual void close_after_output(connection& c) = 0;
    // The same, but the write side is shut first and what the client still sends is read and
    // dropped until it closes (or linger_timeout), so that it reads the last output rather
    // than a reset: a WebSocket failed in the middle of a client's message (websocket/upgrade.hpp).
    virtual void linger_after_output(connection& c) = 0;
    // The answer is written (or in the batch): the connection is no longer handed and goes on
    // as after a streamed body (the requests that waited are served once it is writable);
    // while the server stops it closes after the answer instead.
    virtual void answered(connection& c) = 0;

protected:
    ~door() = default;
};

// A step a feature brings its handed connection from elsewhere (the hub, on the loop that
// serves c): step(taker, door, c), where c's taker is a Taker, run through
// loop_context::serve_handed, which settles c after it.
template <class Taker, class Step>
void serve_taker(loop_context& ctx, connection& c, loop_context::expiry e, Step& step) {
    ctx.serve_handed(
        c,
        [](door& d, connection& at, void* p) -> fate {
            return (*static_cast<Step*>(p))(static_cast<Taker&>(*at.taker), d, at);
        },
        &step, e);
}

// s's output on c now holds `bytes` the client has not taken: it goes in the budget's line of
// pushed output (push_ledger.hpp), and past push output's share the connection stalled longest
// is closed, this one or another (a push stream's, a WebSocket's), its unsent bytes dropped
// with the socket (the client is not taking them); its taker leaves the line as it closes.
// Closed when that was c itself.
inline fate note_stalled(door& d, push_ledger& pushes, stalled_output& s, connection& c, std::size_t bytes) {
    pushes.note(s, bytes, c);
    while (pushes.over()) {
        connection& victim = *pushes.oldest()->stalled_conn;
        discard_unsent_on_close(victim.fd);
        d.close(victim);
        if (&victim == &c) return fate::closed;
    }
    return fate::open;
}

// The interim answer to Expect: 100-continue (RFC 9110 §10.1.1), sent before a body is read.
constexpr std::string_view continue_interim = "HTTP/1.1 100 Continue\r\n\r\n";

// Declared bodies up to this are read and dropped after an early answer, keeping the
// connection; a larger or chunked one is drained until the close, as nginx does.
constexpr std::uint64_t early_answer_drain = 64 * 1024;

// The engine's own taker: the body of a request answered before it was read (a route that
// streams its body answered at once: 401, 403, 507...), at most early_answer_drain, by length.
class body_drop final : public handed {
public:
    explicit body_drop(std::uint64_t left) noexcept : left_(left) {}

    std::size_t begin(door& d, connection& c, pending_body&, char*, std::size_t len) override { return take(d, c, len); }

    fate on_readable(door& d, connection& c) override {
        read_result r = d.read(c);
        if (r.outcome == read_outcome::retry) return fate::open;
        if (r.outcome == read_outcome::ended) return d.close(c);
        return d.serve_after(c, r.data, r.size, take(d, c, r.size));
    }

    fate on_deadline(door& d, connection& c) override { return d.close(c); }

    fate await(door& d, connection& c) override {
        d.watch(c, watch_read);
        d.arm(c, deadline_kind::body);
        return fate::open;
    }

    void abandon() noexcept override {}
    void on_sent(door&, connection&) override {}
    bool take_from_workers(loop_context&, connection&) override { return false; }
    void dispose() noexcept override { delete this; }

private:
    std::size_t take(door& d, connection& c, std::size_t len) {
        std::size_t n = len < left_ ? len : static_cast<std::size_t>(left_);
        left_ -= n;
        if (left_ == 0) d.finish(c);
        return n;
    }

    std::uint64_t left_;
};

} // namespace skiff::detail

#endif // SKIFF_ENGINE_HANDOVER_HPP
