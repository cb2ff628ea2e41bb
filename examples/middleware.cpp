// Middleware, hooks and observability together, the way a small service wires them:
//
//   GET  /hello       Hello, World! (text/plain)
//   GET  /json        {"message":"Hello, World!"}
//   GET  /users/:id   {"id":"ID"}, the id JSON-escaped
//   POST /echo        the body back, with its Content-Type
//   GET  /private     401 with WWW-Authenticate: Bearer, unless "Authorization: Bearer secret"
//   GET  /metrics     the server's counters, Prometheus text format
//   GET  /later       "answered later" (text/plain), deferred: the loop's timer answers 20 ms on
//   GET  /events      Server-Sent Events: "tick 1" to "tick 3" (ids 1-3), then the stream ends
//   PUT  /upload      201 "received N bytes", the body streamed piece by piece (at most 1 MiB:
//                     413 beyond)
//
// Every response, 404s and the server's own 400/431 included, carries X-Request-Id,
// X-Content-Type-Options: nosniff and Server-Timing, and writes one Common Log Format line to
// standard output. Answers written after the handler returned (/later, /events, /upload) get
// the same fields in their head, after the status line; Server-Timing, which response_timer()
// adds after the chain returns, is on the upload's answer but not on /later and /events (a
// deferred head is the handle's to write by then), and their log lines, written when the
// answer is, show the request line as "-". A CORS preflight from https://app.example is answered 204 with
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

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

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

// Answers whose head is written after the chain returned: the fields the middleware above set
// before next() go in that head all the same.
static void later_routes(skiff::server& app) {
    app.get("/later", [](skiff::request&, skiff::response& res) {
        auto later = std::make_shared<skiff::deferred>(res.defer());  // timers take copyable functions
        later->loop().after(std::chrono::milliseconds(20), [later] { later->text("answered later"); });
    });
    app.get("/events", [](skiff::request&, skiff::response& res) {
        skiff::sse_stream events = res.defer().events();
        for (int i = 1; i <= 3; ++i) events.send("tick " + std::to_string(i), {}, std::to_string(i));
        events.close();
    });
    app.upload("PUT", "/upload", [](skiff::request&, skiff::response&) {
        skiff::upload u;
        auto size = std::make_shared<std::size_t>(0);
        u.on_piece = [size](std::string_view piece) {
            *size += piece.size();
            return skiff::piece_status::taken;
        };
        u.on_end = [size](skiff::response& res) {
            res.status(201).text("received " + std::to_string(*size) + " bytes\n");
        };
        u.max_body = 1 << 20;
        return u;
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
    later_routes(app);
    app.use("/private", require_token);
    app.get("/private", [](skiff::request&, skiff::response& res) { res.text("private"); });
}

int main() {
    skiff::server app;
    observe(app);
    routes(app);
    auto port = skiff::port_from_env("PORT", 8080);
    if (!port) {
        std::fprintf(stderr, "middleware: PORT must be a number from 0 to 65535\n");
        return 1;
    }
    if (auto ec = app.listen(*port)) {
        std::fprintf(stderr, "middleware: cannot listen on 127.0.0.1:%u: %s\n", unsigned{*port}, ec.message().c_str());
        return 1;
    }
    skiff::stop_on_signals stopper(app);  // SIGINT, SIGTERM: stop; declared after app, so it goes first
    std::fprintf(stderr, "middleware: serving http://127.0.0.1:%u/ (Ctrl-C to stop)\n", app.port());
    return app.run();
}
