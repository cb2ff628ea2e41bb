// multipart/form-data: the boundary read from Content-Type, and the streaming parser's events
// for each sample body fed whole, at every split point into two pieces, and byte by byte: the
// same parts, heads and content whatever the split, and 400 for broken framing.
// Only the part under test (a unit test compiles in about a second); the single-header
// configuration has no parts on its include path, so there it takes the whole file.
#ifdef SKIFF_TEST_SINGLE_HEADER
#include <skiff/skiff.hpp>
#else
#include <skiff/http/multipart.hpp>
#endif

#include <doctest/doctest.h>

#include <array>
#include <string>
#include <string_view>

namespace {

using skiff::multipart_status;

// Records events as text: [name|filename|type] content... / after each part; content pieces
// join, so the record does not depend on where the body was cut.
struct recorder {
    std::string events;
    std::size_t pieces = 0;
    void on_part(const skiff::multipart_part& p) {
        events += "[" + std::string(p.name) + "|" + (p.has_filename ? std::string(p.filename) : "-") + "|" +
                  std::string(p.content_type) + "]";
    }
    void on_data(std::string_view d) {
        CHECK(!d.empty());
        events.append(d.data(), d.size());
        ++pieces;
    }
    void on_part_end() { events += "/"; }
};

struct body_case {
    std::string_view name;
    std::string_view body;
    multipart_status expected;  // after the whole body and finish()
    std::string_view events;
};

constexpr char binary_body[] = "--xyz\r\nContent-Disposition: form-data; name=b\r\n\r\n\0\xff\r\n--xyz--";
constexpr char binary_events[] = "[b|-|]\0\xff/";

// Boundary "xyz" throughout.
constexpr std::array<body_case, 18> multipart_cases{{
    {"one field", "--xyz\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nhello\r\n--xyz--\r\n",
     multipart_status::complete, "[a|-|]hello/"},
    {"field and file",
     "--xyz\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n"
     "--xyz\r\nContent-Disposition: form-data; name=\"f\"; filename=\"x.txt\"\r\nContent-Type: text/plain\r\n\r\n"
     "line1\r\nline2\r\n--xyz--",
     multipart_status::complete, "[a|-|]1/[f|x.txt|text/plain]line1\r\nline2/"},
    {"content holds delimiter prefixes",
     "--xyz\r\nContent-Disposition: form-data; name=f\r\n\r\n\r\r\n\r\n-\r\n--\r\n--x\r\n--xy\r\r\n--xyz--",
     multipart_status::complete, "[f|-|]\r\r\n\r\n-\r\n--\r\n--x\r\n--xy\r/"},
    {"empty content", "--xyz\r\nContent-Disposition: form-data; name=\"e\"\r\n\r\n\r\n--xyz--",
     multipart_status::complete, "[e|-|]/"},
    {"preamble and epilogue", "ignored\r\n--xyz\r\ncontent-disposition: FORM-DATA; name=a\r\n\r\nv\r\n--xyz--\r\ntrailing junk",
     multipart_status::complete, "[a|-|]v/"},
    {"transport padding", "--xyz \t\r\nContent-Disposition: form-data; name=a\r\n\r\nv\r\n--xyz--",
     multipart_status::complete, "[a|-|]v/"},
    {"quoted escapes and empty filename",
     "--xyz\r\nContent-Disposition: form-data; name=\"a\\\"b\"; filename=\"\"\r\n\r\nv\r\n--xyz--",
     multipart_status::complete, "[a\"b||]v/"},
    {"other headers ignored",
     "--xyz\r\nX-Other: 1\r\nContent-Disposition: form-data; name=a\r\n\r\nv\r\n--xyz--",
     multipart_status::complete, "[a|-|]v/"},
    {"binary content", std::string_view(binary_body, sizeof binary_body - 1), multipart_status::complete,
     std::string_view(binary_events, sizeof binary_events - 1)},
    {"ends before close delimiter", "--xyz\r\nContent-Disposition: form-data; name=a\r\n\r\nhello",
     multipart_status::bad_request, "[a|-|]hello"},
    {"no delimiter at all", "just text", multipart_status::bad_request, ""},
    {"no disposition", "--xyz\r\nContent-Type: text/plain\r\n\r\nv\r\n--xyz--", multipart_status::bad_request, ""},
    {"disposition without name", "--xyz\r\nContent-Disposition: form-data; filename=a\r\n\r\nv\r\n--xyz--",
     multipart_status::bad_request, ""},
    {"disposition not form-data", "--xyz\r\nContent-Disposition: attachment; name=a\r\n\r\nv\r\n--xyz--",
     multipart_status::bad_request, ""},
    {"two dispositions",
     "--xyz\r\nContent-Disposition: form-data; name=a\r\nContent-Disposition: form-data; name=b\r\n\r\nv\r\n--xyz--",
     multipart_status::bad_request, ""},
    {"junk after delimiter", "--xyz\r\nContent-Disposition: form-data; name=a\r\n\r\nv\r\n--xyzQ\r\n",
     multipart_status::bad_request, "[a|-|]v/"},
    {"header line without colon", "--xyz\r\nContent-Disposition form-data\r\n\r\nv\r\n--xyz--",
     multipart_status::bad_request, ""},
    {"unclosed quote", "--xyz\r\nContent-Disposition: form-data; name=\"a\r\n\r\nv\r\n--xyz--",
     multipart_status::bad_request, ""},
}};

// Feeds body in the given pieces and returns the record and the final status.
template <std::size_t N>
multipart_status run(const std::array<std::string_view, N>& pieces, recorder& r, std::size_t max_head = 8192,
                     std::size_t max_parts = 1000) {
    skiff::multipart_parser mp("xyz", max_head, max_parts);
    for (std::string_view p : pieces) mp.feed(p, r);
    return mp.finish();
}

} // namespace

