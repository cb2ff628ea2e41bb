// start(): serving on a background thread. It returns at once, serves, and stop() or the
// destructor stops and joins it; misuse is an error code, not a crash or a hang.
#include "support/loopback.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <string>

using namespace skiff_test;

namespace {

skiff::options two_worker_options() {
    skiff::options opt;
    opt.workers = 2;
    return opt;
}

template <class Policy>
void count_routes(skiff::basic_server<Policy>& app, std::atomic<int>& served) {
    app.get("/", [&served](skiff::request&, skiff::response& res) {
        ++served;
        res.text("bg");
    });
}

} // namespace

TEST_CASE_TEMPLATE("start() serves in the background, and stop() stops and joins", Policy, SKIFF_TEST_POLICIES) {
    std::atomic<int> served{0};
    skiff::basic_server<Policy> app(two_worker_options());
    count_routes(app, served);
    REQUIRE(!app.listen(0));
    REQUIRE(!app.start());  // returns while the server serves
    CHECK(app.start() == skiff::listen_errc::already_started);
    CHECK(app.listen(0) == skiff::listen_errc::already_started);
    for (int i = 0; i < 4; ++i) {
        client c(app.port());
        c.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        auto rs = read_responses(c, 1);
        REQUIRE(rs.size() == 1);
        CHECK(rs[0].body == "bg");
    }
    std::uint16_t port = app.port();
    app.stop();  // returns once the serving thread has finished
    CHECK(served.load() == 4);
    CHECK(!app.error());
    CHECK(connect_refused(port));
    app.stop();  // twice is fine
}

TEST_CASE_TEMPLATE("the destructor of a started server stops it and joins", Policy, SKIFF_TEST_POLICIES) {
    std::atomic<int> served{0};
    std::uint16_t port = 0;
    {
        skiff::basic_server<Policy> app(two_worker_options());
        count_routes(app, served);
        REQUIRE(!app.listen(0));
        port = app.port();
        REQUIRE(!app.start());
        client c(port);
        c.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        CHECK(read_responses(c, 1).size() == 1);
    }
    CHECK(served.load() == 1);
    CHECK(connect_refused(port));
}

TEST_CASE("start() before any listener is an error") {
    skiff::server app;
    std::error_code ec = app.start();
    CHECK(ec == skiff::listen_errc::no_listener);
    CHECK(ec.message().find("listen") != std::string::npos);
}

TEST_CASE_TEMPLATE("stop() from a handler of a started server returns, and the destructor joins", Policy,
                   SKIFF_TEST_POLICIES) {
    auto app = std::make_unique<skiff::basic_server<Policy>>(two_worker_options());
    skiff::basic_server<Policy>* self = app.get();
    app->get("/quit", [self](skiff::request&, skiff::response& res) {
        self->stop();  // on a serving thread: cannot wait for itself
        res.text("bye");
    });
    REQUIRE(!app->listen(0));
    REQUIRE(!app->start());
    client c(app->port());
    c.send("GET /quit HTTP/1.1\r\nHost: x\r\n\r\n");
    auto rs = read_responses(c, 1);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].body == "bye");
    app.reset();  // joins
}
