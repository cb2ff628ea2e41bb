// Counters a server keeps of its own answers, fed by the observers (hooks.hpp) and served in
// the Prometheus text format (exposition format 0.0.4) by basic_server::serve_metrics:
//
//   skiff_requests_total{code="200"}           responses by status (the server's rejections included)
//   skiff_connections_open                      connections admitted and not yet closed
//   skiff_rejections_total{reason="timeout"}    the server's own answers, by rejection (hooks.hpp)
//   skiff_bytes_received_total                  request bytes, as response_event counts them
//   skiff_bytes_sent_total                      response bytes queued (a stream's head only)
//   skiff_request_duration_seconds              histogram of response_event::duration
//
// Each loop writes only its own slot (response_event::loop), and a read sums the slots. Under
// single a slot is plain integers; under sharded each is written by its loop's thread alone,
// so a relaxed load and store (no locked instruction) keeps it exact and a read from another
// thread race-free; under shared a deferred answer may be applied by another worker than the
// slot's, so increments there are atomic additions.
//
// The application's own metrics go on the same page: serve_metrics(path, fn) calls fn with a
// metrics_writer after the server's families, at each scrape:
//
//   app.serve_metrics("/metrics", [&](skiff::metrics_writer& w) {
//       w.counter("app_orders_total", "Orders placed.", orders.load());
//       w.gauge("app_queue_depth", "Queries waiting.", static_cast<double>(pool.queued()));
//   });
//
// Not here: when the observers are called (session.hpp, acceptor.hpp), or serving the text
// (server.hpp). A program that never calls serve_metrics compiles none of this.
#ifndef SKIFF_OBSERVE_METRICS_HPP
#define SKIFF_OBSERVE_METRICS_HPP

#include "skiff/engine/hooks.hpp"

#include <atomic>       // counters read by another loop's thread
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint64_t, std::int64_t
#include <cstdio>       // std::snprintf
#include <memory>       // std::unique_ptr of slots
#include <string>       // the exposition text
#include <string_view>  // an application's names and help
#include <type_traits>  // std::conditional_t

namespace skiff {

// Appends an application's metric families to the exposition text (format 0.0.4): a HELP and
// a TYPE line, then one sample. Names are the caller's (Prometheus: [a-zA-Z_:][a-zA-Z0-9_:]*;
// not checked); a line break in help is escaped as the format asks. raw() appends lines as
// given, for labels or histograms the helpers do not write (each line must end in '\n').
class metrics_writer {
public:
    explicit metrics_writer(std::string& out) noexcept : out_(out) {}

    void counter(std::string_view name, std::string_view help, std::uint64_t value) {
        family(name, help, "counter");
        out_.append(name).append(" ").append(std::to_string(value)).append("\n");
    }
    void gauge(std::string_view name, std::string_view help, double value) {
        family(name, help, "gauge");
        char text[32];
        int n = std::snprintf(text, sizeof text, "%.17g", value);
        out_.append(name).append(" ").append(text, n > 0 ? static_cast<std::size_t>(n) : 0).append("\n");
    }
    void raw(std::string_view lines) { out_.append(lines); }

private:
    void family(std::string_view name, std::string_view help, const char* type) {
        out_.append("# HELP ").append(name).append(" ");
        for (char c : help) {
            if (c == '\\') out_.append("\\\\");
            else if (c == '\n') out_.append("\\n");
            else out_.push_back(c);
        }
        out_.append("\n# TYPE ").append(name).append(" ").append(type).append("\n");
    }

    std::string& out_;
};

} // namespace skiff

namespace skiff::detail {

// Who writes a counter: one thread that is also the only reader (single), one thread read by
// others (sharded), or several threads (shared).
enum class counter_writers : std::uint8_t { one_alone, one, several };

template <counter_writers W>
class metric_counter {
public:
    void add(std::uint64_t n) noexcept { v_ += n; }
    std::uint64_t get() const noexcept { return v_; }

private:
    std::uint64_t v_ = 0;
};

template <>
class metric_counter<counter_writers::one> {
public:
    void add(std::uint64_t n) noexcept { v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }
    std::uint64_t get() const noexcept { return v_.load(std::memory_order_relaxed); }

private:
    std::atomic<std::uint64_t> v_{0};
};

template <>
class metric_counter<counter_writers::several> {
public:
    void add(std::uint64_t n) noexcept { v_.fetch_add(n, std::memory_order_relaxed); }
    std::uint64_t get() const noexcept { return v_.load(std::memory_order_relaxed); }

private:
    std::atomic<std::uint64_t> v_{0};
};

// Upper bounds of the latency histogram's buckets, in nanoseconds and as their `le` labels.
inline constexpr std::int64_t latency_bounds_ns[] = {100'000,    250'000,     500'000,     1'000'000,
                                                     2'500'000,  5'000'000,   10'000'000,  25'000'000,
                                                     50'000'000, 100'000'000, 250'000'000, 500'000'000,
                                                     1'000'000'000, 2'500'000'000, 5'000'000'000, 10'000'000'000};
inline constexpr const char* latency_labels[] = {"0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005",
                                                 "0.01",   "0.025",   "0.05",   "0.1",   "0.25",   "0.5",
                                                 "1",      "2.5",     "5",      "10"};
inline constexpr std::size_t latency_buckets = sizeof latency_bounds_ns / sizeof latency_bounds_ns[0];
static_assert(sizeof latency_labels / sizeof latency_labels[0] == latency_buckets, "one label per bound");

template <counter_writers W>
class metrics_store {
    using counter = metric_counter<W>;

public:
    explicit metrics_store(std::size_t loops) : loops_(loops == 0 ? 1 : loops), slots_(new slot[loops_]) {}

