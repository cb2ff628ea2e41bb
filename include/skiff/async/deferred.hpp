// Answering later, from any thread: the handles a handler takes instead of answering.
//
//   app.get("/slow", [&](skiff::request&, skiff::response& res) {
//       pool.submit([later = res.defer()]() mutable { later.text(expensive()); });
//   });
//
//   deferred     one answer, completed exactly once from any thread: status, fields and a
//                body, or a push stream. Dropped uncompleted, it answers 500 (and says so on
//                stderr in a debug build). cancelled() tells the work that nobody waits; a
//                handle dropped once cancelled answers nothing, and its connection closes
//                (a client that half-closed is not told 500, or 200, for work never done).
//   push_stream  a body a producer writes to and closes, chunked (HTTP/1.1) or ended by the
//                close (HTTP/1.0); write() says when the client is slow, on_writable() when
//                it has caught up (or gone), and a stream that holds more than
//                options::max_push_buffer is closed with its connection; so is the one
//                stalled longest while all push streams together hold more than half of
//                options::max_buffered (engine/push_ledger.hpp).
//   sse_stream   Server-Sent Events over a push stream: data lines split on newlines, event,
//                id, retry, and comments as keep-alives.
//   loop_ref     a loop's services from any thread: run a function on it, timers (once,
//                repeating, cancellable, or ending themselves), and watching a foreign
//                descriptor for readability. Each takes move-only callables.
//
// None of these touches a connection: each posts to its loop's hub (async/hub.hpp), and the
// loop applies it if the connection is still the one the answer belongs to (else it is
// dropped: the client went, the slot may serve someone else by now). A handle may outlive
// its server; it then completes as a no-op. Each handle is used by one thread at a time.
#ifndef SKIFF_ASYNC_DEFERRED_HPP
#define SKIFF_ASYNC_DEFERRED_HPP

#include "skiff/async/deferred_state.hpp"
#include "skiff/async/hub.hpp"
#include "skiff/config.hpp"
#include "skiff/detail/unique_function.hpp"
#include "skiff/engine/loop_hub.hpp"
#include "skiff/http/response.hpp"
#include "skiff/http/response_access.hpp"

#include <chrono>       // std::chrono::milliseconds
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint8_t, std::uint64_t
#include <cstdio>       // std::fprintf for the debug-build warning
#include <functional>   // std::function
#include <limits>       // no deadline
#include <memory>       // std::shared_ptr
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <type_traits>  // what every()'s callback returns
#include <utility>      // std::move, std::pair
#include <vector>       // fields

namespace skiff {

// What became of bytes given to a push stream.
enum class push_status : std::uint8_t {
    accepted,    // queued for the client
    backlogged,  // queued, but more than options::write_high_water waits: the client is slow
    closed,      // not queued: the client went, the stream passed its bound or was shed, or it was closed
};

using timer_id = std::uint64_t;
using watch_id = std::uint64_t;

class loop_ref {
public:
    loop_ref() = default;
    explicit loop_ref(detail::hub_anchor& a) : hub_(detail::async_hub::of(a)) {}
    explicit operator bool() const noexcept { return hub_ != nullptr; }

