// The load generator's loop, on skiff's own poller (level-triggered) and one timerfd.
//
// Closed loop (like wrk): each connection writes `depth` requests at once, waits for all their
// responses, and writes the next batch; latency runs from the write to each response's end.
// Open loop (like wrk2): requests are scheduled at a constant rate, request i at t0 + i / rate,
// and go out on any idle connection; latency runs from the *scheduled* time, so a server that
// stalls is charged for every request that should have been sent meanwhile (the correction
// for coordinated omission). With `close`, every request gets a new connection and latency
// includes the connect; the server closes first, so TIME_WAIT lands on its side, not ours.
//
// Every response is checked (status and body length) and counted; one read per readiness
// event into a loop-owned buffer, one clock read per read. Single-threaded by design: one core
// of load, pinned by the caller.
#ifndef SKIFF_BENCH_LOADGEN_GENERATOR_HPP
#define SKIFF_BENCH_LOADGEN_GENERATOR_HPP

#include "histogram.hpp"
#include "options.hpp"
#include "proc_cpu.hpp"
#include "response_reader.hpp"

// The umbrella, not the parts: the single-header build has only skiff.hpp to offer.
#include <skiff/skiff.hpp> // the poller and the socket helpers

#include <cerrno>        // errno, EAGAIN, EINPROGRESS
#include <cstdint>       // std::uint64_t
#include <ctime>         // clock_gettime
#include <string>        // the request batch
#include <sys/timerfd.h> // timerfd: wake-ups finer than epoll_wait's milliseconds
#include <vector>        // connections, idle and parked lists

