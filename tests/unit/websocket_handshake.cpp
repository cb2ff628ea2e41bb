// The opening handshake (websocket/handshake.hpp), RFC 6455 §4.2: each check of §4.2.1 on a
// parsed request, with the status a server answers when it fails; the accept key against the
// RFC's own example (§1.3); the subprotocol choice; and the 101 answer's bytes. Requests are
// parsed by the real head parser (http/head_parser.hpp), as the server would see them.
#include <skiff/websocket/handshake.hpp>

#include <skiff/http/head_parser.hpp>

#include <doctest/doctest.h>

#include <initializer_list>  // the application's subprotocols
#include <string>            // std::string
#include <string_view>       // std::string_view
#include <utility>           // std::move
#include <vector>            // std::vector of subprotocols

using namespace std::literals;
using skiff::websocket::handshake_verdict;

namespace {

// A request parsed from `head` (which must stay alive as long as the request).
struct parsed {
    explicit parsed(std::string text) : bytes(std::move(text)) {
        skiff::detail::request_access::init(req, 100, 8192);
        auto r = skiff::parse_head(bytes.data(), bytes.size(), skiff::detail::request_access::head(req),
                                   skiff::detail::request_access::fields(req), skiff::parse_limits{});
        REQUIRE(r.status == skiff::parse_status::complete);
    }
    std::string bytes;
    skiff::request req;
};

// The RFC's example handshake (§1.2), with `change` applied to its field lines.
std::string handshake(std::string_view fields = "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                                                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                                                "Sec-WebSocket-Version: 13\r\n",
                      std::string_view request_line = "GET /chat HTTP/1.1\r\n") {
    return std::string(request_line) + "Host: server.example.com\r\n" + std::string(fields) + "\r\n";
}

handshake_verdict verdict_of(const std::string& text) { return skiff::websocket::check_handshake(parsed(text).req).verdict; }

} // namespace

