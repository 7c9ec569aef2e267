#include <gtest/gtest.h>

#include <unistd.h>

#include "libxpart/proc_stat.hpp"

namespace xpart {
namespace {

TEST(ProcStat, ParsesCommStateAndStartTime) {
    auto s = parse_proc_stat("42 (a) b) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 "
                             "1000 50");
    ASSERT_TRUE(s);
    EXPECT_EQ(s->comm, "a) b");
    EXPECT_EQ(s->state, 'S');
    EXPECT_EQ(s->ppid, 1);
    EXPECT_EQ(s->start_time, 987654ull);
    EXPECT_FALSE(s->gone());
}

TEST(ProcStat, ShortTextHasNoStartTime) {
    auto s = parse_proc_stat("42 (xpart) Z 1");
    ASSERT_TRUE(s);
    EXPECT_FALSE(s->start_time);
    EXPECT_TRUE(s->gone());
}

TEST(ProcStat, RejectsOtherText) {
    for (const char* text : {"", "42 xpart S", "42 (xpart)", "42 (xpart)S", "42 )x( S"})
        EXPECT_FALSE(parse_proc_stat(text)) << text;
}

TEST(ProcStat, ReadsItselfAndNoSuchProcess) {
    auto self = read_proc_stat(RootFs("/"), getpid());
    ASSERT_TRUE(self);
    EXPECT_TRUE(self->start_time);
    EXPECT_EQ(self->ppid, getppid());
    EXPECT_FALSE(read_proc_stat(RootFs("/"), 0));
    EXPECT_FALSE(read_proc_stat(RootFs("/nonexistent-root"), getpid()));
}

}  // namespace
}  // namespace xpart
