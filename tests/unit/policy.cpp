// What each policy compiles in, and the interface every connection set offers the loop.
// Only the part under test (a unit test compiles in about a second); the single-header
// configuration has no parts on its include path, so there it takes the whole file.
#ifdef SKIFF_TEST_SINGLE_HEADER
#include <skiff/skiff.hpp>
#else
#include <skiff/policy/runners.hpp>
#endif

#include <doctest/doctest.h>

#include <type_traits>

TEST_CASE("each policy's loop serves the connection set made for it, and each set passes the interface check") {
    using skiff::detail::connection_set_for;
    CHECK(std::is_same_v<connection_set_for<skiff::single>, skiff::detail::local_set>);
    CHECK(std::is_same_v<connection_set_for<skiff::sharded>, skiff::detail::sharded_set>);
    CHECK(std::is_same_v<connection_set_for<skiff::shared>, skiff::detail::shared_set>);
    CHECK(skiff::detail::is_connection_set<skiff::detail::local_set>);
    CHECK(skiff::detail::is_connection_set<skiff::detail::sharded_set>);
    CHECK(skiff::detail::is_connection_set<skiff::detail::shared_set>);
    // A set that lacks one member of the interface is told apart.
    struct incomplete : skiff::detail::local_set {
        int size = 0;  // hides the member function: not a set any more
    };
    CHECK_FALSE(skiff::detail::is_connection_set<incomplete>);
    // The memory budget is part of it: the session asks every set the same.
    struct without_budget : skiff::detail::shared_set {
        int budget_full = 0;
    };
    CHECK_FALSE(skiff::detail::is_connection_set<without_budget>);
}

TEST_CASE("a single-policy set carries no synchronisation: the sharded one is its size plus the hand-over") {
    using skiff::detail::local_set;
    using skiff::detail::sharded_set;
    // The difference is the stop flag pointer, the inbox mutex, the inbox and the peers.
    CHECK(sizeof(sharded_set) >= sizeof(local_set) + sizeof(std::mutex) + 2 * sizeof(std::vector<int>));
}

TEST_CASE("policies are recognised through derivation, and only one at a time") {
    struct mine : skiff::sharded {};
    struct two : skiff::single, skiff::shared {};
    CHECK(skiff::detail::is_policy<skiff::single>);
    CHECK(skiff::detail::is_policy<mine>);
    CHECK(skiff::detail::is_sharded<mine>);
    CHECK_FALSE(skiff::detail::is_policy<two>);
    CHECK_FALSE(skiff::detail::is_policy<int>);
}

TEST_CASE("an idle connection's bookkeeping stays small") {
    // The 200-byte budget per idle connection (measured end to end in limits.cpp) starts here.
    CHECK(sizeof(skiff::detail::connection) <= 160);
}
