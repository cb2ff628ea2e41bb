// The loop's side of a response (response.hpp): binding it to the output buffer, rolling
// back what a throwing handler left half-written, taking what a handler handed the connection
// to (a deferred answer, a stream, a file), holding a head's fields for a later answer, and the
// built-in middleware's fields checked once at start-up.
//
// Handlers never use it: it is for the session, the door's features and the built-ins.
//
// The built-in middleware's fields (response_access::add_fixed_fields, add_checked_field) are
// not written into the output buffer before the head but kept aside: a block composed at
// start-up by reference, the per-request ones (an id, an origin) in a small room of the
// response. The head takes them after its own fields, in the order they were added, so a 200
// with them stays on the pre-composed head (ok_heads) instead of the general writer, which
// would first move them behind it. Once header() has written a field into the buffer, those
// that follow go there too, so the order added is the order sent.
//
// An answer whose head is written later (a deferred one, or a route that streams its request
// body and answers at its end) leaves the chain with fields written and no head: those bytes
// must not stay in the output buffer, where the next bytes of the batch would follow them to
// the client ahead of any status line. They are taken out whole (response_access::hold_fields)
// into the answer's own state, with what they told the head (a Content-Type, a Date), and put
// back (restore_fields) in front of the fields the answer adds when its head is written. (A
// Connection: close among them is not a field but a flag, not held: the session reads it when
// the chain returns, and a deferred answer's connection closes after it all the same.) A field
// added to a deferred answer after defer() returned is dropped: its head is the handle's to
// write (deferred::header).
#ifndef SKIFF_HTTP_RESPONSE_ACCESS_HPP
#define SKIFF_HTTP_RESPONSE_ACCESS_HPP

#include "skiff/config.hpp"
#include "skiff/detail/byte_buffer.hpp"
#include "skiff/detail/date_cache.hpp"
#include "skiff/http/response.hpp"
#include "skiff/http/response_head.hpp"

#include <cstddef>      // std::size_t
#include <cstring>      // std::memcpy, std::memmove
#include <string_view>  // std::string_view
#include <utility>      // std::move

namespace skiff {
namespace detail {

struct response_access {
    static void start(response& r, byte_buffer& out, const date_cache& date, bool head, bool close,
                      bool http10 = false) noexcept {
        r.out_ = &out;
        r.date_ = &date;
        r.start_ = out.size();
        r.status_ = 200;
        r.omit_body_ = head;
        r.http10_ = http10;
        r.close_ = close;
        r.sent_ = r.has_type_ = r.has_date_ = false;
        r.deferred_ = nullptr;
        r.aside_ = head_aside::none;  // the rest of the aside state is set when it begins
    }
    static void discard(response& r) noexcept {
        r.out_->resize(r.start_);
        // A handler that deferred, then threw: its handle answers nothing. Its taker is the
        // loop's to drop (take_taker), as only the loop knows the type.
        r.deferred_ = nullptr;
        start(r, *r.out_, *r.date_, r.omit_body_, r.close_, r.http10_);
    }
    // The head of a body pushed later (a deferred answer's push stream): how the body is framed,
    // no_content when none follows (HEAD, 204, 304).
    static response_framing push_head(response& r, std::string_view content_type) {
        return r.sent_ ? response_framing::no_content : r.stream_head(content_type, std::nullopt);
    }
    // The Content-Length a stream must fill, or nullopt: chunked, or ended by closing.
    static void lend(response& r, hub_anchor& a) noexcept { r.anchor_ = &a; }
    // What the handler handed the connection to (defer()), once; null for any other response.
    // The caller owns it from then on.
    static handed* take_taker(response& r) noexcept {
        handed* t = r.taker_;
        r.taker_ = nullptr;
        return t;
    }
    static bool hands_over(const response& r) noexcept { return r.taker_ != nullptr; }
    // The loop's services, for what binds to them (defer(), a WebSocket's handle); null
    // outside a loop.
    static hub_anchor* anchor(const response& r) noexcept { return r.anchor_; }
    // A head the caller wrote whole (a 101 Switching Protocols, websocket/upgrade.hpp): the
    // response is done, and says `status` to the hooks.
    static void send_head(response& r, std::string_view head, int status) {
        r.out_->append(head.data(), head.size());
        r.status_ = status;
        r.sent_ = true;
    }
    static void hand_over(response& r, deferred_state* s, handed* t) noexcept {
        r.deferred_ = s;
        r.taker_ = t;
    }
    // The answer defer() handed out, left in place (middleware that must outlive the handler).
    static deferred_state* pending_deferred(response& r) noexcept { return r.deferred_; }