TEST_CASE("websocket handshake: the RFC's example is accepted, and its key gives the RFC's accept value") {
    parsed p(handshake());
    auto check = skiff::websocket::check_handshake(p.req);
    CHECK(check.verdict == handshake_verdict::accept);
    CHECK(check.status == 101);
    CHECK(check.key == "dGhlIHNhbXBsZSBub25jZQ==");
    auto accept = skiff::websocket::accept_key(check.key);
    CHECK(std::string_view(accept.data(), accept.size()) == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");  // §1.3
}

TEST_CASE("websocket handshake: tokens are found case-insensitively inside comma lists, over several lines") {
    // Firefox sends "Connection: keep-alive, Upgrade"; proxies may split a list over lines.
    CHECK(verdict_of(handshake("upgrade: WebSocket\r\nconnection: keep-alive, UPGRADE\r\n"
                               "sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-version: 13\r\n")) ==
          handshake_verdict::accept);
    CHECK(verdict_of(handshake("Upgrade: h2c, websocket\r\nConnection: keep-alive\r\nConnection: upgrade\r\n"
                               "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n")) ==
          handshake_verdict::accept);
}

TEST_CASE("websocket handshake: each failed check names its reason and the status to answer") {
    const std::string key = "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n";
    const std::string up = "Upgrade: websocket\r\nConnection: Upgrade\r\n";
    const std::string v13 = "Sec-WebSocket-Version: 13\r\n";
    struct row {
        const char* name;
        std::string text;
        handshake_verdict verdict;
        int status;
    };
    const row rows[] = {
        {"POST", handshake(up + key + v13, "POST /chat HTTP/1.1\r\n"), handshake_verdict::not_get, 405},
        {"HTTP/1.0", handshake(up + key + v13, "GET /chat HTTP/1.0\r\n"), handshake_verdict::not_http11, 400},
        {"no Upgrade", handshake("Connection: Upgrade\r\n" + key + v13), handshake_verdict::no_upgrade_websocket, 400},
        {"Upgrade names another protocol", handshake("Upgrade: websocketx\r\nConnection: Upgrade\r\n" + key + v13),
         handshake_verdict::no_upgrade_websocket, 400},
        {"no Connection", handshake("Upgrade: websocket\r\n" + key + v13), handshake_verdict::no_connection_upgrade, 400},
        {"Connection: keep-alive only", handshake("Upgrade: websocket\r\nConnection: keep-alive\r\n" + key + v13),
         handshake_verdict::no_connection_upgrade, 400},
        {"Connection token inside a longer one", handshake("Upgrade: websocket\r\nConnection: upgraded\r\n" + key + v13),
         handshake_verdict::no_connection_upgrade, 400},
        {"no version", handshake(up + key), handshake_verdict::bad_version, 426},
        {"version 8", handshake(up + key + "Sec-WebSocket-Version: 8\r\n"), handshake_verdict::bad_version, 426},
        // Repeated, the version is refused in every order and form (RFC 9110 §5.3: the same field).
        {"versions 8 then 13", handshake(up + key + "Sec-WebSocket-Version: 8\r\n" + v13), handshake_verdict::bad_version, 426},
        {"versions 13 then 8", handshake(up + key + v13 + "Sec-WebSocket-Version: 8\r\n"), handshake_verdict::bad_version, 426},
        {"versions 13 and 13", handshake(up + key + v13 + v13), handshake_verdict::bad_version, 426},
        {"versions 13, 8 on one line", handshake(up + key + "Sec-WebSocket-Version: 13, 8\r\n"), handshake_verdict::bad_version, 426},
        {"HEAD with a good handshake", handshake(up + key + v13, "HEAD /chat HTTP/1.1\r\n"), handshake_verdict::head_request, 400},
        {"HEAD without the upgrade fields", handshake("", "HEAD /chat HTTP/1.1\r\n"), handshake_verdict::no_upgrade_websocket, 400},
        {"no key", handshake(up + v13), handshake_verdict::bad_key, 400},
        {"key of 15 bytes", handshake(up + "Sec-WebSocket-Key: AAAAAAAAAAAAAAAAAAAA\r\n" + v13), handshake_verdict::bad_key, 400},
        {"key of 17 bytes", handshake(up + "Sec-WebSocket-Key: AAAAAAAAAAAAAAAAAAAAAAA=\r\n" + v13), handshake_verdict::bad_key, 400},
        {"key not base64", handshake(up + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ*=\r\n" + v13), handshake_verdict::bad_key, 400},
        {"key non-canonical", handshake(up + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZR==\r\n" + v13), handshake_verdict::bad_key, 400},
        {"two keys", handshake(up + key + key + v13), handshake_verdict::bad_key, 400},
    };
    for (const row& r : rows) {
        CAPTURE(r.name);
        parsed p(r.text);
        auto check = skiff::websocket::check_handshake(p.req);
        CHECK(check.verdict == r.verdict);
        CHECK(check.status == r.status);
        CHECK(check.key.empty());
    }
}

TEST_CASE("websocket handshake: an empty Host (which HTTP/1.1 allows) names no host to connect to: 400") {
    parsed p("GET /chat HTTP/1.1\r\nHost:\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n");
    auto check = skiff::websocket::check_handshake(p.req);
    CHECK(check.verdict == handshake_verdict::no_host);
    CHECK(check.status == 400);
}

TEST_CASE("websocket handshake: the subprotocol is the application's first choice among those offered") {
    parsed p(handshake("Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                       "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: chat, superchat\r\n"
                       "Sec-WebSocket-Protocol: v2.json\r\n"));
    CHECK(skiff::websocket::offers_protocol(p.req, "superchat"));
    CHECK(skiff::websocket::offers_protocol(p.req, "v2.json"));
    CHECK_FALSE(skiff::websocket::offers_protocol(p.req, "Chat"));  // compared exactly
    CHECK_FALSE(skiff::websocket::offers_protocol(p.req, "super"));
    CHECK(skiff::websocket::choose_protocol(p.req, std::vector<std::string_view>{"mqtt", "superchat", "chat"}) == "superchat");
    CHECK(skiff::websocket::choose_protocol(p.req, std::initializer_list<std::string_view>{"v2.json"}) == "v2.json");
    CHECK(skiff::websocket::choose_protocol(p.req, std::vector<std::string_view>{"mqtt"}).empty());
    parsed none(handshake());
    CHECK(skiff::websocket::choose_protocol(none.req, std::vector<std::string_view>{"chat"}).empty());
}

TEST_CASE("websocket handshake: the 101 head, with and without a subprotocol, declines extensions") {
    std::string out;
    CHECK(skiff::websocket::append_accept_head(out, "dGhlIHNhbXBsZSBub25jZQ=="));
    CHECK(out == "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n");
    out.clear();
    CHECK(skiff::websocket::append_accept_head(out, "dGhlIHNhbXBsZSBub25jZQ==", "chat", "Date: x\r\n"));
    CHECK(out == "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nSec-WebSocket-Protocol: chat\r\nDate: x\r\n\r\n");
    CHECK(out.find("Extensions") == std::string::npos);
}

TEST_CASE("websocket handshake: a subprotocol that is not a token is refused, not written") {
    std::string out = "kept";
    CHECK_FALSE(skiff::websocket::append_accept_head(out, "dGhlIHNhbXBsZSBub25jZQ==", "chat\r\nSet-Cookie: a=b"));
    CHECK_FALSE(skiff::websocket::append_accept_head(out, "dGhlIHNhbXBsZSBub25jZQ==", "a b"));
    CHECK(out == "kept");
}
