// Threading policies: the same handlers under single, sharded and shared; every request
// answered exactly once and in order per connection when handler costs are uneven; worker
// count, pinning and the start hook; the round-robin acceptor.
#include "support/loopback.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <mutex>
#include <sched.h>
#include <set>
#include <string>
#include <vector>

using namespace skiff_test;

namespace {

// /work/<n>: sleeps n ms when n is odd (uneven costs), answers n.
template <class Policy>
void uneven_routes(skiff::basic_server<Policy>& app) {
    app.get("/work/:conn/:seq", [](skiff::request& req, skiff::response& res) {
        int seq = std::stoi(std::string(req.param("seq")));
        if (seq % 7 == 3) std::this_thread::sleep_for(std::chrono::milliseconds(seq % 5));
        res.text(std::string(req.param("conn")) + "/" + std::string(req.param("seq")));
    });
}

// For client::read_until: the bytes so far end with `tail`.
auto ends_with(std::string tail) {
    return [tail](const std::string& all) {
        return all.size() >= tail.size() && all.compare(all.size() - tail.size(), tail.size(), tail) == 0;
    };
}

} // namespace

TEST_CASE_TEMPLATE("many connections with uneven handler costs: each request answered once, in order", Policy,
                   SKIFF_TEST_POLICIES) {
    skiff::options opt;
    opt.workers = 3;
    running_server<Policy> srv(uneven_routes<Policy>, opt);
    const int connections = 24, per_connection = 40;
    std::atomic<int> wrong{0};
    std::vector<std::thread> drivers;
    for (int t = 0; t < 4; ++t) {
        drivers.emplace_back([&, t] {
            for (int k = t; k < connections; k += 4) {
                client c(srv.port());
                std::string batch;
                for (int s = 0; s < per_connection; ++s) {
                    batch += "GET /work/" + std::to_string(k) + "/" + std::to_string(s) + " HTTP/1.1\r\nHost: x\r\n\r\n";
                    if (s % 8 == 7) {  // pipelined in groups of 8
                        c.send(batch);
                        batch.clear();
                    }
                }
                auto rs = read_responses(c, per_connection, 10000ms);
                if (rs.size() != static_cast<std::size_t>(per_connection)) ++wrong;
                for (std::size_t s = 0; s < rs.size(); ++s)
                    if (rs[s].body != std::to_string(k) + "/" + std::to_string(s)) ++wrong;
                if (!c.read_some(20ms).empty()) ++wrong;  // nothing answered twice
            }
        });
    }
    for (auto& d : drivers) d.join();
    CHECK(wrong.load() == 0);
}

TEST_CASE_TEMPLATE("workers, the start hook and CPU pinning", Policy, skiff::sharded, skiff::shared) {
    std::mutex m;
    std::set<unsigned> started;
    std::set<int> cpus_seen;
    skiff::options opt;
    opt.workers = 3;
    opt.cpus = {0};  // every worker on CPU 0
    opt.on_worker_start = [&](unsigned i) {
        std::lock_guard<std::mutex> g(m);
        started.insert(i);
    };
    {
        running_server<Policy> srv([&](skiff::basic_server<Policy>& app) {
            app.get("/", [&](skiff::request&, skiff::response& res) {
                std::lock_guard<std::mutex> g(m);
                cpus_seen.insert(::sched_getcpu());
                res.text("ok");
            });
        }, opt);
        for (int i = 0; i < 20; ++i) {
            client c(srv.port());
            c.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
            REQUIRE(read_responses(c, 1).size() == 1);
        }
    }
    std::lock_guard<std::mutex> g(m);  // the workers are joined; the lock is for the checker's sake
    CHECK(started == std::set<unsigned>{0, 1, 2});
    CHECK(cpus_seen == std::set<int>{0});
}

TEST_CASE("sharded without SO_REUSEPORT: one acceptor hands connections to every loop") {
    std::mutex m;
    std::set<std::thread::id> serving_threads;
    skiff::options opt;
    opt.workers = 3;
    opt.reuse_port = false;
    running_server<skiff::sharded> srv([&](skiff::basic_server<skiff::sharded>& app) {
        app.get("/", [&](skiff::request&, skiff::response& res) {
            std::lock_guard<std::mutex> g(m);
            serving_threads.insert(std::this_thread::get_id());
            res.text("ok");
        });
    }, opt);
    std::vector<std::unique_ptr<client>> clients;
    for (int i = 0; i < 9; ++i) clients.push_back(std::make_unique<client>(srv.port()));
    for (auto& c : clients) c->send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    for (auto& c : clients) CHECK(read_responses(*c, 1).size() == 1);
    std::lock_guard<std::mutex> g(m);
    CHECK(serving_threads.size() == 3);  // round-robin reached every loop
}

TEST_CASE("workers = 0 means one per CPU") {
    std::atomic<unsigned> started{0};
    skiff::options opt;
    opt.workers = 0;
    opt.on_worker_start = [&](unsigned) { ++started; };
    skiff::basic_server<skiff::sharded> app(opt);
    app.get("/", [](skiff::request&, skiff::response& res) { res.text("ok"); });
    REQUIRE_FALSE(app.listen(0));
    std::thread t([&] { app.run(); });
    while (started.load() < std::thread::hardware_concurrency()) std::this_thread::sleep_for(5ms);
    app.stop();
    t.join();
    CHECK(started.load() == std::thread::hardware_concurrency());
}

TEST_CASE("shared: a burst of slow requests on idle connections is spread over every worker") {
    // The shared policy's promise: any idle thread takes the next ready connection. Both
    // workers are first kept busy while four slow requests arrive, so that all four are ready
    // at once when the workers come back to wait: a thread that took several in one wait
    // would serve them one after another while the other worker idled.
    const int workers = 2, connections = 4;
    std::atomic<int> busy{0}, in_flight{0}, most_in_flight{0};
    skiff::options opt;
    opt.workers = workers;
    running_server<skiff::shared> srv(
        [&](skiff::basic_server<skiff::shared>& app) {
            app.get("/busy", [&](skiff::request&, skiff::response& res) {
                ++busy;
                std::this_thread::sleep_for(std::chrono::milliseconds(200));
                res.text("busy");
            });
            app.get("/slow", [&](skiff::request&, skiff::response& res) {
                int now = ++in_flight;
                for (int seen = most_in_flight.load(); now > seen && !most_in_flight.compare_exchange_weak(seen, now);) {
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
                --in_flight;
                res.text("slow");
            });
        },
        opt);
    std::vector<client> blockers, clients;
    for (int i = 0; i < connections; ++i) clients.emplace_back(srv.port());
    for (int i = 0; i < workers; ++i) {
        blockers.emplace_back(srv.port());
        blockers.back().send("GET /busy HTTP/1.1\r\nHost: t\r\n\r\n");
    }
    while (busy.load() < workers) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    for (auto& c : clients) c.send("GET /slow HTTP/1.1\r\nHost: t\r\n\r\n");  // ready while every worker is busy
    for (auto& c : clients) CHECK(c.read_until(ends_with("slow")).find("200 OK") != std::string::npos);
    for (auto& b : blockers) CHECK(b.read_until(ends_with("busy")).find("200 OK") != std::string::npos);
    CHECK(most_in_flight.load() == workers);
}
