// The public test client (skiff/testing/test_client.hpp), used as a user would: routes from a
// setup function, requests as bytes or built, the clock moved by hand, answers compared byte
// for byte. No listening socket, no thread, no sleeping.
#include <skiff/testing.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

using namespace std::chrono_literals;
using skiff::testing::test_client;

namespace {

void test_client_routes(skiff::server& app) {
    app.get("/", [](skiff::request&, skiff::response& res) { res.text("Hello, World!"); });
    app.get("/user/:id", [](skiff::request& req, skiff::response& res) { res.text(req.param("id")); });
    app.post("/echo", [](skiff::request& req, skiff::response& res) {
        res.body(req.body(), req.header("content-type"));
    });
    app.get("/chunks", [](skiff::request&, skiff::response& res) {
        int left = 3;
        res.stream("text/plain", [left](char* buf, std::size_t) mutable -> std::size_t {
            if (left-- == 0) return 0;
            buf[0] = 'a';
            buf[1] = 'b';
            return 2;
        });
    });
}

const std::string hello =
    "HTTP/1.1 200 OK\r\n"
    "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
    "Content-Type: text/plain\r\n"
    "Content-Length: 13\r\n"
    "\r\n"
    "Hello, World!";

} // namespace

TEST_CASE("test client: a GET is answered byte for byte, with the fixed Date") {
    test_client client(test_client_routes);
    auto r = client.get("/");
    CHECK(r.status == 200);
    CHECK(r.reason == "OK");
    CHECK(r.header("content-type") == "text/plain");
    CHECK(r.header("CONTENT-LENGTH") == "13");
    CHECK(r.body == "Hello, World!");
    CHECK(r.raw == hello);
    CHECK(client.raw_output() == hello);
    CHECK_FALSE(client.closed());
}

TEST_CASE("test client: two requests in one send are answered in order, in one stream") {
    test_client client(test_client_routes);
    client.send("GET /user/1 HTTP/1.1\r\nHost: x\r\n\r\nGET /user/2 HTTP/1.1\r\nHost: x\r\n\r\n");
    auto first = client.next_response();
    auto second = client.next_response();
    CHECK(first.body == "1");
    CHECK(second.body == "2");
    CHECK(client.raw_output() == first.raw + second.raw);
    CHECK_FALSE(client.next_response());  // nothing more was asked
}

TEST_CASE("test client: half a request is answered once the rest arrives") {
    test_client client(test_client_routes);
    client.send("GET /user/42 HTTP/1.1\r\nHo");
    CHECK_FALSE(client.next_response());
    CHECK(client.raw_output().empty());
    client.send("st: x\r\n\r\n");
    CHECK(client.next_response().body == "42");
}

TEST_CASE("test client: a bad request gets 400 and the connection closes") {
    test_client client(test_client_routes);
    client.send("GET / HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n");  // a space before the colon
    auto r = client.next_response();
    CHECK(r.status == 400);
    CHECK(r.header("connection") == "close");
    CHECK(client.closed());
    client.advance(client.app().settings().linger_timeout + 1s);
    CHECK(client.connections() == 0);
}

TEST_CASE("test client: a stalled request gets 408 when advance() passes the header deadline") {
    skiff::options opt;
    opt.header_timeout = 5s;
    test_client client(test_client_routes, opt);
    client.send("GET / HTTP/1.1\r\nHost: x\r\n");  // no empty line: the head never ends
    client.advance(4s);
    CHECK_FALSE(client.next_response());
    CHECK_FALSE(client.closed());
    client.advance(2s);
    auto r = client.next_response();
    CHECK(r.status == 408);
    CHECK(client.closed());
    CHECK(client.now() == 6s);
}

TEST_CASE("test client: an idle keep-alive connection is closed, silently, at idle_timeout") {
    skiff::options opt;
    opt.idle_timeout = 30s;
    test_client client(test_client_routes, opt);
    CHECK(client.get("/").status == 200);
    client.advance(29s);
    CHECK_FALSE(client.closed());
    client.advance(2s);
    CHECK(client.closed());
    CHECK(client.raw_output() == hello);  // nothing was added to the one answer
}

TEST_CASE("test client: after stop_reading() nothing more is read; reconnect() reads again") {
    test_client client(test_client_routes);
    CHECK(client.get("/").status == 200);
    client.stop_reading();
    client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");  // answered, but not taken off the socket
    CHECK_FALSE(client.next_response());
    CHECK(client.raw_output() == hello);  // what came before stays
    CHECK(client.connections() == 1);
    client.reconnect();
    CHECK(client.get("/").raw == hello);
}

