// Router micro-benchmark (tools/bench/router_bench.md has the method and the figures).
//
//   router_bench [github_routes.txt] [--reps N] [--ms M] [--cpu] [--only SET] [--iters N]
//
// Two route sets:
//   github  the 203 routes of the GitHub REST API (one "METHOD /pattern" a line, the set of
//           the Go routing benchmark); every route is looked up once per iteration, with each
//           ":name" in the request path replaced by "x<name>" as the Go peer does;
//   small   100 static routes plus "/users/:id" and "/users/:id/orders/:order"; one static,
//           one 1-parameter and one 2-parameter path, each timed on its own.
// Two operations:
//   lookup  router::match(): the handler and the raw parameters, like httprouter's Lookup;
//   serve   router::serve() with a no-op handler: lookup, parameter decoding and the call,
//           like httprouter's ServeHTTP.
// Each row is timed (wall clock, or this thread's CPU clock with --cpu) in `reps` rounds of
// about `ms` milliseconds; it prints min, median and max ns per iteration, the median per
// lookup, and the heap allocations per iteration, counted by the global operator new below
// over every measured round. With --iters N it times nothing and runs each lookup row N
// times, for callgrind (router_bench.md shows how to get instructions per lookup).
#include <skiff/skiff.hpp>

#include <algorithm>  // std::sort
#include <chrono>     // std::chrono::steady_clock
#include <cstdint>    // std::uint64_t
#include <cstdio>     // std::printf, std::fprintf
#include <cstdlib>    // std::malloc, std::free, std::strtoul
#include <ctime>      // clock_gettime, CLOCK_THREAD_CPUTIME_ID
#include <fstream>    // std::ifstream for the route file
#include <new>        // std::bad_alloc
#include <sstream>    // std::istringstream
#include <string>     // std::string (set-up only)
#include <vector>     // std::vector (set-up only)

#ifndef SKIFF_GITHUB_ROUTES
#define SKIFF_GITHUB_ROUTES "github_routes.txt"
#endif

// Every allocation of the process goes through here; the bench reads the counter around the
// measured loops. Single-threaded, so a plain counter is enough. The array and nothrow forms
// of libstdc++ forward to these two.
static std::uint64_t allocations = 0;

void* operator new(std::size_t n) {
    ++allocations;
    if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

// Wall time by default (what Go's testing package reports, for the side-by-side run); with
// --cpu, this thread's CPU time, which leaves out the time other processes on the shared
// core took from it.
double now_ns(bool cpu) {
    if (!cpu) return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now().time_since_epoch()).count();
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

struct target {
    std::string method;
    skiff::method verb;
    std::string path;
};

struct bench_options {
    std::string routes_file = SKIFF_GITHUB_ROUTES;
    int reps = 15;
    int ms = 100;
    bool cpu = false;
    std::string only;         // run this set's rows only
    std::uint64_t iters = 0;  // > 0: run each lookup row this many times, untimed (callgrind)
};

volatile std::uint64_t sink;  // keeps results alive so no loop is optimised away

void noop(skiff::request&, skiff::response&) {}

// "/repos/:owner/:repo" -> "/repos/xowner/xrepo" (as the Go peer builds its request paths).
std::string request_path(const std::string& pattern) {
    std::string out;
    std::size_t i = 0;
    while (i < pattern.size()) {
        if ((pattern[i] == ':' || pattern[i] == '*') && i > 0 && pattern[i - 1] == '/') {
            out += 'x';
            ++i;
            continue;
        }
        out += pattern[i++];
    }
    return out;
}

bool load_github(const std::string& file, skiff::router& r, std::vector<target>& targets) {
    std::ifstream in(file);
    if (!in) return false;
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string m, pattern;
        if (!(fields >> m >> pattern)) continue;
        std::string err = r.try_add(m, pattern, noop);
        if (!err.empty()) {
            std::fprintf(stderr, "router_bench: %s\n", err.c_str());
            return false;
        }
        targets.push_back({m, skiff::method_from(m), request_path(pattern)});
    }
    return !targets.empty();
}

