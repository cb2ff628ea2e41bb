// Observers end to end, under every policy: the error hook sees what a handler threw; the
// response hook sees the handlers' answers (200, 404) and the server's own rejections (400 for
// a bad request line and for a bad header, 413, 431, 408, the 503 at the connection limit)
// with their reasons, sizes and the peer; the access log writes parseable CLF and JSON lines;
// the metrics page counts what was served.
#include <skiff/testing.hpp>

#include "support/loopback.hpp"

#include <doctest/doctest.h>

#include <atomic>

#include <memory>
#include <mutex>
#include <stdexcept>
#include <regex>
#include <string>
#include <vector>

using namespace skiff_test;

namespace {

using reply = skiff_test::response;

// A response_event with its views copied.
struct seen {
    skiff::rejection reason;
    int status;
    std::size_t bytes_sent;
    std::size_t bytes_received;
    std::string method, target, version, peer;
};

// Collects events (and access-log lines) from any loop thread.
class recorder {
public:
    void add(const skiff::response_event& e) {
        std::lock_guard<std::mutex> g(m_);
        events_.push_back({e.reason, e.status, e.bytes_sent, e.bytes_received, std::string(e.method),
                           std::string(e.target), std::string(e.version), std::string(e.peer)});
    }
    void line(std::string_view l) {
        std::lock_guard<std::mutex> g(m_);
        lines_.emplace_back(l);
    }
    // The hook runs before the response is written, so once the client has it, it is here.
    std::vector<seen> events() {
        std::lock_guard<std::mutex> g(m_);
        return events_;
    }
    std::vector<std::string> lines() {
        std::lock_guard<std::mutex> g(m_);
        return lines_;
    }

private:
    std::mutex m_;
    std::vector<seen> events_;
    std::vector<std::string> lines_;
};

template <class Policy>
void observed_app(skiff::basic_server<Policy>& app, recorder& rec) {
    app.on_response([&rec](const skiff::response_event& e) { rec.add(e); });
    app.get("/hello", [](skiff::request&, skiff::response& res) { res.text("Hello, World!"); });
    app.post("/echo", [](skiff::request& req, skiff::response& res) { res.body(req.body(), "text/plain"); });
}

// The response as the client got it, to compare with bytes_sent.
std::string raw_reply(std::uint16_t port, const std::string& raw) {
    client c(port);
    c.send(raw);
    return c.read_until([](const std::string& s) { return parse_responses(s).size() == 1; });
}

seen only_event(recorder& rec) {
    auto all = rec.events();
    REQUIRE(all.size() == 1);
    return all[0];
}

const std::string hello = "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n";

} // namespace

TEST_CASE_TEMPLATE("the error hook sees what a handler threw, and the request, before the 500", Policy,
                   SKIFF_TEST_POLICIES) {
    std::mutex m;
    std::string what, path;
    recorder rec;
    running_server<Policy> srv([&](skiff::basic_server<Policy>& app) {
        app.on_error([&](std::string_view w, const skiff::request& req) {
            std::lock_guard<std::mutex> g(m);
            what = std::string(w);
            path = std::string(req.path());
        });
        app.on_response([&rec](const skiff::response_event& e) { rec.add(e); });
        app.get("/boom", [](skiff::request&, skiff::response&) { throw std::runtime_error("database is down"); });
        app.get("/odd", [](skiff::request&, skiff::response&) { throw 42; });
    });
    CHECK(one_response(srv.port(), "GET /boom HTTP/1.1\r\nHost: x\r\n\r\n").status == 500);
    {
        std::lock_guard<std::mutex> g(m);
        CHECK(what == "database is down");
        CHECK(path == "/boom");
    }
    CHECK(one_response(srv.port(), "GET /odd HTTP/1.1\r\nHost: x\r\n\r\n").status == 500);
    {
        std::lock_guard<std::mutex> g(m);
        CHECK(what == "unknown exception");
    }
    auto events = rec.events();
    REQUIRE(events.size() == 2);
    CHECK(events[0].reason == skiff::rejection::handler_exception);
    CHECK(events[0].status == 500);
}