TEST_CASE("test client: middleware runs around the handler and its header is seen") {
    test_client client([](skiff::server& app) {
        app.use([](skiff::request& req, skiff::response& res, const skiff::next& next) {
            if (req.header("authorization") != "Bearer t") return (void)res.status(401).text("no\n");
            next();
            res.header("X-Seen", "yes");
        });
        test_client_routes(app);
    });
    CHECK(client.get("/").status == 401);
    client.send("GET / HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t\r\n\r\n");
    auto r = client.next_response();
    CHECK(r.status == 200);
    CHECK(r.header("x-seen") == "yes");
}

TEST_CASE("test client: a deferred answer the test completes is written on the next run") {
    skiff::deferred later;
    test_client client([&](skiff::server& app) {
        app.get("/later", [&](skiff::request&, skiff::response& res) { later = res.defer(); });
        test_client_routes(app);
    });
    client.send("GET /later HTTP/1.1\r\nHost: x\r\n\r\nGET /user/9 HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK_FALSE(client.next_response());  // both wait: answers go out in request order
    later.status(201).text("made");
    client.run();
    auto first = client.next_response();
    CHECK(first.status == 201);
    CHECK(first.body == "made");
    CHECK(client.next_response().body == "9");
}

TEST_CASE("test client: a task posted to the client's loop completes a deferred answer") {
    test_client client;
    auto loop = client.loop();
    client.app().get("/task", [loop](skiff::request&, skiff::response& res) {
        loop.post([later = res.defer()]() mutable { later.text("from the loop"); });  // moved in, not shared
    });
    CHECK(client.get("/task").body == "from the loop");
}

TEST_CASE("test client: after() holds a deferred by move and fires when the test clock passes its delay") {
    test_client client;
    auto loop = client.loop();
    client.app().get("/later", [loop](skiff::request&, skiff::response& res) {
        loop.after(50ms, [later = res.defer()]() mutable { later.text("after 50 ms"); });
    });
    client.send("GET /later HTTP/1.1\r\nHost: x\r\n\r\n");
    client.advance(49ms);
    CHECK_FALSE(client.next_response());  // the clock moves only by hand: not yet
    client.advance(1ms);
    CHECK(client.next_response().body == "after 50 ms");
}

TEST_CASE("test client: every() ends itself by returning timer_action::stop, holding a deferred by move") {
    test_client client;
    auto loop = client.loop();
    int ticks = 0;
    client.app().get("/count", [loop, &ticks](skiff::request&, skiff::response& res) {
        loop.every(10ms, [&ticks, later = res.defer()]() mutable {
            if (++ticks < 3) return skiff::timer_action::keep;
            later.text("ticked " + std::to_string(ticks));
            return skiff::timer_action::stop;
        });
    });
    client.send("GET /count HTTP/1.1\r\nHost: x\r\n\r\n");
    for (int i = 0; i < 2; ++i) client.advance(10ms);
    CHECK(ticks == 2);
    CHECK_FALSE(client.next_response());
    client.advance(10ms);
    CHECK(client.next_response().body == "ticked 3");
    for (int i = 0; i < 5; ++i) client.advance(10ms);
    CHECK(ticks == 3);  // stopped: never again
}

TEST_CASE("test client: deferred_timeout follows the test clock") {
    skiff::deferred kept;
    test_client client([&](skiff::server& app) {
        app.get("/never", [&](skiff::request&, skiff::response& res) { kept = res.defer(); });
    });
    client.send("GET /never HTTP/1.1\r\nHost: x\r\n\r\n");
    client.advance(client.app().settings().deferred_timeout - 1ms);
    CHECK_FALSE(client.next_response());
    client.advance(1ms);
    CHECK(client.next_response().status == 503);
}

TEST_CASE("test client: a chunked request body reaches the handler whole") {
    test_client client(test_client_routes);
    client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: text/csv\r\nTransfer-Encoding: chunked\r\n\r\n"
                "3\r\na,b\r\n4\r\n,c\nd\r\n0\r\n\r\n");
    auto r = client.next_response();
    CHECK(r.status == 200);
    CHECK(r.header("content-type") == "text/csv");
    CHECK(r.body == "a,b,c\nd");
}

TEST_CASE("test client: a streamed answer is dechunked, and its raw bytes keep the chunks") {
    test_client client(test_client_routes);
    auto r = client.get("/chunks");
    CHECK(r.header("transfer-encoding") == "chunked");
    CHECK(r.body == "ababab");
    CHECK(r.raw.find("\r\n\r\n2\r\nab\r\n") != std::string::npos);
    CHECK(client.get("/").status == 200);  // the connection goes on after the last chunk
}

