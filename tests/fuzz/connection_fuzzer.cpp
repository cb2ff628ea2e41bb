// Whole-connection fuzz target: the input is what one client sends on one TCP connection to
// a real server (single policy, default options, in a background thread of this process);
// the client then half-closes and reads everything the server writes until it closes. So
// framing, pipelining, the router, the response writer and the close rules run together.
//
// The same bytes are parsed by the message parser as a reference (tests/support/
// split_feed.hpp), which says how many complete requests the stream holds and whether it
// ends in a framing error. Properties asserted (abort with a message on failure):
//  - every response is well formed: "HTTP/1.1 NNN reason", token field names, a Date (not
//    on 1xx), and a Content-Length that frames its body (none for HEAD, 1xx, 204 and 304);
//  - final responses (1xx aside) answer the requests in order, one each: never more
//    responses than complete requests, plus one for a framing error; an echo route shows
//    each 200 answers its own request (method, path, body size);
//  - answering stops at the first request that ends the connection (Connection: close,
//    HTTP/1.0 without keep-alive) and at the error answer, which says Connection: close:
//    nothing after a framing error is read as a request;
//  - a last head that asks 100-continue, its body unsent, gets either nothing final or a
//    refusal (4xx/5xx, Connection: close) sent without waiting for the body.
#include "support/loopback.hpp"
#include "support/split_feed.hpp"

#include <skiff/skiff.hpp>

#include <arpa/inet.h>   // htonl, htons
#include <netinet/in.h>  // sockaddr_in
#include <poll.h>        // poll for the read deadline
#include <sys/socket.h>  // shutdown

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint8_t
#include <cstdio>       // std::fprintf for property failures
#include <cerrno>       // errno for a failed connect
#include <cstdlib>      // std::abort
#include <cstring>      // std::strerror
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

namespace {

[[noreturn]] void fail(const char* property, std::string_view input, const std::string& output) {
    std::fprintf(stderr, "property failed: %s\ninput (%zu bytes):\n%.*s\noutput:\n%s\n", property, input.size(),
                 static_cast<int>(input.size() < 600 ? input.size() : 600), input.data(), output.c_str());
    std::abort();
}

void echo(skiff::request& req, skiff::response& res) {
    res.text(std::string(req.method()) + " " + std::string(req.path()) + " " + std::to_string(req.body().size()));
}

skiff_test::running_server<skiff::single>& server() {
    static skiff_test::running_server<skiff::single> srv([](skiff::server& app) {
        for (const char* m : {"GET", "POST", "PUT", "DELETE", "PATCH"}) {
            app.route(m, "/", echo);
            app.route(m, "/*path", echo);
        }
    });
    return srv;
}

// A connection from a new loopback address each time: the server closes first, so each
// exchange leaves a TIME_WAIT behind, and hundreds of thousands of runs from one address
// would use up its ports.
skiff::detail::unique_fd connect_from_next_address(std::uint16_t port, std::string_view input) {
    static std::uint32_t next = 0;
    ++next;
    skiff::detail::unique_fd fd(::socket(AF_INET, SOCK_STREAM, 0));
    sockaddr_in from{};
    from.sin_family = AF_INET;
    from.sin_addr.s_addr = htonl(0x7f000000u | (1 + next % 250) << 16 | (1 + next / 250 % 250) << 8 | 2);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port);
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&from), sizeof from) != 0)
        fail("the test binds a loopback address (the fuzzer's own set-up)", input, std::strerror(errno));
    if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
        // libFuzzer's timer signal can interrupt it; the connection then completes on its own.
        pollfd p{fd.get(), POLLOUT, 0};
        int error = errno;
        socklen_t len = sizeof error;
        if (errno != EINTR || ::poll(&p, 1, 5000) != 1 || ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &len) != 0 ||
            error != 0)
            fail("the test connects (the fuzzer's own set-up)", input, std::strerror(error));
    }
    return fd;
}