TEST_CASE_TEMPLATE("the error hook sees what a stream's source threw, with the method and target; the body is cut",
                   Policy, SKIFF_TEST_POLICIES) {
    std::mutex m;
    std::vector<std::string> errors;
    running_server<Policy> srv([&](skiff::basic_server<Policy>& app) {
        app.on_error([&](std::string_view w, const skiff::request& req) {
            std::lock_guard<std::mutex> g(m);
            errors.push_back(std::string(w) + " | " + std::string(req.method()) + " " + std::string(req.path()) + " ? " +
                             std::string(req.query_string()));
        });
        app.get("/feed", [](skiff::request&, skiff::response& res) {
            auto calls = std::make_shared<int>(0);
            res.stream("text/plain", [calls](char* buf, std::size_t) -> std::size_t {
                if (++*calls > 2) throw std::runtime_error("feed broke");
                buf[0] = 'x';
                return 1;
            });
        });
        app.get("/hello", [](skiff::request&, skiff::response& res) { res.text("Hello, World!"); });
    });
    client c(srv.port());
    c.send("GET /feed?page=2 HTTP/1.1\r\nHost: x\r\n\r\n");
    std::string got = c.read_to_close();
    CHECK(c.closed());                                   // the framing is unfinished: the connection ends
    CHECK(got.find("\r\n0\r\n\r\n") == std::string::npos);  // no last chunk: the body is cut
    {
        std::lock_guard<std::mutex> g(m);  // the hook ran before the close the client saw
        REQUIRE(errors.size() == 1);
        CHECK(errors[0] == "feed broke | GET /feed ? page=2");
    }
    CHECK(one_response(srv.port(), hello).status == 200);  // the server goes on
}

TEST_CASE_TEMPLATE("the response hook sees a 200 and a 404 with their sizes and the peer", Policy,
                   SKIFF_TEST_POLICIES) {
    recorder rec;
    running_server<Policy> srv([&](skiff::basic_server<Policy>& app) { observed_app(app, rec); });
    std::string got = raw_reply(srv.port(), hello);
    seen e = only_event(rec);
    CHECK(e.reason == skiff::rejection::none);
    CHECK(e.status == 200);
    CHECK(e.method == "GET");
    CHECK(e.target == "/hello");
    CHECK(e.version == "HTTP/1.1");
    CHECK(e.bytes_sent == got.size());
    CHECK(e.bytes_received == hello.size());
    CHECK(std::regex_match(e.peer, std::regex(R"(127\.0\.0\.1:\d+)")));

    CHECK(one_response(srv.port(), "GET /missing?q=1 HTTP/1.0\r\n\r\n").status == 404);
    auto all = rec.events();
    REQUIRE(all.size() == 2);
    CHECK(all[1].status == 404);
    CHECK(all[1].reason == skiff::rejection::none);
    CHECK(all[1].target == "/missing?q=1");
    CHECK(all[1].version == "HTTP/1.0");
}

TEST_CASE_TEMPLATE("the response hook sees the server's own 400s, with their reasons", Policy, SKIFF_TEST_POLICIES) {
    recorder rec;
    running_server<Policy> srv([&](skiff::basic_server<Policy>& app) { observed_app(app, rec); });
    CHECK(one_response(srv.port(), "GET\x01/ HTTP/1.1\r\nHost: x\r\n\r\n").status == 400);
    seen line = only_event(rec);
    CHECK(line.reason == skiff::rejection::bad_request_line);
    CHECK(line.status == 400);
    CHECK(line.method.empty());
    CHECK(line.bytes_sent > 0);
    CHECK(std::regex_match(line.peer, std::regex(R"(127\.0\.0\.1:\d+)")));

    CHECK(one_response(srv.port(), "GET /hello HTTP/1.1\r\nHost x\r\n\r\n").status == 400);
    auto all = rec.events();
    REQUIRE(all.size() == 2);
    CHECK(all[1].reason == skiff::rejection::bad_header);
    CHECK(all[1].method == "GET");
    CHECK(all[1].target == "/hello");
}