void load_small(skiff::router& r) {
    static const char* const resources[] = {"users",   "orders",  "products", "invoices", "payments",
                                            "carts",   "reviews", "tickets",  "events",   "reports"};
    static const char* const actions[] = {"list",   "search",   "export",  "import",  "stats",
                                          "recent", "archived", "pending", "summary", "settings"};
    for (const char* res : resources)
        for (const char* act : actions) r.add("GET", std::string("/") + res + "/" + act, noop);
    r.add("GET", "/users/:id", noop);
    r.add("GET", "/users/:id/orders/:order", noop);
}

// One iteration: every target once, through router::match(); not inlined, so callgrind can
// count it alone. params lives outside, as it does in a request (constructing one zero-fills
// 16 slots, which is not routing work).
[[gnu::noinline]] std::uint64_t lookup_all(const skiff::router& r, const std::vector<target>& ts,
                                           skiff::route_params& params) {
    std::uint64_t found = 0;
    for (const target& t : ts) {
        const skiff::handler* h = r.match(t.verb, t.method, t.path, params);
        if (h == nullptr) {
            std::fprintf(stderr, "router_bench: no route for %s %s\n", t.method.c_str(), t.path.c_str());
            std::exit(1);
        }
        found += params.count + 1;
    }
    return found;
}

// Requests as the loop hands them to the router: head filled in, arenas reserved.
struct prepared {
    std::vector<skiff::request> requests;
    explicit prepared(const std::vector<target>& ts) : requests(ts.size()) {
        for (std::size_t i = 0; i < ts.size(); ++i) {
            skiff::detail::request_access::init(requests[i], 64, 8192);
            skiff::request_head& h = skiff::detail::request_access::head(requests[i]);
            h.method_name = ts[i].method;
            h.verb = ts[i].verb;
            h.target = h.path = ts[i].path;
        }
    }
};

// One iteration: every target once, through router::serve() into a reused output buffer.
[[gnu::noinline]] std::uint64_t serve_all(const skiff::router& r, prepared& p, skiff::detail::byte_buffer& out,
                        const skiff::detail::date_cache& date) {
    std::uint64_t sent = 0;
    skiff::response res;
    for (skiff::request& req : p.requests) {
        skiff::detail::request_access::reset(req);
        skiff::detail::response_access::start(res, out, date, false, false);
        r.serve(req, res);
        sent += res.sent() ? 2 : 1;
    }
    out.clear();
    return sent;
}

struct row_result {
    double min, median, max;  // ns per iteration
    double allocs_per_iter;
};

// Times fn() in reps rounds of about ms milliseconds each (iteration count calibrated once).
template <class Fn>
row_result measure(const bench_options& o, Fn fn) {
    for (int i = 0; i < 1000; ++i) sink = fn();  // warm caches and any lazily grown buffer
    std::uint64_t iters = 1;
    for (;;) {
        double t0 = now_ns(o.cpu);
        for (std::uint64_t i = 0; i < iters; ++i) sink = fn();
        double ns = now_ns(o.cpu) - t0;
        if (ns > o.ms * 1e6 / 4) {
            iters = static_cast<std::uint64_t>(static_cast<double>(iters) * o.ms * 1e6 / ns) + 1;
            break;
        }
        iters *= 2;
    }
    std::vector<double> per_iter;
    per_iter.reserve(static_cast<std::size_t>(o.reps));  // before counting starts
    std::uint64_t allocs_before = allocations, total_iters = 0;
    for (int r = 0; r < o.reps; ++r) {
        double t0 = now_ns(o.cpu);
        for (std::uint64_t i = 0; i < iters; ++i) sink = fn();
        double ns = now_ns(o.cpu) - t0;
        per_iter.push_back(ns / static_cast<double>(iters));
        total_iters += iters;
    }
    std::uint64_t allocs = allocations - allocs_before;
    std::sort(per_iter.begin(), per_iter.end());
    return {per_iter.front(), per_iter[per_iter.size() / 2], per_iter.back(),
            static_cast<double>(allocs) / static_cast<double>(total_iters)};
}

