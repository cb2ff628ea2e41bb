// CPU time of a server under load, read the way design.md ("Measuring") asks: utime + stime
// from /proc/PID/stat, which covers every thread of the process (live and exited), summed over
// the process and its descendants (nginx's workers are children of its master). The load
// generator reads it at the start and end of its measured window, so the CPU time and the
// request count cover exactly the same span. Linux only; elsewhere it reads zero.
#ifndef SKIFF_BENCH_LOADGEN_PROC_CPU_HPP
#define SKIFF_BENCH_LOADGEN_PROC_CPU_HPP

#include <cstdint>     // std::uint64_t
#include <filesystem>  // listing /proc/PID/task
#include <fstream>     // reading /proc files
#include <sstream>     // splitting the stat line
#include <string>      // file contents
#include <sys/resource.h> // getrusage for the generator's own CPU
#include <unistd.h>    // sysconf(_SC_CLK_TCK)
#include <vector>      // process lists

namespace loadgen {

// utime + stime of one process in clock ticks, 0 if it is gone.
inline std::uint64_t process_ticks(int pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(in, line)) return 0;
    // The command name (field 2) may hold spaces; fields after it start past the last ')'.
    auto close = line.rfind(')');
    if (close == std::string::npos) return 0;
    std::istringstream rest(line.substr(close + 2));
    std::string field;
    std::uint64_t utime = 0, stime = 0;
    for (int i = 3; i <= 15 && rest >> field; ++i) {
        if (i == 14) utime = std::stoull(field);
        if (i == 15) stime = std::stoull(field);
    }
    return utime + stime;
}

// pid and every descendant, found through /proc/PID/task/TID/children.
inline void collect_tree(int pid, std::vector<int>& out) {
    out.push_back(pid);
    std::error_code ec;
    std::filesystem::directory_iterator tasks("/proc/" + std::to_string(pid) + "/task", ec);
    for (; !ec && tasks != std::filesystem::directory_iterator(); tasks.increment(ec)) {
        std::ifstream in(tasks->path() / "children");
        int child = 0;
        while (in >> child) collect_tree(child, out);
    }
}

// CPU seconds used so far by the given processes and their descendants.
inline double tree_cpu_seconds(const std::vector<int>& roots) {
    std::vector<int> pids;
    for (int root : roots) collect_tree(root, pids);
    std::uint64_t ticks = 0;
    for (int pid : pids) ticks += process_ticks(pid);
    return static_cast<double>(ticks) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// CPU seconds this process (the load generator) has used so far.
inline double own_cpu_seconds() {
    rusage ru{};
    ::getrusage(RUSAGE_SELF, &ru);
    auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
    return seconds(ru.ru_utime) + seconds(ru.ru_stime);
}

} // namespace loadgen

#endif // SKIFF_BENCH_LOADGEN_PROC_CPU_HPP