    // Runs fn() on the loop; false when the loop is gone (fn is dropped). Each of these takes
    // any callable, move-only ones too: [later = std::move(later)]() mutable { later.end(); }.
    // Templates, so that the callable is stored once, in the loop's task, not wrapped twice.
    template <class Fn>
    bool post(Fn&& fn) const {
        static_assert(std::is_invocable_v<std::decay_t<Fn>&>, "loop_ref::post: fn is called as fn()");
        return hub_ && hub_->post([fn = std::forward<Fn>(fn)](detail::loop_context&) mutable { fn(); });
    }
    // fn() runs on the loop once after `delay`.
    template <class Fn>
    timer_id after(std::chrono::milliseconds delay, Fn&& fn) const {
        static_assert(std::is_invocable_v<std::decay_t<Fn>&>, "loop_ref::after: fn is called as fn()");
        return timer(delay, {}, [fn = std::forward<Fn>(fn)](detail::loop_context&) mutable {
            fn();
            return timer_action::stop;
        });
    }
    // fn runs on the loop every `period` until cancel(), or until it returns
    // timer_action::stop (a callback returning void runs until cancelled).
    template <class Fn>
    timer_id every(std::chrono::milliseconds period, Fn&& fn) const {
        using result = std::invoke_result_t<std::decay_t<Fn>&>;
        static_assert(std::is_void_v<result> || std::is_same_v<result, timer_action>,
                      "loop_ref::every: the callback returns void or skiff::timer_action");
        return timer(period, period, [fn = std::forward<Fn>(fn)](detail::loop_context&) mutable {
            if constexpr (std::is_void_v<result>) {
                fn();
                return timer_action::keep;
            } else {
                return fn();
            }
        });
    }
    void cancel(timer_id id) const {
        if (hub_) hub_->cancel_timer(id);
    }
    // on_readable runs on the loop while fd (non-blocking, owned by the caller) is readable,
    // until unwatch(); the caller reads it there.
    watch_id watch(int fd, detail::unique_function<void()> on_readable) const {
        return hub_ ? hub_->add_watch(fd, std::move(on_readable)) : 0;
    }
    void unwatch(watch_id id) const {
        if (hub_) hub_->remove_watch(id);
    }

private:
    friend class deferred;
    explicit loop_ref(std::shared_ptr<detail::async_hub> hub) : hub_(std::move(hub)) {}

    timer_id timer(std::chrono::milliseconds first, std::chrono::milliseconds period, detail::timer_task fn) const {
        if (!hub_) return 0;
        return hub_->add_timer(first.count(), period.count(), std::move(fn));
    }

    std::shared_ptr<detail::async_hub> hub_;
};

class push_stream {
public:
    push_stream() = default;
    push_stream(push_stream&&) noexcept = default;
    push_stream& operator=(push_stream&& o) noexcept {
        close();
        s_ = std::move(o.s_);
        hub_ = std::move(o.hub_);
        return *this;
    }
    push_stream(const push_stream&) = delete;
    push_stream& operator=(const push_stream&) = delete;
    ~push_stream() { close(); }

    // Queues bytes for the client. Past max_push_buffer (queued and unsent together) the
    // stream is closed, and so is its connection: the client gets a truncated body.
    push_status write(std::string_view bytes) {
        if (closed()) return push_status::closed;
        std::size_t held = buffered() + bytes.size();
        if (static_cast<std::int64_t>(held) > s_->push_limit) {
            s_->overflowed.store(true, std::memory_order_relaxed);
            close();
            return push_status::closed;
        }
        s_->queued.fetch_add(bytes.size(), std::memory_order_relaxed);
        bool backlogged = held > s_->push_high_water;
        if (backlogged) s_->wants_writable.store(true, std::memory_order_relaxed);  // before the post: see loop_hub.hpp
        bool posted = hub_->post([s = s_, b = std::string(bytes)](detail::loop_context& ctx) mutable { detail::apply_push(ctx, *s, b, false); });
        if (!posted) return push_status::closed;
        return backlogged ? push_status::backlogged : push_status::accepted;
    }

    // fn runs on the stream's loop: with push_status::accepted once a write() that said
    // backlogged has drained to half of write_high_water (write again), and once with
    // push_status::closed when the stream ends (the client went, the bound passed, it was
    // shed, the server stopped, or close()); never after that. A later call replaces fn. False when the stream
    // is already closed by close() or its loop is gone (fn is dropped, not called).
    bool on_writable(std::function<void(push_status)> fn) {
        if (!s_) return false;
        auto tell = [fn = std::move(fn)](bool ended) { fn(ended ? push_status::closed : push_status::accepted); };
        return hub_->post([s = s_, tell = std::move(tell)](detail::loop_context&) mutable {
            detail::listen_writable(*s, std::move(tell));
        });
    }

