// detail::byte_buffer: content survives every growth, including the move from malloc to a
// mapping at mapped_from, and a large buffer's pages leave the process when it is released
// (the memory budget's "freed memory is not a growing heap").
// Only the part under test (a unit test compiles in about a second); the single-header
// configuration has no parts on its include path, so there it takes the whole file.
#ifdef SKIFF_TEST_SINGLE_HEADER
#include <skiff/skiff.hpp>
#else
#include <skiff/detail/byte_buffer.hpp>
#endif

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>
#include <utility>

namespace {

using skiff::detail::byte_buffer;

constexpr std::size_t mapped_from = byte_buffer::mapped_from;

// Appends n bytes of a pattern that tells every position apart (mod 251, a prime).
void fill(byte_buffer& b, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        char c = static_cast<char>((b.size() % 251) + 1);
        b.append(&c, 1);
    }
}

bool holds_pattern(const byte_buffer& b, std::size_t from = 0) {
    for (std::size_t i = 0; i < b.size(); ++i)
        if (b.data()[i] != static_cast<char>(((i + from) % 251) + 1)) return false;
    return true;
}

#if defined(__linux__)
// Whether an address lies in any mapping of this process (/proc/self/maps).
bool is_mapped(const void* p) {
    auto at = reinterpret_cast<std::uintptr_t>(p);
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
        std::size_t dash = line.find('-');
        std::uintptr_t lo = std::stoull(line.substr(0, dash), nullptr, 16);
        std::uintptr_t hi = std::stoull(line.substr(dash + 1), nullptr, 16);
        if (at >= lo && at < hi) return true;
    }
    return false;
}
#endif

} // namespace

TEST_CASE("byte_buffer: capacity doubles from 256, so whether it is mapped follows from it") {
    byte_buffer b;
    CHECK(b.capacity() == 0);
    b.reserve_more(1);
    CHECK(b.capacity() == 256);
    CHECK(b.capacity_after_reserving(257) == 512);
    b.reserve_more(mapped_from - 1);
    CHECK(b.capacity() == mapped_from);
    CHECK(b.capacity_after_reserving(mapped_from + 1) == 2 * mapped_from);
}

TEST_CASE("byte_buffer: content survives growth from malloc into a mapping and further") {
    byte_buffer b;
    fill(b, 1000);
    fill(b, mapped_from);  // crosses mapped_from: copied into a fresh mapping
    CHECK(b.capacity() >= mapped_from);
    fill(b, 3 * mapped_from);  // mapping to a larger mapping
    CHECK(b.size() == 1000 + 4 * mapped_from);
    CHECK(holds_pattern(b));

    b.consume(1000);
    CHECK(b.size() == 4 * mapped_from);
    CHECK(holds_pattern(b, 1000));

    byte_buffer moved(std::move(b));
    CHECK(b.capacity() == 0);
    CHECK(moved.size() == 4 * mapped_from);
    byte_buffer assigned;
    fill(assigned, 10);
    assigned = std::move(moved);  // frees the small one, takes the mapping
    CHECK(holds_pattern(assigned, 1000));
}

#if defined(__linux__)
TEST_CASE("byte_buffer: a large buffer's pages leave the process on release and on destruction") {
    byte_buffer large;
    large.reserve_more(4 * mapped_from);
    fill(large, 4 * mapped_from);
    const char* storage = large.data();
    REQUIRE(is_mapped(storage));
    large.release();
    CHECK(large.capacity() == 0);
    CHECK_FALSE(is_mapped(storage));

    {
        byte_buffer scoped;
        fill(scoped, mapped_from + 1);
        storage = scoped.data();
        REQUIRE(is_mapped(storage));
    }
    CHECK_FALSE(is_mapped(storage));  // the destructor unmaps too
}
#endif
