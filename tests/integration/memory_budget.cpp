// options::max_buffered: the request and parked response bytes all connections together may
// buffer. Bodies beyond it wait (their connections are not read) and are read once others give
// memory back, so every request is still answered; a body that waits past its deadline gets
// its 408. While parked answers fill it, no new request is read until their clients take them.
#include "support/loopback.hpp"
#include "support/parked.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

using namespace skiff_test;

namespace {

template <class Policy>
void echo_routes(skiff::basic_server<Policy>& app) {
    app.post("/echo", [](skiff::request& req, skiff::response& res) { res.text(std::string(req.body())); });
}

// sharded splits the budget per loop: one loop keeps it exact. Under shared every worker
// serves every connection and the budget is kept for all of them at once: four workers, so
// grants, refusals and returns cross threads.
template <class Policy>
skiff::options small_budget() {
    skiff::options opt;
    opt.max_buffered = 4 * 1024 * 1024;  // room for one or two 1 MiB bodies at a time, not twenty
    opt.max_body = 2 * 1024 * 1024;
    opt.workers = std::is_same_v<Policy, skiff::shared> ? 4 : 1;
    return opt;
}

std::string upload(std::size_t size, char fill) {
    return "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(size) + "\r\n\r\n" +
           std::string(size, fill);
}

// The address space this process has mapped (VmSize), in bytes: malloc's heap, and the
// large buffers byte_buffer maps whole, counted when mapped rather than when first touched
// (a granted body's buffer holds its whole size at once, not what has arrived of it).
std::size_t mapped_bytes() {
    std::ifstream status("/proc/self/status");
    std::string key;
    std::size_t kib = 0;
    while (status >> key)
        if (key == "VmSize:" && status >> kib) break;
    return kib * 1024;
}

} // namespace

TEST_CASE_TEMPLATE("twenty 1 MiB bodies at once under a 4 MiB budget are all answered, each with its own bytes",
                   Policy, SKIFF_TEST_POLICIES) {
    running_server<Policy> srv(echo_routes<Policy>, small_budget<Policy>());
    constexpr int uploads = 20;
    constexpr std::size_t size = 1024 * 1024;
    std::vector<int> right(uploads, 0);
    std::vector<std::thread> senders;
    for (int i = 0; i < uploads; ++i) {
        senders.emplace_back([&, i] {
            client c(srv.port());
            char fill = static_cast<char>('a' + i % 26);
            c.send(upload(size, fill));
            auto rs = read_responses(c, 1, 20'000ms);
            right[static_cast<std::size_t>(i)] = rs.size() == 1 && rs[0].status == 200 && rs[0].body == std::string(size, fill);
        });
    }
    for (auto& t : senders) t.join();
    int answered = 0;
    for (int r : right) answered += r;
    CHECK(answered == uploads);
}

TEST_CASE_TEMPLATE("a body bigger than the whole budget is still read when nothing else holds any", Policy,
                   SKIFF_TEST_POLICIES) {
    skiff::options opt = small_budget<Policy>();
    opt.max_buffered = 256 * 1024;
    running_server<Policy> srv(echo_routes<Policy>, opt);
    client c(srv.port());
    c.send(upload(1024 * 1024, 'z'));
    auto rs = read_responses(c, 1, 5000ms);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].body == std::string(1024 * 1024, 'z'));
}

