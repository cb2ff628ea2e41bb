// skiff::stop_on_signals: SIGINT and SIGTERM stop the server while it lives; once it is gone
// the handlers that were there before are back, and a signal can no longer reach the server
// (a burst of signals while the server is destroyed was a use after free in the examples).
#include "support/loopback.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <csignal>
#include <stdexcept>
#include <thread>

#include <signal.h>
#include <unistd.h>

using namespace skiff_test;

namespace {

std::atomic<int> caught{0};
extern "C" void count_signal(int) { caught.fetch_add(1); }

// Installs count_signal for SIGINT and SIGTERM, and puts back what was there (doctest's own
// handlers) at the end, so that no signal of these tests ends the test run.
class counting_handlers {
public:
    counting_handlers() {
        struct sigaction on {};
        on.sa_handler = &count_signal;
        sigemptyset(&on.sa_mask);
        sigaction(SIGINT, &on, &int_);
        sigaction(SIGTERM, &on, &term_);
    }
    ~counting_handlers() {
        sigaction(SIGINT, &int_, nullptr);
        sigaction(SIGTERM, &term_, nullptr);
    }

private:
    struct sigaction int_ {};
    struct sigaction term_ {};
};

// The listener closes at the first turn after the stop; a broken stop fails here, not hangs.
bool refused_soon(std::uint16_t port) {
    for (int i = 0; i < 500; ++i) {
        if (connect_refused(port)) return true;
        std::this_thread::sleep_for(10ms);
    }
    return false;
}

} // namespace

TEST_CASE_TEMPLATE("stop_on_signals: SIGTERM and SIGINT stop a server, even one started in the background", Policy,
                   SKIFF_TEST_POLICIES) {
    counting_handlers counting;
    for (int signum : {SIGTERM, SIGINT}) {
        CAPTURE(signum);
        skiff::options opt;
        opt.workers = 2;
        skiff::basic_server<Policy> app(opt);
        app.get("/", [](skiff::request&, skiff::response& res) { res.text("up"); });
        REQUIRE(!app.listen(0));
        REQUIRE(!app.start());
        skiff::stop_on_signals stopper(app);
        {
            client c(app.port());
            c.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
            REQUIRE(read_responses(c, 1).size() == 1);
        }
        int before = caught.load();
        REQUIRE(::kill(::getpid(), signum) == 0);
        CHECK(refused_soon(app.port()));
        CHECK(caught.load() == before);  // the stopper had it, not the handler before it
        app.stop();                      // joins the serving thread
        CHECK(!app.error());
    }
}

TEST_CASE("stop_on_signals: once it is gone, the handlers before it are back and the server is not called") {
    counting_handlers counting;
    skiff::server app;
    app.get("/", [](skiff::request&, skiff::response& res) { res.text("up"); });
    REQUIRE(!app.listen(0));
    REQUIRE(!app.start());
    { skiff::stop_on_signals stopper(app); }
    int before = caught.load();
    REQUIRE(::kill(::getpid(), SIGTERM) == 0);
    for (int i = 0; i < 500 && caught.load() == before; ++i) std::this_thread::sleep_for(10ms);
    CHECK(caught.load() == before + 1);
    client c(app.port());                // still serving: the signal did not stop it
    c.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    CHECK(read_responses(c, 1).size() == 1);
    app.stop();
}

TEST_CASE("stop_on_signals: one at a time per process") {
    skiff::server app;
    skiff::stop_on_signals first(app);
    CHECK_THROWS_AS(skiff::stop_on_signals{app}, std::logic_error);
}

TEST_CASE_TEMPLATE("stop_on_signals: a burst of SIGTERM while the server stops and goes is never a crash", Policy,
                   SKIFF_TEST_POLICIES) {
    counting_handlers counting;  // what the stopper puts back: later signals are only counted
    std::atomic<bool> done{false};
    std::thread sender([&done] {
        while (!done.load()) ::kill(::getpid(), SIGTERM);
    });
    for (int round = 0; round < 20; ++round) {
        skiff::options opt;
        opt.workers = 2;
        skiff::basic_server<Policy> app(opt);
        app.get("/", [](skiff::request&, skiff::response& res) { res.text("up"); });
        REQUIRE(!app.listen(0));
        skiff::stop_on_signals stopper(app);
        CHECK(app.run() == 0);  // the burst stops it at once; the stopper then goes before app
    }
    done.store(true);
    sender.join();
}
