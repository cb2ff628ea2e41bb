// Deferred answers (response::defer), push streams and the loop's services, as a client and a
// handler author see them: answers from other threads, in request order, exactly once; the
// server's 500 for a dropped handle and 503 at the deadline; handles whose connection went;
// push streams with their bound; run-on-loop, timers and watched descriptors.
#include <skiff/testing.hpp>

#include "support/dechunk.hpp"
#include "support/loopback.hpp"
#include "support/parked.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using namespace skiff_test;

namespace {

// GET /wait parks its handle in `waiting`; GET /n/:n answers n at once.
template <class Policy>
std::function<void(skiff::basic_server<Policy>&)> wait_and_number_routes(parked& waiting) {
    return [&waiting](skiff::basic_server<Policy>& app) {
        app.get("/wait", [&waiting](skiff::request&, skiff::response& res) { waiting.put(res.defer()); });
        app.get("/n/:n", [](skiff::request& req, skiff::response& res) { res.text(req.param("n")); });
    };
}

std::string request(const std::string& path, const char* method = "GET") {
    return std::string(method) + " " + path + " HTTP/1.1\r\nHost: x\r\n\r\n";
}

} // namespace

TEST_CASE_TEMPLATE("an answer completed on another thread is written with its status, fields and body", Policy,
                   SKIFF_TEST_POLICIES) {
    running_server<Policy> srv([](skiff::basic_server<Policy>& app) {
        app.get("/later", [](skiff::request&, skiff::response& res) {
            std::thread([later = res.defer()]() mutable {
                std::this_thread::sleep_for(20ms);
                later.status(201).header("X-From", "worker").json(R"({"ok":true})");
            }).detach();
        });
    });
    client c(srv.port());
    c.send(request("/later"));
    auto rs = read_responses(c, 1);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == 201);
    CHECK(rs[0].header("X-From") == "worker");
    CHECK(rs[0].header("Content-Type") == "application/json");
    CHECK(rs[0].body == R"({"ok":true})");
    c.send(request("/later"));  // the connection goes on
    CHECK(read_responses(c, 1).size() == 1);
}

TEST_CASE_TEMPLATE("pipelined requests behind a deferred one are answered after it, in order", Policy,
                   SKIFF_TEST_POLICIES) {
    parked waiting;
    running_server<Policy> srv(wait_and_number_routes<Policy>(waiting));
    client c(srv.port());
    c.send(request("/n/1") + request("/wait") + request("/n/2") + request("/n/3"));
    auto first = read_responses(c, 1);
    REQUIRE(first.size() == 1);
    CHECK(first[0].body == "1");
    auto handles = waiting.take(1);
    REQUIRE(handles.size() == 1);
    CHECK(c.read_some(200ms).empty());  // nothing overtakes the deferred answer
    handles[0]->text("deferred");
    auto rest = read_responses(c, 3);
    REQUIRE(rest.size() == 3);
    CHECK(rest[0].body == "deferred");
    CHECK(rest[1].body == "2");
    CHECK(rest[2].body == "3");
}

TEST_CASE_TEMPLATE("a request pipelined behind a deferred one does not tell its handler the client went", Policy,
                   SKIFF_TEST_POLICIES) {
    parked waiting;
    running_server<Policy> srv(wait_and_number_routes<Policy>(waiting));
    client c(srv.port());
    c.send(request("/wait"));
    auto handles = waiting.take(1);
    REQUIRE(handles.size() == 1);
    c.send(request("/n/2"));  // arrives while the answer is awaited
    std::this_thread::sleep_for(200ms);
    CHECK_FALSE(handles[0]->cancelled());
    handles[0]->text("deferred");
    auto rs = read_responses(c, 2);
    REQUIRE(rs.size() == 2);
    CHECK(rs[0].body == "deferred");
    CHECK(rs[1].body == "2");
}

TEST_CASE_TEMPLATE("a pool answering out of order, with clients that left, answers each the right body", Policy,
                   SKIFF_TEST_POLICIES) {
    parked waiting;
    running_server<Policy> srv([&](skiff::basic_server<Policy>& app) {
        app.get("/job/:n", [&](skiff::request& req, skiff::response& res) {
            std::string n(req.param("n"));
            auto later = res.defer();
            later.header("X-Job", n);
            waiting.put(std::move(later));
        });
        app.get("/", [](skiff::request&, skiff::response& res) { res.text("up"); });
    });
    const int n = 24;
    std::vector<std::unique_ptr<client>> clients;
    for (int i = 0; i < n; ++i) {
        clients.push_back(std::make_unique<client>(srv.port()));
        clients.back()->send(request("/job/" + std::to_string(i)));
    }
    auto handles = waiting.take(n);
    REQUIRE(handles.size() == static_cast<std::size_t>(n));
    for (int i = 0; i < n; i += 3) clients[static_cast<std::size_t>(i)].reset();  // gone before their answers
    // Four threads complete in reverse order of arrival; each handle learns its job from
    // the field it carries, so it answers with the job's own number.
    std::vector<std::thread> pool;
    for (int t = 0; t < 4; ++t) {
        pool.emplace_back([&, t] {
            for (int i = n - 1 - t; i >= 0; i -= 4) handles[static_cast<std::size_t>(i)]->text("job");
        });
    }
    for (auto& t : pool) t.join();
    for (int i = 0; i < n; ++i) {
        if (!clients[static_cast<std::size_t>(i)]) continue;
        auto rs = read_responses(*clients[static_cast<std::size_t>(i)], 1);
        REQUIRE(rs.size() == 1);
        CHECK(rs[0].header("X-Job") == std::to_string(i));
    }
    client after(srv.port());  // recycled slots serve new clients normally
    after.send(request("/"));
    auto rs = read_responses(after, 1);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].body == "up");
}

