// Latency histogram of the load generator, in nanoseconds, with the HdrHistogram layout:
// values below 256 ns are counted exactly; above that, each power of two is cut into 128
// equal buckets. A bucket is then at most 1/128 of its lower bound wide, and its midpoint is
// within 0.4% of every value in it: exact to 1% over the whole range, 1 us to 60 s.
// Recording is two shifts and an add; nothing allocates after construction.
#ifndef SKIFF_BENCH_LOADGEN_HISTOGRAM_HPP
#define SKIFF_BENCH_LOADGEN_HISTOGRAM_HPP

#include <algorithm> // std::min, std::max
#include <cmath>     // std::ceil
#include <cstddef>   // std::size_t
#include <cstdint>   // std::uint64_t
#include <vector>    // bucket counts

namespace loadgen {

class histogram {
public:
    static constexpr int sub_bits = 7;                      // 128 buckets per power of two
    static constexpr int top_exponent = 36;                 // 2^36 ns = 68.7 s, above the 60 s asked for
    static constexpr std::uint64_t top_value = (std::uint64_t{1} << top_exponent) - 1;
    // Indexes run up to (top_exponent - 1 - sub_bits) * 128 + 255: 3,840 buckets, 30 KiB.
    static constexpr std::size_t bucket_count = std::size_t{top_exponent - sub_bits + 1} << sub_bits;

    histogram() : counts_(bucket_count, 0) {}

    void record(std::uint64_t ns) noexcept {
        if (ns > top_value) {
            ++overflow_;
            ns = top_value;
        }
        ++counts_[index_of(ns)];
        ++total_;
        sum_ += ns;
        min_ = std::min(min_, ns);
        max_ = std::max(max_, ns);
    }

    void clear() noexcept {
        std::fill(counts_.begin(), counts_.end(), 0);
        total_ = sum_ = overflow_ = max_ = 0;
        min_ = ~std::uint64_t{0};
    }

    std::uint64_t total() const noexcept { return total_; }
    std::uint64_t overflow() const noexcept { return overflow_; }
    std::uint64_t min() const noexcept { return total_ ? min_ : 0; }
    std::uint64_t max() const noexcept { return max_; }
    double mean() const noexcept { return total_ ? static_cast<double>(sum_) / static_cast<double>(total_) : 0; }

    // The value at quantile q in [0, 1]: the midpoint of the bucket holding the ceil(q * total)-th
    // smallest value (the exact minimum and maximum at the ends).
    std::uint64_t at_quantile(double q) const noexcept {
        if (total_ == 0) return 0;
        if (q >= 1.0) return max_;
        auto rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(total_)));
        if (rank == 0) return min();
        std::uint64_t seen = 0;
        for (std::size_t i = 0; i < counts_.size(); ++i) {
            seen += counts_[i];
            if (seen >= rank) return std::min(std::max(midpoint(i), min()), max_);
        }
        return max_;
    }

    std::size_t size() const noexcept { return counts_.size(); }
    std::uint64_t count_at(std::size_t i) const noexcept { return counts_[i]; }

    // Bucket i holds [lower(i), lower(i) + width(i)).
    static std::uint64_t lower(std::size_t i) noexcept {
        std::size_t shift = i >> sub_bits;
        if (shift == 0) return i;
        shift -= 1;
        return static_cast<std::uint64_t>(i - (shift << sub_bits)) << shift;
    }
    static std::uint64_t width(std::size_t i) noexcept {
        std::size_t shift = i >> sub_bits;
        return shift == 0 ? 1 : std::uint64_t{1} << (shift - 1);
    }
    static std::uint64_t midpoint(std::size_t i) noexcept { return lower(i) + (width(i) - 1) / 2; }

    // shift = how far v must move right to leave 8 significant bits (0 below 256); the bucket is
    // then shift * 128 plus those bits, which lie in [128, 256) once shift > 0.
    static std::size_t index_of(std::uint64_t v) noexcept {
        int top_bit = 63 - __builtin_clzll(v | 1);
        int shift = top_bit > sub_bits ? top_bit - sub_bits : 0;
        return (static_cast<std::size_t>(shift) << sub_bits) + static_cast<std::size_t>(v >> shift);
    }

private:
    std::vector<std::uint64_t> counts_;
    std::uint64_t total_ = 0;
    std::uint64_t sum_ = 0;
    std::uint64_t overflow_ = 0;
    std::uint64_t min_ = ~std::uint64_t{0};
    std::uint64_t max_ = 0;
};

} // namespace loadgen

#endif // SKIFF_BENCH_LOADGEN_HISTOGRAM_HPP
