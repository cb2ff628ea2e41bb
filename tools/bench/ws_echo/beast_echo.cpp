// ws_echo peer: a WebSocket echo server on Boost.Beast, for ws_echo_bench.py.
//
// One thread: a single io_context run on the main thread; everything asynchronous. Every
// complete message goes back with its type (text or binary). Any path is accepted. No
// permessage-deflate and no timeouts (Beast's defaults for a websocket::stream).
// TCP_NODELAY on accepted sockets, as skiff and Go set it.
//
// Env: PORT (default 8080). Prints "serving PORT" when listening. SIGINT/SIGTERM stop it.
//
// Build: g++ -std=c++17 -O2 beast_echo.cpp -o beast_echo -pthread   (Boost headers only)
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include <cstdio>
#include <cstdlib>
#include <memory>

namespace net = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
using tcp = net::ip::tcp;

namespace {

class session : public std::enable_shared_from_this<session> {
public:
    explicit session(tcp::socket s) : ws_(std::move(s)) {}

    void start() {
        ws_.async_accept([self = shared_from_this()](beast::error_code ec) {
            if (ec) return;
            self->read();
        });
    }

private:
    void read() {
        ws_.async_read(buffer_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
            if (ec) return;  // closed, reset or a protocol error: the session ends
            self->ws_.text(self->ws_.got_text());
            self->ws_.async_write(self->buffer_.data(), [self](beast::error_code ec2, std::size_t) {
                if (ec2) return;
                self->buffer_.consume(self->buffer_.size());
                self->read();
            });
        });
    }

    websocket::stream<tcp::socket> ws_;
    beast::flat_buffer buffer_;
};

void accept_loop(tcp::acceptor& acceptor) {
    acceptor.async_accept([&acceptor](beast::error_code ec, tcp::socket s) {
        if (!ec) {
            beast::error_code ignored;
            s.set_option(tcp::no_delay(true), ignored);
            std::make_shared<session>(std::move(s))->start();
        }
        if (acceptor.is_open()) accept_loop(acceptor);
    });
}

} // namespace

int main() {
    const char* port_env = std::getenv("PORT");
    auto port = static_cast<unsigned short>(port_env ? std::atoi(port_env) : 8080);
    net::io_context ioc{1};  // concurrency hint 1: one thread runs it
    tcp::acceptor acceptor(ioc);
    tcp::endpoint ep(net::ip::make_address("127.0.0.1"), port);
    beast::error_code ec;
    acceptor.open(ep.protocol(), ec);
    if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
    if (!ec) acceptor.bind(ep, ec);
    if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
    if (ec) {
        std::fprintf(stderr, "beast_echo: cannot listen on 127.0.0.1:%u: %s\n", port, ec.message().c_str());
        return 1;
    }
    net::signal_set signals(ioc, SIGINT, SIGTERM);
    signals.async_wait([&](beast::error_code, int) { ioc.stop(); });
    accept_loop(acceptor);
    std::printf("serving %u\n", acceptor.local_endpoint().port());
    std::fflush(stdout);
    ioc.run();
    return 0;
}
