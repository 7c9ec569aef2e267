// CI's regression run of the fuzz harnesses: every file under corpus/<harness>/ and
// crashes/<harness>/ goes through its harness (a crash fails the test by itself). Fails when a
// directory names no harness or a harness has no corpus, so neither can be dropped silently.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_target.hpp"

namespace fs = std::filesystem;

namespace {
int failures = 0;
void fail(const std::string& why) {
    std::fprintf(stderr, "fuzz_replay: %s\n", why.c_str());
    ++failures;
}

// Runs every file of each <dir>/<harness>/; returns the harnesses that had at least one file.
std::set<std::string> replay(const fs::path& dir, std::size_t& files) {
    std::set<std::string> seen;
    if (!fs::is_directory(dir)) return seen;
    for (const auto& sub : fs::directory_iterator(dir)) {
        const std::string name = sub.path().filename().string();
        auto it = xpart::fuzz::harnesses().find(name);
        if (it == xpart::fuzz::harnesses().end()) {
            fail(sub.path().string() + ": no harness of that name");
            continue;
        }
        for (const auto& f : fs::directory_iterator(sub.path())) {
            std::ifstream in(f.path(), std::ios::binary);
            const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            it->second(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
            ++files;
            seen.insert(name);
        }
    }
    return seen;
}
}  // namespace

int main(int argc, char** argv) {
    const char* srcdir = std::getenv("XPART_SRCDIR");
    const fs::path base = argc > 1 ? fs::path(argv[1]) : fs::path(srcdir ? srcdir : ".") / "tests/fuzz";
    std::size_t files = 0;
    const auto with_corpus = replay(base / "corpus", files);
    replay(base / "crashes", files);
    for (const auto& [name, h] : xpart::fuzz::harnesses())
        if (!with_corpus.count(name)) fail("harness " + name + " has no corpus in " + (base / "corpus").string());
    std::printf("fuzz_replay: %zu files, %zu harnesses, %d failures\n", files, xpart::fuzz::harnesses().size(),
                failures);
    return failures ? 1 : 0;
}