TEST_CASE_TEMPLATE("an answer is written once: a second completion is dropped", Policy, SKIFF_TEST_POLICIES) {
    parked waiting;
    running_server<Policy> srv([&](skiff::basic_server<Policy>& app) {
        app.get("/wait", [&](skiff::request&, skiff::response& res) { waiting.put(res.defer()); });
    });
    client c(srv.port());
    c.send(request("/wait"));
    auto handles = waiting.take(1);
    REQUIRE(handles.size() == 1);
    CHECK(handles[0]->text("first"));
    CHECK_FALSE(handles[0]->text("second"));
    auto rs = read_responses(c, 2, 500ms);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].body == "first");
}

TEST_CASE_TEMPLATE("a handle dropped without an answer answers 500", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv([](skiff::basic_server<Policy>& app) {
        app.get("/drop", [](skiff::request&, skiff::response& res) { (void)res.defer(); });
    });
    client c(srv.port());
    c.send(request("/drop"));
    auto rs = read_responses(c, 1);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == 500);
}

// A client that half-closes after its request is taken for gone (as nginx and Go take it), so
// work that sees cancelled() and stops must not be answered as if it had run: no 500 for the
// dropped handle, no 200 from a pool that skipped it; the connection just closes.
TEST_CASE_TEMPLATE("work dropped once its half-closed client is taken for gone answers nothing", Policy,
                   SKIFF_TEST_POLICIES) {
    parked waiting;
    skiff::blocking_pool pool(1);
    running_server<Policy> srv([&](skiff::basic_server<Policy>& app) {
        app.get("/wait", [&](skiff::request&, skiff::response& res) { waiting.put(res.defer()); });
        app.get("/pool", [&](skiff::request&, skiff::response& res) {
            pool.run(res.defer(), [](skiff::deferred& later) { later.text("ran"); });
        });
    });
    for (const char* path : {"/wait", "/pool"}) {
        CAPTURE(path);
        std::atomic<bool> release{false};  // holds /pool's only thread, so its task waits
        if (std::string(path) == "/pool")
            REQUIRE(pool.submit([&release] {
                        while (!release.load()) std::this_thread::sleep_for(2ms);
                    }) == skiff::pool_status::queued);
        client c(srv.port());
        c.send(request(path));
        if (std::string(path) == "/wait") {
            auto handles = waiting.take(1);
            REQUIRE(handles.size() == 1);
            c.shutdown_write();
            auto until = std::chrono::steady_clock::now() + 3s;
            while (!handles[0]->cancelled() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(5ms);
            CHECK(handles[0]->cancelled());
            handles.clear();  // dropped: as a handler does on `if (later.cancelled()) return;`
        } else {
            std::this_thread::sleep_for(100ms);  // the task is queued behind the gate
            c.shutdown_write();
            std::this_thread::sleep_for(300ms);  // the server reads the end: cancelled
            release = true;
        }
        CHECK(c.read_to_close() == "");
        CHECK(c.closed());
    }
}

// Under shared the connection belongs to the hub while it waits, which watches its socket.
TEST_CASE_TEMPLATE("a handler learns that its client went", Policy, SKIFF_TEST_POLICIES) {
    parked waiting;
    running_server<Policy> srv([&](skiff::basic_server<Policy>& app) {
        app.get("/wait", [&](skiff::request&, skiff::response& res) { waiting.put(res.defer()); });
    });
    auto c = std::make_unique<client>(srv.port());
    c->send(request("/wait"));
    auto handles = waiting.take(1);
    REQUIRE(handles.size() == 1);
    CHECK_FALSE(handles[0]->cancelled());
    c.reset();
    auto until = std::chrono::steady_clock::now() + 3s;
    while (!handles[0]->cancelled() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(5ms);
    CHECK(handles[0]->cancelled());
    handles[0]->text("nobody reads this");  // a no-op, not a write to a closed or reused slot
}

TEST_CASE_TEMPLATE("a handler learns that its client reset the connection, and the server serves on", Policy,
                   SKIFF_TEST_POLICIES) {
    parked waiting;
    running_server<Policy> srv([&](skiff::basic_server<Policy>& app) {
        app.get("/wait", [&](skiff::request&, skiff::response& res) { waiting.put(res.defer()); });
        app.get("/", [](skiff::request&, skiff::response& res) { res.text("up"); });
    });
    auto c = std::make_unique<client>(srv.port());
    c->send(request("/wait"));
    auto handles = waiting.take(1);
    REQUIRE(handles.size() == 1);
    linger abort{1, 0};
    ::setsockopt(c->fd(), SOL_SOCKET, SO_LINGER, &abort, sizeof abort);
    c.reset();
    auto until = std::chrono::steady_clock::now() + 3s;
    while (!handles[0]->cancelled() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(5ms);
    CHECK(handles[0]->cancelled());
    handles[0]->text("nobody reads this");  // a no-op: its connection is gone
    client other(srv.port());
    other.send(request("/"));
    auto rs = read_responses(other, 1);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].body == "up");
}

TEST_CASE("a handle that outlives its server completes as a no-op") {
    parked waiting;
    std::shared_ptr<skiff::deferred> kept;
    {
        running_server<skiff::single> srv([&](skiff::basic_server<skiff::single>& app) {
            app.get("/wait", [&](skiff::request&, skiff::response& res) { waiting.put(res.defer()); });
        }, [] {
            skiff::options o;
            o.stop_timeout = 100ms;
            return o;
        }());
        client c(srv.port());
        c.send(request("/wait"));
        auto handles = waiting.take(1);
        REQUIRE(handles.size() == 1);
        kept = handles[0];
    }
    CHECK_FALSE(kept->text("after the server"));  // its loop is gone: dropped
}

TEST_CASE_TEMPLATE("HEAD on a deferred route gets the head only", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv([](skiff::basic_server<Policy>& app) {
        app.get("/later", [](skiff::request&, skiff::response& res) { res.defer().text("twelve bytes"); });
    });
    client c(srv.port());
    c.send(request("/later", "HEAD") + request("/later"));
    std::string all = c.read_until([](const std::string& s) { return s.find("twelve bytes") != std::string::npos; });
    auto heads = parse_responses(all, true);
    REQUIRE(heads.size() >= 1);
    CHECK(heads[0].header("Content-Length") == "12");
    CHECK(all.find("twelve bytes") == all.rfind("twelve bytes"));  // one body: the GET's
}

TEST_CASE_TEMPLATE("a push stream is chunked, ends with its close, and requests behind it follow", Policy,
                   SKIFF_TEST_POLICIES) {
    running_server<Policy> srv([](skiff::basic_server<Policy>& app) {
        app.get("/push", [](skiff::request&, skiff::response& res) {
            std::thread([later = res.defer()]() mutable {
                skiff::push_stream s = later.stream("text/plain");
                for (const char* piece : {"one ", "two ", "three"}) {
                    CHECK(s.write(piece) == skiff::push_status::accepted);
                    std::this_thread::sleep_for(10ms);
                }
                s.close();
            }).detach();
        });
        app.get("/n/:n", [](skiff::request& req, skiff::response& res) { res.text(req.param("n")); });
    });
    client c(srv.port());
    c.send(request("/push") + request("/n/9"));
    std::string all = c.read_until([](const std::string& s) { return s.find("\r\n\r\n9") != std::string::npos; });
    std::size_t head_end = all.find("\r\n\r\n");
    REQUIRE(head_end != std::string::npos);
    CHECK(all.substr(0, head_end).find("Transfer-Encoding: chunked") != std::string::npos);
    std::size_t next = all.find("HTTP/1.1 200", head_end);
    REQUIRE(next != std::string::npos);
    std::string body;
    CHECK(dechunk(all.substr(head_end + 4, next - head_end - 4), body));
    CHECK(body == "one two three");
}

TEST_CASE_TEMPLATE("a push stream to a client that does not read says backlogged, then closes at its bound", Policy,
                   SKIFF_TEST_POLICIES) {
    skiff::options opt;
    opt.max_push_buffer = 256 * 1024;
    opt.write_high_water = 32 * 1024;
    parked waiting;
    running_server<Policy> srv([&](skiff::basic_server<Policy>& app) {
        app.get("/flood", [&](skiff::request&, skiff::response& res) { waiting.put(res.defer()); });
        app.get("/", [](skiff::request&, skiff::response& res) { res.text("up"); });
    }, opt);
    client c(srv.port());
    int small = 4096;
    ::setsockopt(c.fd(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    c.send(request("/flood"));
    auto handles = waiting.take(1);
    REQUIRE(handles.size() == 1);
    skiff::push_stream s = handles[0]->stream("application/octet-stream");
    std::string piece(8192, 'x');
    bool saw_backlog = false;
    skiff::push_status st = skiff::push_status::accepted;
    std::size_t written = 0;
    for (int i = 0; i < 100000 && st != skiff::push_status::closed; ++i) {
        st = s.write(piece);
        if (st == skiff::push_status::backlogged) saw_backlog = true;
        if (st != skiff::push_status::closed) written += piece.size();
        if (i % 16 == 0) std::this_thread::sleep_for(1ms);  // let the loop write what it can
    }
    CHECK(saw_backlog);
    CHECK(st == skiff::push_status::closed);
    CHECK(written < 64u << 20);  // closed at its bound, not after taking everything
    client other(srv.port());  // and the server goes on
    other.send(request("/"));
    auto rs = read_responses(other, 1);
    std::string seen;
    for (auto& r : rs) seen += r.head + r.body + "\n---\n";
    INFO("other received:\n", seen);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].body == "up");
}

// What a subscriber has not taken waits in the stream's buffer, where max_push_buffer and the
// memory budget count it, not megabytes deep in the kernel (options::push_socket_buffer).
TEST_CASE_TEMPLATE("a push stream to a client that does not read leaves little in the kernel", Policy,
                   SKIFF_TEST_POLICIES) {
    skiff::options opt;
    opt.max_push_buffer = std::size_t{16} << 20;
    opt.write_high_water = std::size_t{16} << 20;
    parked waiting;
    running_server<Policy> srv([&](skiff::basic_server<Policy>& app) {
        app.get("/flood", [&](skiff::request&, skiff::response& res) { waiting.put(res.defer()); });
    }, opt);
    client c(srv.port());
    int small = 4096;
    ::setsockopt(c.fd(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    c.send(request("/flood"));
    auto handles = waiting.take(1);
    REQUIRE(handles.size() == 1);
    skiff::push_stream s = handles[0]->stream("application/octet-stream");
    std::string piece(8192, 'x');
    std::size_t written = 0;
    for (int i = 0; i < 1024; ++i) {  // 8 MiB, in steps the loop writes out as far as it can
        REQUIRE(s.write(piece) != skiff::push_status::closed);
        written += piece.size();
        if (i % 8 == 7) std::this_thread::sleep_for(1ms);
    }
    std::size_t held = s.buffered();  // settled once the loop has taken every write in
    for (int i = 0; i < 200; ++i) {
        std::this_thread::sleep_for(20ms);
        std::size_t now = s.buffered();
        if (now == held) break;
        held = now;
    }
    std::size_t in_kernel = written - held;
    INFO("bytes the kernel took: ", in_kernel);
    CHECK(in_kernel <= 4 * opt.push_socket_buffer);  // Linux doubles SO_SNDBUF; a segment over
}

TEST_CASE_TEMPLATE("a stream that passes its bound before its head is written leaves nothing for the next client",
                   Policy, SKIFF_TEST_POLICIES) {
    skiff::options opt;
    opt.max_push_buffer = 1024;
    running_server<Policy> srv([&](skiff::basic_server<Policy>& app) {
        app.get("/flood", [](skiff::request&, skiff::response& res) {
            // On the loop's own thread: the loop applies the answer only after the handler
            // returns, by when the producer has already passed the bound.
            skiff::push_stream s = res.defer().stream("application/octet-stream");
            CHECK(s.write(std::string(4096, 'x')) == skiff::push_status::closed);
        });
        app.get("/", [](skiff::request&, skiff::response& res) { res.text("up"); });
    }, opt);
    client flood(srv.port());
    flood.send(request("/flood"));
    CHECK(flood.read_to_close().empty());  // closed before anything of it left
    CHECK(flood.closed());
    for (int i = 0; i < 4; ++i) {
        client other(srv.port());
        other.send(request("/"));
        auto rs = read_responses(other, 1);
        REQUIRE(rs.size() == 1);
        CHECK(rs[0].body == "up");
        CHECK(other.read_some(50ms).empty());
    }
}

TEST_CASE_TEMPLATE("server-sent events arrive as event-stream lines", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv([](skiff::basic_server<Policy>& app) {
        app.get("/events", [](skiff::request&, skiff::response& res) {
            skiff::sse_stream events = res.defer().events();
            events.retry(1500ms);
            events.send("a\nb", "tick", "7");
            events.comment("keep-alive");
            events.close();
        });
    });
    client c(srv.port());
    c.send(request("/events"));
    std::string all = c.read_until([](const std::string& s) { return s.find("0\r\n\r\n") != std::string::npos; });
    std::size_t head_end = all.find("\r\n\r\n");
    REQUIRE(head_end != std::string::npos);
    CHECK(all.substr(0, head_end).find("Content-Type: text/event-stream") != std::string::npos);
    CHECK(all.substr(0, head_end).find("Cache-Control: no-cache") != std::string::npos);
    std::string body;
    CHECK(dechunk(all.substr(head_end + 4), body));
    CHECK(body == "retry: 1500\n\nevent: tick\nid: 7\ndata: a\ndata: b\n\n: keep-alive\n\n");
}

TEST_CASE_TEMPLATE("a loop runs posted functions, timers and watch callbacks", Policy, SKIFF_TEST_POLICIES) {
    std::mutex lock;
    std::condition_variable changed;
    int posted = 0, once = 0, repeated = 0, watched = 0;
    auto bump = [&](int& n) {
        std::lock_guard<std::mutex> g(lock);
        ++n;
        changed.notify_all();
    };
    auto wait_for = [&](const int& n, int at_least) {
        std::unique_lock<std::mutex> g(lock);
        return changed.wait_for(g, 3s, [&] { return n >= at_least; });
    };
    // loop() before run(): under single the first call starts the loop's services.
    skiff::options opt;
    opt.workers = 2;
    skiff::basic_server<Policy> app(opt);
    REQUIRE_FALSE(app.listen(0));
    skiff::loop_ref loop = app.loop();
    std::thread runner([&] { app.run(); });
    REQUIRE(static_cast<bool>(loop));
    std::thread([&] { CHECK(loop.post([&] { bump(posted); })); }).join();
    CHECK(wait_for(posted, 1));
    loop.after(20ms, [&] { bump(once); });
    skiff::timer_id every = loop.every(10ms, [&] { bump(repeated); });
    CHECK(wait_for(repeated, 3));
    loop.cancel(every);
    CHECK(wait_for(once, 1));
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    skiff::watch_id w = loop.watch(fds[0], [&, fd = fds[0]] {
        char buf[16];
        if (::read(fd, buf, sizeof buf) > 0) bump(watched);
    });
    std::this_thread::sleep_for(20ms);
    CHECK(::write(fds[1], "x", 1) == 1);
    CHECK(wait_for(watched, 1));
    loop.unwatch(w);
    std::this_thread::sleep_for(50ms);
    int after_cancel;
    {
        std::lock_guard<std::mutex> g(lock);
        after_cancel = repeated;
    }
    std::this_thread::sleep_for(60ms);
    {
        std::lock_guard<std::mutex> g(lock);
        CHECK(repeated == after_cancel);  // cancelled: no more ticks
        CHECK(once == 1);
    }
    app.stop();
    runner.join();
    ::close(fds[0]);
    ::close(fds[1]);
}

namespace {

// What a push stream's on_writable callback heard, for the test thread to wait on. Shared with
// the callback, which the loop may still hold after the test's own handles are gone.
class writable_log {
public:
    static std::function<void(skiff::push_status)> callback(const std::shared_ptr<writable_log>& log) {
        return [log](skiff::push_status st) {
            std::lock_guard<std::mutex> g(log->lock_);
            ++(st == skiff::push_status::closed ? log->closed_ : log->writable_);
            log->changed_.notify_all();
        };
    }
    int writable() {
        std::lock_guard<std::mutex> g(lock_);
        return writable_;
    }
    int closed() {
        std::lock_guard<std::mutex> g(lock_);
        return closed_;
    }
    bool wait_closed(std::chrono::milliseconds limit) {
        std::unique_lock<std::mutex> g(lock_);
        return changed_.wait_for(g, limit, [&] { return closed_ > 0; });
    }

private:
    std::mutex lock_;
    std::condition_variable changed_;
    int writable_ = 0;
    int closed_ = 0;
};

skiff::options slow_reader_options() {
    skiff::options opt;
    opt.write_high_water = 32 * 1024;
    opt.max_push_buffer = std::size_t{64} << 20;
    return opt;
}

// Writes until the server holds a backlog for the client that stays: more than both kernels
// between them can still take (the server's push_socket_buffer and the client's receive
// buffer, each doubled by Linux), so that nothing drains below write_high_water until the
// client reads. True when that happened before the stream closed.
bool fill_until_backlogged(skiff::push_stream& s, std::size_t high_water) {
    const std::size_t beyond_kernels = high_water + (std::size_t{1} << 20);
    std::string piece(8192, 'x');
    for (int i = 0; i < 20000 && s.buffered() <= beyond_kernels; ++i) {
        if (s.write(piece) == skiff::push_status::closed) return false;
        if (i % 16 == 15) std::this_thread::sleep_for(1ms);  // the loop writes what the socket takes
    }
    std::this_thread::sleep_for(50ms);
    return s.buffered() > high_water && !s.closed();
}

// A client whose receive buffer does not grow, so that the server's writes to it soon stay
// parked. Not much smaller: below a segment's worth (64 KiB on loopback) the client's kernel
// holds back its window updates, and the server's then trickle out on its probe timer.
client slow_reader(std::uint16_t port) {
    client c(port);
    int small = 64 * 1024;
    ::setsockopt(c.fd(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    return c;
}

} // namespace

TEST_CASE_TEMPLATE("a push stream's on_writable hears when a slow reader has caught up, then that it ended", Policy,
                   SKIFF_TEST_POLICIES) {
    skiff::options opt = slow_reader_options();
    parked waiting;
    running_server<Policy> srv([&](skiff::basic_server<Policy>& app) {
        app.get("/stream", [&](skiff::request&, skiff::response& res) { waiting.put(res.defer()); });
    }, opt);
    client c = slow_reader(srv.port());
    c.send(request("/stream"));
    auto handles = waiting.take(1);
    REQUIRE(handles.size() == 1);
    auto log = std::make_shared<writable_log>();
    skiff::push_stream s = handles[0]->stream("application/octet-stream");
    REQUIRE(s.on_writable(writable_log::callback(log)));
    REQUIRE(fill_until_backlogged(s, opt.write_high_water));
    int before = log->writable();  // a backlog the loop passed on quickly may have been told already
    std::this_thread::sleep_for(200ms);
    CHECK(log->writable() == before);  // the client has read nothing more: nothing drained
    auto until = std::chrono::steady_clock::now() + 10s;
    while (log->writable() == before && std::chrono::steady_clock::now() < until) (void)c.read_some(20ms);
    CHECK(log->writable() == before + 1);  // once, after the client read
    CHECK(s.buffered() <= opt.write_high_water / 2);
    CHECK(log->closed() == 0);
    CHECK(s.write("end") != skiff::push_status::closed);
    s.close();
    std::string rest = c.read_until([](const std::string& got) { return got.find("end\r\n0\r\n\r\n") != std::string::npos; },
                                    10s);
    CHECK(rest.find("end\r\n0\r\n\r\n") != std::string::npos);
    CHECK(log->wait_closed(3s));  // the stream ended: told once, so the producer can let go
    std::this_thread::sleep_for(50ms);
    CHECK(log->closed() == 1);
}

TEST_CASE_TEMPLATE("a push stream's on_writable hears exactly once that its client vanished", Policy,
                   SKIFF_TEST_POLICIES) {
    skiff::options opt = slow_reader_options();
    parked waiting;
    running_server<Policy> srv([&](skiff::basic_server<Policy>& app) {
        app.get("/stream", [&](skiff::request&, skiff::response& res) { waiting.put(res.defer()); });
        app.get("/", [](skiff::request&, skiff::response& res) { res.text("up"); });
    }, opt);
    auto c = std::make_unique<client>(slow_reader(srv.port()));
    c->send(request("/stream"));
    auto handles = waiting.take(1);
    REQUIRE(handles.size() == 1);
    auto log = std::make_shared<writable_log>();
    skiff::push_stream s = handles[0]->stream("application/octet-stream");
    REQUIRE(s.on_writable(writable_log::callback(log)));
    REQUIRE(fill_until_backlogged(s, opt.write_high_water));
    linger abort{1, 0};  // a reset, as a client that crashed or lost its network
    ::setsockopt(c->fd(), SOL_SOCKET, SO_LINGER, &abort, sizeof abort);
    c.reset();
    CHECK(log->wait_closed(5s));
    CHECK(s.write("more") == skiff::push_status::closed);
    CHECK(s.closed());
    s.close();  // the producer's own close after that tells nothing more
    std::this_thread::sleep_for(100ms);
    CHECK(log->closed() == 1);
    CHECK(s.on_writable(writable_log::callback(log)) == false);  // closed: nothing to hear
    client other(srv.port());
    other.send(request("/"));
    auto rs = read_responses(other, 1);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].body == "up");
}

TEST_CASE_TEMPLATE("tasks posted to a loop all run, in order, past one turn's share", Policy, SKIFF_TEST_POLICIES) {
    skiff::options opt;
    opt.workers = 2;
    skiff::basic_server<Policy> app(opt);
    REQUIRE_FALSE(app.listen(0));
    skiff::loop_ref loop = app.loop();
    std::thread runner([&] { app.run(); });
    std::mutex lock;
    std::condition_variable changed;
    std::vector<int> ran;
    const int n = 1000;  // many turns' worth (a turn runs 64)
    std::thread([&] {
        for (int i = 0; i < n; ++i) {
            CHECK(loop.post([&, i] {
                std::lock_guard<std::mutex> g(lock);
                ran.push_back(i);
                changed.notify_all();
            }));
        }
    }).join();
    {
        std::unique_lock<std::mutex> g(lock);
        CHECK(changed.wait_for(g, 5s, [&] { return ran.size() == static_cast<std::size_t>(n); }));
        std::vector<int> expected(static_cast<std::size_t>(n));
        for (int i = 0; i < n; ++i) expected[static_cast<std::size_t>(i)] = i;
        CHECK(ran == expected);
    }
    app.stop();
    runner.join();
}

TEST_CASE("a loop with a long run of posted tasks serves a ready request before finishing them") {
    skiff::basic_server<skiff::single> app;
    std::atomic<int> ran{0};
    std::atomic<int> seen{-1};  // how many tasks had run when the request was served
    app.get("/", [&](skiff::request&, skiff::response& res) {
        seen.store(ran.load());
        res.text("up");
    });
    REQUIRE_FALSE(app.listen(0));
    skiff::loop_ref loop = app.loop();
    std::thread runner([&] { app.run(); });
    client c(app.port());
    std::mutex lock;
    std::condition_variable opened;
    bool open = false;
    // The first task holds the loop until the request has arrived, so that it is ready while
    // the other 1,000 wait in the inbox.
    loop.post([&] {
        std::unique_lock<std::mutex> g(lock);
        opened.wait_for(g, 5s, [&] { return open; });
    });
    const int n = 1000;
    for (int i = 0; i < n; ++i) loop.post([&] { ran.fetch_add(1); });
    c.send(request("/"));
    std::this_thread::sleep_for(50ms);
    {
        std::lock_guard<std::mutex> g(lock);
        open = true;
    }
    opened.notify_all();
    auto rs = read_responses(c, 1);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].body == "up");
    auto until = std::chrono::steady_clock::now() + 5s;
    while (ran.load() < n && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(1ms);
    CHECK(ran.load() == n);
    CHECK(seen.load() < 128);  // served after a turn's share or two, not after all of them
    app.stop();
    runner.join();
}

// A deferred is move-only: each service takes it moved into its callable, no shared_ptr around it.
TEST_CASE_TEMPLATE("post, after, every and watch take callables that own a deferred", Policy, SKIFF_TEST_POLICIES) {
    struct pipe_pair {  // closed after the server has stopped (declared before it): no race with its unwatch
        int fd[2] = {-1, -1};
        ~pipe_pair() {
            for (int f : fd) ::close(f);
        }
    } p;
    REQUIRE(::pipe(p.fd) == 0);
    int* fds = p.fd;
    std::atomic<skiff::watch_id> watching{0};
    running_server<Policy> srv([&](skiff::basic_server<Policy>& app) {
        app.get("/post", [](skiff::request&, skiff::response& res) {
            skiff::deferred later = res.defer();
            skiff::loop_ref loop = later.loop();
            loop.post([later = std::move(later)]() mutable { later.text("posted"); });
        });
        app.get("/after", [](skiff::request&, skiff::response& res) {
            skiff::deferred later = res.defer();
            skiff::loop_ref loop = later.loop();
            loop.after(10ms, [later = std::move(later)]() mutable { later.text("after"); });
        });
        app.get("/every", [](skiff::request&, skiff::response& res) {
            skiff::deferred later = res.defer();
            skiff::loop_ref loop = later.loop();
            loop.every(5ms, [n = 0, later = std::move(later)]() mutable {
                if (++n < 3) return skiff::timer_action::keep;
                later.text("every " + std::to_string(n));
                return skiff::timer_action::stop;
            });
        });
        app.get("/watch", [&](skiff::request&, skiff::response& res) {
            skiff::deferred later = res.defer();
            skiff::loop_ref loop = later.loop();
            watching = loop.watch(fds[0], [fd = fds[0], later = std::move(later)]() mutable {
                char c = 0;
                if (::read(fd, &c, 1) == 1) later.text(std::string("watched ") + c);
            });
        });
    });
    client c(srv.port());
    const std::pair<const char*, const char*> answers[] = {{"/post", "posted"}, {"/after", "after"}, {"/every", "every 3"}};
    for (auto [path, body] : answers) {
        c.send(request(path));
        auto rs = read_responses(c, 1);
        REQUIRE(rs.size() == 1);
        CHECK(rs[0].body == body);
    }
    c.send(request("/watch"));
    std::this_thread::sleep_for(20ms);  // the watch is taken in by the loop
    CHECK(::write(fds[1], "w", 1) == 1);
    auto rs = read_responses(c, 1);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].body == "watched w");
    // The watch is released at stop (the next test checks): loop() is not the test thread's to
    // call while a single server runs.
    srv.stop();
}

