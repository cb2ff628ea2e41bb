// Command line of the load generator: what to send, how hard, and what every response must be.
// Parsing reports the first problem as a message; nothing here touches the network.
#ifndef SKIFF_BENCH_LOADGEN_OPTIONS_HPP
#define SKIFF_BENCH_LOADGEN_OPTIONS_HPP

#include <cstddef>   // std::size_t
#include <cstdint>   // std::uint16_t
#include <cstdlib>   // std::strtod, std::strtol, std::atoi
#include <string>    // option values
#include <vector>    // extra headers

namespace loadgen {

struct options {
    std::string host = "127.0.0.1";
    std::uint16_t port = 8080;
    std::string path = "/";
    std::string method = "GET";
    std::size_t body_size = 0;               // POST body of this many 'x' bytes
    std::string content_type;                // sent with the body when set
    std::vector<std::string> headers;        // extra "Name: value" lines
    int connections = 64;
    int depth = 1;                           // requests written at once per connection (pipelining)
    double duration_s = 5;
    double warmup_s = 0;                     // traffic whose results are thrown away
    double rate = 0;                         // > 0: open loop at this many requests per second
    bool close = false;                      // "Connection: close": a new connection per request
    int expect_status = 200;                 // 0: any
    long long expect_length = -1;            // body length every response must have; -1: any
    double timeout_s = 2;                    // a request older than this at the end is a timeout
    std::vector<int> cpu_pids;               // processes (with descendants) whose CPU to measure
    bool json = false;                       // JSON on stdout instead of the text summary
    bool help = false;
};

const char* const usage_text =
    "usage: skiff_loadgen [options] http://HOST:PORT/PATH\n"
    "  -c N            connections (64)\n"
    "  -d SECONDS      measured duration (5)\n"
    "  --warmup S      run this long first and discard it (0)\n"
    "  --depth N       pipeline N requests per write, closed loop only (1)\n"
    "  --rate R        open loop: R requests/s in all, latency from each scheduled send time\n"
    "  --close         send Connection: close, one new connection per request\n"
    "  --method M      request method (GET)\n"
    "  --body N        send a body of N bytes (POST)\n"
    "  --content-type T  Content-Type of the body\n"
    "  -H 'Name: v'    extra header (repeatable)\n"
    "  --expect-status N   every response must have this status (200; 0 = any)\n"
    "  --expect-length N   every response body must be N bytes (-1 = any)\n"
    "  --timeout S     requests outstanding longer than S at the end count as timeouts (2)\n"
    "  --cpu-pid PID   report the CPU time PID and its descendants used in the window (repeatable)\n"
    "  --json          print one JSON object instead of the text summary\n";

// Splits "http://HOST:PORT/PATH" into o; false on anything else (no https, no names to resolve).
inline bool parse_url(const std::string& url, options& o) {
    const std::string scheme = "http://";
    if (url.compare(0, scheme.size(), scheme) != 0) return false;
    std::string rest = url.substr(scheme.size());
    auto slash = rest.find('/');
    std::string authority = rest.substr(0, slash);
    o.path = slash == std::string::npos ? "/" : rest.substr(slash);
    auto colon = authority.rfind(':');
    if (colon == std::string::npos) return false;
    o.host = authority.substr(0, colon);
    long port = std::strtol(authority.c_str() + colon + 1, nullptr, 10);
    if (port <= 0 || port > 65535) return false;
    o.port = static_cast<std::uint16_t>(port);
    return true;
}

class argument_list {
public:
    argument_list(int argc, char** argv) : argc_(argc), argv_(argv) {}
    bool done() const { return i_ >= argc_; }
    std::string next() { return argv_[i_++]; }
    bool value(std::string& out) {
        if (done()) return false;
        out = next();
        return true;
    }

private:
    int argc_;
    char** argv_;
    int i_ = 1;
};

// Applies one "--name value" (or flag) to o. Returns an error message, empty when fine.
inline std::string apply_option(const std::string& name, argument_list& args, options& o) {
    bool* flag = name == "--close" ? &o.close
               : name == "--json"  ? &o.json
               : name == "-h" || name == "--help" ? &o.help
               : nullptr;
    if (flag) {
        *flag = true;
        return "";
    }
    std::string v;
    if (!args.value(v)) return "missing value after " + name;
    const char* s = v.c_str();
    if (name == "-c") o.connections = std::atoi(s);
    else if (name == "-d") o.duration_s = std::strtod(s, nullptr);
    else if (name == "--warmup") o.warmup_s = std::strtod(s, nullptr);
    else if (name == "--depth") o.depth = std::atoi(s);
    else if (name == "--rate") o.rate = std::strtod(s, nullptr);
    else if (name == "--method") o.method = v;
    else if (name == "--body") o.body_size = static_cast<std::size_t>(std::strtoull(s, nullptr, 10));
    else if (name == "--content-type") o.content_type = v;
    else if (name == "-H") o.headers.push_back(v);
    else if (name == "--expect-status") o.expect_status = std::atoi(s);
    else if (name == "--expect-length") o.expect_length = std::atoll(s);
    else if (name == "--timeout") o.timeout_s = std::strtod(s, nullptr);
    else if (name == "--cpu-pid") o.cpu_pids.push_back(std::atoi(s));
    else return "unknown option " + name;
    return "";
}

inline std::string check_options(const options& o) {
    if (o.connections < 1 || o.connections > 60000) return "-c must be 1..60000";
    if (o.depth < 1 || o.depth > 1024) return "--depth must be 1..1024";
    if (o.duration_s <= 0) return "-d must be > 0";
    if (o.rate < 0) return "--rate must be >= 0";
    if (o.rate > 0 && o.depth != 1) return "--rate (open loop) sends one request at a time: drop --depth";
    if (o.close && o.depth != 1) return "--close sends one request per connection: drop --depth";
    return "";
}

// Parses argv into o; returns an error message, empty on success.
inline std::string parse_options(int argc, char** argv, options& o) {
    argument_list args(argc, argv);
    bool have_url = false;
    while (!args.done()) {
        std::string a = args.next();
        if (a.size() > 1 && a[0] == '-') {
            std::string error = apply_option(a, args, o);
            if (!error.empty()) return error;
        } else if (!parse_url(a, o)) {
            return "bad URL '" + a + "' (want http://HOST:PORT/PATH with a numeric address)";
        } else {
            have_url = true;
        }
    }
    if (o.help) return "";
    if (!have_url) return "no URL given";
    return check_options(o);
}

} // namespace loadgen

#endif // SKIFF_BENCH_LOADGEN_OPTIONS_HPP