    // Ends the body (the last chunk); the handle is then empty.
    void close() {
        if (!s_) return;
        hub_->post([s = s_](detail::loop_context& ctx) {
            std::string none;
            detail::apply_push(ctx, *s, none, true);
        });
        s_.reset();
        hub_.reset();
    }

    // Closed by close(), or by the server (client gone, bound passed, server stopped).
    bool closed() const noexcept { return !s_ || s_->push.load(std::memory_order_relaxed) == detail::push_state::closed; }
    // Bytes given to write() that the client has not taken yet (approximate, from any thread).
    std::size_t buffered() const noexcept {
        if (!s_) return 0;
        return s_->queued.load(std::memory_order_relaxed) + s_->parked.load(std::memory_order_relaxed);
    }

private:
    friend class deferred;
    push_stream(std::shared_ptr<detail::deferred_state> s, std::shared_ptr<detail::async_hub> hub)
        : s_(std::move(s)), hub_(std::move(hub)) {}

    std::shared_ptr<detail::deferred_state> s_;
    std::shared_ptr<detail::async_hub> hub_;
};

// Server-Sent Events (HTML Living Standard §9.2): each event is field lines and a blank line.
class sse_stream {
public:
    sse_stream() = default;
    explicit sse_stream(push_stream s) : s_(std::move(s)) {}

    // One event: `data` split into one data: line per line (CRLF, LF or CR end a line), with
    // an optional event name and id (cut at a line break, which they may not hold).
    push_status send(std::string_view data, std::string_view event = {}, std::string_view id = {}) {
        return s_.write(format(data, event, id));
    }
    // Tells the client how long to wait before reconnecting.
    push_status retry(std::chrono::milliseconds ms) { return s_.write("retry: " + std::to_string(ms.count()) + "\n\n"); }
    // A comment line, which clients ignore: a keep-alive through idle proxies.
    push_status comment(std::string_view text = {}) {
        std::string line = ":";
        if (!text.empty()) line.append(" ").append(one_line(text));
        return s_.write(line.append("\n\n"));
    }
    // As push_stream::on_writable.
    bool on_writable(std::function<void(push_status)> fn) { return s_.on_writable(std::move(fn)); }
    void close() { s_.close(); }
    bool closed() const noexcept { return s_.closed(); }
    std::size_t buffered() const noexcept { return s_.buffered(); }

    static std::string format(std::string_view data, std::string_view event = {}, std::string_view id = {}) {
        std::string out;
        if (!event.empty()) out.append("event: ").append(one_line(event)).append("\n");
        if (!id.empty()) out.append("id: ").append(one_line(id)).append("\n");
        std::size_t at = 0;
        for (;;) {
            std::size_t end = data.find_first_of("\r\n", at);
            out.append("data: ").append(data.substr(at, end - at)).append("\n");
            if (end == std::string_view::npos) break;
            at = end + (data.compare(end, 2, "\r\n") == 0 ? 2 : 1);
        }
        return out.append("\n");
    }

private:
    static std::string_view one_line(std::string_view s) noexcept { return s.substr(0, s.find_first_of("\r\n")); }

    push_stream s_;
};

class deferred {
public:
    deferred() = default;
    deferred(deferred&&) noexcept = default;
    deferred& operator=(deferred&& o) noexcept {
        abandon();
        s_ = std::move(o.s_);
        hub_ = std::move(o.hub_);
        status_ = o.status_;
        fields_ = std::move(o.fields_);
        return *this;
    }
    deferred(const deferred&) = delete;
    deferred& operator=(const deferred&) = delete;
    ~deferred() { abandon(); }

    deferred& status(int code) noexcept {
        status_ = code;
        return *this;
    }
    // As response::header (the loop writes it, dropping what response::header drops).
    deferred& header(std::string_view name, std::string_view value) {
        fields_.emplace_back(std::string(name), std::string(value));
        return *this;
    }

