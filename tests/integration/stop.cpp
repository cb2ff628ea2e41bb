// stop(): from another thread or a signal handler; requests already read are answered, idle
// connections close, run() returns within stop_timeout, and no thread is left behind. Long-lived
// answers (docs/stopping.md): the on_stop hooks run, push streams end with their last chunk,
// deferred answers not completed within stop_grace are answered 503 with Connection: close,
// and an upload in progress finishes.
#include "support/dechunk.hpp"
#include "support/loopback.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <dirent.h>
#include <mutex>
#include <string>
#include <vector>

using namespace skiff_test;

namespace {

template <class Policy>
void stop_routes(skiff::basic_server<Policy>& app) {
    app.get("/", [](skiff::request&, skiff::response& res) { res.text("hi"); });
    app.get("/slow", [](skiff::request&, skiff::response& res) {
        std::this_thread::sleep_for(300ms);
        res.text("finished");
    });
}

int thread_count_now() {
    int n = 0;
    if (DIR* d = ::opendir("/proc/self/task")) {
        while (dirent* e = ::readdir(d)) n += e->d_name[0] != '.';
        ::closedir(d);
    }
    return n;
}

// A joined thread may still be listed in /proc for a moment: the kernel wakes the joiner
// before it has finished reaping the task. So a count that should have dropped is given a
// second to do so (it returns at once when it has).
int thread_count(int expected = -1) {
    for (int i = 0; i < 100 && thread_count_now() != expected && expected >= 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return thread_count_now();
}

std::function<void()> stop_from_signal;
extern "C" void on_usr1(int) { stop_from_signal(); }

} // namespace

TEST_CASE_TEMPLATE("stop() answers the request in flight, closes idle connections, and run() returns 0", Policy,
                   SKIFF_TEST_POLICIES) {
    std::thread([] {}).join();  // a sanitizer's runtime may start its own thread with the first one
    int threads_before = thread_count();
    auto srv = std::make_unique<running_server<Policy>>(stop_routes<Policy>);
    client idle(srv->port());
    idle.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    REQUIRE(read_responses(idle, 1).size() == 1);
    client busy(srv->port());
    busy.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
    std::this_thread::sleep_for(100ms);  // the handler is running now

    auto start = std::chrono::steady_clock::now();
    int code = srv->stop();
    auto took = std::chrono::steady_clock::now() - start;

    CHECK(code == 0);
    CHECK(took < 2s);
    auto rs = parse_responses(busy.read_to_close());
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].body == "finished");
    CHECK(idle.read_to_close().empty());
    CHECK(idle.closed());
    srv.reset();
    CHECK(thread_count(threads_before) == threads_before);
}

TEST_CASE_TEMPLATE("stop() lets a half-received request finish, then closes it", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(stop_routes<Policy>);
    client c(srv.port());
    c.send("GET / HTTP/1.1\r\nHost: x\r\n");  // head not finished yet
    std::this_thread::sleep_for(100ms);
    std::thread stopper([&] { srv.stop(); });
    std::this_thread::sleep_for(100ms);
    c.send("\r\n");
    auto rs = parse_responses(c.read_to_close());
    stopper.join();
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].body == "hi");
    CHECK(rs[0].header("Connection") == "close");
}

TEST_CASE_TEMPLATE("run() returns within stop_timeout even if a client never finishes", Policy, SKIFF_TEST_POLICIES) {
    skiff::options opt;
    opt.stop_timeout = std::chrono::milliseconds(300);
    running_server<Policy> srv(stop_routes<Policy>, opt);
    client c(srv.port());
    c.send("GET / HTTP/1.1\r\nHo");
    std::this_thread::sleep_for(50ms);
    auto start = std::chrono::steady_clock::now();
    CHECK(srv.stop() == 0);
    auto took = std::chrono::steady_clock::now() - start;
    CHECK(took >= 250ms);
    CHECK(took < 2s);
}

