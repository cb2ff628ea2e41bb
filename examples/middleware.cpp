// Middleware, hooks and observability together, the way a small service wires them:
//
//   GET  /hello       Hello, World! (text/plain)
//   GET  /json        {"message":"Hello, World!"}
//   GET  /users/:id   {"id":"ID"}, the id JSON-escaped
//   POST /echo        the body back, with its Content-Type
//   GET  /private     401 with WWW-Authenticate: Bearer, unless "Authorization: Bearer secret"
//   GET  /metrics     the server's counters, Prometheus text format
//
// Every response, 404s and the server's own 400/431 included, carries X-Request-Id,
// X-Content-Type-Options: nosniff and Server-Timing, and writes one Common Log Format line to
// standard output. A CORS preflight from https://app.example is answered 204 with
// Access-Control-Allow-Origin; other origins get no CORS headers.
//
// Reads PORT (default 8080), listens on 127.0.0.1, one loop (the single policy). Ctrl-C or
// SIGTERM stops it gracefully and it exits 0.
//
// How the pieces meet: use() middleware wraps every route registered after it and the 404/405
// answers; the server's own rejections pass no middleware (no route was chosen), so
// on_rejection() puts the same fields on them; the access log and the metrics are response
// hooks, which see every answer, rejections included.
#include <skiff/skiff.hpp>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

static skiff::server* running = nullptr;

extern "C" void on_signal(int) {
    if (running) running->stop();
}

// Only the private routes: a bearer token (a real service would check a signed one).
static void require_token(skiff::request& req, skiff::response& res, const skiff::next& go) {
    if (req.header("authorization") == "Bearer secret") return go();
    res.status(401).header("WWW-Authenticate", "Bearer").text("Unauthorized\n");
}

static void observe(skiff::server& app) {
    app.on_response(skiff::access_log([](std::string_view line) {
        std::printf("%.*s\n", static_cast<int>(line.size()), line.data());
        std::fflush(stdout);  // one line a response, seen as it happens even through a pipe
    }));
    app.use(skiff::response_timer());  // first, to time the whole chain
    app.use(skiff::request_id());
    app.use(skiff::security_headers());
    skiff::cors_options cors;
    cors.origins = {"https://app.example"};
    app.use(skiff::cors(cors));
    // The server's own answers: the same fields by hand (they took no time in a handler).
    app.on_rejection([](skiff::response& res, skiff::rejection) {
        res.header("X-Request-Id", skiff::new_request_id());
        res.header("X-Content-Type-Options", "nosniff");
        res.header("Server-Timing", "app;dur=0.000");
    });
}

static void routes(skiff::server& app) {
    app.get("/hello", [](skiff::request&, skiff::response& res) { res.text("Hello, World!"); });
    app.get("/json", [](skiff::request&, skiff::response& res) { res.json(R"({"message":"Hello, World!"})"); });
    app.get("/users/:id", [](skiff::request& req, skiff::response& res) {
        res.json("{\"id\":\"" + skiff::json_escape(req.param("id")) + "\"}");
    });
    app.post("/echo", [](skiff::request& req, skiff::response& res) {
        std::string_view type = req.header("content-type");
        res.body(req.body(), type.empty() ? "application/octet-stream" : type);
    });
    app.serve_metrics("/metrics");
    app.use("/private", require_token);
    app.get("/private", [](skiff::request&, skiff::response& res) { res.text("private"); });
}

int main() {
    skiff::server app;
    observe(app);
    routes(app);
    const char* port = std::getenv("PORT");
    if (auto ec = app.listen(static_cast<std::uint16_t>(port ? std::atoi(port) : 8080))) {
        std::fprintf(stderr, "middleware: cannot listen on 127.0.0.1:%s: %s\n", port ? port : "8080", ec.message().c_str());
        return 1;
    }
    running = &app;
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    std::fprintf(stderr, "middleware: serving http://127.0.0.1:%u/ (Ctrl-C to stop)\n", app.port());
    return app.run();
}
