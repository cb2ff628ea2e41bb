// The concrete loop hub (engine/loop_hub.hpp states the interface): an inbox of tasks that any
// thread posts to a loop, the notifier that wakes the loop for them (an eventfd, or EVFILT_USER
// on kqueue), the loop's timers (hub_timers.hpp), the foreign descriptors it watches, and,
// under shared, the sockets of the connections it holds for the workers (a deferred answer's, a
// WebSocket's: hold_socket; both kept by hub_watches.hpp). It does not know connections: a task
// is a function of the loop's context, an answer reaches its connection through
// answer_wait.hpp, and a held socket's readiness runs the function its holder gave. It is made
// only when a program defers or asks for a loop, so its mutex is compiled into such programs
// only.
//
// Invariants. Posting takes the inbox lock; a task runs on the loop, in the order posted, and
// never after detach(): from then on posts are refused (a handle that outlives its server
// completes as a no-op). A turn runs at most tasks_per_turn tasks; the rest wait for the next
// turn, after the ready I/O (the wait does not block while some are left), so a fan-out that
// posts a task per subscriber cannot starve the loop's reads. Tasks, timers and watch callbacks
// run under the process lock (a recursive mutex, taken uncontended except under the shared
// policy, where it makes one thread at a time the hub's processor). The hub is kept alive by
// the shared_ptrs of the handles that name it, and by itself until detach().
//
// Stop (docs/stopping.md): the hub knows every deferred answer made on its loop (track()), so
// that stop_grace after begin_stop() it can end each one still open (a 503, or the last chunk
// of its push stream), and any made after that at once. The end is posted behind what was
// pushed before it, so bytes the on_stop hooks wrote go out first.
#ifndef SKIFF_ASYNC_HUB_HPP
#define SKIFF_ASYNC_HUB_HPP

#include "skiff/async/answer_wait.hpp"
#include "skiff/async/hub_timers.hpp"
#include "skiff/async/hub_watches.hpp"
#include "skiff/detail/counted_ref.hpp"
#include "skiff/detail/guarded_call.hpp"
#include "skiff/detail/unique_function.hpp"
#include "skiff/engine/loop_hub.hpp"
#include "skiff/engine/loop_time.hpp"
#include "skiff/poller/poll_event.hpp"

#include <atomic>         // drain_wanted_, the next id: read without a lock
#include <cstdint>        // std::int64_t, std::uint64_t
#include <memory>         // std::shared_ptr, the hub's own life; std::weak_ptr to the answers a stop ends
#include <mutex>          // the inbox and process locks
#include <unordered_map>  // the answers a stop ends
#include <utility>        // std::move, std::swap, std::pair
#include <vector>         // the inbox, the answers a stop ends

namespace skiff::detail {

// Move-only, so that a task may own what it completes (a deferred, a push_stream).
using hub_task = unique_function<void(loop_context&)>;

class async_hub final : private loop_hub {
public:
    // The anchor's hub, started on first use (single: on the loop's thread; the other
    // policies start theirs at listen, before any worker runs).
    // Null when the notifier could not be made (no descriptor left).
    static std::shared_ptr<async_hub> of(hub_anchor& a) {
        if (a.hub == nullptr) start(a);
        if (a.hub == nullptr) return nullptr;
        return self(a.hub)->self_;
    }

    static void start(hub_anchor& a) {
        if (a.hub) return;  // one hub a set: a second start would leak the first
        auto hub = std::shared_ptr<async_hub>(new async_hub(*a.poller, a.mode));
        hub->self_ = hub;
        if (a.poller->add_notifier(&hub->notify_tag_, poll_mode::level)) return;  // no hub: defer answers 500
        a.hub = static_cast<loop_hub*>(hub.get());
    }

    // ---- any thread ---------------------------------------------------------------------

    // False when the loop is gone (the task is dropped).
    bool post(hub_task task) {
        std::lock_guard<std::mutex> g(inbox_lock_);
        if (state_ == hub_state::detached) return false;
        inbox_.push_back(std::move(task));
        if (inbox_.size() == 1) poller_.notify();  // the loop drains all at once: one wake is enough
        return true;
    }

    std::uint64_t new_id() noexcept { return next_id_.fetch_add(1, std::memory_order_relaxed); }