    // Completes the answer; each returns false when it was already completed (by this handle
    // or by the server's deadline), and the bytes are then dropped.
    bool text(std::string_view body) { return complete(detail::answer_kind::whole, "text/plain", body); }
    bool json(std::string_view body) { return complete(detail::answer_kind::whole, "application/json", body); }
    bool html(std::string_view body) { return complete(detail::answer_kind::whole, "text/html; charset=utf-8", body); }
    bool body(std::string_view body, std::string_view content_type = "application/octet-stream") {
        return complete(detail::answer_kind::whole, content_type.empty() ? "application/octet-stream" : content_type, body);
    }
    bool end() { return complete(detail::answer_kind::whole, {}, {}); }

    // Completes the answer with a body pushed later; an empty (closed) stream if already completed.
    push_stream stream(std::string_view content_type) {
        if (!complete(detail::answer_kind::push, content_type, {})) return {};
        return push_stream(s_, hub_);
    }
    // The same as text/event-stream, uncached.
    sse_stream events() {
        header("Cache-Control", "no-cache");
        return sse_stream(stream("text/event-stream"));
    }

    // The client went, the deadline passed or the server stopped: nobody waits for the answer.
    bool cancelled() const noexcept { return !s_ || s_->cancelled.load(std::memory_order_relaxed); }
    // Not completed yet (by anyone).
    bool pending() const noexcept { return s_ && !s_->done.load(std::memory_order_relaxed); }
    // The loop that will write the answer.
    loop_ref loop() const { return loop_ref(hub_); }

private:
    friend class response;

    explicit deferred(response& r);

    bool complete(detail::answer_kind kind, std::string_view type, std::string_view body) {
        if (!s_ || s_->done.exchange(true)) return false;
        s_->kind = kind;
        s_->status = status_;
        s_->fields = std::move(fields_);
        s_->content_type = std::string(type);
        s_->body = std::string(body);
        return hub_->post([s = s_](detail::loop_context& ctx) { detail::apply_answer(ctx, *s); });
    }

    // Dropped without an answer: 500, so the client is not left waiting for the deadline. Said
    // on stderr (debug builds) only when the 500 was handed to a loop that still runs. Once
    // cancelled (the client went or half-closed), nothing: no status would be true.
    void abandon() {
        if (!pending()) return;
        if (cancelled()) {
            complete(detail::answer_kind::dropped, {}, {});
            return;
        }
        status_ = 500;
        fields_.clear();
        bool handed = complete(detail::answer_kind::whole, "text/plain", "Internal Server Error\n");
        if constexpr (detail::debug_build)
            if (handed) std::fprintf(stderr, "skiff: a deferred answer was dropped without completing; answering 500\n");
    }

    std::shared_ptr<detail::deferred_state> s_;
    std::shared_ptr<detail::async_hub> hub_;
    int status_ = 200;
    std::vector<std::pair<std::string, std::string>> fields_;
};

// Binds to the loop that serves r: its hub (started here under single), and a deadline
// timer that answers 503 at options::deferred_timeout. The fields r has so far go with the
// answer, ahead of the handle's own. A response already sent gives an empty handle, whose
// completions do nothing.
inline deferred::deferred(response& r) {
    if (r.sent_ || r.anchor_ == nullptr) return;
    detail::hub_anchor& a = *r.anchor_;
    hub_ = detail::async_hub::of(a);
    if (!hub_) {
        r.status(500).text("Internal Server Error\n");
        return;
    }
    auto s = std::shared_ptr<detail::deferred_state>(new detail::deferred_state);
    s->head_request = r.omit_body_;
    s->http10 = r.http10_;
    s->push_limit = a.push_limit;
    s->push_high_water = a.push_high_water;
    s->head_fields = detail::response_access::hold_fields(r);  // out of the batch: the head comes later
    std::int64_t after = a.deferred_timeout_ms == 0 ? std::numeric_limits<std::int64_t>::max() : a.deferred_timeout_ms;
    s->deadline_timer = hub_->track(s, after);
    r.sent_ = true;
    detail::response_access::hand_over(r, s.get(), new detail::answer_wait(*s, a));  // the loop owns it from here
    s_ = std::move(s);
}

} // namespace skiff

#endif // SKIFF_ASYNC_DEFERRED_HPP
