// Golden files: expected output reviewed by hand and committed. XPART_UPDATE_GOLDEN=1 rewrites
// a golden with what the code gives now and then FAILS, whether it changed or not: a run that
// may have rewritten the expectations must never read as a pass. Review `git diff`, then run
// again without the variable.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace xpart::testing {

inline bool golden_update_requested() {
    const char* v = std::getenv("XPART_UPDATE_GOLDEN");
    return v && std::string(v) == "1";
}

// `actual` is written as actual.dump(indent) plus a newline; without the update variable it is
// compared as JSON with the golden at `path`.
inline void expect_json_golden(const std::string& path, const nlohmann::json& actual, int indent) {
    std::ifstream in(path);
    std::stringstream old;
    old << in.rdbuf();
    const std::string text = actual.dump(indent) + "\n";
    if (golden_update_requested()) {
        std::ofstream(path, std::ios::trunc) << text;
        ADD_FAILURE() << (old.str() == text ? "golden unchanged: " : "golden REWRITTEN: ") << path
                      << " (XPART_UPDATE_GOLDEN=1 always fails: review git diff, then run "
                         "without it)";
        return;
    }
    ASSERT_TRUE(in && !old.str().empty()) << "missing golden " << path;
    const nlohmann::json expected = nlohmann::json::parse(old.str(), nullptr, false);
    ASSERT_FALSE(expected.is_discarded()) << path << ": not valid JSON";
    EXPECT_EQ(actual, expected) << "differs from the reviewed golden " << path
                                << " (XPART_UPDATE_GOLDEN=1 rewrites it, and fails)";
}

}  // namespace xpart::testing
