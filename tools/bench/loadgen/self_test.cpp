// Checks of the load generator's two pieces of arithmetic that its numbers rest on: the
// histogram's 1% bound over 1 us..60 s, and the response reader's framing when a read cuts a
// response anywhere. Prints "N passed, N failed"; exits 1 on any failure.
#include "histogram.hpp"
#include "options.hpp"
#include "generator.hpp"
#include "response_reader.hpp"

#include <cmath>    // std::fabs
#include <cstdio>   // std::printf
#include <string>   // test inputs
#include <vector>   // expected responses

namespace {

int passed = 0, failed = 0;

void expect(bool ok, const std::string& what) {
    if (ok) {
        ++passed;
        return;
    }
    ++failed;
    std::printf("FAILED: %s\n", what.c_str());
}

// Every value from 1 us to 60 s, stepped by 0.1%, reads back within 1% from its bucket.
void histogram_is_exact_to_one_percent() {
    using h = loadgen::histogram;
    double worst = 0;
    std::uint64_t outside = 0;
    for (double v = 1000; v <= 60e9; v *= 1.001) {
        auto ns = static_cast<std::uint64_t>(v);
        auto i = h::index_of(ns);
        if (ns < h::lower(i) || ns >= h::lower(i) + h::width(i)) ++outside;
        double error = std::fabs(static_cast<double>(h::midpoint(i)) - v) / v;
        if (error > worst) worst = error;
    }
    expect(outside == 0, std::to_string(outside) + " values outside their own bucket");
    expect(worst < 0.01, "worst relative error " + std::to_string(worst) + " < 1%");
    expect(loadgen::histogram::index_of(loadgen::histogram::top_value) < loadgen::histogram::bucket_count,
           "the largest value has a bucket");
}

void histogram_quantiles() {
    loadgen::histogram h;
    for (std::uint64_t v = 1; v <= 100000; ++v) h.record(v * 1000);   // 1 us .. 100 ms, uniform
    auto near = [](std::uint64_t got, double want) { return std::fabs(static_cast<double>(got) - want) / want < 0.01; };
    expect(near(h.at_quantile(0.5), 50e6), "p50 of uniform 1 us..100 ms is 50 ms");
    expect(near(h.at_quantile(0.99), 99e6), "p99 is 99 ms");
    expect(near(h.at_quantile(0.9999), 99.99e6), "p99.99 is 99.99 ms");
    expect(h.at_quantile(1.0) == 100000000u, "p100 is the exact maximum");
}

struct framed {
    std::string bytes;
    int status;
    long long length;
    bool close;
};

// Feeds the stream cut into two reads at `cut` and returns the responses the reader saw.
std::vector<loadgen::response_info> read_cut(const std::string& stream, std::size_t cut, bool& bad) {
    loadgen::response_reader reader;
    std::vector<loadgen::response_info> seen;
    bad = false;
    for (auto [from, to] : {std::pair<std::size_t, std::size_t>{0, cut}, {cut, stream.size()}}) {
        const char* p = stream.data() + from;
        const char* end = stream.data() + to;
        while (p < end && !bad) {
            loadgen::read_status st;
            p += reader.feed(p, end, st);
            if (st == loadgen::read_status::bad) bad = true;
            if (st == loadgen::read_status::complete) seen.push_back(reader.info());
        }
    }
    return seen;
}

void reader_frames_at_every_cut() {
    const std::vector<framed> responses = {
        {"HTTP/1.1 200 OK\r\nContent-Length: 13\r\nContent-Type: text/plain\r\n\r\nHello, World!", 200, 13, false},
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n1a\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\n"
         "Trailer: t\r\n\r\n", 200, 31, false},
        {"HTTP/1.1 404 Not Found\r\ncontent-length: 10\r\n\r\nNot Found\n", 404, 10, false},
        {"HTTP/1.1 204 No Content\r\n\r\n", 204, 0, false},
        {"HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 0\r\n\r\n", 200, 0, true},
    };
    std::string stream;
    for (const auto& r : responses) stream += r.bytes;
    for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
        bool bad = false;
        auto seen = read_cut(stream, cut, bad);
        bool same = !bad && seen.size() == responses.size();
        for (std::size_t i = 0; same && i < seen.size(); ++i)
            same = seen[i].status == responses[i].status && seen[i].body_length == responses[i].length &&
                   seen[i].close == responses[i].close;
        expect(same, "five responses framed right when cut at byte " + std::to_string(cut));
    }
}

void reader_rejects_unframed() {
    bool bad = false;
    read_cut("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nno length", 10, bad);
    expect(bad, "a 200 without Content-Length or chunked is rejected");
    read_cut("HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n", 5, bad);
    expect(bad, "a status that is not three digits is rejected");
}

void request_is_what_wrk_sends() {
    loadgen::options o;
    o.port = 8080;
    expect(loadgen::generator::build_request(o) == "GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n",
           "the plain request matches wrk's");
    o.method = "POST";
    o.body_size = 3;
    o.content_type = "text/plain";
    o.close = true;
    expect(loadgen::generator::build_request(o) ==
               "POST / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nConnection: close\r\nContent-Type: text/plain\r\n"
               "Content-Length: 3\r\n\r\nxxx",
           "POST with a body and Connection: close");
}

} // namespace

int main() {
    histogram_is_exact_to_one_percent();
    histogram_quantiles();
    reader_frames_at_every_cut();
    reader_rejects_unframed();
    request_is_what_wrk_sends();
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
