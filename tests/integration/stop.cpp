// stop(): from another thread or a signal handler; requests already read are answered, idle
// connections close, run() returns within stop_timeout, and no thread is left behind.
#include "support/loopback.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <csignal>
#include <dirent.h>
#include <string>

using namespace skiff_test;

namespace {

template <class Policy>
void routes(skiff::basic_server<Policy>& app) {
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
    auto srv = std::make_unique<running_server<Policy>>(routes<Policy>);
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
    running_server<Policy> srv(routes<Policy>);
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
    running_server<Policy> srv(routes<Policy>, opt);
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
    running_server<Policy> srv(routes<Policy>);
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
    running_server<Policy> srv(routes<Policy>, opt);
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
