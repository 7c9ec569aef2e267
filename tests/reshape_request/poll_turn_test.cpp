// Jobs waiting for the same nodes take turns to poll: a flock in the hook user's own 0700
// directory, refused when anyone else could have made or could write that directory.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "reshape_request/poll_turn.hpp"
#include "tests/case_name.hpp"

namespace xpart::reshape_request {
namespace {

struct NameCase {
    const char* name;
    std::string nodelist;
    std::string want;
};
class TurnName : public ::testing::TestWithParam<NameCase> {};
TEST_P(TurnName, Spells) { EXPECT_EQ(turn_file_name(GetParam().nodelist), GetParam().want); }
const NameCase kNames[] = {
    {"a sibling", "gpu1-2x3g40gb", "gpu1-2x3g40gb"},
    {"a range", "gpu[1-4],mi1-cpx", "gpu_1-4__mi1-cpx"},
    {"a path", "../../etc/x", ".._.._etc_x"},
    {"nothing", "", "_"},
};
INSTANTIATE_TEST_SUITE_P(Lists, TurnName, ::testing::ValuesIn(kNames), testing::SentenceCaseName{});

TEST(TurnName, ALongListIsCutAndHashed) {
    const std::string a(300, 'a');
    const std::string b = std::string(299, 'a') + "b";
    EXPECT_LE(turn_file_name(a).size(), 101u);
    EXPECT_NE(turn_file_name(a), turn_file_name(b));
}

class SharedTurn : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/xpart-turn-test.XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        top_ = tmpl;
        dir_ = top_ + "/turns";
    }
    void TearDown() override { std::filesystem::remove_all(top_); }
    std::string top_, dir_;
};

TEST_F(SharedTurn, OneWaiterAtATime) {
    auto first = shared_turn(dir_, "big");
    auto second = shared_turn(dir_, "big");
    auto other = shared_turn(dir_, "mid");
    ASSERT_TRUE(first && second && other);
    struct stat st {};
    ASSERT_EQ(stat(dir_.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    EXPECT_TRUE((*first)->take());
    EXPECT_TRUE((*first)->take());  // kept
    EXPECT_FALSE((*second)->take());
    EXPECT_TRUE((*other)->take());  // other nodes, another turn
    first->reset();                 // that waiter is done (or killed)
    EXPECT_TRUE((*second)->take());
}

TEST_F(SharedTurn, RefusesADirectoryOthersMayWrite) {
    ASSERT_EQ(mkdir(dir_.c_str(), 0777), 0);
    ASSERT_EQ(chmod(dir_.c_str(), 0777), 0);
    auto turn = shared_turn(dir_, "big");
    ASSERT_FALSE(turn);
    EXPECT_EQ(turn.error().message, dir_ + ": not a directory of uid " + std::to_string(geteuid()) + " that only it may use");
}

TEST_F(SharedTurn, RefusesALinkInItsPlace) {
    const std::string real = top_ + "/real";
    ASSERT_EQ(mkdir(real.c_str(), 0700), 0);
    ASSERT_EQ(symlink(real.c_str(), dir_.c_str()), 0);
    EXPECT_FALSE(shared_turn(dir_, "big"));
}

TEST_F(SharedTurn, RefusesALinkForTheLockFile) {
    ASSERT_EQ(mkdir(dir_.c_str(), 0700), 0);
    const std::string target = top_ + "/elsewhere";
    ASSERT_EQ(symlink(target.c_str(), (dir_ + "/big.lock").c_str()), 0);
    EXPECT_FALSE(shared_turn(dir_, "big"));
    EXPECT_FALSE(std::filesystem::exists(target));
}

}  // namespace
}  // namespace xpart::reshape_request
