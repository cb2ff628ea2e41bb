// A main() for the fuzz targets when libFuzzer is not linked in (any compiler): it runs
// LLVMFuzzerTestOneInput once on every file named on the command line, and on every file
// inside a named directory, so the seed corpus replays as an ordinary ctest test. A failed
// property aborts, which fails the test. (The shape of fmt's FMT_FUZZ_LINKMAIN.)
#include <algorithm>   // std::sort, so runs replay in one order
#include <cstddef>     // std::size_t
#include <cstdint>     // std::uint8_t
#include <cstdio>      // std::printf, std::fprintf
#include <filesystem>  // directory walk
#include <fstream>     // reading the inputs
#include <iterator>    // std::istreambuf_iterator
#include <string>      // std::string
#include <vector>      // std::vector of paths

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

int replay(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
        std::fprintf(stderr, "cannot read %s\n", file.string().c_str());
        return 1;
    }
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    std::vector<std::filesystem::path> files;
    for (int i = 1; i < argc; ++i) {
        std::filesystem::path p(argv[i]);
        if (!std::filesystem::is_directory(p)) {
            files.push_back(p);
            continue;
        }
        for (const auto& e : std::filesystem::directory_iterator(p))
            if (e.is_regular_file()) files.push_back(e.path());
    }
    if (files.empty()) {
        std::fprintf(stderr, "usage: %s FILE_OR_DIR...  (no inputs found)\n", argv[0]);
        return 1;
    }
    std::sort(files.begin(), files.end());
    int failures = 0;
    for (const auto& f : files) failures += replay(f);
    std::printf("replayed %zu inputs\n", files.size() - static_cast<std::size_t>(failures));
    return failures == 0 ? 0 : 1;
}