    // For fields checked once at start-up (the built-in middleware's): what header() would
    // keep, and adding such a field without header()'s per-call checks.
    static bool checkable_field(std::string_view name, std::string_view value) noexcept {
        return valid_field(name, value) && !is_framing_field(name) &&
               !iequals_lower(name, "content-type");
    }
    // name and value must pass checkable_field(). Kept aside for the head (the file comment)
    // while the room holds it and header() has written nothing; else written as header() would.
    // After the head (the timer's field), inserted where the writer noted the head's end.
    // Inline, so that a constant name is copied as a constant.
    SKIFF_ALWAYS_INLINE static void add_checked_field(response& r, std::string_view name, std::string_view value) {
        std::size_t size = response::field_size(name, value);
        if (char* p = r.sent_ ? noted_late_room(r, size) : aside_room(r, size)) return response::put_line(p, name, value);
        add_field_elsewhere(r, name, value);
    }
    // add_checked_field() for a value that put_value(char*) writes, value_size bytes, in the
    // field's place, not formatted elsewhere and copied (the response timer's; its file has the
    // measure). Where the field is not added in place, put_value writes into `spare`
    // (value_size bytes) and the field goes as add_checked_field() sends it.
    template <class PutValue>
    SKIFF_ALWAYS_INLINE static void add_checked_field(response& r, std::string_view name, std::size_t value_size,
                                                      char* spare, const PutValue& put_value) {
        namespace text = head_text;
        std::size_t size = name.size() + text::field_separator.size() + value_size + text::crlf.size();
        char* p = r.sent_ ? noted_late_room(r, size) : aside_room(r, size);
        if (p == nullptr) {
            put_value(spare);
            return add_field_elsewhere(r, name, {spare, value_size});
        }
        p = put(p, name);
        std::memcpy(p, text::field_separator.data(), text::field_separator.size());
        put_value(p + text::field_separator.size());
        std::memcpy(p + text::field_separator.size() + value_size, text::crlf.data(), text::crlf.size());
    }
    // Lines composed and checked at start-up (each as add_checked_field() requires), added by
    // reference when they are the first extra; copied otherwise. `block` outlives the chain.
    static void add_fixed_fields(response& r, const field_block& block) {
        std::size_t size = block.lines.size();
        if (size == 0) return;
        if (r.aside_ == head_aside::none && !r.sent_ && r.out_->size() == r.start_) {
            r.aside_ = head_aside::kept;  // the first kept aside: begin_extras() in one go
            r.fixed_ = &block;
            r.extra_size_ = 0;
            r.extras_ = size;
            return;
        }
        add_block_elsewhere(r, block);
    }
    // `size` bytes opened before the end of a head written with its end noted; else null.
    SKIFF_ALWAYS_INLINE static char* noted_late_room(response& r, std::size_t size) {
        if (r.aside_ == head_aside::none || r.deferred_ != nullptr) return nullptr;
        return r.late_room(size);
    }
    // `size` bytes of the room, taken, when a field may be kept aside and fits; else null.
    SKIFF_ALWAYS_INLINE static char* aside_room(response& r, std::size_t size) noexcept {
        if (r.sent_ || r.out_->size() != r.start_) return nullptr;
        begin_extras(r);
        if (r.extra_size_ + size > extra_field_room) return nullptr;
        char* p = r.extra_ + r.extra_size_;
        r.extra_size_ += size;
        r.extras_ += size;
        return p;
    }
    // A field that is not kept aside: inserted late, or written as header() writes it.
    SKIFF_NOINLINE static void add_field_elsewhere(response& r, std::string_view name, std::string_view value) {
        std::size_t size = response::field_size(name, value);
        if (r.sent_) {
            char* p = r.deferred_ == nullptr ? r.late_room(size) : nullptr;
            if (p != nullptr) response::put_field(p, name, value);
            return;
        }
        response::put_field(r.out_->prepare(size), name, value);
        r.out_->commit(size);
    }
    SKIFF_NOINLINE static void add_block_elsewhere(response& r, const field_block& block) {
        std::size_t size = block.lines.size();
        // Kept aside but none yet (expect_late_fields()): aside_ is not none here, since
        // add_fixed_fields() took that case.
        if (!r.sent_ && r.out_->size() == r.start_ && r.extras_ == 0) {
            r.fixed_ = &block;
            r.extras_ = size;
            return;
        }
        if (char* p = aside_room(r, size)) {
            std::memcpy(p, block.lines.data(), size);
            return;
        }
        if (r.sent_) {
            char* p = r.deferred_ == nullptr ? r.late_room(size) : nullptr;
            if (p != nullptr) std::memcpy(p, block.lines.data(), size);
            return;
        }
        r.out_->append(block.lines.data(), size);
    }
    // A field to be kept aside, or one to come after the head (expect_late_fields): the
    // aside state starts afresh if this is the first (start() left it as it was).
    static void begin_extras(response& r) noexcept {
        if (r.aside_ != head_aside::none) return;
        r.aside_ = head_aside::kept;
        r.extras_ = 0;
        r.fixed_ = nullptr;
        r.extra_size_ = 0;
    }
    // Middleware that adds fields after next() (the response timer) says so before it: the
    // head's writer then notes where the head ends, and the late field needs no scan for it.
    static void expect_late_fields(response& r) noexcept {
        if (!r.sent_) begin_extras(r);
    }
    // The fields written for a head not written yet, taken out of the output buffer (which
    // goes on from where this response began), after those kept aside, and kept by the
    // caller until the head is.
    static held_fields hold_fields(response& r) {
        held_fields h;
        if (r.aside_ != head_aside::none) {
            h.bytes.resize(r.extras_);
            r.put_extras(h.bytes.data());
        }
        h.bytes.append(r.out_->data() + r.start_, r.out_->size() - r.start_);
        h.has_type = r.has_type_;
        h.has_date = r.has_date_;
        r.out_->resize(r.start_);
        r.aside_ = head_aside::none;
        return h;
    }
    // Puts held fields back into a response just started (start()), before any other: the
    // head then written takes them as it takes those header() wrote.
    static void restore_fields(response& r, const held_fields& h) {
        if (h.bytes.empty()) return;
        r.out_->append(h.bytes.data(), h.bytes.size());
        r.has_type_ = r.has_type_ || h.has_type;
        r.has_date_ = r.has_date_ || h.has_date;
    }

    // The body not read yet of the request being answered, where the route may take it
    // (engine/handover.hpp); null outside the session's call for such a route's head.
    static void lend_body(response& r, pending_body* b) noexcept { r.body_ = b; }
    static pending_body* body(const response& r) noexcept { return r.body_; }
};

} // namespace detail
} // namespace skiff

#endif // SKIFF_HTTP_RESPONSE_ACCESS_HPP
