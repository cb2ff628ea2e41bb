// skiff_loadgen: the benchmark harness's HTTP/1.1 load generator (see generator.hpp for what
// it measures and how). Prints a wrk-like summary, or with --json one object that the harness
// reads: counts, errors by kind, latency percentiles and the histogram's non-empty buckets.
#include "generator.hpp"

#include <csignal>         // ignore SIGPIPE
#include <cstdio>          // std::printf
#include <sys/prctl.h>     // PR_SET_TIMERSLACK
#include <sys/resource.h>  // RLIMIT_NOFILE

namespace {

struct quantile_point {
    const char* name;
    double q;
};

// The percentiles reported by name; the charts use the histogram itself.
constexpr quantile_point quantiles[] = {
    {"p50", 0.50}, {"p75", 0.75}, {"p90", 0.90}, {"p99", 0.99},
    {"p99.9", 0.999}, {"p99.99", 0.9999}, {"p99.999", 0.99999},
};

double us(std::uint64_t ns) { return static_cast<double>(ns) / 1e3; }

double rate_of(const loadgen::run_result& r) {
    return r.seconds > 0 ? static_cast<double>(r.responses) / r.seconds : 0;
}

void print_errors_json(const loadgen::error_counts& e) {
    std::printf("\"errors\":{\"connect\":%llu,\"read\":%llu,\"write\":%llu,\"status\":%llu,"
                "\"length\":%llu,\"parse\":%llu,\"timeout\":%llu,\"total\":%llu},",
                static_cast<unsigned long long>(e.connect), static_cast<unsigned long long>(e.read),
                static_cast<unsigned long long>(e.write), static_cast<unsigned long long>(e.status),
                static_cast<unsigned long long>(e.length), static_cast<unsigned long long>(e.parse),
                static_cast<unsigned long long>(e.timeout), static_cast<unsigned long long>(e.total()));
}

void print_latency_json(const loadgen::histogram& h) {
    std::printf("\"latency_us\":{\"min\":%.3f,\"mean\":%.3f,\"max\":%.3f", us(h.min()), h.mean() / 1e3, us(h.max()));
    for (const auto& p : quantiles) std::printf(",\"%s\":%.3f", p.name, us(h.at_quantile(p.q)));
    std::printf("},\"histogram_us\":[");
    const char* sep = "";
    for (std::size_t i = 0; i < h.size(); ++i) {
        if (h.count_at(i) == 0) continue;
        std::printf("%s[%.3f,%llu]", sep, us(loadgen::histogram::midpoint(i)),
                    static_cast<unsigned long long>(h.count_at(i)));
        sep = ",";
    }
    std::printf("],");
}

void print_json(const loadgen::options& o, const loadgen::run_result& r) {
    std::printf("{\"mode\":\"%s\",\"connections\":%d,\"depth\":%d,\"close\":%s,\"rate\":%.1f,",
                o.rate > 0 ? "open" : "closed", o.connections, o.depth, o.close ? "true" : "false", o.rate);
    std::printf("\"seconds\":%.6f,\"responses\":%llu,\"rps\":%.1f,\"connects\":%llu,", r.seconds,
                static_cast<unsigned long long>(r.responses), rate_of(r), static_cast<unsigned long long>(r.connects));
    print_errors_json(r.errors);
    print_latency_json(r.latency);
    double per_req = r.responses ? r.server_cpu_s / static_cast<double>(r.responses) * 1e6 : 0;
    std::printf("\"server_cpu_s\":%.4f,\"server_cpu_us_per_req\":%.4f,\"loadgen_cpu_s\":%.4f,",
                r.server_cpu_s, per_req, r.loadgen_cpu_s);
    std::printf("\"scheduled\":%llu,\"max_backlog\":%llu}\n", static_cast<unsigned long long>(r.scheduled),
                static_cast<unsigned long long>(r.max_backlog));
}

void print_text(const loadgen::options& o, const loadgen::run_result& r) {
    std::printf("%s loop, %d connections, depth %d%s", o.rate > 0 ? "open" : "closed", o.connections, o.depth,
                o.close ? ", new connection per request" : "");
    if (o.rate > 0) std::printf(", offered %.0f req/s", o.rate);
    std::printf("\n  %llu responses in %.2f s: %.0f req/s\n", static_cast<unsigned long long>(r.responses),
                r.seconds, rate_of(r));
    const auto& h = r.latency;
    std::printf("  latency (us): mean %.1f, max %.1f\n   ", h.mean() / 1e3, us(h.max()));
    for (const auto& p : quantiles) std::printf(" %s %.1f", p.name, us(h.at_quantile(p.q)));
    const auto& e = r.errors;
    std::printf("\n  errors: %llu (connect %llu, read %llu, write %llu, status %llu, length %llu, parse %llu, "
                "timeout %llu)\n",
                static_cast<unsigned long long>(e.total()), static_cast<unsigned long long>(e.connect),
                static_cast<unsigned long long>(e.read), static_cast<unsigned long long>(e.write),
                static_cast<unsigned long long>(e.status), static_cast<unsigned long long>(e.length),
                static_cast<unsigned long long>(e.parse), static_cast<unsigned long long>(e.timeout));
    if (r.server_cpu_s > 0)
        std::printf("  server CPU: %.3f s, %.2f us per request\n", r.server_cpu_s,
                    r.responses ? r.server_cpu_s / static_cast<double>(r.responses) * 1e6 : 0);
    std::printf("  load generator CPU: %.0f%%\n", r.seconds > 0 ? 100 * r.loadgen_cpu_s / r.seconds : 0);
}

// 512 connections and their retries need more descriptors than the usual soft limit of 1,024
// leaves once TIME_WAIT and in-flight closes are counted: take what the hard limit allows.
void raise_descriptor_limit() {
    rlimit lim{};
    if (::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
        lim.rlim_cur = lim.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &lim);
    }
}

} // namespace

int main(int argc, char** argv) {
    loadgen::options opt;
    std::string error = loadgen::parse_options(argc, argv, opt);
    if (opt.help || !error.empty()) {
        if (!error.empty()) std::fprintf(stderr, "skiff_loadgen: %s\n", error.c_str());
        std::fputs(loadgen::usage_text, opt.help ? stdout : stderr);
        return opt.help ? 0 : 2;
    }
    std::signal(SIGPIPE, SIG_IGN);
    raise_descriptor_limit();
    // The default 50 us timer slack would blur the open loop's send times; 1 us keeps them.
    ::prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
    loadgen::generator gen(opt);
    loadgen::run_result result;
    error = gen.run(result);
    if (!error.empty()) {
        std::fprintf(stderr, "skiff_loadgen: %s\n", error.c_str());
        return 1;
    }
    if (opt.json) print_json(opt, result);
    else print_text(opt, result);
    return 0;
}