TEST_CASE_TEMPLATE("stop() is async-signal-safe: a signal handler can call it", Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(stop_routes<Policy>);
    stop_from_signal = [&] { srv.app().stop(); };
    struct sigaction sa {};
    sa.sa_handler = on_usr1;
    struct sigaction old {};
    ::sigaction(SIGUSR1, &sa, &old);
    ::raise(SIGUSR1);
    auto start = std::chrono::steady_clock::now();
    CHECK(srv.stop() == 0);  // joins the run() that the signal already ended
    CHECK(std::chrono::steady_clock::now() - start < 2s);
    ::sigaction(SIGUSR1, &old, nullptr);
}

TEST_CASE_TEMPLATE("after stop() the port no longer accepts connections", Policy, SKIFF_TEST_POLICIES) {
    skiff::options opt;
    opt.stop_timeout = std::chrono::milliseconds(500);
    running_server<Policy> srv(stop_routes<Policy>, opt);
    std::uint16_t port = srv.port();
    client holder(port);
    holder.send("GET / HTTP/1.1\r\nHo");  // keeps the server draining for a while
    std::thread stopper([&] { srv.stop(); });
    std::this_thread::sleep_for(150ms);
    bool refused = false;
    try {
        client late(port);
    } catch (const std::exception&) {
        refused = true;
    }
    stopper.join();
    CHECK(refused);
}

namespace {

// Handles the application keeps: open streams and answers it never completes.
struct kept {
    std::mutex lock;
    std::vector<skiff::sse_stream> streams;
    std::vector<skiff::deferred> answers;
    std::atomic<int> waiting{0};  // requests whose handler has run
    std::atomic<int> stop_calls{0};
};

template <class Policy>
void long_lived_routes(skiff::basic_server<Policy>& app, const std::shared_ptr<kept>& k) {
    app.get("/events", [k](skiff::request&, skiff::response& res) {
        skiff::sse_stream s = res.defer().events();
        s.send("hello");
        std::lock_guard<std::mutex> g(k->lock);
        k->streams.push_back(std::move(s));
        ++k->waiting;
    });
    app.get("/never", [k](skiff::request&, skiff::response& res) {
        std::lock_guard<std::mutex> g(k->lock);
        k->answers.push_back(res.defer());
        ++k->waiting;
    });
}

void wait_for(const std::atomic<int>& n, int want) {
    for (int i = 0; i < 3000 && n.load() < want; ++i) std::this_thread::sleep_for(1ms);
    REQUIRE(n.load() == want);
}

// A response head, and the body after it as a client decodes it (chunked).
struct streamed {
    std::string head;
    std::string body;
    bool clean_end = false;  // the last chunk came, and nothing after it
};

streamed split_stream(const std::string& all) {
    streamed r;
    std::size_t end = all.find("\r\n\r\n");
    if (end == std::string::npos) return r;
    r.head = all.substr(0, end + 2);
    r.clean_end = dechunk(all.substr(end + 4), r.body);
    return r;
}

// What the process writes to stderr while fn runs.
template <class Fn>
std::string stderr_of(Fn fn) {
    std::fflush(stderr);
    FILE* tmp = std::tmpfile();
    int saved = ::dup(2);
    ::dup2(::fileno(tmp), 2);
    fn();
    std::fflush(stderr);
    ::dup2(saved, 2);
    ::close(saved);
    std::string text;
    std::rewind(tmp);
    for (int ch; (ch = std::fgetc(tmp)) != EOF;) text += static_cast<char>(ch);
    std::fclose(tmp);
    return text;
}

} // namespace

