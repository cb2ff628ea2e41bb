// Streamed request bodies (app.upload): pieces in order, Content-Length and chunked, a paused
// handler that stops the read, 100 Continue, early answers, max_body, a client that goes, and
// request order on a pipelined connection.
#include "support/loopback.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

using namespace skiff_test;

namespace {

std::string pattern_bytes(std::size_t n) {
    std::string s(n, ' ');
    for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + i % 26);
    return s;
}

// What the handlers saw, read by the test thread.
struct seen {
    std::atomic<std::size_t> bytes{0};
    std::atomic<int> aborts{0};
    std::atomic<int> paused{0};
    std::mutex lock;
    skiff::upload_resumer resumer;
};

// Takes the body, checking each byte against the pattern; answers "<bytes> <in order?>".
skiff::upload checking_upload(const std::shared_ptr<seen>& s) {
    skiff::upload u;
    auto at = std::make_shared<std::size_t>(0);
    auto in_order = std::make_shared<bool>(true);
    u.on_piece = [s, at, in_order](std::string_view piece) {
        for (char ch : piece) *in_order = *in_order && ch == static_cast<char>('a' + (*at)++ % 26);
        s->bytes += piece.size();
        return skiff::piece_status::taken;
    };
    u.on_end = [at, in_order](skiff::response& res) {
        res.status(201).text(std::to_string(*at) + (*in_order ? " in order" : " out of order"));
    };
    u.on_abort = [s] { ++s->aborts; };
    return u;
}

// A multipart sink that lists "name=size;" for each part.
struct part_list {
    std::string text;
    std::size_t size = 0;
    void on_part(const skiff::multipart_part& p) {
        text += std::string(p.name) + "=";
        size = 0;
    }
    void on_data(std::string_view bytes) { size += bytes.size(); }
    void on_part_end() { text += std::to_string(size) + ";"; }
};

template <class Policy>
void routes(skiff::basic_server<Policy>& app, const std::shared_ptr<seen>& s) {
    app.upload("PUT", "/sink", [s](skiff::request&, skiff::response&) { return checking_upload(s); });
    app.upload("PUT", "/small", [s](skiff::request&, skiff::response&) {
        skiff::upload u = checking_upload(s);
        u.max_body = 1000;
        return u;
    });
    app.upload("PUT", "/deny", [](skiff::request&, skiff::response& res) {
        res.status(403).text("no\n");
        return skiff::upload{};
    });
    // Pauses on its first piece; the test resumes it.
    app.upload("PUT", "/pausing", [s](skiff::request&, skiff::response&) {
        skiff::upload u = checking_upload(s);
        auto resumer = u.resumer();
        auto first = std::make_shared<bool>(true);
        auto take = std::move(u.on_piece);
        u.on_piece = [s, resumer, first, take](std::string_view piece) {
            if (*first) {
                *first = false;
                {
                    std::lock_guard<std::mutex> g(s->lock);
                    s->resumer = resumer;
                }
                ++s->paused;
                return skiff::piece_status::pause;
            }
            return take(piece);
        };
        return u;
    });
    app.upload("POST", "/form", [](skiff::request& req, skiff::response& res) {
        auto boundary = skiff::multipart_boundary(req.header("content-type"));
        if (!boundary) {
            res.status(400).text("not a form\n");
            return skiff::upload{};
        }
        // Sink and done deduced: a lambda, here one that owns a move-only value, as it is.
        return skiff::multipart_upload(*boundary, part_list{},
                                       [bad = std::make_unique<std::string>("bad\n")](
                                           skiff::response& r, part_list& parts, skiff::multipart_status end) {
                                           if (end != skiff::multipart_status::complete) return r.status(400).text(*bad);
                                           r.text(parts.text);
                                       });
    });
    app.post("/echo", [](skiff::request& req, skiff::response& res) { res.text(req.body()); });
    app.get("/ping", [](skiff::request&, skiff::response& res) { res.text("pong"); });
}

std::string put_head(const std::string& path, std::size_t length, const std::string& extra = "") {
    return "PUT " + path + " HTTP/1.1\r\nHost: t\r\nContent-Length: " + std::to_string(length) + "\r\n" + extra + "\r\n";
}

