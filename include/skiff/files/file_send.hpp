// A file body on its way to the client (response::file): what the connection is handed to,
// through the engine's door (engine/handover.hpp), once the response's head is in the batch.
// It sends the file after the head and every earlier response of the batch have left
// (sendfile on Linux, file_body.hpp), a few calls an event so that one large file does not
// hold the loop, and gives the connection back when the last byte is sent.
//
// The engine knows none of this: a program that never sends a file compiles none of it
// (tests/compile/no_feature_symbols.cmake).
//
// Invariants: the descriptor is closed with this state, however the response ends (sent,
// client gone, stop()). A file that shrinks while it is sent leaves the framing short, so the
// connection closes after what was sent, as after a short stream. After door::close() or
// door::answered() nothing of this state is touched (the first frees it, the second retires it).
#ifndef SKIFF_FILES_FILE_SEND_HPP
#define SKIFF_FILES_FILE_SEND_HPP

#include "skiff/engine/connection.hpp"
#include "skiff/engine/handover.hpp"
#include "skiff/files/file_body.hpp"
#include "skiff/platform/socket.hpp"
#include "skiff/poller/poll_event.hpp"

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint64_t
#include <utility>  // std::move

namespace skiff::detail {

class file_send final : public handed {
public:
    using body = file_body;
    explicit file_send(file_body b) noexcept : body_(std::move(b)) {}

    // Nothing of the request is the file's: the bytes behind it are the next requests'.
    std::size_t begin(door&, connection&, pending_body&, char*, std::size_t) override { return 0; }

    // The connection is not read while the file is sent (answers stay in order).
    fate on_readable(door&, connection&) override { return fate::open; }
    fate on_deadline(door& d, connection& c) override { return d.close(c); }

    // Everything before the file has left (the head included): the next part of the file.
    fate await(door& d, connection& c) override {
        switch (send_some(d, c)) {
        case progress::failed: return d.close(c);
        case progress::sent_all: return done(d, c);
        case progress::shrank:
            d.close_after_output(c);  // the framing is short: the close tells the client
            return done(d, c);
        case progress::stalled: break;
        case progress::moved: d.arm(c, deadline_kind::write); break;  // the write deadline counts from progress
        }
        d.watch(c, watch_write);
        return fate::open;
    }

    void abandon() noexcept override {}
    void on_sent(door&, connection&) override {}
    bool take_from_workers(loop_context&, connection&) override { return false; }
    void dispose() noexcept override { delete this; }

private:
    enum class progress : std::uint8_t { moved, stalled, sent_all, shrank, failed };
    static constexpr int calls_per_event = 4;

    progress send_some(door& d, connection& c) {
        std::size_t room = 0;
        char* scratch = d.scratch(room);
        std::size_t cap = file_send_cap != 0 ? file_send_cap : room;  // 0: via scratch
        sigpipe_guard guard;
        bool moved = false;
        for (int call = 0; call < calls_per_event && body_.left != 0; ++call) {
            ssize_t n = send_file_some(c.fd, body_, scratch, cap);
            if (n < 0 && !retry_later()) return progress::failed;
            if (n < 0) return moved ? progress::moved : progress::stalled;
            if (n == 0) return progress::shrank;
            moved = true;
        }
        return body_.left == 0 ? progress::sent_all : progress::moved;
    }

    // The connection goes on as after any response (the requests behind it are served).
    static fate done(door& d, connection& c) {
        d.answered(c);
        return d.after_write(c, d.flush(c));
    }

    file_body body_;
};

} // namespace skiff::detail

#endif // SKIFF_FILES_FILE_SEND_HPP