TEST_CASE("test client: keep-alive serves request after request until Connection: close") {
    test_client client(test_client_routes);
    CHECK(client.post("/echo", "one", "text/plain").body == "one");
    CHECK(client.post("/echo", "two").body == "two");
    CHECK_FALSE(client.closed());
    client.send("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    auto r = client.next_response();
    CHECK(r.status == 200);
    CHECK(r.header("connection") == "close");
    CHECK(client.closed());
    client.reconnect();
    CHECK(client.get("/user/3").body == "3");
    CHECK(client.connections() == 1);
}

TEST_CASE("test client: 404, and 405 with Allow") {
    test_client client(test_client_routes);
    CHECK(client.get("/nowhere").status == 404);
    auto r = client.request("DELETE", "/");
    CHECK(r.status == 405);
    CHECK(r.header("allow").find("GET") != std::string::npos);
}

TEST_CASE("test client: the answer to HEAD has the GET's length and no body") {
    test_client client(test_client_routes);
    auto r = client.request("HEAD", "/");
    CHECK(r.status == 200);
    CHECK(r.header("content-length") == "13");
    CHECK(r.body.empty());
    CHECK(client.get("/user/5").body == "5");  // the next answer starts right after the head
}

TEST_CASE("test client: an answer larger than the socket buffers arrives whole, and so does an upload") {
    std::string big(3u << 20, 'x');
    for (std::size_t i = 0; i < big.size(); i += 4096) big[i] = static_cast<char>('a' + (i / 4096) % 26);
    skiff::options opt;
    opt.max_body = big.size();
    test_client client(
        [&](skiff::server& app) {
            app.get("/big", [&](skiff::request&, skiff::response& res) { res.body(big); });
            test_client_routes(app);
        },
        opt);
    auto r = client.get("/big");
    CHECK(r.status == 200);
    CHECK(r.body == big);
    auto echoed = client.post("/echo", big, "application/octet-stream");
    CHECK(echoed.status == 200);
    CHECK(echoed.body == big);
}

TEST_CASE("test client: a body over max_body gets 413") {
    skiff::options opt;
    opt.max_body = 8;
    test_client client(test_client_routes, opt);
    CHECK(client.post("/echo", "123456789").status == 413);
}

namespace {

// A field set before next(), as request_id(), security_headers() and cors() set theirs.
void mark_before(skiff::server& app) {
    app.use([](skiff::request&, skiff::response& res, const skiff::next& next) {
        res.header("X-Before", "mw");
        next();
    });
}

const std::string fixed_date = "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n";

} // namespace

TEST_CASE("test client: fields set before defer() open the deferred answer's head after its status line") {
    skiff::deferred later;
    test_client client([&](skiff::server& app) {
        mark_before(app);
        app.get("/later", [&](skiff::request&, skiff::response& res) {
            res.header("X-Handler", "h");
            later = res.defer();
        });
    });
    client.send("GET /later HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(client.raw_output().empty());  // nothing before the answer, not even its fields
    later.text("made");
    client.run();
    CHECK(client.raw_output() == "HTTP/1.1 200 OK\r\n" + fixed_date +
                                     "Content-Type: text/plain\r\nContent-Length: 4\r\nX-Before: mw\r\nX-Handler: h\r\n\r\nmade");
}

TEST_CASE("test client: fields set before defer() lead a push stream's head") {
    test_client client([](skiff::server& app) {
        mark_before(app);
        app.get("/events", [](skiff::request&, skiff::response& res) {
            skiff::sse_stream events = res.defer().events();
            events.send("hi");
            events.close();
        });
    });
    client.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(client.raw_output() == "HTTP/1.1 200 OK\r\n" + fixed_date +
                                     "Content-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"
                                     "X-Before: mw\r\nCache-Control: no-cache\r\n\r\na\r\ndata: hi\n\n\r\n0\r\n\r\n");
}

TEST_CASE("test client: an upload route behind middleware answers with the middleware's field in its head") {
    test_client client([](skiff::server& app) {
        mark_before(app);
        app.upload("PUT", "/up", [](skiff::request&, skiff::response&) {
            skiff::upload u;
            auto size = std::make_shared<std::size_t>(0);
            u.on_piece = [size](std::string_view p) {
                *size += p.size();
                return skiff::piece_status::taken;
            };
            u.on_end = [size](skiff::response& res) { res.status(201).text(std::to_string(*size)); };
            return u;
        });
    });
    client.send("PUT /up HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello");
    CHECK(client.raw_output() == "HTTP/1.1 201 Created\r\n" + fixed_date +
                                     "Content-Type: text/plain\r\nContent-Length: 1\r\nX-Before: mw\r\n\r\n5");
}

TEST_CASE("test client: a stream's source that throws cuts the body and reaches on_error") {
    std::string seen;
    test_client client([&](skiff::server& app) {
        app.on_error([&](std::string_view what, const skiff::request& req) {
            seen += std::string(what) + " at " + std::string(req.method()) + " " + std::string(req.target()) + ";";
        });
        app.get("/fails", [](skiff::request&, skiff::response& res) {
            res.stream("text/plain", [](char*, std::size_t) -> std::size_t { throw std::runtime_error("source failed"); });
        });
    });
    client.send("GET /fails?x=1 HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(client.closed());
    CHECK(seen == "source failed at GET /fails?x=1;");
}
