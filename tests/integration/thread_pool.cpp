// The blocking pool (skiff/async/thread_pool.hpp) as a handler author uses it, under every
// policy: blocking work answered through defer() while the loop goes on serving; a full
// queue answered 503 at once (or as on_full renders it); work that throws answers 500; what
// is queued when the pool is destroyed still runs.
#include "support/loopback.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

using namespace skiff_test;

namespace {

// Holds pool threads until the test opens it.
class gate {
public:
    void wait() {
        std::unique_lock<std::mutex> g(lock_);
        ++waiting_;
        changed_.notify_all();
        changed_.wait_for(g, 5s, [&] { return open_; });
    }
    bool wait_for_waiters(int n) {
        std::unique_lock<std::mutex> g(lock_);
        return changed_.wait_for(g, 5s, [&] { return waiting_ >= n; });
    }
    void open() {
        std::lock_guard<std::mutex> g(lock_);
        open_ = true;
        changed_.notify_all();
    }

private:
    std::mutex lock_;
    std::condition_variable changed_;
    int waiting_ = 0;
    bool open_ = false;
};

std::string get_request(const std::string& path) { return "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n"; }

} // namespace

TEST_CASE_TEMPLATE("blocking pool: work answers through the deferred it is given, while the loop serves", Policy,
                   SKIFF_TEST_POLICIES) {
    gate held;  // before the pool: its threads wait on it until joined
    skiff::blocking_pool pool(2);
    running_server<Policy> srv([&](skiff::basic_server<Policy>& app) {
        app.get("/", [](skiff::request&, skiff::response& res) { res.text("hello"); });
        app.get("/held", [&](skiff::request&, skiff::response& res) {
            auto owned = std::make_unique<std::string>("from worker ");  // a move-only capture
            pool.run(res.defer(), [&held, owned = std::move(owned)](skiff::deferred& later) {
                held.wait();  // blocking, as a query would
                later.status(201).header("X-Worker", std::to_string(skiff::blocking_pool::worker()));
                later.text(*owned + (skiff::blocking_pool::worker() < 2 ? "ok" : "out of range"));
            });
        });
    });
    client waiting(srv.port());
    waiting.send(get_request("/held"));
    REQUIRE(held.wait_for_waiters(1));
    client other(srv.port());
    other.send(get_request("/"));  // the loop is not blocked by the pool's work
    auto hello = read_responses(other, 1);
    REQUIRE(hello.size() == 1);
    CHECK(hello[0].body == "hello");
    held.open();
    auto rs = read_responses(waiting, 1);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == 201);
    CHECK(rs[0].body == "from worker ok");
    CHECK(skiff::blocking_pool::worker() == static_cast<std::size_t>(-1));  // not a pool thread
}

TEST_CASE_TEMPLATE("blocking pool: past max_queued, run() answers 503 with Retry-After at once", Policy,
                   SKIFF_TEST_POLICIES) {
    gate held;
    skiff::blocking_pool pool(1, 1);  // one running, one waiting
    std::atomic<int> refused{0};
    running_server<Policy> srv([&](skiff::basic_server<Policy>& app) {
        app.get("/work", [&](skiff::request&, skiff::response& res) {
            auto st = pool.run(res.defer(), [&held](skiff::deferred& later) {
                held.wait();
                later.text("done");
            });
            if (st == skiff::pool_status::full) ++refused;
        });
    });
    client first(srv.port()), second(srv.port()), third(srv.port());
    first.send(get_request("/work"));
    REQUIRE(held.wait_for_waiters(1));  // the thread is busy
    second.send(get_request("/work"));
    for (int i = 0; i < 500 && pool.queued() < 1; ++i) std::this_thread::sleep_for(1ms);
    REQUIRE(pool.queued() == 1);  // the queue is full
    third.send(get_request("/work"));
    auto shed = read_responses(third, 1);
    REQUIRE(shed.size() == 1);
    CHECK(shed[0].status == 503);
    CHECK(shed[0].header("Retry-After") == "1");
    CHECK(refused == 1);
    held.open();
    for (client* c : {&first, &second}) {
        auto rs = read_responses(*c, 1);
        REQUIRE(rs.size() == 1);
        CHECK(rs[0].body == "done");
    }
}

TEST_CASE("blocking pool: on_full renders the refusal; work that throws answers 500") {
    skiff::blocking_pool pool(1, 0);  // refuses everything: max_queued 0 and nothing can wait
    pool.on_full([](skiff::deferred& later) { later.status(503).json(R"({"error":"busy"})"); });
    skiff::blocking_pool thrower(1);
    running_server<> srv([&](skiff::server& app) {
        app.get("/busy", [&](skiff::request&, skiff::response& res) { pool.run(res.defer(), [](skiff::deferred&) {}); });
        app.get("/throw", [&](skiff::request&, skiff::response& res) {
            thrower.run(res.defer(), [](skiff::deferred&) { throw std::runtime_error("query failed"); });
        });
    });
    client c(srv.port());
    c.send(get_request("/busy"));
    auto rs = read_responses(c, 1);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == 503);
    CHECK(rs[0].header("Content-Type") == "application/json");
    CHECK(rs[0].body == R"({"error":"busy"})");
    c.send(get_request("/throw"));
    rs = read_responses(c, 1);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == 500);
}

TEST_CASE("blocking pool: tasks queued when the pool is destroyed still run; later ones are refused") {
    std::atomic<int> ran{0};
    gate held;
    {
        skiff::blocking_pool pool(1);
        CHECK(pool.submit([&] { held.wait(); }) == skiff::pool_status::queued);
        REQUIRE(held.wait_for_waiters(1));
        for (int i = 0; i < 3; ++i) CHECK(pool.submit([&ran, owned = std::make_unique<int>(1)] { ran += *owned; }) ==
                                          skiff::pool_status::queued);
        held.open();
    }
    CHECK(ran == 3);
}