// Sends input, half-closes, and reads until the server closes (or 5 s pass: a hang fails).
std::string exchange(std::string_view input, std::string_view whole_input) {
    skiff::detail::unique_fd c = connect_from_next_address(server().port(), input);
    std::size_t sent = 0;
    while (sent < input.size()) {
        ssize_t n = ::send(c.get(), input.data() + sent, input.size() - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;  // the server closed early (after an error): what it wrote still counts
        sent += static_cast<std::size_t>(n);
    }
    ::shutdown(c.get(), SHUT_WR);
    std::string out;
    char buf[65536];
    for (;;) {
        pollfd p{c.get(), POLLIN, 0};
        int ready = ::poll(&p, 1, 5000);
        if (ready < 0 && errno == EINTR) continue;
        if (ready != 1) fail("the server closes once the client has", whole_input, out);
        ssize_t n = ::recv(c.get(), buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return out;
        out.append(buf, static_cast<std::size_t>(n));
    }
}

struct response {
    int status = 0;
    std::string head, body;
    bool closes = false;
};

bool token(std::string_view s) {
    if (s.empty()) return false;
    for (char c : s)
        if (!skiff::detail::is_tchar(c)) return false;
    return true;
}

// Splits output into responses, checking each one's form; `head_only` says, per final
// response, whether it answers a HEAD (so has no body).
std::vector<response> responses(const std::string& out, const std::vector<bool>& head_only, std::string_view input) {
    std::vector<response> rs;
    std::size_t at = 0, finals = 0;
    while (at < out.size()) {
        std::size_t end = out.find("\r\n\r\n", at);
        if (end == std::string::npos) fail("a response head ends in an empty line", input, out);
        response r;
        r.head = out.substr(at, end + 2 - at);
        if (r.head.compare(0, 9, "HTTP/1.1 ") != 0 || r.head.size() < 14 || r.head[12] != ' ')
            fail("a status line is HTTP/1.1 NNN reason", input, out);
        r.status = std::stoi(r.head.substr(9, 3));
        std::size_t length = 0;
        bool has_length = false, has_date = false;
        for (std::size_t line = r.head.find("\r\n") + 2; line < r.head.size();) {
            std::size_t eol = r.head.find("\r\n", line);
            std::string_view f(r.head.data() + line, eol - line);
            std::size_t colon = f.find(": ");
            if (colon == std::string_view::npos || !token(f.substr(0, colon))) fail("fields are 'name: value'", input, out);
            std::string name = std::string(f.substr(0, colon));
            for (char& ch : name) ch = skiff::detail::to_lower(ch);
            std::string_view value = f.substr(colon + 2);
            if (name == "content-length") { has_length = true; length = std::stoul(std::string(value)); }
            if (name == "date") has_date = true;
            if (name == "connection" && value == "close") r.closes = true;
            line = eol + 2;
        }
        if (r.status >= 200 && !has_date) fail("every final response has a Date", input, out);
        bool final = r.status >= 200;
        bool bodiless = !final || r.status == 204 || r.status == 304 || (finals < head_only.size() && head_only[finals]);
        if (final && r.status != 204 && r.status != 304 && !has_length) fail("a final response has Content-Length", input, out);
        at = end + 4;
        if (!bodiless) {
            if (out.size() - at < length) fail("the body is as long as Content-Length says", input, out);
            r.body = out.substr(at, length);
            at += length;
        }
        if (final) ++finals;
        if (final) rs.push_back(std::move(r));
    }
    return rs;
}

// How many requests the server must answer: the complete ones up to the first that ends
// the connection, and one answer more for a framing error that comes before such a request.
std::size_t expected_answers(const skiff_test::feed_result& f, bool& error_answer) {
    std::size_t n = 0;
    for (const auto& m : f.messages) {
        ++n;
        if (!m.keep_alive) {
            error_answer = false;
            return n;
        }
    }
    error_answer = f.status != skiff::parse_status::complete && f.status != skiff::parse_status::incomplete;
    return n;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view input(reinterpret_cast<const char*>(data), size);
    skiff::options opt;
    skiff::parse_limits limits{opt.max_request_line, opt.max_header_bytes, opt.max_headers, opt.max_body};
    skiff_test::feed_result f = skiff_test::feed(input, limits);
    bool error_answer = false;
    std::size_t answers = expected_answers(f, error_answer);
    std::vector<bool> head_only;
    for (const auto& m : f.messages) head_only.push_back(m.method == "HEAD");
    // The answer after them (an error, or an early refusal of a pending head) answers the
    // bytes that follow the last whole message: a HEAD by its first bytes, past empty lines,
    // whether or not its parse got as far as the method (RFC 9110 §9.3.2).
    std::size_t rest = f.messages.empty() ? 0 : f.messages.back().end;
    std::string_view after = rest < input.size() ? input.substr(rest) : std::string_view();
    std::size_t first = after.find_first_not_of("\r\n");
    head_only.push_back(first != std::string_view::npos && after.substr(first, 5) == "HEAD ");

    std::string out = exchange(input, input);
    std::vector<response> rs = responses(out, head_only, input);
    // A head that asks 100-continue and waits for its body may be refused at once (404,
    // 405, 413, 501, with Connection: close) instead of reading a body that never came.
    bool early_refusal = !error_answer && answers == f.messages.size() && f.status == skiff::parse_status::incomplete &&
                         f.pending_head && f.head.expect_continue && rs.size() == answers + 1;
    if (early_refusal && (rs.back().status < 400 || !rs.back().closes))
        fail("an early answer to 100-continue refuses the request and closes", input, out);
    if (rs.size() != answers + (error_answer || early_refusal ? 1 : 0)) fail("one final response per request, in order", input, out);
    for (std::size_t i = 0; i < answers; ++i) {
        const auto& m = f.messages[i];
        if (rs[i].status != 200 || m.method == "HEAD") continue;
        std::string want = m.method + " " + m.path + " " + std::to_string(m.body.size());
        if (rs[i].body != want) fail("each 200 answers its own request", input, out);
    }
    if (error_answer && (rs.back().status < 400 || !rs.back().closes))
        fail("a framing error is answered 4xx/5xx with Connection: close, and last", input, out);
    return 0;
}