// What the loop's services hold is released when the server goes, even a callable that owns a
// deferred (whose handle holds the loop's hub: left in place, the two would keep each other).
TEST_CASE_TEMPLATE("a watch or timer still owning a deferred when the server stops is destroyed with it", Policy,
                   SKIFF_TEST_POLICIES) {
    struct on_destroy {
        std::atomic<int>* count;
        explicit on_destroy(std::atomic<int>& c) : count(&c) {}
        on_destroy(on_destroy&& o) noexcept : count(std::exchange(o.count, nullptr)) {}
        ~on_destroy() {
            if (count) ++*count;
        }
    };
    std::atomic<int> destroyed{0};
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    {
        running_server<Policy> srv([&](skiff::basic_server<Policy>& app) {
            app.get("/hold", [&](skiff::request&, skiff::response& res) {
                skiff::deferred later = res.defer();
                skiff::loop_ref loop = later.loop();
                loop.watch(fds[0], [mark = on_destroy(destroyed), later = std::move(later)]() mutable {});
                loop.after(1h, [mark = on_destroy(destroyed)] {});
                loop.every(1h, [mark = on_destroy(destroyed)] {});
            });
        });
        client c(srv.port());
        c.send(request("/hold"));
        std::this_thread::sleep_for(50ms);  // the loop takes the watch and timers in
        srv.stop();
    }
    CHECK(destroyed == 3);
    ::close(fds[0]);
    ::close(fds[1]);
}

