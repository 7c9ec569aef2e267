#include "libxpart/config_words.hpp"

namespace xpart {

bool same_word(std::string_view a, std::string_view b) {
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (lower(a[i]) != lower(b[i])) return false;
    return true;
}

std::string expected_one_of(const std::vector<std::string_view>& words) {
    std::string out = "expected";
    for (std::size_t i = 0; i < words.size(); ++i) {
        out += i == 0 ? " " : i + 1 == words.size() ? " or " : ", ";
        out += words[i];
    }
    return out;
}

Result<bool> parse_yes_no(std::string_view value) {
    for (std::string_view yes : {"yes", "true", "1"})
        if (same_word(value, yes)) return true;
    for (std::string_view no : {"no", "false", "0"})
        if (same_word(value, no)) return false;
    return Error{"expected yes or no"};
}

}  // namespace xpart
