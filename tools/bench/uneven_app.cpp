// The contract app (design.md, "The contract app") plus one route whose cost is uneven, for
// measuring the threading policies when requests do not all cost the same
// (tools/bench/README.md, "Threading policies"). Env as contract_app: PORT (8080), WORKERS (1),
// POLICY (single | sharded | shared). Binds 127.0.0.1, prints nothing per request.
//
//   GET /uneven/:n/:us   200 text/plain "Hello, World!", like GET /; but one request in n,
//                        counted per worker thread, first spins for us microseconds.
//
// It spins rather than sleeps: the slow request holds its worker's CPU, as a costly handler
// would, so a loop that owns it serves none of its other connections meanwhile. Counting per
// thread keeps the slow share at 1/n under every policy without a shared counter.
#include "contract.hpp"

#include <charconv>     // std::from_chars for the route's numbers
#include <chrono>       // the spin
#include <string_view>  // the parameters

namespace {

// The whole of s as a number, or false.
bool to_number(std::string_view s, unsigned long& out) {
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && end == s.data() + s.size();
}

void spin_for(std::chrono::microseconds how_long) {
    auto until = std::chrono::steady_clock::now() + how_long;
    while (std::chrono::steady_clock::now() < until) {
    }
}

void uneven(skiff::request& req, skiff::response& res) {
    unsigned long n = 0, us = 0;
    if (!to_number(req.param("n"), n) || n == 0 || !to_number(req.param("us"), us) || us > 10'000'000) {
        res.status(400).text("want /uneven/N/MICROSECONDS, N > 0\n");
        return;
    }
    thread_local unsigned long answered = 0;
    if (++answered % n == 0) spin_for(std::chrono::microseconds(us));
    res.text("Hello, World!");
}

} // namespace

int main() {
    return bench::run_app("uneven_app", [](auto& app) { app.get("/uneven/:n/:us", uneven); });
}