// ---- fields written before the head exists --------------------------------------------------

namespace {

// Sets a field before next(), as request_id(), security_headers() and cors() do, and one
// after it (a late field: inserted into a plain answer's head, dropped from a deferred one).
template <class Policy>
void mark_around(skiff::basic_server<Policy>& app) {
    app.use([](skiff::request&, skiff::response& res, const skiff::next& next) {
        res.header("X-Before", "mw");
        next();
        res.header("X-After", "mw");
    });
}

// Reads until the Date-masked bytes are at least as long as `expected`; returns them masked.
std::string read_masked(client& c, const std::string& expected) {
    return mask_date(c.read_until([&](const std::string& s) { return mask_date(s).size() >= expected.size(); }));
}

const std::string answer_two =  // GET /n/2 behind mark_around
    "HTTP/1.1 200 OK\r\nDate: <date>\r\nContent-Type: text/plain\r\nContent-Length: 1\r\n"
    "X-Before: mw\r\nX-After: mw\r\n\r\n2";

} // namespace

TEST_CASE_TEMPLATE("fields set before defer() open the answer's head after its status line, once", Policy,
                   SKIFF_TEST_POLICIES) {
    parked waiting;
    running_server<Policy> srv([&waiting](skiff::basic_server<Policy>& app) {
        mark_around(app);
        app.get("/wait", [&waiting](skiff::request&, skiff::response& res) {
            res.header("X-Handler", "h");
            waiting.put(res.defer());
        });
        app.get("/n/:n", [](skiff::request& req, skiff::response& res) { res.text(req.param("n")); });
    });
    client c(srv.port());
    c.send(request("/wait") + request("/n/2"));
    auto handles = waiting.take(1);
    REQUIRE(handles.size() == 1);
    CHECK(c.read_some(200ms).empty());  // nothing before the answer, not even its fields
    handles[0]->status(201).header("X-From", "worker").text("later");
    std::string expected =
        "HTTP/1.1 201 Created\r\nDate: <date>\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n"
        "X-Before: mw\r\nX-Handler: h\r\nX-From: worker\r\n\r\nlater" +
        answer_two;
    CHECK(read_masked(c, expected) == expected);
}