    // A timer: fn runs on the loop after `after_ms`, then every `period_ms` if that is not 0,
    // until it answers timer_action::stop or is cancelled. The delay counts from the turn
    // that takes the timer in, on the loop's clock (the test client's moves by hand).
    std::uint64_t add_timer(std::int64_t after_ms, std::int64_t period_ms, timer_task fn) {
        std::uint64_t id = new_id();
        post([this, id, after_ms, period_ms, fn = std::move(fn)](loop_context&) mutable {
            timers_.insert(id, due_after(after_ms), period_ms, std::move(fn));
        });
        return id;
    }

    // A deferred answer made on this loop: answered 503 after `after_ms` (its deadline timer,
    // whose id is returned), and known to the stop (see the file comment). One post, as the
    // timer alone took.
    std::uint64_t track(const std::shared_ptr<deferred_state>& s, std::int64_t after_ms) {
        std::uint64_t id = new_id();
        post([this, id, after_ms, s](loop_context& ctx) {
            timers_.insert(id, due_after(after_ms), 0, [this, s](loop_context& c) {
                give_up(c, *s);
                answers_.erase(s.get());  // one never bound to a connection is not forgotten otherwise
                return timer_action::stop;
            });
            if (stop_ == stop_phase::swept) return end_for_stop(ctx, *s);
            answers_.emplace(s.get(), s);
        });
        return id;
    }
    void cancel_timer(std::uint64_t id) {
        post([this, id](loop_context&) { timers_.drop(id); });
    }

    // Watches fd for readability on the loop; fn() runs on each readiness until unwatched.
    std::uint64_t add_watch(int fd, unique_function<void()> fn) {
        std::uint64_t id = new_id();
        post([this, id, fd, fn = std::move(fn)](loop_context&) mutable { watches_.add(id, fd, std::move(fn)); });
        return id;
    }
    void remove_watch(std::uint64_t id) {
        post([this, id](loop_context&) { watches_.retire(id); });
    }

    // ---- what loop_hub's table calls ----------------------------------------------------

    // What the hub held is destroyed here, after the locks: a task, timer or watcher may own
    // a deferred (move-only callables), whose destructor posts its 500 to this hub, refused
    // now; under the inbox lock that post would deadlock, and left in place the handle's
    // shared_ptr to the hub would keep the hub alive forever.
    void detach() noexcept {
        std::shared_ptr<async_hub> last;
        std::vector<hub_task> tasks, batch;
        timer_queue timers;
        hub_watches::watcher_list watchers, retired;
        hub_watches::held_map held;
        std::vector<kept_state> kept;
        {
            std::lock_guard<std::mutex> g(inbox_lock_);
            state_ = hub_state::detached;
            tasks.swap(inbox_);
            kept.swap(kept_);
            last = std::move(self_);
        }
        std::lock_guard<std::recursive_mutex> p(process_lock_);
        timers_.take_all(timers);
        batch.swap(batch_);
        next_ = 0;
        watches_.take_watchers(watchers, retired, held);
        answers_.clear();
    }

    bool claims(const void* data) const noexcept {
        return data == &notify_tag_ || watches_.claims(data);
    }

    // The notifier's event only marks the inbox for on_turn(): a task may close a connection,
    // and one whose event is still further on in this wait's batch must not be closed under it.
    void on_event(const void* data, loop_context& ctx) {
        if (data == &notify_tag_) return drain_wanted_.store(true, std::memory_order_relaxed);
        std::lock_guard<std::recursive_mutex> p(process_lock_);
        watches_.serve(data, ctx);
    }

    int timeout(int base, std::int64_t now_ms) noexcept {
        if (drain_wanted_.load(std::memory_order_relaxed)) return 0;  // tasks left for the next turn
        std::int64_t due = timers_.next_due();
        if (due == timer_queue::no_timer) return base;
        std::int64_t wait = due > now_ms ? due - now_ms : 0;
        return base < 0 || wait < base ? static_cast<int>(wait) : base;
    }

    // After the turn's events: the inbox (if the notifier fired), then the timers that are due.
    // Under shared a thread with only timers to run leaves them to a processor already at work.
    void on_turn(std::int64_t now_ms, loop_context& ctx) {
        bool drain_now = drain_wanted_.load(std::memory_order_relaxed);
        if (!drain_now && timers_.next_due() > now_ms && !watches_.any_retired()) return;
        std::unique_lock<std::recursive_mutex> p(process_lock_, std::defer_lock);
        if (drain_now) p.lock();
        else if (!p.try_lock()) return;
        turn_now_ = now_ms;
        if (drain_wanted_.exchange(false, std::memory_order_relaxed)) drain(ctx);
        timers_.run_due(now_ms, ctx);
        watches_.free_retired();
    }