TEST_CASE_TEMPLATE("a body waiting for the budget past its deadline is answered 408, and the others go on", Policy,
                   SKIFF_TEST_POLICIES) {
    skiff::options opt = small_budget<Policy>();
    opt.max_buffered = 1024 * 1024;  // one body at a time
    opt.body_timeout = std::chrono::milliseconds(300);
    running_server<Policy> srv(echo_routes<Policy>, opt);
    client holder(srv.port()), waiter(srv.port());
    std::string head = "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 900000\r\n\r\n";
    holder.send(head + "h");  // granted: its whole body is reserved, then it stalls
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    waiter.send(head + "w");  // refused: it waits for memory that never frees
    auto rs = parse_responses(waiter.read_to_close(3000ms));
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].status == 408);
    auto hs = parse_responses(holder.read_to_close(3000ms));  // the holder stalled too: its own 408
    REQUIRE(hs.size() == 1);
    CHECK(hs[0].status == 408);
    client after(srv.port());  // the budget is whole again
    after.send(upload(900'000, 'q'));
    auto as = read_responses(after, 1, 3000ms);
    REQUIRE(as.size() == 1);
    CHECK(as[0].body == std::string(900'000, 'q'));
}

TEST_CASE_TEMPLATE("stalled uploads that declare large bodies hold no more than the budget together", Policy,
                   SKIFF_TEST_POLICIES) {
    if (sanitized) return;  // the sanitizers' allocators map their own arenas and shadow
    skiff::options opt = small_budget<Policy>();
    opt.workers = 1;  // each thread's first allocation maps a malloc arena: only one is warmed here
    running_server<Policy> srv(echo_routes<Policy>, opt);
    {  // the loop thread's first allocations make its malloc arena (64 MiB of address space)
        client warm(srv.port());
        warm.send(upload(1000, 'w'));
        REQUIRE(read_responses(warm, 1, 3000ms).size() == 1);
    }
    std::vector<std::unique_ptr<client>> clients;
    clients.reserve(20);
    std::size_t before = mapped_bytes();
    for (int i = 0; i < 20; ++i) {  // each declares 1 MiB and sends one byte, then a second
        clients.push_back(std::make_unique<client>(srv.port()));
        clients.back()->send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\nx");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    for (auto& c : clients) c->send("x");
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::size_t after = mapped_bytes();
    std::size_t growth = after > before ? after - before : 0;
    MESSAGE("address space growth for 20 stalled 1 MiB uploads under a 4 MiB budget: " << growth / 1024 << " KiB");
    CHECK(growth < 4u * 1024 * 1024 + 20u * 128 * 1024);  // the budget plus a request buffer each
}

// Parked output counts too: answers a client does not take hold the budget, and while it is
// full no connection reads a new request (its answer could only add to it). Once the client
// reads, every connection that waited is read and answered.
TEST_CASE_TEMPLATE("an answer the client does not read holds the budget: new requests wait until it is taken", Policy,
                   SKIFF_TEST_POLICIES) {
    skiff::options opt = small_budget<Policy>();
    opt.max_buffered = 1024 * 1024;
    opt.write_timeout = std::chrono::milliseconds(10'000);
    constexpr std::size_t big = 32u * 1024 * 1024;  // far more than loopback's socket buffers take
    running_server<Policy> srv(
        [](skiff::basic_server<Policy>& app) {
            app.get("/big", [](skiff::request&, skiff::response& res) { res.text(std::string(big, 'b')); });
            app.get("/small", [](skiff::request&, skiff::response& res) { res.text("small"); });
        },
        opt);
    client slow(srv.port());
    slow.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n");  // and does not read, for now
    // The answer is built whole before its first byte leaves, so once one read of it arrived
    // the rest is parked (under shared, other workers may read new requests before that).
    std::string first = slow.read_some(5000ms);
    REQUIRE(!first.empty());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));

    std::vector<std::unique_ptr<client>> waiting;
    for (int i = 0; i < 3; ++i) {
        waiting.push_back(std::make_unique<client>(srv.port()));
        waiting.back()->send("GET /small HTTP/1.1\r\nHost: x\r\n\r\n");
    }
    CHECK(waiting[0]->read_some(300ms).empty());  // not read: the budget holds /big's answer

    auto whole = [&](const std::string& s) { return first.size() + s.size() > big && parse_responses(first + s).size() == 1; };
    auto rest = slow.read_until(whole, 20'000ms);
    auto rs = parse_responses(first + rest);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].body.size() == big);
    for (auto& w : waiting) {  // the budget is free: each of them is read and answered
        auto ws = read_responses(*w, 1, 3000ms);
        REQUIRE(ws.size() == 1);
        CHECK(ws[0].body == "small");
    }
}

namespace {

// Whether the server ended fd's connection within `limit`: reads (and drops) what is there,
// until EOF or a reset.
bool ended_by_server(int fd, std::chrono::milliseconds limit) {
    auto end = std::chrono::steady_clock::now() + limit;
    char buf[65536];
    while (std::chrono::steady_clock::now() < end) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 50) <= 0) continue;
        if (::recv(fd, buf, sizeof buf, 0) <= 0) return true;
    }
    return false;
}

} // namespace

