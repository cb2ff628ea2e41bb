// What each policy compiles in: the single policy carries no synchronisation, so it is smaller.
#include <skiff/skiff.hpp>

#include <doctest/doctest.h>

#include <type_traits>

TEST_CASE("a single-policy loop carries no synchronisation: the sharded one is its size plus the link") {
    using single_loop = skiff::detail::event_loop<skiff::single>;
    using sharded_loop = skiff::detail::event_loop<skiff::sharded>;
    using link = skiff::detail::shard_link<sharded_loop>;
    CHECK(std::is_empty_v<skiff::detail::no_link>);
    CHECK(sizeof(single_loop) < sizeof(sharded_loop));
    // The difference is the link (stop flag pointer, mutex, inbox, peers), give or take padding.
    CHECK(sizeof(sharded_loop) - sizeof(single_loop) + alignof(std::max_align_t) >= sizeof(link));
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
    // The 512-byte budget per idle connection (measured end to end in limits.cpp) starts here.
    CHECK(sizeof(skiff::detail::connection) <= 256);
}