    void exclusive(void (*fn)(void*), void* arg) {
        std::lock_guard<std::recursive_mutex> p(process_lock_);
        fn(arg);
    }

    void forget(deferred_state& s) {
        timers_.drop(s.deadline_timer);
        answers_.erase(&s);
        watches_.retire_held(&s);
    }

    // From each loop's begin_stop, on its thread: the first call sets the sweep's timer.
    void begin_stop(std::int64_t now_ms, std::int64_t grace_ms) {
        std::lock_guard<std::recursive_mutex> p(process_lock_);
        if (stop_ != stop_phase::serving) return;
        stop_ = stop_phase::grace;
        timers_.insert(new_id(), now_ms + grace_ms, 0, [this](loop_context&) {
            post([this](loop_context& ctx) { sweep_for_stop(ctx); });  // behind what was pushed before
            return timer_action::stop;
        });
    }

    void watch_socket(deferred_state& s, int fd, std::uint8_t what) {
        s.socket_watch = what;
        hold_socket(s, &deferred_socket_ready, fd, what);
    }

    // shared: the hub watches a connection's socket in the workers' stead, aimed at `owner`
    // (one-shot: once per call), and keeps owner alive while it does, and for a second after
    // release_socket(). ready(ctx, &owner) runs on its readiness, under the process lock.
    // Called by the processor that holds the connection (a deferred answer's, a WebSocket's).
    // An owner that knows its own shared_ptr (enable_shared_from_this: a deferred answer's).
    template <class Owner>
    void hold_socket(Owner& owner, socket_ready_fn ready, int fd, std::uint8_t what) {
        watches_.hold(&owner, [&owner] { return std::shared_ptr<void>(owner.shared_from_this()); }, ready, fd, what);
    }
    // The same for an owner counted in place (detail/counted_ref.hpp: a WebSocket's state,
    // which is kept small): the hub holds a count of it while it watches.
    template <class Owner>
    void hold_counted_socket(Owner& owner, socket_ready_fn ready, int fd, std::uint8_t what) {
        auto keep = [&owner] {
            Owner* counted = counted_ref<Owner>::share(&owner).release();
            return std::shared_ptr<void>(counted, [](Owner* o) { counted_ref<Owner>::drop(o); });
        };
        watches_.hold(&owner, keep, ready, fd, what);
    }

    // What a feature keeps for the connections of this loop (WebSocket's routes): made on
    // first use, one per type, from any thread; handed out at detach with the rest, since it
    // may hold the hub.
    template <class T>
    T& kept() {
        std::lock_guard<std::mutex> g(inbox_lock_);
        for (kept_state& k : kept_)
            if (k.first == &kept_tag<T>) return *static_cast<T*>(k.second.get());
        kept_.emplace_back(&kept_tag<T>, std::make_shared<T>());
        return *static_cast<T*>(kept_.back().second.get());
    }

    // The connection no longer waits on the hub: its socket's events are no longer owner's
    // (they stay claimed for a second, as a removed watcher's do). Safe after detach().
    void release_socket(const void* owner) { watches_.retire_held(owner); }

private:
    enum class hub_state : std::uint8_t { open, detached };
    // serving; grace: stop() began, answers may still complete; swept: every open one was ended.
    enum class stop_phase : std::uint8_t { serving, grace, swept };
    // Enough to keep a wake's cost small beside its tasks, few enough that the reads behind a
    // fan-out wait at most this many tasks (a push to a subscriber is about a microsecond).
    static constexpr std::size_t tasks_per_turn = 64;

