// byte_buffer: a growable run of bytes that is never zero-filled, for the loop's read and
// write buffers and a connection's leftovers. Invariant: data()[0, size()) is the content and
// data()[size(), capacity()) is writable room; capacity() is 0 or a power of two (growth
// doubles from 256). release() gives the memory back so an idle connection holds none.
//
// Small buffers come from malloc; from mapped_from up they are mapped from the kernel and
// unmapped on release, so a burst of large bodies leaves no grown heap behind: from malloc,
// the first large free raises glibc's mmap threshold, later bodies land in its per-thread
// heaps, and those kept the pages (measured: 300 x 1 MiB echoes on two loops, RSS after a
// second burst 15-43 MiB against 11-21 MiB after the first; unmapped, back to the same).
#ifndef SKIFF_DETAIL_BYTE_BUFFER_HPP
#define SKIFF_DETAIL_BYTE_BUFFER_HPP

#include "skiff/config.hpp"

#include <cstddef>  // std::size_t
#include <cstdlib>  // std::malloc, std::realloc, std::free, std::abort
#include <cstring>  // std::memcpy, std::memmove

#include <sys/mman.h>  // mmap, munmap: large buffers

namespace skiff::detail {

class byte_buffer {
public:
    byte_buffer() noexcept = default;
    byte_buffer(const byte_buffer&) = delete;
    byte_buffer& operator=(const byte_buffer&) = delete;
    byte_buffer(byte_buffer&& o) noexcept : data_(o.data_), size_(o.size_), cap_(o.cap_) {
        o.data_ = nullptr;
        o.size_ = o.cap_ = 0;
    }
    byte_buffer& operator=(byte_buffer&& o) noexcept {
        if (this != &o) {
            free_storage(data_, cap_);
            data_ = o.data_;
            size_ = o.size_;
            cap_ = o.cap_;
            o.data_ = nullptr;
            o.size_ = o.cap_ = 0;
        }
        return *this;
    }
    ~byte_buffer() { free_storage(data_, cap_); }

    char* data() noexcept { return data_; }
    const char* data() const noexcept { return data_; }
    std::size_t size() const noexcept { return size_; }
    std::size_t capacity() const noexcept { return cap_; }
    std::size_t room() const noexcept { return cap_ - size_; }
    bool empty() const noexcept { return size_ == 0; }

    // Makes room for at least n more bytes. Out of memory is fatal: a server that cannot
    // allocate a few KiB has no sensible way on, and no exception may leave the hot path.
    // The check inlines; growing, which the steady state never does, stays a call (measured:
    // contract app 1,221 -> 1,210 instructions a request).
    void reserve_more(std::size_t n) {
        if (cap_ - size_ < n) grow(n);
    }

    // The capacity reserve_more(n) leaves, asked before it is done (a memory budget asks).
    std::size_t capacity_after_reserving(std::size_t n) const noexcept {
        if (cap_ - size_ >= n) return cap_;
        std::size_t cap = cap_ ? cap_ : 256;
        while (cap - size_ < n) cap *= 2;
        return cap;
    }

    // Writable room of at least n bytes at the end; commit() what was written.
    char* prepare(std::size_t n) {
        reserve_more(n);
        return data_ + size_;
    }
    void commit(std::size_t n) noexcept { size_ += n; }

    void append(const char* p, std::size_t n) {
        if (n == 0) return;
        std::memcpy(prepare(n), p, n);
        size_ += n;
    }

    void resize(std::size_t n) noexcept { size_ = n; }  // n <= capacity()
    void clear() noexcept { size_ = 0; }

    // Drops the first n bytes, moving the rest to the front.
    void consume(std::size_t n) noexcept {
        if (n < size_) std::memmove(data_, data_ + n, size_ - n);
        size_ = n < size_ ? size_ - n : 0;
    }

    void release() noexcept {
        free_storage(data_, cap_);
        data_ = nullptr;
        size_ = cap_ = 0;
    }

    static constexpr std::size_t mapped_from = 256 * 1024;  // a power of two

private:
    SKIFF_NOINLINE void grow(std::size_t n) {
        std::size_t cap = capacity_after_reserving(n);
        char* p = cap < mapped_from ? static_cast<char*>(std::realloc(data_, cap)) : moved_to_mapping(cap);
        if (p == nullptr) std::abort();
        data_ = p;
        cap_ = cap;
    }

    // A fresh mapping of cap bytes holding the content; the old storage is freed.
    char* moved_to_mapping(std::size_t cap) noexcept {
        void* p = ::mmap(nullptr, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return nullptr;
        if (size_ != 0) std::memcpy(p, data_, size_);
        free_storage(data_, cap_);
        return static_cast<char*>(p);
    }

    // Whether storage is mapped follows from its capacity alone (the invariant above).
    static void free_storage(char* p, std::size_t cap) noexcept {
        if (cap >= mapped_from) ::munmap(p, cap);
        else std::free(p);
    }

    char* data_ = nullptr;
    std::size_t size_ = 0;
    std::size_t cap_ = 0;
};

} // namespace skiff::detail

#endif // SKIFF_DETAIL_BYTE_BUFFER_HPP
