// Decoding a chunked body as a client would, for the tests of streamed and pushed bodies.
#ifndef SKIFF_TESTS_SUPPORT_DECHUNK_HPP
#define SKIFF_TESTS_SUPPORT_DECHUNK_HPP

#include <string>

namespace skiff_test {

// Decodes `in`, a whole chunked body (the bytes after the head, to the end of its last chunk),
// into `out`; false if the framing is wrong, unfinished, or followed by anything.
inline bool dechunk(const std::string& in, std::string& out) {
    std::size_t at = 0;
    for (;;) {
        std::size_t eol = in.find("\r\n", at);
        if (eol == std::string::npos) return false;
        std::size_t size = std::stoul(in.substr(at, eol - at), nullptr, 16);
        at = eol + 2;
        if (size == 0) return in.compare(at, 2, "\r\n") == 0 && at + 2 == in.size();
        if (at + size + 2 > in.size() || in.compare(at + size, 2, "\r\n") != 0) return false;
        out += in.substr(at, size);
        at += size + 2;
    }
}

} // namespace skiff_test

#endif // SKIFF_TESTS_SUPPORT_DECHUNK_HPP