    static async_hub* self(loop_hub* h) noexcept { return static_cast<async_hub*>(h); }
    static const async_hub* self(const loop_hub* h) noexcept { return static_cast<const async_hub*>(h); }
    static void detach_of(loop_hub* h) noexcept { self(h)->detach(); }
    static bool claims_of(const loop_hub* h, const void* d) noexcept { return self(h)->claims(d); }
    static void on_event_of(loop_hub* h, const void* d, loop_context& ctx) { self(h)->on_event(d, ctx); }
    static int timeout_of(loop_hub* h, int base, std::int64_t now) noexcept { return self(h)->timeout(base, now); }
    static void on_turn_of(loop_hub* h, std::int64_t now, loop_context& ctx) { self(h)->on_turn(now, ctx); }
    static void exclusive_of(loop_hub* h, void (*fn)(void*), void* arg) { self(h)->exclusive(fn, arg); }
    static void forget_of(loop_hub* h, deferred_state& s) { self(h)->forget(s); }
    static void watch_socket_of(loop_hub* h, deferred_state& s, int fd, std::uint8_t w) { self(h)->watch_socket(s, fd, w); }
    static void begin_stop_of(loop_hub* h, std::int64_t now_ms, std::int64_t grace_ms) {
        self(h)->begin_stop(now_ms, grace_ms);
    }
    static constexpr ops table{&detach_of,  &claims_of,    &on_event_of, &timeout_of,      &on_turn_of,
                               &exclusive_of, &forget_of, &watch_socket_of, &begin_stop_of};

    async_hub(default_poller& poller, poll_mode mode) : loop_hub(table), poller_(poller), watches_(poller, mode) {}

    // Takes what was posted behind what an earlier turn left, and runs up to tasks_per_turn
    // of them, oldest first. Tasks posted meanwhile go to the inbox, so they run after these.
    void drain(loop_context& ctx) {
        poller_.clear_notifier();
        {
            std::lock_guard<std::mutex> g(inbox_lock_);
            if (next_ == batch_.size()) {
                batch_.clear();
                next_ = 0;
                std::swap(batch_, inbox_);
            } else {
                for (auto& t : inbox_) batch_.push_back(std::move(t));
                inbox_.clear();
            }
        }
        std::size_t end = batch_.size() - next_ > tasks_per_turn ? next_ + tasks_per_turn : batch_.size();
        while (next_ < end) {
            hub_task t = std::move(batch_[next_++]);
            call_guarded([&] { t(ctx); }, [] {});
        }
        if (next_ != batch_.size()) drain_wanted_.store(true, std::memory_order_relaxed);  // next turn, no waiting
    }

    // A delay counts from the turn that takes the timer in, on the loop's clock (process lock).
    std::int64_t due_after(std::int64_t after_ms) const noexcept {
        return after_ms == timer_queue::no_timer ? timer_queue::no_timer : turn_now_ + after_ms;
    }

    // stop_grace has passed: every answer still open is ended. Ending one may forget it (and
    // so erase it from answers_), hence the copy.
    void sweep_for_stop(loop_context& ctx) {
        stop_ = stop_phase::swept;
        std::vector<std::shared_ptr<deferred_state>> open;
        for (auto& a : answers_)
            if (auto s = a.second.lock()) open.push_back(std::move(s));
        answers_.clear();
        for (auto& s : open) call_guarded([&] { end_for_stop(ctx, *s); }, [] {});
    }

    // A deferred answer's socket (watch_socket): served while the connection waits on it.
    static void deferred_socket_ready(loop_context& ctx, void* owner) {
        auto& s = *static_cast<deferred_state*>(owner);
        if (s.link == link_state::bound) on_held_socket(ctx, s);
    }

    default_poller& poller_;
    char notify_tag_ = 0;  // its address tells the notifier's events apart
    std::shared_ptr<async_hub> self_;

    std::mutex inbox_lock_;
    std::vector<hub_task> inbox_;
    using kept_state = std::pair<const void*, std::shared_ptr<void>>;  // a type's tag, its state
    template <class T>
    static constexpr char kept_tag = 0;
    std::vector<kept_state> kept_;  // under the inbox lock
    std::vector<hub_task> batch_;  // taken from the inbox, run from next_ on (process lock)
    std::size_t next_ = 0;
    hub_state state_ = hub_state::open;
    std::atomic<std::uint64_t> next_id_{1};

    std::recursive_mutex process_lock_;
    std::atomic<bool> drain_wanted_{false};
    timer_queue timers_;  // under the process lock, but next_due()
    std::int64_t turn_now_ = 0;  // the loop's clock at this turn, for timers taken in (process lock)
    // The deferred answers made on this loop and not yet forgotten, for the stop (weak: a
    // handle, a task or the connection keeps each alive, not this).
    std::unordered_map<const deferred_state*, std::weak_ptr<deferred_state>> answers_;
    stop_phase stop_ = stop_phase::serving;

    hub_watches watches_;  // foreign descriptors, and held sockets under shared
};

} // namespace skiff::detail

#endif // SKIFF_ASYNC_HUB_HPP
