// Streamed request bodies: a route that takes its body in pieces as they arrive, instead of
// buffered whole, with backpressure.
//
//   app.upload("PUT", "/files/:name", [](skiff::request& req, skiff::response&) {
//       auto file = std::make_shared<std::ofstream>(path_for(req.param("name")), std::ios::binary);
//       skiff::upload u;
//       u.on_piece = [file](std::string_view p) { file->write(p.data(), p.size()); return skiff::piece_status::taken; };
//       u.on_end = [file](skiff::response& res) { res.status(201).text("stored\n"); };
//       u.on_abort = [file] { /* the client went, or the body was bad: remove the file */ };
//       return u;
//   });
//
// The route's function runs once the head is in, before any of the body is read (so before
// 100 Continue is sent, when the client asked for it): it returns the callbacks, or answers
// at once (an early answer: 401, 403, 507...) and the body is then skipped. The request it
// is given is valid during that call only; copy what the callbacks need.
//
//   on_piece(bytes)  the next piece of the (decoded) body, in order, never empty. It returns
//                    taken, or pause: the piece was not taken, the connection stops reading,
//                    and the same piece is offered again after resumer().resume(), called from
//                    any thread. A pause lasts at most options::body_timeout (then on_abort and
//                    close); a resume is noticed within one tick of the server's timer wheel
//                    (a tenth of the shortest deadline, 5-250 ms). Under the shared policy the
//                    paused connection leaves the workers for the loop hub, which looks for the
//                    resume once a tick (upload_hub.hpp): no thread waits on it. stop() closes a
//                    paused upload (on_abort).
//   on_end(res)      the last byte was taken: answer, as a handler does (defer() included).
//                    res already has the fields the chain set when the route took the body
//                    (middleware's: request_id(), cors()...), held until then.
//   on_abort()       the client went, the body was malformed or passed max_body (413), a
//                    callback threw, or the server stopped: no answer is owed. Not called after
//                    on_end.
//
// Memory: the piece in hand (one read, at most 64 KiB and the head's leftover) is all a
// streamed body holds, whatever its size; it is not counted in options::max_buffered.
// options::max_body does not apply; upload::max_body does (413 before the body is read when
// Content-Length says more, or as soon as a chunked body passes it). Deadlines: body_timeout
// runs from the last piece read, not from the head; past it, on_abort and 408, then close.
// An early answer with a body still to come: up to early_answer_drain (64 KiB) declared is
// read and discarded and the connection kept; a larger or chunked one is answered with
// Connection: close and drained until the linger deadline, as nginx's lingering close does.
//
// Not here: the reading itself (engine/session.hpp, through the door of engine/handover.hpp),
// the multipart framing (http/multipart.hpp; multipart_upload below connects the two).
#ifndef SKIFF_UPLOAD_UPLOAD_HPP
#define SKIFF_UPLOAD_UPLOAD_HPP

#include "skiff/detail/guarded_call.hpp"
#include "skiff/engine/handover.hpp"
#include "skiff/engine/loop_hub.hpp"
#include "skiff/engine/loop_time.hpp"
#include "skiff/engine/options.hpp"
#include "skiff/engine/report.hpp"
#include "skiff/http/chunked.hpp"
#include "skiff/http/multipart.hpp"
#include "skiff/http/parse_status.hpp"
#include "skiff/http/request.hpp"
#include "skiff/http/request_head.hpp"
#include "skiff/http/response.hpp"
#include "skiff/http/response_access.hpp"
#include "skiff/router/router.hpp"

#include <atomic>       // a resume, from any thread
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint8_t, std::uint64_t, std::int64_t
#include <functional>   // std::function callbacks
#include <memory>       // std::shared_ptr
#include <string>       // a piece not taken
#include <string_view>  // std::string_view
#include <type_traits>  // what done is called with
#include <utility>      // std::move, std::exchange

namespace skiff {

enum class piece_status : std::uint8_t {
    taken,  // the handler is done with the piece
    pause,  // not taken: stop reading, offer it again after resume()
};

namespace detail {
class upload_state;
struct upload_control {
    std::atomic<bool> resumed{false};
};
} // namespace detail

// Resumes a paused upload; from any thread, any number of times; a no-op once it has ended.
class upload_resumer {
public:
    upload_resumer() = default;
    void resume() const noexcept {
        if (control_) control_->resumed.store(true, std::memory_order_release);
    }

private:
    friend class upload;
    explicit upload_resumer(std::shared_ptr<detail::upload_control> c) : control_(std::move(c)) {}
    std::shared_ptr<detail::upload_control> control_;
};

class upload {
public:
    static constexpr std::uint64_t no_limit = ~std::uint64_t{0};

