// gres.conf parsing: Slurm 22.05's reading rules and one exact line per malformed input.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "libxpart/slurm_text/gres_conf.hpp"

namespace xpart {
namespace {

// Each record shown as "<line>|<record re-formatted>"; the formatter is tested below.
std::vector<std::string> summarize(const GresConf& conf) {
    std::vector<std::string> out;
    for (const GresConfRecord& r : conf.records)
        out.push_back(std::to_string(r.line) + "|" + format_gres_record(r));
    return out;
}

struct ParseCase {
    const char* name;
    const char* text;
    std::vector<std::string> records;
    const char* autodetect = "";
};

class GresConfParse : public ::testing::TestWithParam<ParseCase> {};

TEST_P(GresConfParse, ReadsRecords) {
    const ParseCase& c = GetParam();
    auto conf = parse_gres_conf(c.text, "gres.conf");
    ASSERT_TRUE(conf.ok()) << conf.error().message;
    EXPECT_EQ(summarize(*conf), c.records);
    EXPECT_EQ(conf->autodetect, c.autodetect);
}

const ParseCase kParseCases[] = {
    {"Empty", "", {}},
    {"CommentsAndBlankLines", "# a comment\n\n   \n# another\n", {}},
    {"OneMigRecord",
     "Name=gpu Type=1g.10gb MultipleFiles=/dev/nvidia0,/dev/nvidia-caps/nvidia-cap12,"
     "/dev/nvidia-caps/nvidia-cap13 Cores=0-3\n",
     {"1|Name=gpu Type=1g.10gb MultipleFiles=/dev/nvidia0,/dev/nvidia-caps/nvidia-cap12,"
      "/dev/nvidia-caps/nvidia-cap13 Cores=0-3"}},
    {"KeysAreCaseInsensitive", "name=gpu TYPE=a100 file=/dev/nvidia0 cpus=1,3\n",
     {"1|Name=gpu Type=a100 File=/dev/nvidia0 Cores=1,3"}},
    {"FileRangeExpands", "Name=gpu File=/dev/nvidia[0-2]\n",
     {"1|Name=gpu File=/dev/nvidia0,/dev/nvidia1,/dev/nvidia2"}},
    {"FilesAliasAndList", "Name=gpu Files=/dev/nvidia[1,3],/dev/x\n",
     {"1|Name=gpu File=/dev/nvidia1,/dev/nvidia3,/dev/x"}},
    {"CoresBracketsAndRanges", "Name=gpu File=/dev/nvidia0 Cores=[0-2,8]\n",
     {"1|Name=gpu File=/dev/nvidia0 Cores=0-2,8"}},
    {"TrailingCommentAndEscapedHash", "Name=gpu Type=a\\#b File=/dev/nvidia0 # why\n",
     {"1|Name=gpu Type=a\\#b File=/dev/nvidia0"}},
    {"Continuation", "Name=gpu Type=1g.10gb \\\n   File=/dev/nvidia0\nName=gpu File=/dev/nvidia1\n",
     {"1|Name=gpu Type=1g.10gb File=/dev/nvidia0", "3|Name=gpu File=/dev/nvidia1"}},
    {"ContinuationWithTrailingSpaceAndComment",
     "Name=gpu \\  # comment\nFile=/dev/nvidia0\n", {"1|Name=gpu File=/dev/nvidia0"}},
    {"EvenBackslashesDoNotContinue", "Name=gpu Type=a\\\\\nName=gpu Type=b\n",
     {"1|Name=gpu Type=a\\\\", "2|Name=gpu Type=b"}},
    {"CrLfLines", "Name=gpu File=/dev/nvidia0\r\nName=mps Count=100\r\n",
     {"1|Name=gpu File=/dev/nvidia0", "2|Name=mps Count=100"}},
    {"QuotedValue", "Name=gpu Type=\"a b\" File=/dev/nvidia0\n",
     {"1|Name=gpu Type=\"a b\" File=/dev/nvidia0"}},
    {"SpacesAroundEquals", "Name = gpu  File =  /dev/nvidia0\n", {"1|Name=gpu File=/dev/nvidia0"}},
    {"NodeNameHostlist", "NodeName=n[01-02],gpu7 Name=gpu File=/dev/nvidia0\n",
     {"1|NodeName=n01,n02,gpu7 Name=gpu File=/dev/nvidia0"}},
    {"GlobalAutoDetect", "AutoDetect=off\nName=gpu File=/dev/nvidia0\n",
     {"2|Name=gpu File=/dev/nvidia0"}, "off"},
    {"GlobalAutoDetectThenRecord", "AutoDetect=nvml Name=gpu File=/dev/nvidia0\n",
     {"1|Name=gpu File=/dev/nvidia0"}, "nvml"},
    {"NodeLocalAutoDetectOnly", "NodeName=n1 AutoDetect=rsmi\n", {"1|NodeName=n1 AutoDetect=rsmi"}},
    // 26.05's AutoDetect=full and 24.11's nrt and nvidia.
    {"GlobalAutoDetectFull", "AutoDetect=full\n", {}, "full"},
    {"NodeLocalAutoDetectNvidia", "NodeName=n1 AutoDetect=nvidia\n", {"1|NodeName=n1 AutoDetect=nvidia"}},
    {"GlobalAutoDetectNrt", "AutoDetect=NRT\n", {}, "NRT"},
    {"CountSuffix", "Name=mps Count=2k\n", {"1|Name=mps Count=2048"}},
    {"CountDecimalSuffix", "Name=shard Count=1kb\n", {"1|Name=shard Count=1000"}},
    {"CountMatchesFiles", "Name=gpu Count=2 File=/dev/nvidia[0-1]\n",
     {"1|Name=gpu Count=2 File=/dev/nvidia0,/dev/nvidia1"}},
    {"MpsCountMayExceedFiles", "Name=mps Count=200 File=/dev/nvidia0\n",
     {"1|Name=mps Count=200 File=/dev/nvidia0"}},
    {"FlagsAndLinks", "Name=gpu File=/dev/nvidia0 Flags=nvidia_gpu_env Links=-1,2\n",
     {"1|Name=gpu File=/dev/nvidia0 Flags=nvidia_gpu_env Links=-1,2"}},
};

INSTANTIATE_TEST_SUITE_P(Cases, GresConfParse, ::testing::ValuesIn(kParseCases),
                         [](const auto& info) { return std::string(info.param.name); });

struct MalformedCase {
    const char* name;
    const char* text;
    const char* error;
};

class GresConfMalformed : public ::testing::TestWithParam<MalformedCase> {};

TEST_P(GresConfMalformed, OneLineNamingFileLineKeyAndValue) {
    const MalformedCase& c = GetParam();
    auto conf = parse_gres_conf(c.text, "/etc/slurm/gres.conf");
    ASSERT_FALSE(conf.ok());
    EXPECT_EQ(conf.error().message, c.error);
    EXPECT_EQ(conf.error().message.find('\n'), std::string::npos);
}

const MalformedCase kMalformedCases[] = {
    {"UnknownKey", "\nName=gpu Typo=x\n",
     "/etc/slurm/gres.conf:2: Typo=x: unknown key (gres.conf keys: AutoDetect, Count, Cores, "
     "CPUs, File, Files, Flags, Links, MultipleFiles, Name, NodeName, Type)"},
    {"NotKeyValue", "Name=gpu junk\n", "/etc/slurm/gres.conf:1: \"junk\": expected Key=Value"},
    {"EmptyValue", "Name=gpu Type= File=/dev/nvidia0\n", "/etc/slurm/gres.conf:1: Type=: empty value"},
    {"UnterminatedQuote", "Name=gpu Type=\"a b\n",
     "/etc/slurm/gres.conf:1: Type=\"a b: unterminated quote"},
    {"RecordMustStartWithName", "Type=1g.10gb Name=gpu\n",
     "/etc/slurm/gres.conf:1: Type=1g.10gb: a record starts with Name= or NodeName="},
    {"IncludeUnsupported", "Include=/etc/slurm/other.conf\n",
     "/etc/slurm/gres.conf:1: Include=/etc/slurm/other.conf: Include is not supported by this reader"},
    {"NodeNameWithoutName", "NodeName=n1 File=/dev/nvidia0\n",
     "/etc/slurm/gres.conf:1: NodeName=n1: no Name= in this record"},
    {"NodeNameNotFirst", "Name=gpu NodeName=n1\n",
     "/etc/slurm/gres.conf:1: NodeName=n1: NodeName= must start the record"},
    {"BadCount", "Name=gpu Count=lots\n",
     "/etc/slurm/gres.conf:1: Count=lots: not a count (digits with an optional k, m, g, t or p "
     "suffix)"},
    {"CountOverflow", "Name=mps Count=99999999999p\n",
     "/etc/slurm/gres.conf:1: Count=99999999999p: not a count (digits with an optional k, m, g, "
     "t or p suffix)"},
    {"CountDiffersFromFiles", "Name=gpu Count=3 File=/dev/nvidia[0-1]\n",
     "/etc/slurm/gres.conf:1: Count=3: File= names 2 files"},
    {"CountOnMultipleFiles", "Name=gpu Count=2 MultipleFiles=/dev/a,/dev/b\n",
     "/etc/slurm/gres.conf:1: Count=2: a MultipleFiles= record is one GRES"},
    {"BadCores", "Name=gpu Cores=0-x\n",
     "/etc/slurm/gres.conf:1: Cores=0-x: invalid CPU list '0-x' at '0-x'"},
    {"BadFileRange", "Name=gpu File=/dev/nvidia[3-1]\n",
     "/etc/slurm/gres.conf:1: File=/dev/nvidia[3-1]: bad range '3-1' in '/dev/nvidia[3-1]'"},
    {"UnbalancedBracket", "Name=gpu File=/dev/nvidia[0-1\n",
     "/etc/slurm/gres.conf:1: File=/dev/nvidia[0-1: unbalanced '[' in '/dev/nvidia[0-1'"},
    {"RelativeFile", "Name=gpu File=nvidia0\n",
     "/etc/slurm/gres.conf:1: File=nvidia0: 'nvidia0' is not an absolute path"},
    {"FileAndMultipleFiles", "Name=gpu File=/dev/a MultipleFiles=/dev/b,/dev/c\n",
     "/etc/slurm/gres.conf:1: MultipleFiles=/dev/b,/dev/c: File= and MultipleFiles= are mutually "
     "exclusive"},
    {"MultipleFilesWithOneFile", "Name=gpu MultipleFiles=/dev/nvidia0\n",
     "/etc/slurm/gres.conf:1: MultipleFiles=/dev/nvidia0: names one file; use File= for a single "
     "file"},
    {"KeyTwice", "Name=gpu Type=a Type=b\n", "/etc/slurm/gres.conf:1: Type=b: given twice in this record"},
    {"AliasTwice", "Name=gpu Cores=0 CPUs=1\n", "/etc/slurm/gres.conf:1: CPUs=1: given twice in this record"},
    {"UnknownFlag", "Name=gpu File=/dev/nvidia0 Flags=nvidia_env\n",
     "/etc/slurm/gres.conf:1: Flags=nvidia_env: unknown flag 'nvidia_env' (known: CountOnly, "
     "nvidia_gpu_env, amd_gpu_env, intel_gpu_env, opencl_env, no_gpu_env, one_sharing, "
     "all_sharing)"},
    {"NoGpuEnvWithEnvFlag", "Name=gpu File=/dev/nvidia0 Flags=no_gpu_env,amd_gpu_env\n",
     "/etc/slurm/gres.conf:1: Flags=no_gpu_env,amd_gpu_env: no_gpu_env excludes the other *_env "
     "flags"},
    {"BadGlobalAutoDetect", "AutoDetect=cuda\n",
     "/etc/slurm/gres.conf:1: AutoDetect=cuda: expected full, nvml, rsmi, oneapi, nrt, nvidia or off"},
    {"InlineAutoDetectWithoutNodeName", "Name=gpu AutoDetect=nvml File=/dev/nvidia0\n",
     "/etc/slurm/gres.conf:1: AutoDetect=nvml: AutoDetect on a record needs NodeName="},
    {"ErrorLineIsFirstLineOfContinuedRecord", "# c\nName=gpu \\\nTypo=1\n",
     "/etc/slurm/gres.conf:2: Typo=1: unknown key (gres.conf keys: AutoDetect, Count, Cores, "
     "CPUs, File, Files, Flags, Links, MultipleFiles, Name, NodeName, Type)"},
    {"HugeHostlist", "NodeName=n[0-65535]x[0-9] Name=gpu\n",
     "/etc/slurm/gres.conf:1: NodeName=n[0-65535]x[0-9]: 'n[0-65535]x[0-9]' expands to more "
     "than 65536 names"},
};

INSTANTIATE_TEST_SUITE_P(Cases, GresConfMalformed, ::testing::ValuesIn(kMalformedCases),
                         [](const auto& info) { return std::string(info.param.name); });

struct HostlistCase {
    const char* list;
    std::vector<std::string> names;
};

class Hostlist : public ::testing::TestWithParam<HostlistCase> {};

TEST_P(Hostlist, Expands) {
    auto names = expand_hostlist(GetParam().list);
    ASSERT_TRUE(names.ok()) << names.error().message;
    EXPECT_EQ(*names, GetParam().names);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, Hostlist,
    ::testing::Values(HostlistCase{"n1", {"n1"}}, HostlistCase{"n[1-3]", {"n1", "n2", "n3"}},
                      HostlistCase{"n[08-10]", {"n08", "n09", "n10"}},
                      HostlistCase{"a[1,3],b", {"a1", "a3", "b"}},
                      HostlistCase{"r[1-2]n[1-2]", {"r1n1", "r1n2", "r2n1", "r2n2"}},
                      HostlistCase{"/dev/dri/renderD[128-129]",
                                   {"/dev/dri/renderD128", "/dev/dri/renderD129"}},
                      // The largest uint64 ends the range (fuzzing: the loop wrapped to 0).
                      HostlistCase{"n[18446744073709551614-18446744073709551615]",
                                   {"n18446744073709551614", "n18446744073709551615"}}));

TEST(HostlistErrors, OneReasonEach) {
    EXPECT_EQ(expand_hostlist("a,,b").error().message, "empty entry in 'a,,b'");
    EXPECT_EQ(expand_hostlist("a]").error().message, "unbalanced ']' in 'a]'");
    EXPECT_EQ(expand_hostlist("a[[1]]").error().message, "nested '[' in 'a[[1]]'");
    EXPECT_EQ(expand_hostlist("a[x]").error().message, "bad range 'x' in 'a[x]'");
    // Refused before the names are made (fuzzing: each of these took gigabytes first).
    EXPECT_EQ(expand_hostlist("a[0-9999][0-9999]").error().message,
              "'a[0-9999][0-9999]' expands to more than 65536 names");
    EXPECT_EQ(expand_hostlist("a[0-40000,0-40000]").error().message,
              "'a[0-40000,0-40000]' expands to more than 65536 names");
    EXPECT_EQ(expand_hostlist("a[0-40000],b[0-40000]").error().message,
              "'b[0-40000]' expands to more than 65536 names");
    EXPECT_EQ(expand_hostlist("a[0-65535]")->size(), 65536u);
}

TEST(GresConfNodes, RecordsForNodeKeepsUnscopedAndMatchingRecords) {
    auto conf = parse_gres_conf(
        "Name=gpu File=/dev/nvidia0\n"
        "NodeName=n[1-2] Name=gpu File=/dev/nvidia1\n"
        "NodeName=n3 Name=gpu File=/dev/nvidia2\n",
        "g");
    ASSERT_TRUE(conf.ok());
    std::vector<unsigned> lines;
    for (const GresConfRecord& r : records_for_node(*conf, "n2")) lines.push_back(r.line);
    EXPECT_EQ(lines, (std::vector<unsigned>{1, 2}));
    lines.clear();
    for (const GresConfRecord& r : records_for_node(*conf, "n10")) lines.push_back(r.line);
    EXPECT_EQ(lines, (std::vector<unsigned>{1}));
}

TEST(GresConfRecord, EffectiveCountFollowsSlurm) {
    GresConfRecord r;
    EXPECT_EQ(r.effective_count(), 1u);
    r.files = {"/dev/a", "/dev/b"};
    EXPECT_EQ(r.effective_count(), 2u);
    r.count = 7;
    EXPECT_EQ(r.effective_count(), 7u);
}

TEST(GresConfRead, ThroughRootPrefixAndMissingFile) {
    auto missing = read_gres_conf(RootFs("/nonexistent-xpart-root"), "/etc/slurm/gres.conf");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().message,
              "/nonexistent-xpart-root/etc/slurm/gres.conf: No such file or directory");
}

}  // namespace
}  // namespace xpart