TEST_CASE_TEMPLATE("fields set before defer() lead a push stream's head, and its chunks follow it", Policy,
                   SKIFF_TEST_POLICIES) {
    running_server<Policy> srv([](skiff::basic_server<Policy>& app) {
        mark_around(app);
        app.get("/events", [](skiff::request&, skiff::response& res) {
            res.header("X-Handler", "h");
            skiff::sse_stream events = res.defer().events();
            events.send("hi");
            events.close();
        });
        app.get("/n/:n", [](skiff::request& req, skiff::response& res) { res.text(req.param("n")); });
    });
    client c(srv.port());
    c.send(request("/events") + request("/n/2"));
    std::string expected =
        "HTTP/1.1 200 OK\r\nDate: <date>\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"
        "X-Before: mw\r\nX-Handler: h\r\nCache-Control: no-cache\r\n\r\n"
        "a\r\ndata: hi\n\n\r\n0\r\n\r\n" +
        answer_two;
    CHECK(read_masked(c, expected) == expected);
}

// ---- deferred_timeout on the test client's clock (the real clock, under every policy:
// tests/system/deadlines_wall_clock.cpp) -------------------------------------------------------

TEST_CASE("an answer not completed by deferred_timeout is answered 503, and the late one dropped") {
    skiff::deferred kept;
    skiff::options opt;
    opt.deferred_timeout = 200ms;
    skiff::testing::test_client c(
        [&kept](skiff::server& app) {
            app.get("/wait", [&kept](skiff::request&, skiff::response& res) { kept = res.defer(); });
            app.get("/", [](skiff::request&, skiff::response& res) { res.text("next"); });
        },
        opt);
    c.send(request("/wait") + request("/"));
    c.advance(199ms);
    CHECK_FALSE(c.next_response());  // not before its deadline, nor the request behind it
    c.advance(1ms);
    CHECK(c.next_response().status == 503);
    CHECK(c.next_response().body == "next");
    CHECK(kept.cancelled());
    CHECK_FALSE(kept.text("too late"));
    std::string sent = c.raw_output();
    c.run();
    CHECK(c.raw_output() == sent);  // nothing more was written
    CHECK_FALSE(c.closed());
}

TEST_CASE("a deferred answer given up at its deadline keeps the fields set before defer()") {
    skiff::deferred kept;
    skiff::options opt;
    opt.deferred_timeout = 100ms;
    skiff::testing::test_client c(
        [&kept](skiff::server& app) {
            mark_around(app);
            app.get("/wait", [&kept](skiff::request&, skiff::response& res) { kept = res.defer(); });
        },
        opt);
    c.send(request("/wait"));
    c.advance(100ms);
    auto r = c.next_response();
    CHECK(r.status == 503);
    CHECK(r.raw.rfind("HTTP/1.1 503 ", 0) == 0);
    CHECK(r.header("X-Before") == "mw");
}
