// Guard pages around parser input (the picohttpparser test.c trick): a copy of the input is
// placed so that it ends exactly where a PROT_NONE page begins (or starts exactly where one
// ends), so a read one byte past the end (or before the start) faults at once instead of
// reading whatever follows. The parser promises to read only within [buf, buf + len) and
// assumes no padding; this turns that promise into a crash when it is broken.
#ifndef SKIFF_TESTS_SUPPORT_GUARD_PAGE_HPP
#define SKIFF_TESTS_SUPPORT_GUARD_PAGE_HPP

#include <sys/mman.h>  // mmap, mprotect, munmap
#include <unistd.h>    // sysconf(_SC_PAGESIZE)

#include <cstddef>    // std::size_t
#include <cstdlib>    // std::abort
#include <cstring>    // std::memcpy

namespace skiff_test {

// [PROT_NONE page][capacity, rounded up to pages, read-write][PROT_NONE page]
class guarded_region {
public:
    explicit guarded_region(std::size_t capacity) {
        page_ = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
        data_size_ = (capacity + page_ - 1) / page_ * page_;
        if (data_size_ == 0) data_size_ = page_;
        void* m = ::mmap(nullptr, data_size_ + 2 * page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) std::abort();
        base_ = static_cast<char*>(m);
        if (::mprotect(base_, page_, PROT_NONE) != 0) std::abort();
        if (::mprotect(base_ + page_ + data_size_, page_, PROT_NONE) != 0) std::abort();
    }
    guarded_region(const guarded_region&) = delete;
    guarded_region& operator=(const guarded_region&) = delete;
    ~guarded_region() { ::munmap(base_, data_size_ + 2 * page_); }

    std::size_t capacity() const noexcept { return data_size_; }

    // Copies data[0, n) so that its last byte is the last readable byte; returns its start.
    // The copy is writable: the chunked decoder works in place.
    char* place_at_end(const char* data, std::size_t n) noexcept {
        if (n > data_size_) std::abort();
        char* at = base_ + page_ + data_size_ - n;
        if (n != 0) std::memcpy(at, data, n);
        return at;
    }

    // Copies data[0, n) so that the byte before it is unreadable; returns its start.
    char* place_at_start(const char* data, std::size_t n) noexcept {
        if (n > data_size_) std::abort();
        char* at = base_ + page_;
        if (n != 0) std::memcpy(at, data, n);
        return at;
    }

private:
    char* base_ = nullptr;
    std::size_t page_ = 0;
    std::size_t data_size_ = 0;
};

} // namespace skiff_test

#endif // SKIFF_TESTS_SUPPORT_GUARD_PAGE_HPP