TEST_CASE_TEMPLATE("the rejection hook adds fields to the server's own answers and to the 500 after a throw",
                   Policy, SKIFF_TEST_POLICIES) {
    std::mutex lock;
    std::vector<skiff::rejection> reasons;
    running_server<Policy> srv([&](skiff::basic_server<Policy>& app) {
        app.on_rejection([&](skiff::response& res, skiff::rejection why) {
            res.header("X-Rejected", skiff::to_string(why));
            std::lock_guard<std::mutex> g(lock);
            reasons.push_back(why);
        });
        app.on_rejection([](skiff::response&, skiff::rejection) { throw std::runtime_error("ignored"); });
        app.get("/hello", [](skiff::request&, skiff::response& res) { res.text("Hello"); });
        app.get("/throw", [](skiff::request&, skiff::response& res) {
            res.header("X-Lost", "1");
            throw std::runtime_error("boom");
        });
    });
    reply bad = one_response(srv.port(), "GET /hello HTTP/1.1\r\nHost x\r\n\r\n");
    CHECK(bad.status == 400);
    CHECK(bad.header("X-Rejected") == "bad_header");
    CHECK(bad.body == "Bad Request\n");
    reply big = one_response(srv.port(), "GET /hello HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(20000, 'a') + "\r\n\r\n");
    CHECK(big.status == 431);
    CHECK(big.header("X-Rejected") == "header_too_large");
    reply thrown = one_response(srv.port(), "GET /throw HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(thrown.status == 500);
    CHECK(thrown.header("X-Rejected") == "handler_exception");
    CHECK(thrown.header("X-Lost").empty());  // the handler's own answer was discarded
    reply fine = one_response(srv.port(), "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(fine.header("X-Rejected").empty());  // a handler's answer is not a rejection
    std::lock_guard<std::mutex> g(lock);
    CHECK(reasons.size() == 3);
}

// A JSON API answers JSON even where the server answers: the hook writes the body, the
// status stays the server's, and a hook that tries to change it gets the plain answer.
TEST_CASE_TEMPLATE("the rejection hook may render the server's own answers, keeping their status", Policy,
                   SKIFF_TEST_POLICIES) {
    skiff::options opt;
    opt.max_body = 16;
    running_server<Policy> srv(
        [](skiff::basic_server<Policy>& app) {
            app.on_rejection([](skiff::response& res, skiff::rejection why) {
                res.header("X-Rejected", "1");  // fields still go on, before or after the body
                if (why == skiff::rejection::not_implemented) return res.status(200).json("{}");  // refused
                res.json(std::string(R"({"error":")") + skiff::to_string(why) + R"("})");
            });
            app.get("/throw", [](skiff::request&, skiff::response&) { throw std::runtime_error("boom"); });
            app.post("/echo", [](skiff::request& req, skiff::response& res) { res.text(req.body()); });
        },
        opt);
    struct expected {
        std::string request;
        int status;
        std::string body;
    };
    const expected cases[] = {
        {"GET\x01/ HTTP/1.1\r\nHost: x\r\n\r\n", 400, R"({"error":"bad_request_line"})"},
        {"GET /throw HTTP/1.1\r\nHost: x\r\n\r\n", 500, R"({"error":"handler_exception"})"},
        {"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 17\r\n\r\n", 413, R"({"error":"body_too_large"})"},
        {"GET /throw HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(20000, 'a') + "\r\n\r\n", 431,
         R"({"error":"header_too_large"})"},
        {"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501, "Not Implemented\n"},
    };
    for (const expected& e : cases) {
        reply r = one_response(srv.port(), e.request);
        CHECK(r.status == e.status);
        CHECK(r.body == e.body);
        bool json = e.body[0] == '{';
        CHECK(r.header("Content-Type") == (json ? "application/json" : "text/plain"));
        CHECK(r.header("X-Rejected") == (json ? "1" : ""));  // a refused rendering drops its fields too
        CHECK(r.header("Connection") == (e.status == 500 ? "" : "close"));
    }
}

TEST_CASE("the rejection hook renders the 408 the test client's clock brings") {
    skiff::testing::test_client client([](skiff::server& app) {
        app.on_rejection([](skiff::response& res, skiff::rejection) { res.json(R"({"error":"timeout"})"); });
    });
    client.send("GET / HTTP/1.1\r\nHost: x\r\n");
    client.advance(client.app().settings().header_timeout + 1s);
    auto r = client.next_response();
    CHECK(r.status == 408);
    CHECK(r.body == R"({"error":"timeout"})");
    CHECK(r.header("Content-Type") == "application/json");
    CHECK(client.closed());
}

TEST_CASE_TEMPLATE("the response hook sees a 431 and a 413, with their reasons", Policy, SKIFF_TEST_POLICIES) {
    recorder rec;
    skiff::options opt;
    opt.max_header_bytes = 256;
    opt.max_body = 16;
    running_server<Policy> srv([&](skiff::basic_server<Policy>& app) { observed_app(app, rec); }, opt);
    std::string big = "GET /hello HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(400, 'a') + "\r\n\r\n";
    CHECK(one_response(srv.port(), big).status == 431);
    seen e = only_event(rec);
    CHECK(e.reason == skiff::rejection::header_too_large);
    CHECK(e.status == 431);
    CHECK(e.method == "GET");

    CHECK(one_response(srv.port(), "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n").status == 413);
    auto all = rec.events();
    REQUIRE(all.size() == 2);
    CHECK(all[1].reason == skiff::rejection::body_too_large);
    CHECK(all[1].status == 413);
    CHECK(all[1].target == "/echo");
}

// On the test client's clock (the real clock, under every policy: tests/system/).
TEST_CASE("the response hook sees a 408 for a head that does not arrive") {
    recorder rec;
    skiff::options opt;
    opt.header_timeout = std::chrono::milliseconds(100);
    skiff::testing::test_client client([&](skiff::server& app) { observed_app(app, rec); }, opt);
    client.send("GET /hello HTTP/1.1\r\nHost:");
    client.advance(90ms);
    CHECK(rec.events().empty());
    client.advance(30ms);  // past the deadline and its 10 ms tick
    CHECK(client.next_response().status == 408);
    seen e = only_event(rec);
    CHECK(e.reason == skiff::rejection::timeout);
    CHECK(e.status == 408);
    CHECK(e.method == "GET");
    CHECK(e.target == "/hello");
}

TEST_CASE("the response hook sees the 503 at the connection limit") {
    recorder rec;
    skiff::options opt;
    opt.max_connections = 1;
    running_server<skiff::single> srv([&](skiff::server& app) { observed_app(app, rec); }, opt);
    client first(srv.port());
    first.send("GET /hello HTTP/1.1\r\n");  // mid-request, so it holds the only place (not idle)
    client second(srv.port());
    auto rs = read_responses(second, 1);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == 503);
    auto all = rec.events();
    REQUIRE(all.size() == 1);
    CHECK(all[0].reason == skiff::rejection::connection_limit);
    CHECK(all[0].status == 503);
    CHECK(std::regex_match(all[0].peer, std::regex(R"(127\.0\.0\.1:\d+)")));
}

TEST_CASE_TEMPLATE("the access log writes Common Log Format lines, the server's 400 included", Policy,
                   SKIFF_TEST_POLICIES) {
    recorder rec;
    running_server<Policy> srv([&](skiff::basic_server<Policy>& app) {
        app.on_response(skiff::access_log([&rec](std::string_view l) { rec.line(l); }));
        app.get("/hello", [](skiff::request&, skiff::response& res) { res.text("Hello, World!"); });
    });
    std::string got = raw_reply(srv.port(), hello);
    CHECK(one_response(srv.port(), "BAD\r\n\r\n").status == 400);
    auto lines = rec.lines();
    REQUIRE(lines.size() == 2);
    std::regex clf(R"re((\S+) - - \[(\d{2}/[A-Z][a-z]{2}/\d{4}:\d{2}:\d{2}:\d{2} \+0000)\] "([^"]*)" (\d{3}) (\d+))re");
    std::smatch m;
    REQUIRE(std::regex_match(lines[0], m, clf));
    CHECK(m[1] == "127.0.0.1");
    CHECK(m[3] == "GET /hello HTTP/1.1");
    CHECK(m[4] == "200");
    CHECK(std::stoul(m[5]) == got.size());
    REQUIRE(std::regex_match(lines[1], m, clf));
    CHECK(m[3] == "-");
    CHECK(m[4] == "400");
}

TEST_CASE_TEMPLATE("the access log writes JSON lines", Policy, SKIFF_TEST_POLICIES) {
    recorder rec;
    running_server<Policy> srv([&](skiff::basic_server<Policy>& app) {
        app.on_response(skiff::access_log([&rec](std::string_view l) { rec.line(l); }, skiff::log_format::json_lines));
        app.get("/hello", [](skiff::request&, skiff::response& res) { res.text("Hello, World!"); });
    });
    CHECK(one_response(srv.port(), "GET /hello?name=%22x%22 HTTP/1.1\r\nHost: x\r\n\r\n").status == 200);
    CHECK(one_response(srv.port(), "GET /hello HTTP/1.1\r\nHost: x\r\nX: " + std::string(9000, 'a') + "\r\n\r\n").status ==
          431);
    auto lines = rec.lines();
    REQUIRE(lines.size() == 2);
    std::regex json(R"re(\{"remote":"127\.0\.0\.1:\d+","time":"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z","method":"([A-Z]*)","target":"([^"]*)","status":(\d+),"bytes":(\d+),"duration_us":(\d+),"reason":"([a-z_]+)"\})re");
    std::smatch m;
    REQUIRE(std::regex_match(lines[0], m, json));
    CHECK(m[1] == "GET");
    CHECK(m[2] == "/hello?name=%22x%22");
    CHECK(m[3] == "200");
    CHECK(m[6] == "none");
    REQUIRE(std::regex_match(lines[1], m, json));
    CHECK(m[3] == "431");
    CHECK(m[6] == "header_too_large");
}

TEST_CASE_TEMPLATE("the metrics page counts requests, rejections and bytes", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv([](skiff::basic_server<Policy>& app) {
        app.serve_metrics("/metrics");
        app.get("/hello", [](skiff::request&, skiff::response& res) { res.text("Hello, World!"); });
    });
    const int n = 5;
    for (int i = 0; i < n; ++i) CHECK(one_response(srv.port(), hello).status == 200);
    CHECK(one_response(srv.port(), "GET / HTTP/1.1\r\nHost x\r\n\r\n").status == 400);
    CHECK(one_response(srv.port(), "GET /nothing HTTP/1.1\r\nHost: x\r\n\r\n").status == 404);
    reply r = one_response(srv.port(), "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(r.status == 200);
    CHECK(r.header("Content-Type") == "text/plain; version=0.0.4");
    const std::string& text = r.body;
    auto has = [&text](const std::string& line) { return text.find(line + "\n") != std::string::npos; };
    CHECK(has("# TYPE skiff_requests_total counter"));
    CHECK(has("skiff_requests_total{code=\"200\"} 5"));
    CHECK(has("skiff_requests_total{code=\"400\"} 1"));
    CHECK(has("skiff_requests_total{code=\"404\"} 1"));
    CHECK(has("# TYPE skiff_rejections_total counter"));
    CHECK(has("skiff_rejections_total{reason=\"bad_header\"} 1"));
    CHECK(has("skiff_rejections_total{reason=\"timeout\"} 0"));
    CHECK(has("# TYPE skiff_connections_open gauge"));
    std::smatch m;
    REQUIRE(std::regex_search(text, m, std::regex("\nskiff_connections_open (\\d+)\n")));
    CHECK(std::stoul(m[1]) >= 1);  // the one asking, at least
    REQUIRE(std::regex_search(text, m, std::regex("\nskiff_bytes_received_total (\\d+)\n")));
    CHECK(std::stoul(m[1]) >= n * hello.size());
    REQUIRE(std::regex_search(text, m, std::regex("\nskiff_bytes_sent_total (\\d+)\n")));
    CHECK(std::stoul(m[1]) > 0);
    CHECK(has("# TYPE skiff_request_duration_seconds histogram"));
    CHECK(has("skiff_request_duration_seconds_bucket{le=\"+Inf\"} 7"));
    CHECK(has("skiff_request_duration_seconds_count 7"));
    CHECK(std::regex_search(text, std::regex("\nskiff_request_duration_seconds_sum \\d+\\.\\d+\n")));
    CHECK(std::regex_search(text, std::regex("\n# HELP skiff_request_duration_seconds [^\n]+\n")));
}

TEST_CASE_TEMPLATE("the metrics page carries the application's own counters and gauges", Policy, SKIFF_TEST_POLICIES) {
    std::atomic<std::uint64_t> orders{0};
    running_server<Policy> srv([&](skiff::basic_server<Policy>& app) {
        app.serve_metrics("/metrics", [&orders](skiff::metrics_writer& w) {
            w.counter("app_orders_total", "Orders placed.", orders.load());
            w.gauge("app_temperature_celsius", "A line\nbreak and a \\ in help.", -2.5);
            w.raw("app_items{kind=\"book\"} 3\n");
        });
        app.post("/order", [&orders](skiff::request&, skiff::response& res) {
            ++orders;
            res.status(201).end();
        });
    });
    for (int i = 0; i < 3; ++i)
        CHECK(one_response(srv.port(), "POST /order HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n").status == 201);
    reply r = one_response(srv.port(), "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    const std::string& text = r.body;
    auto has = [&text](const std::string& line) { return text.find("\n" + line + "\n") != std::string::npos; };
    CHECK(has("skiff_requests_total{code=\"201\"} 3"));  // the server's families are still there
    CHECK(has("# HELP app_orders_total Orders placed."));
    CHECK(has("# TYPE app_orders_total counter"));
    CHECK(has("app_orders_total 3"));
    CHECK(has("# HELP app_temperature_celsius A line\\nbreak and a \\\\ in help."));
    CHECK(has("# TYPE app_temperature_celsius gauge"));
    CHECK(has("app_temperature_celsius -2.5"));
    CHECK(has("app_items{kind=\"book\"} 3"));
}

TEST_CASE_TEMPLATE("the response hook sees a push stream's head and an upload route's answers", Policy, SKIFF_TEST_POLICIES) {
    recorder rec;
    running_server<Policy> srv([&](skiff::basic_server<Policy>& app) {
        app.on_response([&rec](const skiff::response_event& e) { rec.add(e); });
        app.get("/events", [](skiff::request&, skiff::response& res) {
            skiff::sse_stream events = res.defer().events();
            events.send("hi");
            events.close();
        });
        app.upload("PUT", "/up", [](skiff::request& req, skiff::response& res) {
            skiff::upload u;
            if (req.has_header("x-refuse")) return res.status(403).text("no\n"), u;
            u.on_piece = [](std::string_view) { return skiff::piece_status::taken; };
            u.on_end = [](skiff::response& r) { r.status(201).text("stored\n"); };
            return u;
        });
    });
    {
        client c(srv.port());
        c.send("GET /events HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        c.read_to_close();
    }
    const std::string put = "PUT /up?v=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n";
    reply stored = one_response(srv.port(), put + "\r\nhello");
    CHECK(stored.status == 201);
    CHECK(one_response(srv.port(), put + "X-Refuse: 1\r\n\r\nhello").status == 403);
    auto events = rec.events();
    REQUIRE(events.size() == 3);
    CHECK(events[0].status == 200);
    CHECK(events[0].bytes_sent > 0);
    CHECK(events[1].status == 201);
    CHECK(events[1].method == "PUT");
    CHECK(events[1].target == "/up?v=1");
    CHECK(events[1].version == "HTTP/1.1");
    CHECK(events[2].status == 403);
    CHECK(events[2].target == "/up?v=1");
}
