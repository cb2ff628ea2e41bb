// Responses cut from the bytes a client read: status, head (Date masked) and body. No skiff
// header here, so unit tests of one part parse what they serve without the whole server.
#ifndef SKIFF_TESTS_SUPPORT_RESPONSES_HPP
#define SKIFF_TESTS_SUPPORT_RESPONSES_HPP

#include <cctype>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace skiff_test {

// One response cut from a byte stream.
struct response {
    int status = 0;
    std::string head;  // status line and fields, Date value masked
    std::string body;
    std::string header(const std::string& name) const {
        std::string lower_head = head;
        for (auto& ch : lower_head) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        std::string key = "\r\n" + name + ": ";
        for (auto& ch : key) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        auto at = lower_head.find(key);
        if (at == std::string::npos) return {};
        auto start = at + key.size();
        return head.substr(start, head.find("\r\n", start) - start);
    }
};

// True when s holds an IMF-fixdate at `at` ("Sun, 06 Nov 1994 08:49:37 GMT", RFC 9110 §5.6.7),
// by the shape of each character. A hand check rather than std::regex: the regex engine's
// instantiation doubled the compile time of every test file that included this.
inline bool is_imf_fixdate(const std::string& s, std::size_t at) {
    static constexpr char shape[] = "Aaa, 00 Aaa 0000 00:00:00 GMT";  // A upper, a lower, 0 digit
    constexpr std::size_t n = sizeof shape - 1;
    if (s.size() - at < n) return false;
    for (std::size_t i = 0; i < n; ++i) {
        unsigned char c = static_cast<unsigned char>(s[at + i]);
        bool ok = shape[i] == 'A' ? std::isupper(c) != 0
                : shape[i] == 'a' ? std::islower(c) != 0
                : shape[i] == '0' ? std::isdigit(c) != 0
                                  : c == static_cast<unsigned char>(shape[i]);
        if (!ok) return false;
    }
    return true;
}

// Every "Date: <IMF-fixdate>" in s becomes "Date: <date>", so exact bytes can be compared.
inline std::string mask_date(std::string s) {
    static constexpr std::string_view key = "Date: ", masked = "<date>";
    for (std::size_t at = s.find(key); at != std::string::npos; at = s.find(key, at + 1)) {
        if (is_imf_fixdate(s, at + key.size())) s.replace(at + key.size(), 29, masked);
    }
    return s;
}

// Splits a stream of responses framed by Content-Length (or none: 1xx, 204, 304, HEAD when
// head_only). Stops at the first incomplete one.
inline std::vector<response> parse_responses(const std::string& stream, bool head_only = false) {
    std::vector<response> out;
    std::size_t off = 0;
    while (off < stream.size()) {
        auto end = stream.find("\r\n\r\n", off);
        if (end == std::string::npos) break;
        response r;
        r.head = mask_date(stream.substr(off, end + 2 - off));
        r.status = std::stoi(stream.substr(off + 9, 3));
        std::string cl = r.header("Content-Length");
        std::size_t len = (cl.empty() || head_only) ? 0 : std::stoul(cl);
        if (end + 4 + len > stream.size()) break;
        r.body = stream.substr(end + 4, len);
        off = end + 4 + len;
        out.push_back(std::move(r));
    }
    return out;
}

} // namespace skiff_test

#endif // SKIFF_TESTS_SUPPORT_RESPONSES_HPP