void print_row(const char* set, const char* op, std::size_t lookups, const row_result& r) {
    std::printf("%-14s %-7s %9.1f %9.1f %9.1f %10.1f %8zu %12.3f\n", set, op, r.min, r.median, r.max,
                r.median / static_cast<double>(lookups), lookups, r.allocs_per_iter);
}

bench_options parse_args(int argc, char** argv) {
    bench_options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--reps" && i + 1 < argc) o.reps = static_cast<int>(std::strtoul(argv[++i], nullptr, 10));
        else if (a == "--ms" && i + 1 < argc) o.ms = static_cast<int>(std::strtoul(argv[++i], nullptr, 10));
        else if (a == "--cpu") o.cpu = true;
        else if (a == "--only" && i + 1 < argc) o.only = argv[++i];
        else if (a == "--iters" && i + 1 < argc) o.iters = std::strtoull(argv[++i], nullptr, 10);
        else o.routes_file = a;
    }
    if (o.reps < 1) o.reps = 1;
    if (o.ms < 1) o.ms = 1;
    return o;
}

} // namespace

// The allocation column is only worth something if the counter sees the library's
// allocations: registering a route allocates, so it must move the counter.
bool counter_works() {
    std::uint64_t before = allocations;
    skiff::router r;
    r.add("GET", "/a/long/enough/pattern/:to/allocate", noop);
    return allocations > before;
}

int main(int argc, char** argv) {
    bench_options o = parse_args(argc, argv);
    if (!counter_works()) {
        std::fprintf(stderr, "router_bench: the allocation counter does not count\n");
        return 1;
    }

    skiff::router github;
    std::vector<target> github_targets;
    if (!load_github(o.routes_file, github, github_targets)) {
        std::fprintf(stderr, "router_bench: cannot load routes from %s\n", o.routes_file.c_str());
        return 1;
    }
    skiff::router small;
    load_small(small);
    const std::vector<target> small_static{{"GET", skiff::method::get, "/reports/settings"}};
    const std::vector<target> small_one{{"GET", skiff::method::get, "/users/42"}};
    const std::vector<target> small_two{{"GET", skiff::method::get, "/users/42/orders/7"}};

    skiff::detail::byte_buffer out;
    out.reserve_more(1 << 16);
    skiff::detail::date_cache date;
    date.update(0);
    prepared github_req(github_targets), static_req(small_static), one_req(small_one), two_req(small_two);

    std::printf("%d rounds of ~%d ms each (%s time); ns per iteration (min median max), median ns per lookup\n",
                o.reps, o.ms, o.cpu ? "thread CPU" : "wall");
    std::printf("%-14s %-7s %9s %9s %9s %10s %8s %12s\n", "set", "op", "min", "median", "max", "ns/lookup",
                "lookups", "allocs/iter");
    auto row = [&](const char* set, const skiff::router& r, const std::vector<target>& ts, prepared& p) {
        skiff::route_params params;
        if (!o.only.empty() && o.only != set) return;
        if (o.iters != 0) {  // instructions per lookup: callgrind at two counts, difference / count
            for (std::uint64_t i = 0; i < o.iters; ++i) sink = lookup_all(r, ts, params);
            return;
        }
        print_row(set, "lookup", ts.size(), measure(o, [&] { return lookup_all(r, ts, params); }));
        print_row(set, "serve", ts.size(), measure(o, [&] { return serve_all(r, p, out, date); }));
    };
    row("github-203", github, github_targets, github_req);
    row("small-static", small, small_static, static_req);
    row("small-1param", small, small_one, one_req);
    row("small-2param", small, small_two, two_req);
    return 0;
}