std::string chunked(const std::string& body, std::size_t piece) {
    std::string out;
    for (std::size_t at = 0; at < body.size(); at += piece) {
        std::string part = body.substr(at, piece);
        char size[32];
        std::snprintf(size, sizeof size, "%zx\r\n", part.size());
        out += size + part + "\r\n";
    }
    return out + "0\r\n\r\n";
}

template <class Pred>
bool eventually(Pred pred) {
    auto end = std::chrono::steady_clock::now() + 5s;
    while (!pred() && std::chrono::steady_clock::now() < end) std::this_thread::sleep_for(1ms);
    return pred();
}

} // namespace

TEST_CASE_TEMPLATE("upload: pieces arrive in order and sum to the body (Content-Length)", Policy, SKIFF_TEST_POLICIES) {
    auto s = std::make_shared<seen>();
    running_server<Policy> srv([&](auto& app) { routes(app, s); });
    client c(srv.port());
    std::string body = pattern_bytes(3 * 1024 * 1024 + 17);
    c.send(put_head("/sink", body.size()));
    for (std::size_t at = 0; at < body.size(); at += 100'000) c.send(body.substr(at, 100'000));
    auto r = read_responses(c, 1);
    REQUIRE(r.size() == 1);
    CHECK(r[0].status == 201);
    CHECK(r[0].body == std::to_string(body.size()) + " in order");
    CHECK(s->aborts == 0);
}

