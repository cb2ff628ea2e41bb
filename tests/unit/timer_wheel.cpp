// The timing wheel: deadlines fire on the first expire() at or after them, never before,
// in any order of arming; lazy re-arming moves a node when its old slot comes round.
// Only the part under test (a unit test compiles in about a second); the single-header
// configuration has no parts on its include path, so there it takes the whole file.
#ifdef SKIFF_TEST_SINGLE_HEADER
#include <skiff/skiff.hpp>
#else
#include <skiff/engine/timer_wheel.hpp>
#endif

#include <doctest/doctest.h>

#include <vector>

using skiff::detail::timer_node;
using skiff::detail::timer_wheel;

namespace {

std::vector<timer_node*> expire(timer_wheel& w, std::int64_t now) {
    std::vector<timer_node*> fired;
    w.expire(now, [&](timer_node& n) { fired.push_back(&n); });
    return fired;
}

} // namespace

TEST_CASE("a deadline fires at its tick, not before") {
    timer_wheel w;
    w.init(1000, 10, 64);
    timer_node n;
    w.arm(n, 1055);
    CHECK(expire(w, 1050).empty());
    CHECK(expire(w, 1059).empty());  // 1055 rounds up to the tick at 1060
    CHECK(expire(w, 1060) == std::vector<timer_node*>{&n});
    CHECK_FALSE(n.armed());
    CHECK(w.empty());
}

TEST_CASE("arming later is lazy, and arming earlier moves the node at once") {
    timer_wheel w;
    w.init(0, 10, 64);
    timer_node n;
    w.arm(n, 100);
    w.arm(n, 300);  // later: stays in the 100 slot, moves when it comes round
    CHECK(expire(w, 200).empty());
    CHECK(n.armed());
    CHECK(expire(w, 300) == std::vector<timer_node*>{&n});
    w.arm(n, 500);
    w.arm(n, 350);  // earlier: must not wait for the 500 slot
    CHECK(expire(w, 350) == std::vector<timer_node*>{&n});
}

TEST_CASE("deadlines longer than the wheel go round more than once") {
    timer_wheel w;
    w.init(0, 10, 16);  // spans 160 ms
    timer_node n;
    w.arm(n, 1000);
    for (std::int64_t t = 10; t < 1000; t += 10) REQUIRE(expire(w, t).empty());
    CHECK(expire(w, 1000) == std::vector<timer_node*>{&n});
}

TEST_CASE("a long gap between expire() calls fires everything that is due, once") {
    timer_wheel w;
    w.init(0, 10, 16);
    std::vector<timer_node> nodes(40);
    for (std::size_t i = 0; i < nodes.size(); ++i) w.arm(nodes[i], static_cast<std::int64_t>(i * 25));
    auto fired = expire(w, 10000);  // far past every deadline and the whole wheel
    CHECK(fired.size() == nodes.size());
    CHECK(w.empty());
}

TEST_CASE("disarm removes, and a callback may re-arm the node it was given") {
    timer_wheel w;
    w.init(0, 10, 64);
    timer_node a, b;
    w.arm(a, 50);
    w.arm(b, 50);
    w.disarm(a);
    int calls = 0;
    w.expire(50, [&](timer_node& n) {
        ++calls;
        w.arm(n, 60);  // e.g. a 408 moving the connection to its linger deadline
    });
    CHECK(calls == 1);
    CHECK(b.armed());
    CHECK(expire(w, 60) == std::vector<timer_node*>{&b});
}

TEST_CASE("expire() calls within one tick skip the slots, and a deadline re-armed later each time still fires") {
    timer_wheel w;
    w.init(0, 10, 64);
    timer_node n;
    for (std::int64_t now = 1; now <= 95; now += 2) {  // a request every 2 ms: the deadline moves on
        w.arm(n, now + 50);
        CHECK(expire(w, now).empty());
    }
    CHECK(n.armed());
    CHECK(expire(w, 144).empty());  // the last deadline was 95 + 50 = 145: the tick at 150
    CHECK(expire(w, 149).empty());
    CHECK(expire(w, 150) == std::vector<timer_node*>{&n});
}