// Push output has its own share of the budget (half of it): past that, the stream stalled
// longest is closed, rather than no connection being read. So subscribers that never read
// cannot keep a reading client from being served, however many there are, even though each
// stays under max_push_buffer.
TEST_CASE_TEMPLATE("push streams whose clients do not read are shed past their share; a reading client is served",
                   Policy, SKIFF_TEST_POLICIES) {
    skiff::options opt = small_budget<Policy>();
    opt.max_buffered = 1024 * 1024;  // push output's share: 512 KiB
    opt.max_push_buffer = 64u << 20;  // no stream reaches its own bound: only the sum can cut them
    opt.write_timeout = std::chrono::milliseconds(60'000);  // nor its write deadline
    skiff_test::parked waiting;
    // The subscribers come over a Unix socket, whose kernel buffers stay small (loopback TCP
    // grows a sender's to 4 MiB), so what they do not read parks in the server soon.
    static int serial = 0;
    std::string path = "/tmp/skiff-shed-" + std::to_string(::getpid()) + "-" + std::to_string(++serial) + ".sock";
    running_server<Policy> srv([&](skiff::basic_server<Policy>& app) {
        app.get("/events", [&](skiff::request&, skiff::response& res) { waiting.put(res.defer()); });
        app.get("/", [](skiff::request&, skiff::response& res) { res.text("up"); });
        REQUIRE(!app.listen_unix(path));
    }, opt);
    // Subscriber i's stream is streams[i]: each subscribes once the one before has its handle.
    constexpr std::size_t silent = 16;  // they send their request and never read
    std::vector<std::unique_ptr<client>> subscribers;
    std::vector<skiff::push_stream> streams;
    for (std::size_t i = 0; i <= silent; ++i) {
        subscribers.push_back(std::make_unique<client>(unix_address{path}));
        subscribers.back()->send("GET /events HTTP/1.1\r\nHost: x\r\n\r\n");
        auto handle = waiting.take(1);
        REQUIRE(handle.size() == 1);
        streams.push_back(handle[0]->stream("text/event-stream"));
    }
    client& reading = *subscribers[silent];  // the last one reads all it is sent
    std::atomic<bool> done{false};
    std::atomic<std::size_t> received{0};
    std::thread reader([&] {
        while (!done.load() && !reading.closed()) received += reading.read_some(20ms).size();
    });

    // 2 MiB to each, 32 MiB in all: far past the budget, each far under its own bound.
    std::string piece(16 * 1024, 'x');
    for (int round = 0; round < 128; ++round) {
        for (auto& s : streams)
            if (!s.closed()) s.write(piece);
        std::this_thread::sleep_for(1ms);  // let the loop apply and park them as they come
    }
    client asking(srv.port());  // a new request is read and answered meanwhile
    asking.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    auto rs = read_responses(asking, 1, 3000ms);
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].body == "up");
    auto until = std::chrono::steady_clock::now() + 3s;  // the reading subscriber gets every byte
    while (received.load() < 128 * piece.size() && !reading.closed() && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(5ms);
    done = true;
    reader.join();
    CHECK_FALSE(streams[silent].closed());  // and is not shed
    CHECK_FALSE(reading.closed());
    CHECK(received.load() > 128 * piece.size());
    std::size_t shed = 0;
    for (std::size_t i = 0; i < silent; ++i) shed += streams[i].closed() ? 1 : 0;
    CHECK(shed > 0);
    std::size_t ended = 0;
    for (std::size_t i = 0; i < silent; ++i)
        if (streams[i].closed() && ended_by_server(subscribers[i]->fd(), 3000ms)) ++ended;
    CHECK(ended == shed);  // a shed stream's connection is closed, not left open
    ::unlink(path.c_str());
}
