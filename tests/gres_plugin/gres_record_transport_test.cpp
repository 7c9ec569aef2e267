// The records slurmd hands to slurmstepd: what goes in comes out, and a damaged message is
// one error naming the line, never a partial set of records.
#include <gtest/gtest.h>

#include "libxpart/gres_record.hpp"
#include "tests/case_name.hpp"
#include "tests/fixtures/sample_nodes.hpp"

namespace xpart {
namespace {

TEST(GresRecordTransport, RoundTripOfAMixedNode) {
    auto records = gres_records(fixtures::a100_80gb_mig_and_mi300x_node(), RootFs("/sim/x"));
    ASSERT_FALSE(records.empty());
    auto back = parse_records(serialize_records(records));
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(*back, records);
}

TEST(GresRecordTransport, RoundTripOfFieldsThatNeedEscaping) {
    GresRecord r;
    r.vendor = Vendor::Amd;
    r.type = "odd\ttype%41\n";
    r.files = {{"/dev/with\ttab", 226, 128, true}, {"/dev/100%\r", 195, 0, false}};
    r.cpus = {0, 1, 2, 7, 64, 65};
    r.partition_uuid = "";
    r.gpu_uuid = "%%";
    r.kfd_node = 3;
    r.amd_rank = 0;
    r.presence_paths = {"/sys/x\n/gpu_id", ""};
    r.expected_contents = {{ContentKind::ComputeMode, "/sys/bus/pci/devices/0000:05:00.0/current_compute_partition", "CPX"},
                           {ContentKind::KfdGpuId, "/sys/kfd\t/gpu_id", "%12\n"},
                           {ContentKind::KfdGpuId, "", ""}};
    GresRecord empty;  // every string empty, every number -1, no files
    auto back = parse_records(serialize_records({r, empty}));
    ASSERT_TRUE(back) << back.error().message;
    ASSERT_EQ(back->size(), 2u);
    EXPECT_EQ((*back)[0], r);
    EXPECT_EQ((*back)[1], empty);
}

TEST(GresRecordTransport, ContentsTravelAsCLines) {
    GresRecord r;
    r.vendor = Vendor::Amd;
    r.expected_contents = {{ContentKind::ComputeMode, "/m", "SPX"}, {ContentKind::KfdGpuId, "/g", "4321"}};
    const std::string text = serialize_records({r});
    EXPECT_NE(text.find("\nc\tmode\t/m\tSPX\nc\tgpu_id\t/g\t4321\n"), std::string::npos) << text;
}

TEST(GresRecordTransport, NoRecordsIsTheHeaderAlone) {
    EXPECT_EQ(serialize_records({}), "xpart-gres-records 1\n");
    auto back = parse_records("xpart-gres-records 1\n");
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_TRUE(back->empty());
}

struct Damaged {
    const char* name;
    std::string text;
    std::string error;  // the whole message
};

class GresRecordTransportDamaged : public ::testing::TestWithParam<Damaged> {};

const std::string kHead = "xpart-gres-records 1\n";
const std::string kRecord = "r\tnvidia\t1g.10gb\tMIG-1\tMIG-1\tGPU-1\t0\t1\t0\t-1\t-1\t0-3\n";

INSTANTIATE_TEST_SUITE_P(
    Table, GresRecordTransportDamaged,
    ::testing::Values(
        Damaged{"empty", "", "gres records: empty"},
        Damaged{"old JSON transport", "[]\n", "gres records line 1: not 'xpart-gres-records 1'"},
        Damaged{"other version", "xpart-gres-records 2\n", "gres records line 1: not 'xpart-gres-records 1'"},
        Damaged{"truncated", kHead + kRecord.substr(0, 20), "gres records line 2: not terminated by a newline (truncated?)"},
        Damaged{"unknown vendor", kHead + "r\tintel\tx\t\t\t\t-1\t-1\t-1\t-1\t-1\t\n", "gres records line 2: unknown vendor 'intel'"},
        Damaged{"short record", kHead + "r\tamd\tcpx\n", "gres records line 2: a record needs 11 fields, has 2"},
        Damaged{"bad number", kHead + "r\tamd\tcpx\t\t\t\t-1\t-1\t-1\tx7\t0\t\n", "gres records line 2: bad number 'x7' in field 9"},
        Damaged{"number below -1", kHead + "r\tamd\tcpx\t\t\t\t-2\t-1\t-1\t7\t0\t\n", "gres records line 2: bad number '-2' in field 6"},
        Damaged{"bad CPU list", kHead + "r\tamd\tcpx\t\t\t\t-1\t-1\t-1\t7\t0\t3-1\n", "gres records line 2: invalid CPU list '3-1' at '3-1'"},
        Damaged{"file first", kHead + "f\t/dev/kfd\t235\t0\t1\n", "gres records line 2: a file before any record"},
        Damaged{"bad shared flag", kHead + kRecord + "f\t/dev/kfd\t235\t0\tyes\n", "gres records line 3: bad device numbers or shared flag"},
        Damaged{"negative major", kHead + kRecord + "f\t/dev/kfd\t-1\t0\t1\n", "gres records line 3: bad device numbers or shared flag"},
        Damaged{"short file", kHead + kRecord + "f\t/dev/kfd\n", "gres records line 3: a file needs 4 fields, has 1"},
        Damaged{"short escape", kHead + kRecord + "p\t/x%4\n", "gres records line 3: bad %-escape in field 1"},
        Damaged{"bad escape", kHead + kRecord + "p\t/x%zz\n", "gres records line 3: bad %-escape in field 1"},
        Damaged{"two presence fields", kHead + kRecord + "p\t/a\t/b\n", "gres records line 3: a presence path needs 1 field"},
        Damaged{"content first", kHead + "c\tmode\t/m\tSPX\n", "gres records line 2: a file before any record"},
        Damaged{"short content", kHead + kRecord + "c\tmode\t/m\n", "gres records line 3: a content needs 3 fields, has 2"},
        Damaged{"long content", kHead + kRecord + "c\tmode\t/m\tSPX\tx\n", "gres records line 3: a content needs 3 fields, has 4"},
        Damaged{"unknown content kind", kHead + kRecord + "c\tuuid\t/m\tSPX\n", "gres records line 3: unknown content kind 'uuid'"},
        Damaged{"bad escape in content", kHead + kRecord + "c\tgpu_id\t/g\t1%z\n", "gres records line 3: bad %-escape in field 3"},
        Damaged{"unknown tag", kHead + kRecord + "q\n", "gres records line 3: unknown line tag 'q'"}),
    testing::SentenceCaseName{});

TEST_P(GresRecordTransportDamaged, OneErrorNamingTheLine) {
    auto r = parse_records(GetParam().text);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message, GetParam().error);
}

}  // namespace
}  // namespace xpart