TEST_CASE_TEMPLATE("stop() ends open push streams after stop_grace with their last chunk, and run() returns", Policy,
                   SKIFF_TEST_POLICIES) {
    auto k = std::make_shared<kept>();
    skiff::options opt;
    opt.stop_timeout = std::chrono::milliseconds(5000);  // what the streams used to hold stop() for
    running_server<Policy> srv([k](skiff::basic_server<Policy>& app) { long_lived_routes(app, k); }, opt);
    std::vector<client> clients;
    for (int i = 0; i < 3; ++i) {
        clients.emplace_back(srv.port());
        clients.back().send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n");
    }
    wait_for(k->waiting, 3);
    for (auto& c : clients) CHECK(c.read_until([](const std::string& s) { return s.find("hello") != std::string::npos; }) != "");

    auto start = std::chrono::steady_clock::now();
    CHECK(srv.stop() == 0);
    CHECK(std::chrono::steady_clock::now() - start < 3s);  // generous: the streams no longer hold stop()
    for (auto& c : clients) {
        std::string rest = c.read_to_close();
        CHECK(c.closed());
        CHECK(!c.reset());
        std::string body;
        CHECK(dechunk(rest, body));  // the last chunk, and nothing after it
        CHECK(body.empty());
    }
    std::lock_guard<std::mutex> g(k->lock);
    for (auto& s : k->streams) CHECK(s.closed());  // the producer sees it: write() says closed
}

TEST_CASE_TEMPLATE("on_stop hooks run once when stop begins, and what they push is sent before the end", Policy,
                   SKIFF_TEST_POLICIES) {
    auto k = std::make_shared<kept>();
    running_server<Policy> srv([k](skiff::basic_server<Policy>& app) {
        long_lived_routes(app, k);
        app.on_stop([k] {
            ++k->stop_calls;
            std::lock_guard<std::mutex> g(k->lock);
            for (auto& s : k->streams) s.send("bye", "shutdown");
        });
    });
    client c(srv.port());
    c.send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n");
    wait_for(k->waiting, 1);
    CHECK(srv.stop() == 0);
    streamed r = split_stream(c.read_to_close());
    CHECK(r.head.find("Transfer-Encoding: chunked") != std::string::npos);
    CHECK(r.clean_end);
    CHECK(r.body == "data: hello\n\nevent: shutdown\ndata: bye\n\n");
    CHECK(k->stop_calls.load() == 1);
}

TEST_CASE_TEMPLATE("stop() answers a deferred answer never completed 503 with Connection: close; its handle then does nothing",
                   Policy, SKIFF_TEST_POLICIES) {
    auto k = std::make_shared<kept>();
    skiff::options opt;
    opt.stop_timeout = std::chrono::milliseconds(5000);
    running_server<Policy> srv([k](skiff::basic_server<Policy>& app) { long_lived_routes(app, k); }, opt);
    client a(srv.port());
    client b(srv.port());
    a.send("GET /never HTTP/1.1\r\nHost: x\r\n\r\n");
    b.send("GET /never HTTP/1.1\r\nHost: x\r\n\r\nGET /never HTTP/1.1\r\nHost: x\r\n\r\n");  // one waits behind
    wait_for(k->waiting, 2);

    auto start = std::chrono::steady_clock::now();
    CHECK(srv.stop() == 0);
    CHECK(std::chrono::steady_clock::now() - start < 3s);
    for (client* c : {&a, &b}) {
        auto rs = parse_responses(c->read_to_close());
        REQUIRE(rs.size() == 1);
        CHECK(rs[0].status == 503);
        CHECK(rs[0].header("Connection") == "close");
        CHECK(c->closed());
    }
    std::lock_guard<std::mutex> g(k->lock);
    for (auto& d : k->answers) CHECK(d.cancelled());
    std::string said = stderr_of([&] { k->answers.clear(); });  // dropped after run() returned
    CHECK(said == "");
}

TEST_CASE_TEMPLATE("a request that arrives whole after stop() and defers is answered 503 after stop_grace", Policy,
                   SKIFF_TEST_POLICIES) {
    auto k = std::make_shared<kept>();
    skiff::options opt;
    opt.stop_timeout = std::chrono::milliseconds(5000);
    running_server<Policy> srv([k](skiff::basic_server<Policy>& app) { long_lived_routes(app, k); }, opt);
    client c(srv.port());
    c.send("GET /never HTTP/1.1\r\nHost: x\r\n");  // the first defer comes after stop(): single has no hub yet
    std::this_thread::sleep_for(50ms);
    std::thread stopper([&] { srv.stop(); });
    std::this_thread::sleep_for(100ms);
    c.send("\r\n");
    auto rs = parse_responses(c.read_to_close());
    stopper.join();
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == 503);
    CHECK(rs[0].header("Connection") == "close");
}

