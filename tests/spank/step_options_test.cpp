// The SPANK plugin's options (spank_plugin/step_options.hpp): plugstack.conf arguments, the
// user's srun options over them, and what a step then does (bind, confine).
#include <gtest/gtest.h>

#include "spank_plugin/step_options.hpp"

namespace xpart::spank {
namespace {

using std::chrono::milliseconds;

TEST(StepOptionsTest, NoArgumentsAreTheDefaults) {
    auto o = parse_site_args({});
    ASSERT_TRUE(o.ok()) << o.error().message;
    EXPECT_EQ(o->bind, StepBind::None);
    EXPECT_FALSE(o->confine.has_value());
    EXPECT_FALSE(o->mps);
    EXPECT_EQ(o->mps_job.run_dir, "/run/xpart");
    EXPECT_EQ(o->mps_job.control, "nvidia-cuda-mps-control");
    EXPECT_EQ(o->mps_job.timeout, milliseconds(10000));
    EXPECT_FALSE(o->active());
}

// One site argument and the field it sets.
struct SiteCase {
    const char* name;
    std::vector<std::string> args;
    StepBind bind;
    std::optional<bool> confine;
    bool mps;
    std::string run_dir, mps_control;
    milliseconds timeout;
};

class SiteArgsTest : public ::testing::TestWithParam<SiteCase> {};

TEST_P(SiteArgsTest, Parses) {
    const SiteCase& c = GetParam();
    auto o = parse_site_args(c.args);
    ASSERT_TRUE(o.ok()) << o.error().message;
    EXPECT_EQ(o->bind, c.bind);
    EXPECT_EQ(o->confine, c.confine);
    EXPECT_EQ(o->mps, c.mps);
    EXPECT_EQ(o->mps_job.run_dir, c.run_dir);
    EXPECT_EQ(o->mps_job.control, c.mps_control);
    EXPECT_EQ(o->mps_job.timeout, c.timeout);
}

const std::string kRun = "/run/xpart", kCtl = "nvidia-cuda-mps-control";
const milliseconds kTen{10000};

const SiteCase kSiteCases[] = {
    {"bind_rank", {"bind=rank"}, StepBind::Rank, std::nullopt, false, kRun, kCtl, kTen},
    {"bind_closest", {"bind=closest"}, StepBind::Closest, std::nullopt, false, kRun, kCtl, kTen},
    {"bind_none", {"bind=none"}, StepBind::None, std::nullopt, false, kRun, kCtl, kTen},
    // Any case, as in xpart.conf (config_words: one rule for every source).
    {"bind_any_case", {"bind=Rank"}, StepBind::Rank, std::nullopt, false, kRun, kCtl, kTen},
    {"confine_yes", {"confine=yes"}, StepBind::None, true, false, kRun, kCtl, kTen},
    {"confine_no", {"confine=no"}, StepBind::None, false, false, kRun, kCtl, kTen},
    {"confine_any_case", {"confine=YES"}, StepBind::None, true, false, kRun, kCtl, kTen},
    {"confine_true", {"confine=true"}, StepBind::None, true, false, kRun, kCtl, kTen},
    {"confine_0", {"confine=0"}, StepBind::None, false, false, kRun, kCtl, kTen},
    {"mps_yes", {"mps=yes"}, StepBind::None, std::nullopt, true, kRun, kCtl, kTen},
    {"mps_false", {"mps=False"}, StepBind::None, std::nullopt, false, kRun, kCtl, kTen},
    {"run_dir", {"run_dir=/var/run/xp"}, StepBind::None, std::nullopt, false, "/var/run/xp", kCtl, kTen},
    {"mps_control", {"mps_control=/opt/cuda/bin/nvidia-cuda-mps-control"}, StepBind::None,
     std::nullopt, false, kRun, "/opt/cuda/bin/nvidia-cuda-mps-control", kTen},
    {"mps_timeout_fraction", {"mps_timeout=2.5"}, StepBind::None, std::nullopt, false, kRun, kCtl,
     milliseconds(2500)},
    {"mps_timeout_max", {"mps_timeout=3600"}, StepBind::None, std::nullopt, false, kRun, kCtl,
     milliseconds(3600000)},
    {"later_wins", {"bind=rank", "mps=yes", "bind=none", "mps=no"}, StepBind::None, std::nullopt,
     false, kRun, kCtl, kTen},
    {"all_together",
     {"bind=closest", "confine=no", "mps=yes", "run_dir=/r", "mps_control=ctl", "mps_timeout=30"},
     StepBind::Closest, false, true, "/r", "ctl", milliseconds(30000)},
};

INSTANTIATE_TEST_SUITE_P(Good, SiteArgsTest, ::testing::ValuesIn(kSiteCases),
                         [](const auto& info) { return std::string(info.param.name); });

// A bad argument: the whole one-line error.
struct BadSiteCase {
    const char* name;
    std::vector<std::string> args;
    const char* error;
};

class BadSiteArgsTest : public ::testing::TestWithParam<BadSiteCase> {};

TEST_P(BadSiteArgsTest, IsOneLine) {
    const BadSiteCase& c = GetParam();
    auto o = parse_site_args(c.args);
    ASSERT_FALSE(o.ok());
    EXPECT_EQ(o.error().message, c.error);
}

const BadSiteCase kBadSiteCases[] = {
    {"no_equals", {"bind"}, "plugstack.conf: argument 'bind': expected key=value"},
    {"bad_bind", {"bind=all"},
     "plugstack.conf: argument 'bind=all': expected rank, closest or none"},
    {"bind_any_case_still_a_word", {"bind=Ranks"},
     "plugstack.conf: argument 'bind=Ranks': expected rank, closest or none"},
    {"bad_confine", {"confine=maybe"},
     "plugstack.conf: argument 'confine=maybe': expected yes or no"},
    {"bad_mps", {"mps=2"}, "plugstack.conf: argument 'mps=2': expected yes or no"},
    {"relative_run_dir", {"run_dir=run/xpart"},
     "plugstack.conf: argument 'run_dir=run/xpart': expected an absolute path"},
    {"empty_run_dir", {"run_dir="},
     "plugstack.conf: argument 'run_dir=': expected an absolute path"},
    {"empty_mps_control", {"mps_control="},
     "plugstack.conf: argument 'mps_control=': expected a program"},
    {"zero_timeout", {"mps_timeout=0"},
     "plugstack.conf: argument 'mps_timeout=0': expected seconds between 0.01 and 3600"},
    {"negative_timeout", {"mps_timeout=-1"},
     "plugstack.conf: argument 'mps_timeout=-1': expected seconds between 0.01 and 3600"},
    {"timeout_too_long", {"mps_timeout=3601"},
     "plugstack.conf: argument 'mps_timeout=3601': expected seconds between 0.01 and 3600"},
    {"timeout_unit", {"mps_timeout=10s"},
     "plugstack.conf: argument 'mps_timeout=10s': expected seconds between 0.01 and 3600"},
    {"timeout_nan", {"mps_timeout=nan"},
     "plugstack.conf: argument 'mps_timeout=nan': expected seconds between 0.01 and 3600"},
    {"timeout_empty", {"mps_timeout="},
     "plugstack.conf: argument 'mps_timeout=': expected seconds between 0.01 and 3600"},
    {"job_dir_size_zero", {"job_dir_size=0"},
     "plugstack.conf: argument 'job_dir_size=0': expected MiB between 1 and 65536"},
    {"job_dir_size_unit", {"job_dir_size=64m"},
     "plugstack.conf: argument 'job_dir_size=64m': expected MiB between 1 and 65536"},
    {"unknown_key", {"binding=rank"},
     "plugstack.conf: argument 'binding=rank': unknown key (bind, confine, mps, nic, run_dir, "
     "mps_control, mps_timeout, job_dir_size)"},
    {"keys_are_case_sensitive", {"Bind=rank"},
     "plugstack.conf: argument 'Bind=rank': unknown key (bind, confine, mps, nic, run_dir, "
     "mps_control, mps_timeout, job_dir_size)"},
    // The first bad argument is named, whatever follows.
    {"first_bad_one", {"bind=rank", "mps=often", "confine=never"},
     "plugstack.conf: argument 'mps=often': expected yes or no"},
};

INSTANTIATE_TEST_SUITE_P(Bad, BadSiteArgsTest, ::testing::ValuesIn(kBadSiteCases),
                         [](const auto& info) { return std::string(info.param.name); });

// User options applied in order over the site's defaults.
struct UserCase {
    const char* name;
    std::vector<std::string> site;
    std::vector<std::pair<std::string, std::string>> user;
    StepBind bind;
    std::optional<bool> confine;
    bool mps;
    const char* error;  // non-empty: the last user option fails with exactly this
};

class UserOptionsTest : public ::testing::TestWithParam<UserCase> {};

TEST_P(UserOptionsTest, OverTheSite) {
    const UserCase& c = GetParam();
    auto o = parse_site_args(c.site);
    ASSERT_TRUE(o.ok()) << o.error().message;
    const StepOptions site = *o;
    for (std::size_t i = 0; i < c.user.size(); ++i) {
        Status s = apply_user_option(*o, c.user[i].first, c.user[i].second);
        if (*c.error && i + 1 == c.user.size()) {
            ASSERT_FALSE(s.ok());
            EXPECT_EQ(s.error().message, c.error);
        } else {
            ASSERT_TRUE(s.ok()) << s.error().message;
        }
    }
    EXPECT_EQ(o->bind, c.bind);
    EXPECT_EQ(o->confine, c.confine);
    EXPECT_EQ(o->mps, c.mps);
    // What only the site chooses is never a user's.
    EXPECT_EQ(o->mps_job.run_dir, site.mps_job.run_dir);
    EXPECT_EQ(o->mps_job.control, site.mps_job.control);
    EXPECT_EQ(o->mps_job.timeout, site.mps_job.timeout);
}

const UserCase kUserCases[] = {
    {"bind_rank", {}, {{"xpart-bind", "rank"}}, StepBind::Rank, std::nullopt, false, ""},
    {"bind_closest", {}, {{"xpart-bind", "closest"}}, StepBind::Closest, std::nullopt, false, ""},
    {"bare_confine_is_yes", {}, {{"xpart-confine", ""}}, StepBind::None, true, false, ""},
    {"bare_mps_is_yes", {}, {{"xpart-mps", ""}}, StepBind::None, std::nullopt, true, ""},
    {"user_unbinds_site", {"bind=rank", "confine=yes"}, {{"xpart-bind", "none"}},
     StepBind::None, true, false, ""},
    {"user_declines_site_confine", {"bind=rank", "confine=yes"}, {{"xpart-confine", "no"}},
     StepBind::Rank, false, false, ""},
    {"user_declines_site_mps", {"mps=yes"}, {{"xpart-mps", "no"}}, StepBind::None, std::nullopt,
     false, ""},
    {"site_values_stay_unless_given", {"bind=closest", "mps=yes"}, {{"xpart-confine", "no"}},
     StepBind::Closest, false, true, ""},
    {"last_user_option_wins", {}, {{"xpart-bind", "rank"}, {"xpart-bind", "closest"}},
     StepBind::Closest, std::nullopt, false, ""},
    {"bare_bind_is_an_error", {"bind=rank"}, {{"xpart-bind", ""}}, StepBind::Rank, std::nullopt,
     false, "--xpart-bind: expected rank, closest or none"},
    {"bad_bind", {}, {{"xpart-bind", "gpu"}}, StepBind::None, std::nullopt, false,
     "--xpart-bind=gpu: expected rank, closest or none"},
    {"bad_confine", {"confine=yes"}, {{"xpart-confine", "sometimes"}}, StepBind::None, true,
     false, "--xpart-confine=sometimes: expected yes or no"},
    {"bad_mps", {}, {{"xpart-mps", "maybe"}}, StepBind::None, std::nullopt, false,
     "--xpart-mps=maybe: expected yes or no"},
    {"site_only_keys_are_not_options", {}, {{"xpart-run-dir", "/tmp"}}, StepBind::None,
     std::nullopt, false, "--xpart-run-dir=/tmp: not an xpart option"},
    {"site_key_spelling_is_not_an_option", {}, {{"mps_control", "/tmp/x"}}, StepBind::None,
     std::nullopt, false, "--mps_control=/tmp/x: not an xpart option"},
};

INSTANTIATE_TEST_SUITE_P(User, UserOptionsTest, ::testing::ValuesIn(kUserCases),
                         [](const auto& info) { return std::string(info.param.name); });

// What a step does for each combination: confinement and MPS need a per-task partition.
struct EffectiveCase {
    const char* name;
    StepBind bind;
    std::optional<bool> confine;
    bool mps;
    StepBind effective_bind;
    bool effective_confine;
};

class EffectiveTest : public ::testing::TestWithParam<EffectiveCase> {};

TEST_P(EffectiveTest, Rules) {
    const EffectiveCase& c = GetParam();
    StepOptions o;
    o.bind = c.bind;
    o.confine = c.confine;
    o.mps = c.mps;
    EXPECT_EQ(o.effective_bind(), c.effective_bind);
    EXPECT_EQ(o.effective_confine(), c.effective_confine);
    EXPECT_EQ(o.active(), c.effective_bind != StepBind::None);
}

const EffectiveCase kEffectiveCases[] = {
    {"nothing", StepBind::None, std::nullopt, false, StepBind::None, false},
    {"confine_no_alone", StepBind::None, false, false, StepBind::None, false},
    {"confine_alone_binds_rank", StepBind::None, true, false, StepBind::Rank, true},
    {"mps_alone_binds_and_confines", StepBind::None, std::nullopt, true, StepBind::Rank, true},
    {"mps_without_confinement", StepBind::None, false, true, StepBind::Rank, false},
    {"rank_confines_by_default", StepBind::Rank, std::nullopt, false, StepBind::Rank, true},
    {"rank_advice_only", StepBind::Rank, false, false, StepBind::Rank, false},
    {"closest_confines_by_default", StepBind::Closest, std::nullopt, false, StepBind::Closest, true},
    {"closest_with_mps_stays_closest", StepBind::Closest, std::nullopt, true, StepBind::Closest, true},
    {"closest_advice_only", StepBind::Closest, false, true, StepBind::Closest, false},
};

INSTANTIATE_TEST_SUITE_P(Combinations, EffectiveTest, ::testing::ValuesIn(kEffectiveCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(StepOptionsTest, BindNamesAreTheOptionValues) {
    for (StepBind b : {StepBind::None, StepBind::Rank, StepBind::Closest}) {
        StepOptions o;
        ASSERT_TRUE(apply_user_option(o, "xpart-bind", to_string(b)).ok()) << to_string(b);
        EXPECT_EQ(o.bind, b);
    }
    EXPECT_STREQ(to_string(StepBind::Closest), "closest");
}

}  // namespace
}  // namespace xpart::spank
