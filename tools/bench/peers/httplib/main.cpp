// Peer: cpp-httplib 0.11.4 (Debian libcpp-httplib-dev; Debian ships it split:
// httplib.h declarations + libcpp-httplib.so, so we link it via pkg-config).
//
// Worker model: one listener thread (poll+accept) hands each accepted
// *connection* to a ThreadPool of WORKERS threads; a pool thread serves that
// connection (blocking I/O) until it closes.  Keep-alive is capped by
// cpp-httplib's default keep_alive_max_count (5 requests per connection) and
// keep_alive_timeout (5 s); both left at library defaults.
// TCP_NODELAY IS turned on (library default: off).  cpp-httplib writes the
// header block and the body with separate send() calls, so with Nagle on
// every response stalls ~40 ms on delayed ACK (measured: ~37 req/s).
#include <httplib.h>

#include <cstdio>
#include <cstdlib>
#include <string>

static int env_int(const char *name, int def) {
  const char *v = std::getenv(name);
  if (!v || !*v) return def;
  int n = std::atoi(v);
  return n > 0 ? n : def;
}

int main() {
  const int port = env_int("PORT", 8080);
  const int workers = env_int("WORKERS", 1);

  httplib::Server svr;
  svr.new_task_queue = [workers] { return new httplib::ThreadPool(workers); };
  svr.set_tcp_nodelay(true);

  svr.Get("/", [](const httplib::Request &, httplib::Response &res) {
    res.set_content("Hello, World!", "text/plain");
  });
  svr.Get("/json", [](const httplib::Request &, httplib::Response &res) {
    res.set_content("{\"message\":\"Hello, World!\"}", "application/json");
  });
  svr.Get(R"(/user/([^/]+))", [](const httplib::Request &req, httplib::Response &res) {
    res.set_content(req.matches[1].str(), "text/plain");
  });
  svr.Post("/echo", [](const httplib::Request &req, httplib::Response &res) {
    std::string ct = req.get_header_value("Content-Type");
    if (ct.empty()) ct = "application/octet-stream";
    res.set_content(req.body, ct.c_str());
  });
  // The contract's 404, byte for byte the same on every server (skiff's own).
  svr.set_error_handler([](const httplib::Request &, httplib::Response &res) {
    if (res.status == 404) res.set_content("Not Found\n", "text/plain");
  });

  std::fprintf(stderr, "cpp-httplib: listening on 127.0.0.1:%d (pool of %d)\n", port, workers);
  if (!svr.listen("127.0.0.1", port)) {
    std::perror("listen");
    return 1;
  }
  return 0;
}
