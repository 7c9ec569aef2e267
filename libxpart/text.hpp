// Small strict parsers for the line formats of procfs, sysfs and config files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libxpart/result.hpp"

namespace xpart {

struct KeyValueLine {
    unsigned line = 0;  // 1-based
    std::string key;
    std::string value;
};

std::string trim(std::string_view s);
std::string to_lower(std::string_view s);
std::string to_upper(std::string_view s);
std::vector<std::string> split(std::string_view s, char sep);  // keeps empty fields
std::vector<std::string> split_words(std::string_view s);     // on any run of blanks and newlines
std::string first_line(std::string_view s, std::size_t at_most = 200);  // for one-line messages

// "Key: \t value" lines (NVIDIA procfs): split on the first ':' and trim; blank lines skipped.
// A non-blank line without ':' is an error naming the file and line.
Result<std::vector<KeyValueLine>> parse_colon_lines(const std::string& text,
                                                    const std::string& file);
// "key value" lines (KFD properties, /proc/devices bodies): split on the first whitespace run.
Result<std::vector<KeyValueLine>> parse_space_lines(const std::string& text,
                                                    const std::string& file);

// Strict decimal (no sign, no trailing junk, no overflow).
std::optional<std::uint64_t> parse_u64(std::string_view s);

// CPU lists in the kernel's format: "0-3,8,10-11" <-> {0,1,2,3,8,10,11}.
Result<std::vector<unsigned>> parse_cpu_list(std::string_view s);
std::string format_cpu_list(const std::vector<unsigned>& cpus);

}  // namespace xpart