TEST_CASE_TEMPLATE("upload: a chunked body is decoded and streamed", Policy, SKIFF_TEST_POLICIES) {
    auto s = std::make_shared<seen>();
    running_server<Policy> srv([&](auto& app) { routes(app, s); });
    client c(srv.port());
    std::string body = pattern_bytes(500'000);
    std::string wire = chunked(body, 7'000);
    c.send("PUT /sink HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n");
    for (std::size_t at = 0; at < wire.size(); at += 4'093) c.send(wire.substr(at, 4'093));  // splits framing
    auto r = read_responses(c, 1);
    REQUIRE(r.size() == 1);
    CHECK(r[0].status == 201);
    CHECK(r[0].body == "500000 in order");
}

TEST_CASE_TEMPLATE("upload: a paused handler stops the read until resumed", Policy, SKIFF_TEST_POLICIES) {
    auto s = std::make_shared<seen>();
    running_server<Policy> srv([&](auto& app) { routes(app, s); });
    client c(srv.port());
    const std::size_t total = 16u * 1024 * 1024;  // far more than the socket buffers hold (a few MiB)
    std::atomic<std::size_t> sent{0};
    std::thread sender([&] {
        c.send(put_head("/pausing", total));
        std::string block = pattern_bytes(26 * 10'000);
        for (std::size_t at = 0; at < total; at += block.size()) {
            std::size_t n = std::min(block.size(), total - at);
            c.send(block.substr(0, n));
            sent += n;
        }
    });
    REQUIRE(eventually([&] { return s->paused == 1; }));
    std::this_thread::sleep_for(300ms);  // room for a server that kept reading to show it
    CHECK(s->bytes == 0);                // the paused piece was not taken, nor anything after it
    CHECK(sent < total);                 // so the client's send is blocked: the server stopped reading
    {
        std::lock_guard<std::mutex> g(s->lock);
        s->resumer.resume();
    }
    sender.join();
    auto r = read_responses(c, 1, 20'000ms);
    REQUIRE(r.size() == 1);
    CHECK(r[0].status == 201);
    CHECK(r[0].body == std::to_string(total) + " in order");
}

// A paused upload waits for its resume without holding a thread: with one worker, another
// client is answered meanwhile (under shared the worker used to wait for the resume itself,
// up to body_timeout), and the upload then completes.
TEST_CASE_TEMPLATE("upload: a paused upload holds no worker, so another client is served while it waits", Policy,
                   SKIFF_TEST_POLICIES) {
    auto s = std::make_shared<seen>();
    skiff::options opt;
    opt.workers = 1;
    running_server<Policy> srv([&](auto& app) { routes(app, s); }, opt);
    client uploader(srv.port());
    uploader.send(put_head("/pausing", 1000) + pattern_bytes(1000));
    REQUIRE(eventually([&] { return s->paused == 1; }));
    client other(srv.port());
    other.send("GET /ping HTTP/1.1\r\nHost: t\r\n\r\n");
    auto pong = read_responses(other, 1, 3'000ms);
    REQUIRE(pong.size() == 1);
    CHECK(pong[0].body == "pong");
    CHECK(s->bytes == 0);  // still paused
    {
        std::lock_guard<std::mutex> g(s->lock);
        s->resumer.resume();
    }
    auto r = read_responses(uploader, 1, 5'000ms);
    REQUIRE(r.size() == 1);
    CHECK(r[0].status == 201);
    CHECK(r[0].body == "1000 in order");
}

TEST_CASE_TEMPLATE("upload: 100 Continue is sent only when the route takes the body", Policy, SKIFF_TEST_POLICIES) {
    auto s = std::make_shared<seen>();
    running_server<Policy> srv([&](auto& app) { routes(app, s); });
    SUBCASE("taken") {
        client c(srv.port());
        c.send(put_head("/sink", 52, "Expect: 100-continue\r\n"));
        std::string interim = c.read_until([](const std::string& got) { return got.find("\r\n\r\n") != std::string::npos; });
        CHECK(interim == "HTTP/1.1 100 Continue\r\n\r\n");
        c.send(pattern_bytes(52));
        auto r = read_responses(c, 1);
        REQUIRE(r.size() == 1);
        CHECK(r[0].body == "52 in order");
    }
    SUBCASE("too large for the route: 413, no 100") {
        client c(srv.port());
        c.send(put_head("/small", 5000, "Expect: 100-continue\r\n"));
        std::string got = c.read_to_close();
        CHECK(got.rfind("HTTP/1.1 413", 0) == 0);
        CHECK(got.find("100 Continue") == std::string::npos);
    }
    SUBCASE("refused early: no 100, and the connection closes") {
        client c(srv.port());
        c.send(put_head("/deny", 52, "Expect: 100-continue\r\n"));
        std::string got = c.read_to_close();
        CHECK(got.rfind("HTTP/1.1 403", 0) == 0);
        CHECK(got.find("100 Continue") == std::string::npos);
        CHECK(got.find("Connection: close") != std::string::npos);
    }
}

TEST_CASE_TEMPLATE("upload: an early answer drops a small body and keeps the connection", Policy, SKIFF_TEST_POLICIES) {
    auto s = std::make_shared<seen>();
    running_server<Policy> srv([&](auto& app) { routes(app, s); });
    client c(srv.port());
    c.send(put_head("/deny", 5000) + pattern_bytes(5000) + "GET /ping HTTP/1.1\r\nHost: t\r\n\r\n");
    auto r = read_responses(c, 2);
    REQUIRE(r.size() == 2);
    CHECK(r[0].status == 403);
    CHECK(r[1].body == "pong");
}

TEST_CASE_TEMPLATE("upload: an early answer to a large body closes after it", Policy, SKIFF_TEST_POLICIES) {
    auto s = std::make_shared<seen>();
    running_server<Policy> srv([&](auto& app) { routes(app, s); });
    client c(srv.port());
    c.send(put_head("/deny", 10'000'000) + pattern_bytes(100'000));
    std::string got = c.read_until([](const std::string& all) { return all.find("no\n") != std::string::npos; });
    CHECK(got.rfind("HTTP/1.1 403", 0) == 0);
    CHECK(got.find("Connection: close") != std::string::npos);
}

TEST_CASE_TEMPLATE("upload: max_body answers 413 and aborts", Policy, SKIFF_TEST_POLICIES) {
    auto s = std::make_shared<seen>();
    running_server<Policy> srv([&](auto& app) { routes(app, s); });
    SUBCASE("declared") {
        client c(srv.port());
        c.send(put_head("/small", 1001));
        auto r = read_responses(c, 1);
        REQUIRE(r.size() == 1);
        CHECK(r[0].status == 413);
        CHECK(s->bytes == 0);
        CHECK(eventually([&] { return s->aborts == 1; }));
    }
    SUBCASE("chunked, passing it on the way") {
        client c(srv.port());
        c.send("PUT /small HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(pattern_bytes(3000), 600));
        auto r = read_responses(c, 1);
        REQUIRE(r.size() == 1);
        CHECK(r[0].status == 413);
        CHECK(s->bytes <= 1000);
        CHECK(eventually([&] { return s->aborts == 1; }));
    }
    SUBCASE("exactly max_body is taken") {
        client c(srv.port());
        c.send(put_head("/small", 1000) + pattern_bytes(1000));
        auto r = read_responses(c, 1);
        REQUIRE(r.size() == 1);
        CHECK(r[0].body == "1000 in order");
        CHECK(s->aborts == 0);
    }
}

TEST_CASE_TEMPLATE("upload: bad chunked framing answers 400 and aborts", Policy, SKIFF_TEST_POLICIES) {
    auto s = std::make_shared<seen>();
    running_server<Policy> srv([&](auto& app) { routes(app, s); });
    client c(srv.port());
    c.send("PUT /sink HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabcde\r\nzz\r\n");
    std::string got = c.read_to_close();
    CHECK(got.rfind("HTTP/1.1 400", 0) == 0);
    CHECK(eventually([&] { return s->aborts == 1; }));
}

TEST_CASE_TEMPLATE("upload: a client that goes mid-body calls on_abort", Policy, SKIFF_TEST_POLICIES) {
    auto s = std::make_shared<seen>();
    running_server<Policy> srv([&](auto& app) { routes(app, s); });
    {
        client c(srv.port());
        c.send(put_head("/sink", 1'000'000) + pattern_bytes(10'000));
        REQUIRE(eventually([&] { return s->bytes == 10'000; }));
    }
    CHECK(eventually([&] { return s->aborts == 1; }));
}

TEST_CASE_TEMPLATE("upload: requests pipelined behind an upload are answered in order", Policy, SKIFF_TEST_POLICIES) {
    auto s = std::make_shared<seen>();
    running_server<Policy> srv([&](auto& app) { routes(app, s); });
    client c(srv.port());
    std::string get = "GET /ping HTTP/1.1\r\nHost: t\r\n\r\n";
    c.send(get + put_head("/sink", 2000) + pattern_bytes(2000) + get + "PUT /sink HTTP/1.1\r\nHost: t\r\n"
           "Transfer-Encoding: chunked\r\n\r\n" + chunked(pattern_bytes(300), 100) + get);
    auto r = read_responses(c, 5);
    REQUIRE(r.size() == 5);
    CHECK(r[0].body == "pong");
    CHECK(r[1].body == "2000 in order");
    CHECK(r[2].body == "pong");
    CHECK(r[3].body == "300 in order");
    CHECK(r[4].body == "pong");
}

TEST_CASE_TEMPLATE("upload: other routes still buffer their bodies, within max_body", Policy, SKIFF_TEST_POLICIES) {
    auto s = std::make_shared<seen>();
    skiff::options opt;
    opt.max_body = 1000;
    running_server<Policy> srv([&](auto& app) { routes(app, s); }, opt);
    client c(srv.port());
    c.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello");
    auto r = read_responses(c, 1);
    REQUIRE(r.size() == 1);
    CHECK(r[0].body == "hello");
    c.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1001\r\n\r\n");
    r = read_responses(c, 1);
    REQUIRE(r.size() == 1);
    CHECK(r[0].status == 413);
    client big(srv.port());  // a streamed route is not bound by options::max_body
    std::string body = pattern_bytes(5000);
    big.send(put_head("/sink", body.size()) + body);
    r = read_responses(big, 1);
    REQUIRE(r.size() == 1);
    CHECK(r[0].body == "5000 in order");
}

TEST_CASE_TEMPLATE("upload: a bodiless request runs the route at once", Policy, SKIFF_TEST_POLICIES) {
    auto s = std::make_shared<seen>();
    running_server<Policy> srv([&](auto& app) { routes(app, s); });
    client c(srv.port());
    c.send(put_head("/sink", 0));
    auto r = read_responses(c, 1);
    REQUIRE(r.size() == 1);
    CHECK(r[0].body == "0 in order");
}

TEST_CASE_TEMPLATE("upload: a streamed body is not held against max_buffered", Policy, SKIFF_TEST_POLICIES) {
    auto s = std::make_shared<seen>();
    skiff::options opt;
    opt.max_buffered = 128 * 1024;  // far less than the body
    running_server<Policy> srv([&](auto& app) { routes(app, s); }, opt);
    client c(srv.port());
    std::string body = pattern_bytes(4 * 1024 * 1024);
    c.send(put_head("/sink", body.size()));
    for (std::size_t at = 0; at < body.size(); at += 1 << 20) c.send(body.substr(at, 1 << 20));
    auto r = read_responses(c, 1, 10'000ms);
    REQUIRE(r.size() == 1);
    CHECK(r[0].body == std::to_string(body.size()) + " in order");
}

TEST_CASE_TEMPLATE("upload: multipart_upload feeds the pieces to the multipart parser", Policy, SKIFF_TEST_POLICIES) {
    auto s = std::make_shared<seen>();
    running_server<Policy> srv([&](auto& app) { routes(app, s); });
    std::string file = pattern_bytes(300'000);
    std::string form = "--xyz\r\nContent-Disposition: form-data; name=\"field\"\r\n\r\nvalue\r\n"
                       "--xyz\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.bin\"\r\n\r\n" +
                       file + "\r\n--xyz--\r\n";
    std::string head = "POST /form HTTP/1.1\r\nHost: t\r\nContent-Type: multipart/form-data; boundary=xyz\r\n";
    SUBCASE("complete") {
        client c(srv.port());
        c.send(head + "Content-Length: " + std::to_string(form.size()) + "\r\n\r\n");
        for (std::size_t at = 0; at < form.size(); at += 7'777) c.send(form.substr(at, 7'777));
        auto r = read_responses(c, 1);
        REQUIRE(r.size() == 1);
        CHECK(r[0].body == "field=5;f=300000;");
    }
    SUBCASE("cut before the close delimiter: 400") {
        client c(srv.port());
        std::string cut = form.substr(0, form.size() - 9);
        c.send(head + "Content-Length: " + std::to_string(cut.size()) + "\r\n\r\n" + cut);
        auto r = read_responses(c, 1);
        REQUIRE(r.size() == 1);
        CHECK(r[0].status == 400);
    }
}

namespace {

// Middleware that sets a field before next() (as request_id() does) and one after it, in
// front of upload routes whose on_end answers directly or defers.
template <class Policy>
void marked_upload_routes(skiff::basic_server<Policy>& app) {
    app.use([](skiff::request&, skiff::response& res, const skiff::next& next) {
        res.header("X-Before", "mw");
        next();
        res.header("X-After", "mw");
    });
    auto counting = [](auto answer) {
        skiff::upload u;
        auto size = std::make_shared<std::size_t>(0);
        u.on_piece = [size](std::string_view p) {
            *size += p.size();
            return skiff::piece_status::taken;
        };
        u.on_end = [size, answer](skiff::response& res) { answer(res, *size); };
        return u;
    };
    app.upload("PUT", "/direct", [counting](skiff::request&, skiff::response&) {
        return counting([](skiff::response& res, std::size_t n) { res.status(201).header("X-End", "e").text(std::to_string(n)); });
    });
    app.upload("PUT", "/deferred", [counting](skiff::request&, skiff::response&) {
        return counting([](skiff::response& res, std::size_t n) {
            res.header("X-End", "e");
            std::thread([later = res.defer(), n]() mutable { later.status(201).text(std::to_string(n)); }).detach();
        });
    });
}

} // namespace

TEST_CASE_TEMPLATE("upload: the fields middleware sets lead on_end's answer, direct or deferred, after 100 Continue",
                   Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(marked_upload_routes<Policy>);
    const std::string answer = "HTTP/1.1 201 Created\r\nDate: <date>\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n"
                               "X-Before: mw\r\nX-After: mw\r\nX-End: e\r\n\r\n52";
    for (const char* path : {"/direct", "/deferred"}) {
        CAPTURE(path);
        client c(srv.port());
        c.send(put_head(path, 52) + pattern_bytes(52));
        std::string expected = answer;
        auto masked = [&](const std::string& s) { return mask_date(s).size() >= expected.size(); };
        CHECK(mask_date(c.read_until(masked)) == expected);
        c.send(put_head(path, 52, "Expect: 100-continue\r\n"));  // the interim comes before the held fields
        expected = "HTTP/1.1 100 Continue\r\n\r\n";
        CHECK(c.read_until(masked) == expected);
        c.send(pattern_bytes(52));
        expected = answer;
        CHECK(mask_date(c.read_until(masked)) == expected);
    }
}
