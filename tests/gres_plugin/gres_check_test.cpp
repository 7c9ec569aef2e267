#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "libxpart/gres/gres_check.hpp"
#include "tests/case_name.hpp"
#include "tests/fixtures/sample_nodes.hpp"

namespace xpart {
namespace {

const std::string kAdvice = "; restart slurmd (or scontrol reconfigure) to register the node as it is now";

TEST(CheckPresent, VanishedAndReplacedFilesAreNamed) {
    char dir[] = "/tmp/gres_check_testXXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    const std::string root = dir;
    GresRecord r;
    r.type = "1g.10gb";
    r.partition_uuid = "MIG-x";
    r.presence_paths = {root + "/access"};
    r.files = {{"/dev/null", 1, 3, false}};  // still what it was
    std::vector<GresRecord> records{r};
    EXPECT_EQ(check_present(records, {true}),
              std::vector<std::string>{"gres/gpu index 0 1g.10gb (MIG-x): " + root +
                                       "/access: No such file or directory: the partition is "
                                       "gone since slurmd started" + kAdvice});
    EXPECT_TRUE(check_present(records, {false}).empty()) << "only allocated records are checked";
    FILE* f = fopen((root + "/access").c_str(), "w");
    ASSERT_NE(f, nullptr);
    fclose(f);
    EXPECT_TRUE(check_present(records, {true}).empty());
    records[0].files = {{"/dev/null", 1, 5, false}};
    EXPECT_EQ(check_present(records, {true}),
              std::vector<std::string>{"gres/gpu index 0 1g.10gb (MIG-x): /dev/null: is now 1:3, was 1:5"});
    records[0].files = {{root + "/access", 1, 3, false}};
    EXPECT_EQ(check_present(records, {true}),
              std::vector<std::string>{"gres/gpu index 0 1g.10gb (MIG-x): " + root +
                                       "/access: is now not a character device, was 1:3"});
    unlink((root + "/access").c_str());
    rmdir(dir);
}

TEST(CheckPresent, ASharedFileIsCheckedAndNamedOnce) {
    GresRecord a;
    a.type = "cpx";
    a.partition_uuid = "A";
    a.files = {{"/nonexistent/kfd", 235, 0, true}, {"/dev/null", 1, 3, false}};
    GresRecord b = a;
    b.partition_uuid = "B";
    b.files[1] = {"/nonexistent/renderD129", 226, 129, false};
    EXPECT_EQ(check_present({a, b}, {true, true}),
              (std::vector<std::string>{
                  "gres/gpu index 0 cpx (A): /nonexistent/kfd: No such file or directory",
                  "gres/gpu index 1 cpx (B): /nonexistent/renderD129: No such file or directory"}));
}


// Expected contents at step launch (an AMD mode switch, a KFD node re-made or gone): each
// case writes the node's files as they are now and checks the lines for two XCPs of one GPU
// (index 0, 1) and one XCP of another GPU (index 2), all allotted.
struct ContentCase {
    const char* name;
    std::string mode0, gpu_id0, gpu_id1, mode2, gpu_id2;  // "" = the file is gone
    std::vector<std::string> want;                         // "<root>" stands for the root
};

class CheckContents : public ::testing::TestWithParam<ContentCase> {};

TEST_P(CheckContents, OneLinePerChangedPartition) {
    const ContentCase& c = GetParam();
    char dir[] = "/tmp/gres_content_testXXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    const std::string root = dir;
    auto write = [&](const std::string& name, const std::string& text) {
        if (text.empty()) return;
        FILE* f = fopen((root + "/" + name).c_str(), "w");
        ASSERT_NE(f, nullptr);
        fputs((text + "\n").c_str(), f);
        fclose(f);
    };
    write("mode0", c.mode0);
    write("gpu_id0", c.gpu_id0);
    write("gpu_id1", c.gpu_id1);
    write("mode2", c.mode2);
    write("gpu_id2", c.gpu_id2);
    auto xcp = [&](const char* uuid, int kfd, const char* mode, const char* mode_text,
                   const char* id, const char* id_text) {
        GresRecord r;
        r.vendor = Vendor::Amd;
        r.type = "cpx";
        r.partition_uuid = uuid;
        r.kfd_node = kfd;
        r.expected_contents = {{ContentKind::ComputeMode, root + "/" + mode, mode_text},
                               {ContentKind::KfdGpuId, root + "/" + id, id_text}};
        return r;
    };
    std::vector<GresRecord> records{xcp("GPU-a", 2, "mode0", "CPX", "gpu_id0", "1111"),
                                    xcp("GPU-a", 3, "mode0", "CPX", "gpu_id1", "2222"),
                                    xcp("GPU-b", 4, "mode2", "CPX", "gpu_id2", "3333")};
    std::vector<std::string> want;
    for (std::string w : c.want) {
        for (std::size_t at; (at = w.find("<root>")) != std::string::npos;) w.replace(at, 6, root);
        want.push_back(w);
    }
    EXPECT_EQ(check_present(records, {true, true, true}), want);
    EXPECT_TRUE(check_present(records, {false, false, false}).empty());
    for (const char* f : {"mode0", "gpu_id0", "gpu_id1", "mode2", "gpu_id2"})
        unlink((root + "/" + f).c_str());
    rmdir(dir);
}

INSTANTIATE_TEST_SUITE_P(
    Table, CheckContents,
    ::testing::Values(
        ContentCase{"unchanged", "CPX", "1111", "2222", "CPX", "3333", {}},
        ContentCase{"mode switched on one GPU: its XCPs refused, the other GPU binds",
                    "SPX", "9999", "", "CPX", "3333",
                    {"gres/gpu index 0 cpx (GPU-a): compute partition mode is now SPX, slurmd "
                     "registered CPX (<root>/mode0)" + kAdvice,
                     "gres/gpu index 1 cpx (GPU-a): compute partition mode is now SPX, slurmd "
                     "registered CPX (<root>/mode0)" + kAdvice}},
        ContentCase{"KFD node re-made, same mode", "CPX", "1111", "2223", "CPX", "3333",
                    {"gres/gpu index 1 cpx (GPU-a): KFD node 3 gone or re-made (<root>/gpu_id1: "
                     "gpu_id now 2223, slurmd registered 2222)" + kAdvice}},
        ContentCase{"KFD node gone", "CPX", "1111", "2222", "CPX", "",
                    {"gres/gpu index 2 cpx (GPU-b): KFD node 4 gone or re-made (<root>/gpu_id2: No "
                     "such file or directory, slurmd registered 3333)" + kAdvice}},
        ContentCase{"mode attribute gone", "", "1111", "2222", "CPX", "3333",
                    {"gres/gpu index 0 cpx (GPU-a): <root>/mode0: No such file or directory: "
                     "compute partition mode unreadable, slurmd registered CPX" + kAdvice,
                     "gres/gpu index 1 cpx (GPU-a): <root>/mode0: No such file or directory: "
                     "compute partition mode unreadable, slurmd registered CPX" + kAdvice}}),
    testing::SentenceCaseName{});

TEST(AutoDetectLine, NamesTheMethodAndWhoRegistered) {
    EXPECT_EQ(autodetect_line({}, 6), std::nullopt);
    EXPECT_EQ(autodetect_line({"full"}, 6),
              "gres.conf AutoDetect=full: xpart's discovery registered the node's 6 GPU "
              "partition(s); Slurm's gpu/* plugins are not used with xpart's gres/gpu");
    EXPECT_EQ(autodetect_line({"nvml"}, 2),
              "gres.conf AutoDetect=nvml: xpart's discovery registered the node's 2 GPU "
              "partition(s); Slurm's gpu/nvml plugin is not used with xpart's gres/gpu");
    EXPECT_EQ(autodetect_line({"nvml", "rsmi"}, 0),
              "gres.conf AutoDetect=nvml,rsmi: xpart's discovery registered the node's 0 GPU "
              "partition(s); Slurm's gpu/* plugins are not used with xpart's gres/gpu");
}

}  // namespace
}  // namespace xpart
