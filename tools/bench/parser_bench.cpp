// Request-parser micro-benchmark (the picohttpparser bench.c analogue): message_parser::parse()
// on one request, again and again, from a warm buffer, as the loop calls it for a keep-alive
// request that arrived whole.
//
//   parser_bench [req_browser.txt] [--reps N] [--ms M]      median ns per parse, two requests
//   parser_bench [req_browser.txt] --only short|browser --iterations N
//                                                           exactly N parses, for callgrind:
//   valgrind --tool=callgrind --toggle-collect='*parse_once*' parser_bench --only short --iterations 100000
//   (instructions per parse = the Ir total / N)
//
// The requests: "short", the 68-byte request of the load generator (3 fields), and "browser",
// the 715-byte request of ../shared/peers/counts/req_browser.txt (16 fields).
#include <skiff/skiff.hpp>  // message_parser, also from the single header

#include <algorithm>  // std::sort
#include <chrono>     // std::chrono::steady_clock
#include <cstdint>    // std::uint64_t
#include <cstdio>     // std::printf, std::fprintf
#include <cstdlib>    // std::strtol, std::exit
#include <cstring>    // std::strcmp
#include <fstream>    // std::ifstream for the browser request
#include <iterator>   // std::istreambuf_iterator
#include <string>     // std::string (set-up only)
#include <vector>     // std::vector (set-up only)

#ifndef SKIFF_BROWSER_REQUEST
#define SKIFF_BROWSER_REQUEST "req_browser.txt"
#endif

namespace {

using clock_type = std::chrono::steady_clock;

const char short_request[] = "GET / HTTP/1.1\r\nHost: localhost\r\nUser-Agent: nreq\r\nAccept: */*\r\n\r\n";

volatile std::uint64_t sink;  // keeps results alive so no loop is optimised away

struct parse_state {
    std::vector<char> buf;
    std::vector<skiff::header_field> fields = std::vector<skiff::header_field>(64);
    skiff::request_head head;
    skiff::message_parser parser;
    skiff::parse_limits limits;
};

// One parse, as the loop does it for a request that arrived whole; not inlined, so callgrind
// can count it alone.
[[gnu::noinline]] std::uint64_t parse_once(parse_state& s) {
    s.parser.reset();
    skiff::parse_result r = s.parser.parse(s.buf.data(), s.buf.size(), s.head, s.fields.data(), s.limits);
    if (r.status != skiff::parse_status::complete) {
        std::fprintf(stderr, "parser_bench: the request did not parse (status %d)\n", static_cast<int>(r.status));
        std::exit(1);
    }
    return r.consumed + s.head.field_count;
}

double ns_per_parse(parse_state& s, int ms) {
    std::uint64_t n = 0, acc = 0;
    auto start = clock_type::now();
    auto stop = start + std::chrono::milliseconds(ms);
    auto now = start;
    while (now < stop) {
        for (int i = 0; i < 1000; ++i) acc += parse_once(s);
        n += 1000;
        now = clock_type::now();
    }
    sink = acc;
    return std::chrono::duration<double, std::nano>(now - start).count() / static_cast<double>(n);
}

void report(const char* name, parse_state& s, int reps, int ms) {
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) t.push_back(ns_per_parse(s, ms));
    std::sort(t.begin(), t.end());
    std::printf("%-8s %4zu bytes %2u fields  median %7.1f ns/parse  (min %.1f, max %.1f, %d rounds)\n", name,
                s.buf.size(), s.head.field_count, t[t.size() / 2], t.front(), t.back(), reps);
}

} // namespace

int main(int argc, char** argv) {
    std::string browser_file = SKIFF_BROWSER_REQUEST;
    const char* only = nullptr;
    long iterations = 0, reps = 15, ms = 100;
    for (int i = 1; i < argc; ++i) {
        bool has_value = i + 1 < argc;
        if (has_value && std::strcmp(argv[i], "--only") == 0) only = argv[++i];
        else if (has_value && std::strcmp(argv[i], "--iterations") == 0) iterations = std::strtol(argv[++i], nullptr, 10);
        else if (has_value && std::strcmp(argv[i], "--reps") == 0) reps = std::strtol(argv[++i], nullptr, 10);
        else if (has_value && std::strcmp(argv[i], "--ms") == 0) ms = std::strtol(argv[++i], nullptr, 10);
        else browser_file = argv[i];
    }
    std::ifstream in(browser_file, std::ios::binary);
    if (!in) {
        std::fprintf(stderr, "parser_bench: cannot read %s\n", browser_file.c_str());
        return 1;
    }
    parse_state s_short, s_browser;
    s_short.buf.assign(short_request, short_request + sizeof short_request - 1);
    s_browser.buf.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    parse_once(s_short);
    parse_once(s_browser);
    if (iterations > 0) {
        parse_state& s = only != nullptr && std::strcmp(only, "browser") == 0 ? s_browser : s_short;
        std::uint64_t acc = 0;
        for (long i = 0; i < iterations; ++i) acc += parse_once(s);
        sink = acc;
        return 0;
    }
    report("short", s_short, static_cast<int>(reps), static_cast<int>(ms));
    report("browser", s_browser, static_cast<int>(reps), static_cast<int>(ms));
    return 0;
}
