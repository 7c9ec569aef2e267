// The main of every GoogleTest program. automake's test driver counts exit 0 as PASS and 77 as
// SKIP, and gtest_main exits 0 when a test called GTEST_SKIP, so a root-only check run
// unprivileged would read as passed. Here: any failure exits 1; otherwise any skip exits 77
// and names the skipped tests, so the summary says SKIP and the log says what did not run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <iostream>

namespace {

constexpr int kExitFailed = 1;
constexpr int kExitSkipped = 77;  // automake's SKIP

void print_skipped(const ::testing::UnitTest& unit) {
    std::cerr << unit.skipped_test_count() << " test(s) skipped, so this program reports SKIP:\n";
    for (int i = 0; i < unit.total_test_suite_count(); ++i) {
        const ::testing::TestSuite& suite = *unit.GetTestSuite(i);
        for (int j = 0; j < suite.total_test_count(); ++j) {
            const ::testing::TestInfo& test = *suite.GetTestInfo(j);
            if (test.should_run() && test.result()->Skipped())
                std::cerr << "  SKIPPED " << suite.name() << "." << test.name() << "\n";
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    ::testing::InitGoogleMock(&argc, argv);
    if (RUN_ALL_TESTS() != 0) return kExitFailed;
    const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
    if (unit.skipped_test_count() == 0) return 0;
    print_skipped(unit);
    return kExitSkipped;
}