    void record(const response_event& e) noexcept {
        slot& s = slots_[e.loop % loops_];
        s.by_status[e.status >= 0 && e.status < max_status ? e.status : 0].add(1);
        if (e.reason != rejection::none) s.by_reason[static_cast<std::size_t>(e.reason)].add(1);
        s.received.add(e.bytes_received);
        s.sent.add(e.bytes_sent);
        std::int64_t ns = e.duration.count() < 0 ? 0 : e.duration.count();
        std::size_t b = 0;
        while (b < latency_buckets && ns > latency_bounds_ns[b]) ++b;
        s.latency[b].add(1);  // latency[latency_buckets]: above the last bound (+Inf only)
        s.latency_ns.add(static_cast<std::uint64_t>(ns));
    }

    void on_connection(connection_change change, std::size_t loop) noexcept {
        slot& s = slots_[loop % loops_];
        (change == connection_change::opened ? s.opened : s.closed).add(1);
    }

    // The exposition text, summed over the loops.
    std::string render() const {
        std::string out;
        out.reserve(2048);
        family(out, "skiff_requests_total", "Responses sent, by status code.", "counter");
        for (int code = 0; code < max_status; ++code) {
            std::uint64_t n = sum([code](const slot& s) { return s.by_status[code].get(); });
            if (n != 0) sample(out, "skiff_requests_total{code=\"", std::to_string(code), "\"}", n);
        }
        family(out, "skiff_connections_open", "Connections open now.", "gauge");
        std::uint64_t opened = sum([](const slot& s) { return s.opened.get(); });
        std::uint64_t closed = sum([](const slot& s) { return s.closed.get(); });
        sample(out, "skiff_connections_open", "", "", opened > closed ? opened - closed : 0);
        family(out, "skiff_rejections_total", "Requests the server answered itself, by reason.", "counter");
        for (std::size_t r = 1; r < rejection_count; ++r) {
            std::uint64_t n = sum([r](const slot& s) { return s.by_reason[r].get(); });
            sample(out, "skiff_rejections_total{reason=\"", to_string(static_cast<rejection>(r)), "\"}", n);
        }
        family(out, "skiff_bytes_received_total", "Request bytes received.", "counter");
        sample(out, "skiff_bytes_received_total", "", "", sum([](const slot& s) { return s.received.get(); }));
        family(out, "skiff_bytes_sent_total", "Response bytes sent.", "counter");
        sample(out, "skiff_bytes_sent_total", "", "", sum([](const slot& s) { return s.sent.get(); }));
        histogram(out);
        return out;
    }

private:
    static constexpr int max_status = 600;

    struct alignas(64) slot {  // a cache line of its own: loops do not share one
        counter by_status[max_status];
        counter by_reason[rejection_count];
        counter received, sent, opened, closed;
        counter latency[latency_buckets + 1];
        counter latency_ns;
    };

    template <class Get>
    std::uint64_t sum(Get get) const noexcept {
        std::uint64_t n = 0;
        for (std::size_t i = 0; i < loops_; ++i) n += get(slots_[i]);
        return n;
    }

    void histogram(std::string& out) const {
        const char* name = "skiff_request_duration_seconds";
        family(out, name, "Time from the parsed request to its response queued.", "histogram");
        std::uint64_t below = 0;
        for (std::size_t b = 0; b <= latency_buckets; ++b) {
            below += sum([b](const slot& s) { return s.latency[b].get(); });
            const char* le = b < latency_buckets ? latency_labels[b] : "+Inf";
            sample(out, "skiff_request_duration_seconds_bucket{le=\"", le, "\"}", below);
        }
        std::uint64_t ns = sum([](const slot& s) { return s.latency_ns.get(); });
        char seconds[48];
        std::snprintf(seconds, sizeof seconds, "%llu.%09llu", static_cast<unsigned long long>(ns / 1'000'000'000),
                      static_cast<unsigned long long>(ns % 1'000'000'000));
        out.append(name).append("_sum ").append(seconds).append("\n");
        sample(out, "skiff_request_duration_seconds_count", "", "", below);
    }

    static void family(std::string& out, const char* name, const char* help, const char* type) {
        out.append("# HELP ").append(name).append(" ").append(help).append("\n");
        out.append("# TYPE ").append(name).append(" ").append(type).append("\n");
    }
    static void sample(std::string& out, const char* head, const std::string& label, const char* tail,
                       std::uint64_t n) {
        out.append(head).append(label).append(tail).append(" ").append(std::to_string(n)).append("\n");
    }

    std::size_t loops_;
    std::unique_ptr<slot[]> slots_;
};

template <bool Alone, bool Several>
inline constexpr counter_writers writers_for =
    Alone ? counter_writers::one_alone : Several ? counter_writers::several : counter_writers::one;

} // namespace skiff::detail

#endif // SKIFF_OBSERVE_METRICS_HPP
