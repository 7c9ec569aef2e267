// Fuzz harnesses for every parser of outside input (issue #14). Each harness registers itself
// by name in one table, so the same sources serve two drivers: fuzz_main.cpp (libFuzzer, one
// binary for all harnesses, XPART_FUZZ_TARGET picks one; `make fuzz`) and fuzz_replay.cpp
// (the committed corpus and crashes, a unit test under g++ and its sanitizers).
// A harness treats every Error as fine: only crashes, UB, hangs and broken invariants are
// findings; an invariant is checked with XPART_FUZZ_CHECK, which traps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace xpart::fuzz {

using Harness = void (*)(const std::uint8_t* data, std::size_t size);
std::map<std::string, Harness>& harnesses();

struct Register {
    Register(const char* name, Harness h) { harnesses()[name] = h; }
};

inline std::string text_of(const std::uint8_t* data, std::size_t size) {
    return std::string(reinterpret_cast<const char*>(data), size);
}

// "KEY=value" lines (an environment; a line without '=' is skipped).
std::map<std::string, std::string> env_of(std::string_view text);
// Whitespace-separated words (plugstack.conf arguments).
std::vector<std::string> words_of(std::string_view text);

// Writes `content` at `node_path` under a private temporary root (made once per process,
// removed at exit) and returns the root, for parsers that only read through a RootFs.
const std::string& temp_root_with(const std::string& node_path, std::string_view content);

}  // namespace xpart::fuzz

// Broken invariant: a trap, which libFuzzer and the replay both report as a crash.
#define XPART_FUZZ_CHECK(cond) \
    do {                       \
        if (!(cond)) __builtin_trap(); \
    } while (0)

// Defines harness `name`: a static function with a distinct name and its table entry.
#define XPART_FUZZ_TARGET(name)                                                             \
    static void xpart_fuzz_##name(const std::uint8_t* data, std::size_t size);              \
    static const ::xpart::fuzz::Register xpart_fuzz_register_##name(#name, xpart_fuzz_##name); \
    static void xpart_fuzz_##name(const std::uint8_t* data, std::size_t size)