TEST_CASE_TEMPLATE("a deferred answer completed within stop_grace is sent, with Connection: close", Policy,
                   SKIFF_TEST_POLICIES) {
    auto k = std::make_shared<kept>();
    skiff::options opt;
    opt.stop_grace = std::chrono::milliseconds(3000);
    running_server<Policy> srv([k](skiff::basic_server<Policy>& app) { long_lived_routes(app, k); }, opt);
    client c(srv.port());
    c.send("GET /never HTTP/1.1\r\nHost: x\r\n\r\n");
    wait_for(k->waiting, 1);
    std::thread stopper([&] { srv.stop(); });
    std::this_thread::sleep_for(100ms);  // stop has begun; the grace has not passed
    {
        std::lock_guard<std::mutex> g(k->lock);
        CHECK(k->answers[0].text("late but in time"));
    }
    auto rs = parse_responses(c.read_to_close());
    stopper.join();
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == 200);
    CHECK(rs[0].body == "late but in time");
    CHECK(rs[0].header("Connection") == "close");
}

TEST_CASE_TEMPLATE("an upload in progress at stop() finishes, and its answer says Connection: close", Policy,
                   SKIFF_TEST_POLICIES) {
    auto got = std::make_shared<std::atomic<std::size_t>>(0);
    running_server<Policy> srv([got](skiff::basic_server<Policy>& app) {
        app.upload("PUT", "/up", [got](skiff::request&, skiff::response&) {
            skiff::upload u;
            u.on_piece = [got](std::string_view piece) {
                *got += piece.size();
                return skiff::piece_status::taken;
            };
            u.on_end = [got](skiff::response& res) { res.status(201).text(std::to_string(got->load())); };
            return u;
        });
    });
    client c(srv.port());
    c.send("PUT /up HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n12345");
    for (int i = 0; i < 3000 && got->load() < 5; ++i) std::this_thread::sleep_for(1ms);
    REQUIRE(got->load() == 5);
    std::thread stopper([&] { srv.stop(); });
    std::this_thread::sleep_for(100ms);  // stop has begun
    c.send("67890");
    auto rs = parse_responses(c.read_to_close());
    stopper.join();
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == 201);
    CHECK(rs[0].body == "10");
    CHECK(rs[0].header("Connection") == "close");
}

TEST_CASE_TEMPLATE("stop() with open streams and waiting answers together returns promptly with defaults", Policy,
                   SKIFF_TEST_POLICIES) {
    auto k = std::make_shared<kept>();
    running_server<Policy> srv([k](skiff::basic_server<Policy>& app) { long_lived_routes(app, k); });
    std::vector<client> streams, waiters;
    for (int i = 0; i < 10; ++i) {
        streams.emplace_back(srv.port());
        streams.back().send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n");
        waiters.emplace_back(srv.port());
        waiters.back().send("GET /never HTTP/1.1\r\nHost: x\r\n\r\n");
    }
    wait_for(k->waiting, 20);
    auto start = std::chrono::steady_clock::now();
    CHECK(srv.stop() == 0);
    CHECK(std::chrono::steady_clock::now() - start < 3s);  // stop_timeout (10 s) is not waited for
    for (auto& c : streams) CHECK(split_stream(c.read_to_close()).clean_end);
    for (auto& c : waiters) {
        auto rs = parse_responses(c.read_to_close());
        REQUIRE(rs.size() == 1);
        CHECK(rs[0].status == 503);
        CHECK(rs[0].header("Connection") == "close");
    }
}