namespace loadgen {

inline std::uint64_t now_ns() noexcept {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

struct error_counts {
    std::uint64_t connect = 0, read = 0, write = 0, status = 0, length = 0, parse = 0, timeout = 0;
    std::uint64_t total() const noexcept { return connect + read + write + status + length + parse + timeout; }
};

// What one run measured, over the measured window only (warm-up excluded).
struct run_result {
    double seconds = 0;
    std::uint64_t responses = 0;     // complete responses, checked or not
    error_counts errors;
    histogram latency;               // nanoseconds
    double server_cpu_s = 0;         // of --cpu-pid and descendants; 0 without
    double loadgen_cpu_s = 0;
    std::uint64_t scheduled = 0;     // open loop: requests due in the window
    std::uint64_t max_backlog = 0;   // open loop: most requests ever due but not yet sent
    std::uint64_t connects = 0;      // connections opened in the window
};

struct connection {
    skiff::detail::unique_fd fd_;
    response_reader reader_;
    std::uint64_t start_ns_ = 0;  // when the outstanding batch was written (open loop: scheduled)
    std::size_t sent_ = 0;        // bytes of the batch written so far
    int outstanding_ = 0;         // requests of the batch whose response has not ended
    unsigned interest_ = 0;       // what the poller watches for now
    bool connecting_ = false;
    bool pending_ = false;        // a request waits for the connect to finish
    bool draining_ = false;       // all answered; the server will close, wait for it
    bool idle_ = false;           // open loop: on the idle list
};

class generator {
public:
    explicit generator(const options& o) : opt_(o), conns_(static_cast<std::size_t>(o.connections)) {
        batch_ = build_request(o);
        std::string one = batch_;
        for (int i = 1; i < o.depth; ++i) batch_ += one;
        read_buf_.resize(64 * 1024);
        open_loop_ = o.rate > 0;
        interval_ns_ = open_loop_ ? 1e9 / o.rate : 0;
    }

    // Runs warm-up and the measured window; returns an error message, empty on success.
    std::string run(run_result& out) {
        if (!skiff::detail::make_endpoint(opt_.host, opt_.port, endpoint_)) return "bad address " + opt_.host;
        if (auto ec = poller_.open()) return "poller: " + ec.message();
        timer_.reset(::timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC));
        if (!timer_ || poller_.add(timer_.get(), &timer_, skiff::detail::watch_read))
            return "timerfd failed";
        start();
        while (phase_ != phase::done) turn();
        out = std::move(result_);
        return "";
    }

    static std::string build_request(const options& o) {
        std::string r = o.method + " " + o.path + " HTTP/1.1\r\nHost: " + o.host + ":" +
                        std::to_string(o.port) + "\r\n";
        if (o.close) r += "Connection: close\r\n";
        for (const auto& h : o.headers) r += h + "\r\n";
        if (o.body_size > 0 || o.method == "POST") {
            if (!o.content_type.empty()) r += "Content-Type: " + o.content_type + "\r\n";
            r += "Content-Length: " + std::to_string(o.body_size) + "\r\n";
        }
        r += "\r\n";
        r.append(o.body_size, 'x');
        return r;
    }

private:
    enum class phase { warmup, measure, done };
    static constexpr std::uint64_t park_ns = 1000000;   // retry a failed connect after 1 ms

    void start() {
        now_ = now_ns();
        t0_ = now_;
        phase_end_ = now_ + seconds_to_ns(opt_.warmup_s);
        run_end_ = phase_end_ + seconds_to_ns(opt_.duration_s);
        if (opt_.warmup_s <= 0) begin_measure();
        for (auto& c : conns_) {
            if (open_loop_ && opt_.close) make_idle(c);       // connects when a request is due
            else if (open_loop_) open_connection(c);           // idle once connected
            else start_request(c, now_);
        }
        // Nothing may be in flight yet (open loop with --close): the timer starts the loop.
        if (open_loop_) dispatch_due();
        arm_timer(next_deadline());
    }

    // One loop turn: wait, handle what is ready, move the phase on, send what is due.
    void turn() {
        skiff::detail::poll_event events[skiff::detail::default_poller::max_batch];
        bool woken = false;  // this generator never wakes its poller
        int n = poller_.wait(events, skiff::detail::default_poller::max_batch, -1, woken);
        now_ = now_ns();
        for (int i = 0; i < n; ++i) {
            // epoll reports each registered descriptor at most once per wait, so a connection
            // closed and reopened while handling this batch gets no stale event below.
            if (events[i].data == &timer_) drain_timer();
            else on_event(*static_cast<connection*>(events[i].data), events[i].readable, events[i].writable);
        }
        if (now_ >= phase_end_) advance_phase();
        if (phase_ == phase::done) return;
        if (open_loop_) dispatch_due();
        unpark();
        arm_timer(next_deadline());
    }

    void on_event(connection& c, bool readable, bool writable) {
        if (c.connecting_) {
            finish_connect(c);
            return;
        }
        if (writable && c.outstanding_ > 0 && c.sent_ < batch_.size()) continue_send(c);
        if (readable && c.fd_) on_readable(c);
    }

    // ---- requests and responses ----

    void start_request(connection& c, std::uint64_t start) {
        c.start_ns_ = start;
        if (!c.fd_) {
            c.pending_ = true;
            open_connection(c);
            return;
        }
        send_batch(c);
    }

    void send_batch(connection& c) {
        c.sent_ = 0;
        c.outstanding_ = opt_.depth;
        continue_send(c);
    }

    void continue_send(connection& c) {
        auto n = skiff::detail::send_some(c.fd_.get(), batch_.data() + c.sent_, batch_.size() - c.sent_);
        if (n < 0 && errno != EAGAIN && errno != EINTR) {
            fail(c, result_.errors.write);
            return;
        }
        if (n > 0) c.sent_ += static_cast<std::size_t>(n);
        bool done = c.sent_ == batch_.size();
        watch(c, done ? skiff::detail::watch_read : skiff::detail::watch_read | skiff::detail::watch_write);
    }

    void on_readable(connection& c) {
        auto n = ::read(c.fd_.get(), read_buf_.data(), read_buf_.size());
        if (n == 0) {
            on_eof(c);
            return;
        }
        if (n < 0) {
            if (errno != EAGAIN && errno != EINTR) fail(c, result_.errors.read);
            return;
        }
        now_ = now_ns();   // the responses in this read arrived now
        const char* p = read_buf_.data();
        const char* end = p + n;
        while (p < end && c.fd_) {
            read_status st;
            p += c.reader_.feed(p, end, st);
            if (st == read_status::bad) fail(c, result_.errors.parse);
            else if (st == read_status::complete) on_response(c, c.reader_.info());
        }
    }

    void on_response(connection& c, const response_info& info) {
        if (c.outstanding_ == 0) {   // an answer to nothing we asked
            fail(c, result_.errors.parse);
            return;
        }
        --c.outstanding_;
        ++result_.responses;
        if (opt_.expect_status != 0 && info.status != opt_.expect_status) ++result_.errors.status;
        else if (opt_.expect_length >= 0 && info.body_length != opt_.expect_length) ++result_.errors.length;
        result_.latency.record(now_ > c.start_ns_ ? now_ - c.start_ns_ : 0);
        if (info.close) c.draining_ = true;
        if (c.outstanding_ > 0) return;
        if (opt_.close || c.draining_) {
            c.draining_ = true;   // the server closes next; on_eof frees the slot
            return;
        }
        on_slot_free(c);
    }

    void on_eof(connection& c) {
        result_.errors.read += static_cast<std::uint64_t>(c.outstanding_);   // lost, if any
        bool was_idle = c.idle_;
        close_connection(c);
        if (!was_idle) on_slot_free(c);
    }

    // The connection can take the next request: now (closed loop) or when one is due (open).
    void on_slot_free(connection& c) {
        if (open_loop_) make_idle(c);
        else start_request(c, now_);
    }

    void make_idle(connection& c) {
        if (c.idle_) return;
        c.idle_ = true;
        idle_.push_back(&c);
    }

    // ---- connections ----

    void open_connection(connection& c) {
        c.fd_.reset(::socket(endpoint_.addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
        c.reader_.reset();
        c.draining_ = false;
        c.outstanding_ = 0;
        ++result_.connects;
        if (!c.fd_) {
            fail(c, result_.errors.connect);
            return;
        }
        skiff::detail::prepare_connection(c.fd_.get());
        int r = ::connect(c.fd_.get(), reinterpret_cast<const sockaddr*>(&endpoint_.addr), endpoint_.len);
        if (r != 0 && errno != EINPROGRESS) {
            fail(c, result_.errors.connect);
            return;
        }
        c.connecting_ = true;
        c.interest_ = skiff::detail::watch_write;
        poller_.add(c.fd_.get(), &c, c.interest_);
    }

    void finish_connect(connection& c) {
        int err = 0;
        socklen_t len = sizeof err;
        ::getsockopt(c.fd_.get(), SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0) {
            fail(c, result_.errors.connect);
            return;
        }
        c.connecting_ = false;
        watch(c, skiff::detail::watch_read);
        if (c.pending_) {
            c.pending_ = false;
            send_batch(c);
        } else {
            on_slot_free(c);
        }
    }

    void watch(connection& c, unsigned interest) {
        if (c.interest_ == interest) return;
        c.interest_ = interest;
        poller_.modify(c.fd_.get(), &c, interest);
    }

    void close_connection(connection& c) {
        if (c.fd_) poller_.remove(c.fd_.get());
        c.fd_.reset();
        c.connecting_ = c.pending_ = c.draining_ = false;
        c.outstanding_ = 0;
        c.interest_ = 0;
    }

    // Counts the requests a failure lost (at least one event), closes, and retries in 1 ms, so
    // a server that is gone costs a retry per millisecond, not a busy loop.
    void fail(connection& c, std::uint64_t& counter) {
        counter += c.outstanding_ > 0 ? static_cast<std::uint64_t>(c.outstanding_) : 1u;
        bool was_idle = c.idle_;
        close_connection(c);
        if (was_idle) return;   // an idle open-loop slot reconnects when its next request is due
        if (parked_.empty()) parked_until_ = now_ + park_ns;
        parked_.push_back(&c);
    }

    void unpark() {
        if (parked_.empty() || now_ < parked_until_) return;
        std::vector<connection*> ready;
        ready.swap(parked_);
        for (auto* c : ready) on_slot_free(*c);
    }

    // ---- open loop ----

    std::uint64_t scheduled(std::uint64_t seq) const noexcept {
        return t0_ + static_cast<std::uint64_t>(static_cast<double>(seq) * interval_ns_);
    }

    // Hands every request that is due to an idle connection, stamped with its scheduled time.
    void dispatch_due() {
        while (!idle_.empty() && scheduled(next_seq_) <= now_ && scheduled(next_seq_) < run_end_) {
            connection* c = idle_.back();
            idle_.pop_back();
            c->idle_ = false;
            start_request(*c, scheduled(next_seq_++));
        }
        std::uint64_t due = static_cast<std::uint64_t>(static_cast<double>(now_ - t0_) / interval_ns_) + 1;
        if (due > next_seq_ && due - next_seq_ > result_.max_backlog) result_.max_backlog = due - next_seq_;
    }

    // ---- time ----

    std::uint64_t next_deadline() const noexcept {
        std::uint64_t d = phase_end_;
        if (!parked_.empty() && parked_until_ < d) d = parked_until_;
        if (open_loop_ && !idle_.empty() && scheduled(next_seq_) < d) d = scheduled(next_seq_);
        return d;
    }

    void arm_timer(std::uint64_t deadline) {
        if (deadline == armed_) return;
        armed_ = deadline;
        itimerspec spec{};
        spec.it_value.tv_sec = static_cast<time_t>(deadline / 1000000000u);
        spec.it_value.tv_nsec = static_cast<long>(deadline % 1000000000u);
        ::timerfd_settime(timer_.get(), TFD_TIMER_ABSTIME, &spec, nullptr);
    }

    void drain_timer() {
        std::uint64_t expirations;
        [[maybe_unused]] auto r = ::read(timer_.get(), &expirations, sizeof expirations);
        armed_ = 0;   // a fired timer is disarmed: the next arm_timer must set it again
    }

    void advance_phase() {
        if (phase_ == phase::warmup) begin_measure();
        else end_measure();
    }

    void begin_measure() {
        result_ = run_result{};
        measure_start_ = now_;
        phase_ = phase::measure;
        phase_end_ = run_end_;
        server_cpu_start_ = opt_.cpu_pids.empty() ? 0 : tree_cpu_seconds(opt_.cpu_pids);
        own_cpu_start_ = own_cpu_seconds();
    }

    void end_measure() {
        if (!opt_.cpu_pids.empty()) result_.server_cpu_s = tree_cpu_seconds(opt_.cpu_pids) - server_cpu_start_;
        result_.loadgen_cpu_s = own_cpu_seconds() - own_cpu_start_;
        result_.seconds = static_cast<double>(now_ - measure_start_) / 1e9;
        auto limit = seconds_to_ns(opt_.timeout_s);
        for (auto& c : conns_)
            if (c.outstanding_ > 0 && now_ - c.start_ns_ > limit) result_.errors.timeout += static_cast<std::uint64_t>(c.outstanding_);
        if (open_loop_) result_.scheduled = scheduled_between(measure_start_, run_end_);
        phase_ = phase::done;
    }

    std::uint64_t scheduled_between(std::uint64_t from, std::uint64_t to) const noexcept {
        auto count_before = [&](std::uint64_t t) {
            return static_cast<std::uint64_t>(static_cast<double>(t - t0_) / interval_ns_);
        };
        return count_before(to) - count_before(from);
    }

    static std::uint64_t seconds_to_ns(double s) noexcept { return static_cast<std::uint64_t>(s * 1e9); }

    options opt_;
    std::vector<connection> conns_;
    std::string batch_;                 // `depth` copies of the request, written at once
    std::vector<char> read_buf_;        // every read lands here; only cut heads are copied out
    skiff::detail::default_poller poller_;
    skiff::detail::unique_fd timer_;
    skiff::detail::endpoint endpoint_;
    std::vector<connection*> idle_;     // open loop: connections waiting for a due request
    std::vector<connection*> parked_;   // failed connections waiting out their retry delay
    run_result result_;
    phase phase_ = phase::warmup;
    bool open_loop_ = false;
    double interval_ns_ = 0;
    std::uint64_t next_seq_ = 0;
    std::uint64_t now_ = 0, t0_ = 0, phase_end_ = 0, run_end_ = 0, measure_start_ = 0;
    std::uint64_t parked_until_ = 0, armed_ = 0;
    double server_cpu_start_ = 0, own_cpu_start_ = 0;
};

} // namespace loadgen

#endif // SKIFF_BENCH_LOADGEN_GENERATOR_HPP
