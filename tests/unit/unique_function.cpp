// detail::unique_function, the move-only callable the loop's services and the blocking pool
// keep: it holds move-only callables, small ones in place and big ones on the heap, moves
// them without copying, and destroys each exactly once.
#include <skiff/skiff.hpp>

#include <doctest/doctest.h>

#include <array>
#include <memory>
#include <string>
#include <utility>

using skiff::detail::unique_function;

namespace {

// Counts how many are alive, so a leak or a double destruction shows.
struct tracked {
    explicit tracked(int& alive) : alive_(&alive) { ++*alive_; }
    tracked(tracked&& o) noexcept : alive_(o.alive_) { ++*alive_; }
    tracked(const tracked&) = delete;
    ~tracked() { --*alive_; }
    int* alive_;
};

} // namespace

TEST_CASE("unique_function holds a move-only callable and calls it with its arguments") {
    unique_function<int(int)> f = [p = std::make_unique<int>(40)](int x) { return *p + x; };
    REQUIRE(static_cast<bool>(f));
    CHECK(f(2) == 42);
    unique_function<int(int)> g = std::move(f);
    CHECK_FALSE(static_cast<bool>(f));  // NOLINT: moved-from is empty, as documented
    CHECK(g(1) == 41);
    g = nullptr;
    CHECK_FALSE(static_cast<bool>(g));
}

TEST_CASE("unique_function destroys small and large callables exactly once, through moves") {
    int alive = 0;
    {
        unique_function<void()> small = [t = tracked(alive)] {};
        std::array<char, 256> pad{};
        unique_function<void()> large = [t = tracked(alive), pad] { (void)pad; };
        CHECK(alive == 2);
        unique_function<void()> moved = std::move(small);
        unique_function<void()> moved_large = std::move(large);
        CHECK(alive == 2);
        moved = std::move(moved_large);  // the small one goes, the large one is taken
        CHECK(alive == 1);
    }
    CHECK(alive == 0);
}

TEST_CASE("unique_function passes references through and returns what the callable returns") {
    std::string seen;
    unique_function<std::size_t(std::string&)> f = [](std::string& s) {
        s += "x";
        return s.size();
    };
    CHECK(f(seen) == 1);
    CHECK(seen == "x");
}
