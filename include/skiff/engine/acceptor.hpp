// Accept and admission for one loop: takes connections off a ready listener until its queue
// is empty; at the connection limit closes an idle keep-alive connection to make room (the
// one idle longest among those it looks at, as nginx reuses keep-alive connections), and
// refuses the newcomer with a fixed 503 when none is idle (or while stopping), closed without
// resetting what the client still sends (refusals.hpp); and stops watching the listener while
// the process is out of descriptors, instead of spinning on it; accepting resumes when a
// connection closes, or after a pause.
//
// Idle keep-alive connections give way because they would otherwise hold every place for
// idle_timeout (60 s) while new clients get 503; a client may see any idle connection closed
// (RFC 9112 §9.6) and opens another. A connection that has not sent its first request does not
// give way: a flood of new connections gets 503s rather than displacing one another, and
// header_timeout bounds how long each holds its place.
//
// It does not serve connections (session.hpp) or know the policy: where the listener lives
// and whether another loop takes the connection are the connection set's (connection_set.hpp).
#ifndef SKIFF_ENGINE_ACCEPTOR_HPP
#define SKIFF_ENGINE_ACCEPTOR_HPP

#include "skiff/config.hpp"
#include "skiff/detail/guarded_call.hpp"
#include "skiff/engine/connection.hpp"
#include "skiff/engine/hooks.hpp"
#include "skiff/engine/listener_list.hpp"
#include "skiff/engine/loop_time.hpp"
#include "skiff/engine/options.hpp"
#include "skiff/engine/refusals.hpp"
#include "skiff/platform/socket.hpp"

#include <cerrno>    // errno values from accept
#include <cstddef>   // std::size_t
#include <cstdint>   // std::int64_t, std::uint8_t

namespace skiff::detail {

// CloseIdle: closes a connection of the set as its idle deadline would (the session's close).
template <class Set, class CloseIdle>
class acceptor {
public:
    acceptor(const options& opt, Set& set, const loop_time& time, CloseIdle close_idle) noexcept
        : opt_(opt), set_(set), time_(time), close_idle_(close_idle), max_connections_(opt.max_connections) {}

    // sharded: each loop admits its share of options::max_connections.
    void limit_connections(std::size_t n) noexcept { max_connections_ = n; }
    void begin_stop() noexcept { admitting_ = admission::refusing; }
    // Which loop this is (response_event::loop).
    void number(std::size_t loop) noexcept { loop_ = loop; }

    // The listener the poller handed back (data) is readable: accept until its queue is
    // empty. Connections are prepared here, before any is refused or handed to another loop,
    // so that even the refusal's send cannot raise SIGPIPE where that is a socket option.
    void accept_ready(void* data) {
        listener_slot& l = set_.listener(data);
        for (;;) {
            int fd = accept_nonblocking(l.fd.get());
            if (fd >= 0) {
                prepare_connection(fd, l.kind);
                if (!set_.hand_off(fd)) admit(fd);
                continue;
            }
            if (errno == EINTR || errno == ECONNABORTED) continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) return pause();
            break;  // EAGAIN: the queue is empty
        }
        set_.accept_round_done(l);
    }

    // A prepared connection, from this loop's listeners or handed over by the acceptor's.
    // A connection hook hears of it before it is registered: under shared another thread
    // may close it from that moment.
    void admit(int fd) {
        if (admitting_ == admission::refusing) return refuse(fd);
        if (set_.size() >= max_connections_ && !set_.close_an_idle(close_idle_)) return refuse(fd);
        bool observed = static_cast<bool>(opt_.on_connection);
        if (SKIFF_UNLIKELY(observed)) opt_.on_connection(connection_change::opened, loop_);
        bool added = set_.add(fd, deadline_kind::header, time_.now_ms + opt_.header_timeout.count());
        if (SKIFF_UNLIKELY(observed) && !added) opt_.on_connection(connection_change::closed, loop_);
    }

    bool paused() const noexcept { return listening_ == listening::paused; }
    // Whether the loop must wake once a tick for the acceptor: paused, or refusals lingering.
    bool wants_ticks() const noexcept { return ticks_ == ticks::wanted; }
    // A descriptor came free: try again at once.
    void on_close() noexcept {
        if (paused()) resume();
    }
    // Every turn: one test while there is nothing to do (the usual case).
    void on_tick() {
        if (SKIFF_UNLIKELY(ticks_ == ticks::wanted)) tick();
    }
    // The loop is done: refusals still lingering close now.
    void close_refused() noexcept {
        refused_.close_all();
        note_ticks();
    }

private:
    static constexpr std::int64_t retry_after_ms = 100;

    enum class admission : std::uint8_t { admitting, refusing };
    enum class listening : std::uint8_t { watching, paused };
    enum class ticks : std::uint8_t { idle, wanted };  // what on_tick() has to do: nothing, or look

    SKIFF_NOINLINE void tick() {
        refused_.on_tick(time_.now_ms);
        if (paused() && time_.now_ms >= retry_at_) resume();
        note_ticks();
    }
    void note_ticks() noexcept { ticks_ = paused() || !refused_.empty() ? ticks::wanted : ticks::idle; }

    void refuse(int fd) {
        if (SKIFF_UNLIKELY(static_cast<bool>(opt_.on_response))) report_refusal(fd);
        refused_.refuse(fd, time_.now_ms);
        note_ticks();
    }

    SKIFF_NOINLINE void report_refusal(int fd) {
        peer_text peer(fd);
        response_event e;
        e.reason = admitting_ == admission::refusing ? rejection::stopping : rejection::connection_limit;
        e.status = 503;
        e.bytes_sent = sizeof refusal_text - 1;
        e.peer = peer.view();
        e.loop = loop_;
        call_guarded([&] { opt_.on_response(e); }, [] {});
    }

    void pause() noexcept {
        listening_ = listening::paused;
        note_ticks();
        retry_at_ = time_.now_ms + retry_after_ms;
        set_.pause_accepting();
    }

    void resume() noexcept {
        listening_ = listening::watching;
        note_ticks();
        set_.resume_accepting();
    }

    const options& opt_;
    Set& set_;
    const loop_time& time_;
    CloseIdle close_idle_;
    std::size_t max_connections_;
    std::int64_t retry_at_ = 0;
    std::size_t loop_ = 0;
    admission admitting_ = admission::admitting;
    listening listening_ = listening::watching;
    ticks ticks_ = ticks::idle;
    refused_connections refused_;
};

} // namespace skiff::detail

#endif // SKIFF_ENGINE_ACCEPTOR_HPP
