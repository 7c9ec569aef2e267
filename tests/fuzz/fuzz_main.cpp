// libFuzzer entry point (built only by `make fuzz`, with clang -fsanitize=fuzzer): runs the
// harness XPART_FUZZ_TARGET names. One binary for all harnesses keeps the sanitized build to
// one link; libFuzzer's coverage counts only what the chosen harness reaches.
#include <cstdio>
#include <cstdlib>

#include "tests/fuzz/fuzz_target.hpp"

namespace {
xpart::fuzz::Harness chosen = nullptr;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    const char* name = std::getenv("XPART_FUZZ_TARGET");
    auto& table = xpart::fuzz::harnesses();
    auto it = name ? table.find(name) : table.end();
    if (it == table.end()) {
        std::fprintf(stderr, "XPART_FUZZ_TARGET must name one of:");
        for (const auto& [n, h] : table) std::fprintf(stderr, " %s", n.c_str());
        std::fprintf(stderr, "\n");
        std::exit(2);
    }
    chosen = it->second;
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    chosen(data, size);
    return 0;
}
