// Peer: Boost.Beast (Boost 1.74, header-only) minimal async keep-alive server.
//
// Worker model: WORKERS threads, each with its OWN io_context and its own
// SO_REUSEPORT acceptor on 127.0.0.1:PORT (the kernel spreads connections).
// With WORKERS=1 everything runs on the main thread.  Per connection:
// async_read(request) -> build response -> async_write -> loop while
// keep-alive.  Pipelined requests are answered one async_write each (Beast
// does not batch responses).
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

static int env_int(const char *name, int def) {
  const char *v = std::getenv(name);
  if (!v || !*v) return def;
  int n = std::atoi(v);
  return n > 0 ? n : def;
}

class Session : public std::enable_shared_from_this<Session> {
 public:
  explicit Session(tcp::socket s) : stream_(std::move(s)) {}
  void start() { do_read(); }

 private:
  beast::tcp_stream stream_;
  beast::flat_buffer buf_;
  http::request<http::string_body> req_;
  http::response<http::string_body> res_;

  void do_read() {
    req_ = {};
    http::async_read(stream_, buf_, req_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       if (ec) {
                         beast::error_code ignored;
                         self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
                         return;
                       }
                       self->handle();
                     });
  }

  void set(http::status st, beast::string_view ct, std::string body) {
    res_ = {};
    res_.version(req_.version());
    res_.result(st);
    res_.set(http::field::server, "beast");
    if (!ct.empty()) res_.set(http::field::content_type, ct);
    res_.body() = std::move(body);
    res_.keep_alive(req_.keep_alive());
    res_.prepare_payload();
  }

  void handle() {
    std::string_view target(req_.target().data(), req_.target().size());
    std::string_view path = target.substr(0, target.find('?'));
    const auto m = req_.method();
    bool done = false;
    if (m == http::verb::get) {
      if (path == "/") {
        set(http::status::ok, "text/plain", "Hello, World!");
        done = true;
      } else if (path == "/json") {
        set(http::status::ok, "application/json", R"({"message":"Hello, World!"})");
        done = true;
      } else if (path.size() > 6 && path.substr(0, 6) == "/user/" &&
                 path.find('/', 6) == std::string_view::npos) {
        set(http::status::ok, "text/plain", std::string(path.substr(6)));
        done = true;
      }
    } else if (m == http::verb::post && path == "/echo") {
      auto it = req_.find(http::field::content_type);
      std::string ct = it != req_.end() ? std::string(it->value()) : std::string();
      if (ct.empty()) ct = "application/octet-stream";
      set(http::status::ok, ct, std::move(req_.body()));
      done = true;
    }
    // The contract's 404, byte for byte the same on every server (skiff's own).
    if (!done) set(http::status::not_found, "text/plain", "Not Found\n");

    http::async_write(stream_, res_,
                      [self = shared_from_this()](beast::error_code ec, std::size_t) {
                        if (ec) return;
                        if (!self->res_.keep_alive()) {
                          beast::error_code ignored;
                          self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
                          return;
                        }
                        self->do_read();
                      });
  }
};

class Listener {
 public:
  Listener(net::io_context &ioc, tcp::endpoint ep) : ioc_(ioc), acc_(ioc) {
    acc_.open(ep.protocol());
    acc_.set_option(net::socket_base::reuse_address(true));
    int one = 1;
    ::setsockopt(acc_.native_handle(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
    acc_.bind(ep);
    acc_.listen(4096);
  }
  void accept() {
    acc_.async_accept(net::make_strand(ioc_), [this](beast::error_code ec, tcp::socket s) {
      if (!ec) {
        s.set_option(tcp::no_delay(true));
        std::make_shared<Session>(std::move(s))->start();
      }
      accept();
    });
  }

 private:
  net::io_context &ioc_;
  tcp::acceptor acc_;
};

static void run_worker(tcp::endpoint ep) {
  net::io_context ioc{1};  // concurrency hint 1: single-threaded context
  Listener l(ioc, ep);
  l.accept();
  ioc.run();
}

int main() {
  const int port = env_int("PORT", 8080);
  const int workers = env_int("WORKERS", 1);
  tcp::endpoint ep(net::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port));
  std::fprintf(stderr, "beast: listening on 127.0.0.1:%d (%d io_context(s))\n", port, workers);
  std::vector<std::thread> ts;
  for (int i = 1; i < workers; ++i) ts.emplace_back(run_worker, ep);
  run_worker(ep);
  for (auto &t : ts) t.join();
  return 0;
}
