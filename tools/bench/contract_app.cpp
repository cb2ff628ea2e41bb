// The benchmark contract app (design.md, "The contract app"): the routes every peer serves,
// byte for byte. Env: PORT (8080), WORKERS (1), POLICY (single | sharded | shared).
// Binds 127.0.0.1, prints nothing per request, stops cleanly on SIGINT and SIGTERM.
#include "contract.hpp"

int main() {
    return bench::run_app("contract_app", [](auto&) {});
}