    std::function<piece_status(std::string_view)> on_piece;
    std::function<void(response&)> on_end;
    std::function<void()> on_abort;
    std::uint64_t max_body = no_limit;  // larger bodies: 413 and on_abort

    // The handle a paused on_piece gives whoever will resume it: take it before pausing.
    upload_resumer resumer() {
        if (!control_) control_ = std::make_shared<detail::upload_control>();
        return upload_resumer(control_);
    }

private:
    friend class detail::upload_state;
    std::shared_ptr<detail::upload_control> control_;
};

// What a route that streams its body runs when its head is in.
using upload_handler = std::function<upload(request&, response&)>;

namespace detail {

enum class upload_step : std::uint8_t { more, paused, ended, failed };
enum class body_progress : std::uint8_t { arriving, complete };
// shared: who serves a paused upload's connection: the workers, or the loop hub, which looks
// for the resume once a tick (upload_hub.hpp).
enum class upload_holder : std::uint8_t { workers, hub };

// shared: hands a paused upload's connection to the loop hub (upload_hub.hpp). Given by
// basic_server under the shared policy only, so no other program compiles a hub for uploads.
using hand_to_hub_fn = void (*)(hub_anchor& anchor, connection& c, std::int64_t tick_ms);

struct upload_feed {
    std::size_t used;  // input bytes of this body taken (the rest belongs to the next request)
    upload_step step;
    parse_status error = parse_status::complete;  // failed: the status to answer
};

// One streamed body in progress, the taker of its handed connection (engine/handover.hpp):
// the route's callbacks, where the body is, the piece in hand.
class upload_state final : public handed {
public:
    upload_state(skiff::upload u, const pending_body& body, hub_anchor* anchor, hand_to_hub_fn to_hub)
        : u_(std::move(u)), limits_(body.limits), framing_(body.framing), left_(body.declared), anchor_(anchor),
          to_hub_(to_hub) {
        limits_.max_body = u_.max_body;
    }

    bool paused() const noexcept { return !held_.empty(); }
    bool held_by_hub() const noexcept { return holder_ == upload_holder::hub; }

    // data[0, len): raw input after what earlier calls took (chunked: decoded in place).
    upload_feed feed(char* data, std::size_t len) {
        std::size_t used = len;
        std::size_t n = 0;
        if (framing_ == body_framing::length) {
            n = len < left_ ? len : static_cast<std::size_t>(left_);
            used = n;
            left_ -= n;
            if (left_ == 0) progress_ = body_progress::complete;
        } else {
            std::size_t end = 0;
            parse_status s = chunked_.decode(data, len, limits_, end);
            if (s != parse_status::incomplete && s != parse_status::complete) return {len, upload_step::failed, s};
            n = chunked_.take();
            if (s == parse_status::complete) {
                used = end;
                progress_ = body_progress::complete;
            }
        }
        received_ += n;
        if (received_ > u_.max_body) return {used, upload_step::failed, parse_status::content_too_large};
        if (n != 0 && offer({data, n}) == piece_status::pause) {
            held_.assign(data, n);
            return {used, upload_step::paused};
        }
        return {used, next_step()};
    }

    // ---- handed (engine/handover.hpp) ------------------------------------------------------

    // 100 Continue if asked for and the body is not refused at once, then what came with the head.
    std::size_t begin(door& d, connection& c, pending_body& body, char* data, std::size_t len) override {
        context_ = std::move(body.context);
        tick_ms_ = tick_for(d.settings());
        bool too_large = framing_ == body_framing::length && left_ > limits_.max_body;
        if (too_large) {
            fail(d, c, parse_status::content_too_large);  // before the body: no 100 Continue
            return len;
        }
        if (body.expects_continue) d.write(continue_interim);
        return take(d, c, data, len);
    }

    fate on_readable(door& d, connection& c) override {
        if (paused()) return await(d, c);
        read_result r = d.read(c);
        if (r.outcome == read_outcome::retry) return fate::open;
        if (r.outcome == read_outcome::ended) return d.close(c);  // the client went mid-body: on_abort
        std::size_t used = take(d, c, r.data, r.size);
        return d.serve_after(c, r.data, r.size, used);
    }

