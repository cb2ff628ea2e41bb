// The contract app with the observers on: a Common Log Format access log (to a sink that
// keeps only a count, so no I/O is measured) and the metrics counters (serve_metrics at
// /metrics). counts.py --binary on it gives what a request costs with both, against
// contract_app's figures without. Env as contract_app.
#include "contract.hpp"

#include <cstddef>  // std::size_t

namespace {
std::size_t logged_bytes = 0;  // the lines must go somewhere the compiler cannot drop
}

int main() {
    return bench::run_app("observed_app", [](auto& app) {
        app.on_response(skiff::access_log([](std::string_view line) { logged_bytes += line.size(); }));
        app.serve_metrics("/metrics");
    });
}
