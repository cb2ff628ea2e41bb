// The middleware benchmark app (tools/bench/middleware_counts.py): the contract routes, the
// ullun-api five scenarios, and each built-in middleware alone on a hello route of its own.
// Env as contract_app: PORT (8080), WORKERS (1), POLICY (single | sharded | shared).
//
//   GET /hello              text, no middleware       GET /json, POST /echo: the contract's
//   GET /users/:id          {"id":"ID"}, no middleware
//   GET /private            request id + bearer auth + a logger (to a no-op sink), then 200
//   GET /<name>/hello       one built-in alone: rid, cors, sec, limit, timer
//
// Each group has its middleware under its own prefix, so the routes without middleware cost
// what they cost in contract_app. BUILTINS=off registers the /<name>/hello routes without their
// built-in, so that one request's cost can be compared with and without it on the same bytes
// (middleware_counts.py, the "same request" column).
#include "contract.hpp"

#include <cstddef>      // std::size_t
#include <cstdlib>      // std::getenv
#include <string>       // the JSON answer
#include <string_view>  // the log line

namespace {

// Where the logger's lines go: counted, not written, so the figure is the middleware's own.
struct null_sink {
    std::size_t bytes = 0;
    void operator()(std::string_view line) noexcept { bytes += line.size(); }
};
null_sink log_sink;

// "<method> <path> <status>" composed on the stack after the handler ran.
void cheap_logger(skiff::request& req, skiff::response& res, const skiff::next& go) {
    go();
    char line[256];
    std::string_view method = req.method(), path = req.path().substr(0, 200);
    char* p = skiff::detail::put(line, method);
    *p++ = ' ';
    p = skiff::detail::put(p, path);
    *p++ = ' ';
    p = skiff::detail::put_decimal(p, static_cast<std::uint64_t>(res.status()));
    log_sink({line, static_cast<std::size_t>(p - line)});
}

void bearer_auth(skiff::request& req, skiff::response& res, const skiff::next& go) {
    if (req.header("authorization") != "Bearer secret") {
        res.status(401).header("WWW-Authenticate", "Bearer").text("unauthorized\n");
        return;
    }
    go();
}

void hello(skiff::request&, skiff::response& res) { res.text("Hello, World!"); }

template <class Policy>
void middleware_routes(skiff::basic_server<Policy>& app) {
    app.get("/hello", hello);
    app.get("/users/:id", [](skiff::request& req, skiff::response& res) {
        res.json("{\"id\":\"" + skiff::json_escape(req.param("id")) + "\"}");
    });
    app.use("/private", skiff::request_id());
    app.use("/private", bearer_auth);
    app.use("/private", cheap_logger);
    app.get("/private", [](skiff::request&, skiff::response& res) { res.text("private"); });

    const char* builtins = std::getenv("BUILTINS");
    if (builtins == nullptr || std::string_view(builtins) != "off") {
        skiff::cors_options cors;
        cors.origins = {"https://app.example"};
        app.use("/rid", skiff::request_id());
        app.use("/cors", skiff::cors(cors));
        app.use("/sec", skiff::security_headers());
        app.use("/limit", skiff::concurrency_limit(1024));
        app.use("/timer", skiff::response_timer());
    }
    for (const char* path : {"/rid/hello", "/cors/hello", "/sec/hello", "/limit/hello", "/timer/hello"})
        app.get(path, hello);
}

} // namespace

int main() {
    return bench::run_app("middleware_app", [](auto& app) { middleware_routes(app); });
}