    // The body deadline: no piece within body_timeout, so the route hears on_abort and the
    // client 408 (RFC 9110 §15.5.9), as for a buffered body; or, paused, the backstop of a
    // pause the hub holds (await), which closes. The paused tick: nothing yet, or the resume
    // (the held piece again, then the requests behind).
    fate on_deadline(door& d, connection& c) override {
        if (c.deadline == deadline_kind::body) {
            if (paused()) return d.close(c);
            give_up(d, c, 408, rejection::timeout);
            return d.serve_waiting(c);  // nothing to serve (draining): the 408 goes out
        }
        if (!resume_requested()) {
            if (d.now_ms() - paused_at_ms_ >= d.settings().body_timeout.count()) return d.close(c);
            d.arm(c, deadline_kind::paused);
            return fate::open;
        }
        upload_step step = upload_step::failed;
        call_guarded([&] { step = offer_held(); }, [] {});
        on_step(d, c, step, parse_status::complete);
        return d.serve_waiting(c);
    }

    // Paused: read nothing, and look for the resume once a tick. shared: the hub looks (see
    // take_from_workers); the body deadline is only a backstop there, since the set's reaper
    // wakes a connection by shutting its socket down, which a tick must not do.
    fate await(door& d, connection& c) override {
        d.watch(c, paused() ? watch_none : watch_read);
        bool ticks_here = paused() && !d.workers_wait();
        d.arm(c, ticks_here ? deadline_kind::paused : deadline_kind::body);
        return fate::open;
    }

    // shared, on the hub's processor, once a tick while the hub holds the connection: the
    // resume (the held piece again, then what follows), or the end of the pause.
    fate on_hub_tick(door& d, connection& c) {
        if (d.stopping() || d.now_ms() - paused_at_ms_ >= d.settings().body_timeout.count()) {
            holder_ = upload_holder::workers;
            return d.close(c);
        }
        if (!resume_requested()) return fate::open;
        holder_ = upload_holder::workers;  // back to them once this step is settled, unless paused again
        upload_step step = upload_step::failed;
        call_guarded([&] { step = offer_held(); }, [] {});
        on_step(d, c, step, parse_status::complete);
        return d.serve_waiting(c);
    }

    // No answer is owed any more: the handler hears it once.
    void abandon() noexcept override {
        if (!u_.on_abort) return;
        std::function<void()> f = std::exchange(u_.on_abort, nullptr);
        call_guarded([&] { f(); }, [] {});
    }

    void on_sent(door&, connection&) override {}
    void dispose() noexcept override { delete this; }
    // shared, when a worker's event is over: a paused upload leaves the workers for the hub
    // (once: it stays the hub's while the pause lasts); any other stays theirs.
    bool take_from_workers(loop_context&, connection& c) override {
        if (!paused() || to_hub_ == nullptr || anchor_ == nullptr) return false;
        if (holder_ == upload_holder::workers) {
            holder_ = upload_holder::hub;
            to_hub_(*anchor_, c, tick_ms_);
        }
        return true;
    }

private:
    // Gives the route the body bytes at data[0, len); returns those that were its body.
    std::size_t take(door& d, connection& c, char* data, std::size_t len) {
        upload_feed r{len, upload_step::failed, parse_status::complete};
        call_guarded([&] { r = feed(data, len); }, [] {});
        on_step(d, c, r.step, r.error);
        return r.used;  // a local: the state may be finished by now
    }

    void on_step(door& d, connection& c, upload_step step, parse_status error) {
        if (step == upload_step::paused) paused_at_ms_ = d.now_ms();
        if (step == upload_step::ended) end(d, c);
        if (step == upload_step::failed) fail(d, c, error);
    }

    // The last piece was taken: the route answers in on_end, and the connection goes on as
    // after any request. finish() hands this state back to the session, which frees it once
    // the event is over, so the answer may still use it.
    void end(door& d, connection& c) {
        d.finish(c);
        d.answer(c, context_, u_.on_end);
    }

    // A malformed or too large body, or a callback that threw: the route hears on_abort, the
    // client the status, and the connection closes.
    void fail(door& d, connection& c, parse_status error) {
        int status = error == parse_status::complete ? 500 : *http_status(error);
        rejection why = error == parse_status::complete ? rejection::handler_exception : rejection_for(error);
        give_up(d, c, status, why);
    }