TEST_CASE("multipart: every sample body, whole and at every split point") {
    for (const body_case& c : multipart_cases) {
        CAPTURE(c.name);
        recorder whole;
        CHECK(run(std::array<std::string_view, 1>{c.body}, whole) == c.expected);
        CHECK(whole.events == c.events);
        for (std::size_t cut = 0; cut <= c.body.size(); ++cut) {
            CAPTURE(cut);
            recorder r;
            CHECK(run(std::array<std::string_view, 2>{c.body.substr(0, cut), c.body.substr(cut)}, r) == c.expected);
            CHECK(r.events == c.events);
        }
    }
}

TEST_CASE("multipart: byte by byte gives the same events") {
    for (const body_case& c : multipart_cases) {
        CAPTURE(c.name);
        skiff::multipart_parser mp("xyz");
        recorder r;
        for (char ch : c.body) mp.feed(std::string_view(&ch, 1), r);
        CHECK(mp.finish() == c.expected);
        CHECK(r.events == c.events);
    }
}

TEST_CASE("multipart: a file part's content comes in pieces, not gathered") {
    std::string body = "--xyz\r\nContent-Disposition: form-data; name=f; filename=big\r\n\r\n";
    body += std::string(100000, 'a');
    body += "\r\n--xyz--";
    skiff::multipart_parser mp("xyz");
    recorder r;
    for (std::size_t at = 0; at < body.size(); at += 1000) mp.feed(std::string_view(body).substr(at, 1000), r);
    CHECK(mp.finish() == multipart_status::complete);
    CHECK(r.pieces >= 100);  // about one per piece fed
    CHECK(r.events.size() == std::string_view("[f|big|]/").size() + 100000);
}

TEST_CASE("multipart: limits on a part's head and the number of parts") {
    constexpr std::string_view head = "Content-Disposition: form-data; name=a\r\n\r\n";
    std::string one = "--xyz\r\n" + std::string(head) + "v\r\n--xyz--";
    recorder r1;
    CHECK(run(std::array<std::string_view, 1>{one}, r1, head.size() - 1) == multipart_status::bad_request);
    recorder r2;
    CHECK(run(std::array<std::string_view, 1>{one}, r2, head.size()) == multipart_status::complete);
    std::string_view two = "--xyz\r\nContent-Disposition: form-data; name=a\r\n\r\nv\r\n"
                           "--xyz\r\nContent-Disposition: form-data; name=b\r\n\r\nw\r\n--xyz--";
    recorder r3;
    CHECK(run(std::array<std::string_view, 1>{two}, r3, 8192, 1) == multipart_status::bad_request);
    CHECK(r3.events == "[a|-|]v/");
    recorder r4;
    CHECK(run(std::array<std::string_view, 1>{two}, r4, 8192, 2) == multipart_status::complete);
}

TEST_CASE("multipart: after an error, more input changes nothing") {
    skiff::multipart_parser mp("xyz");
    recorder r;
    CHECK(mp.feed("--xyzQ", r) == multipart_status::bad_request);
    CHECK(mp.feed("\r\nContent-Disposition: form-data; name=a\r\n\r\nv\r\n--xyz--", r) == multipart_status::bad_request);
    CHECK(r.events.empty());
}

TEST_CASE("multipart_boundary: read from Content-Type, refused when not valid") {
    struct boundary_case {
        std::string_view content_type;
        std::string_view boundary;  // empty: none
    };
    constexpr std::array<boundary_case, 10> bc{{
        {"multipart/form-data; boundary=abc", "abc"},
        {"Multipart/Form-Data;boundary=\"a b'()+_,-./:=?\"", "a b'()+_,-./:=?"},
        {"multipart/form-data; charset=utf-8; BOUNDARY=----WebKitFormBoundary7MA4YWxk", "----WebKitFormBoundary7MA4YWxk"},
        {"multipart/form-data", ""},
        {"multipart/mixed; boundary=abc", ""},
        {"text/plain; boundary=abc", ""},
        {"multipart/form-data; boundary=", ""},
        {"multipart/form-data; boundary=\"ends in space \"", ""},
        {"multipart/form-data; boundary=bad\\char", ""},
        {"multipart/form-data; boundary=12345678901234567890123456789012345678901234567890123456789012345678901", ""},
    }};
    for (const auto& c : bc) {
        CAPTURE(c.content_type);
        auto b = skiff::multipart_boundary(c.content_type);
        CHECK(b.has_value() == !c.boundary.empty());
        if (b) CHECK(*b == c.boundary);
    }
    CHECK(skiff::multipart_boundary("multipart/form-data; boundary=" + std::string(70, 'b')).has_value());
}

TEST_CASE("multipart: an invalid boundary makes a parser that refuses everything") {
    skiff::multipart_parser mp("bad\\");
    recorder r;
    CHECK(mp.feed("--bad\\\r\n", r) == multipart_status::bad_request);
}