    // The upload ends unanswered by the route: it hears on_abort, the client `status`.
    void give_up(door& d, connection& c, int status, rejection why) {
        abandon();
        d.finish(c);
        d.reject(c, status, why);
    }

    bool resume_requested() noexcept {
        return u_.control_ && u_.control_->resumed.exchange(false, std::memory_order_acq_rel);
    }

    // After a resume: the held piece again.
    upload_step offer_held() {
        if (offer(held_) == piece_status::pause) return upload_step::paused;
        held_.clear();
        return next_step();
    }

    piece_status offer(std::string_view piece) { return u_.on_piece ? u_.on_piece(piece) : piece_status::taken; }
    upload_step next_step() const noexcept {
        return progress_ == body_progress::complete ? upload_step::ended : upload_step::more;
    }

    skiff::upload u_;
    parse_limits limits_;  // max_body bounds each chunk; max_header_bytes the trailers
    body_framing framing_;
    std::uint64_t left_;         // length: body bytes still to come
    std::uint64_t received_ = 0;  // decoded body bytes so far
    chunked_decoder chunked_;
    std::string held_;  // a piece offered and not taken (paused)
    body_progress progress_ = body_progress::arriving;
    std::int64_t paused_at_ms_ = 0;
    answer_context context_;  // what on_end's answer needs of the request
    hub_anchor* anchor_;      // the loop's, lent to the response: shared hands a pause to its hub
    hand_to_hub_fn to_hub_;   // shared only (upload_hub.hpp); null under the other policies
    upload_holder holder_ = upload_holder::workers;
    std::int64_t tick_ms_ = 0;  // the set's tick: how often the hub looks for a resume
};

// The router's handler for a streamed route. Run by the session with the unread body lent to
// the response, it leaves its taker there (unless the route answered at once); run for a
// request without a body (or with one already buffered: a HEAD or a bodiless PUT), it calls
// the callbacks at once.
inline handler upload_route(upload_handler fn, hand_to_hub_fn to_hub = nullptr) {
    return [fn = std::move(fn), to_hub](request& req, response& res) {
        upload u = fn(req, res);
        if (pending_body* body = response_access::body(res)) {
            if (!res.sent())
                body->taker.reset(new upload_state(std::move(u), *body, response_access::anchor(res), to_hub));
            else if (u.on_abort) call_guarded([&] { u.on_abort(); }, [] {});  // answered early: nothing owed
            return;
        }
        if (res.sent()) return;
        if (!req.body().empty() && u.on_piece) (void)u.on_piece(req.body());
        if (u.on_end) u.on_end(res);
    };
}

template <class Sink>
auto abort_sink(Sink& s, int) -> decltype(s.on_abort(), void()) {
    s.on_abort();
}
template <class Sink>
void abort_sink(Sink&, long) {}

} // namespace detail

// Connects a streamed body to the multipart parser: on_piece feeds it to sink (on_part,
// on_data, on_part_end, as multipart_parser::feed), on_end hands the answer to `done` with the
// sink and the parse's end (complete, or bad_request: answer 400), and on_abort to the sink's
// on_abort() when it has one. `done` is any callable done(response&, Sink&, multipart_status),
// a lambda as it is (move-only ones too). The parser, sink and `done` live as long as the
// upload's callbacks. A body that breaks the framing is still read to its end (bounded by
// max_body), and the sink hears nothing after the break.
template <class Sink, class Done>
upload multipart_upload(std::string_view boundary, Sink sink, Done done) {
    static_assert(std::is_invocable_v<Done&, response&, Sink&, multipart_status>,
                  "multipart_upload: done is called as done(skiff::response&, Sink&, skiff::multipart_status)");
    struct state {
        multipart_parser parser;
        Sink sink;
        Done done;
    };
    auto st = std::make_shared<state>(state{multipart_parser(boundary), std::move(sink), std::move(done)});
    upload u;
    u.on_piece = [st](std::string_view piece) {
        st->parser.feed(piece, st->sink);
        return piece_status::taken;
    };
    u.on_end = [st](response& res) { st->done(res, st->sink, st->parser.finish()); };
    u.on_abort = [st] { detail::abort_sink(st->sink, 0); };
    return u;
}

} // namespace skiff

#endif // SKIFF_UPLOAD_UPLOAD_HPP
