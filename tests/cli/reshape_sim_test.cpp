// `xpart reshape` and `xpart geometry` end to end on simulated MIG nodes: the fake NVML keeps
// its instances in a state file beside its spec, so what one process reshapes, the next one
// (discovery, as slurmd) sees, with the procfs capability files and /dev/nvidia-caps nodes of
// the new instances laid in the root and those of the old ones gone.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "sim/nvidia_model.hpp"
#include "tests/cli/run_command.hpp"

namespace xpart::test {
namespace {

using nlohmann::json;

class ReshapeSim : public ::testing::Test {
protected:
    void build(const std::string& spec_name) {
        root_ = dir_.path() + "/root";
        const auto built = run_command({build_dir() + "/xpart-sim", "build",
                                        source_dir() + "/sim/specs/" + spec_name + ".json", root_});
        ASSERT_EQ(built.exit_code, 0) << built.err;
        nvml_ = root_ + "/usr/lib/xpart-sim/libnvidia-ml.so.1";
        conf_ = dir_.path() + "/xpart.conf";
        write_text(conf_, "Geometry=h100-mixed:3g.40gb+2g.20gb+2x1g.10gb\nGeometry=a100-3g2g1g:3g.20gb+2g.10gb+1g.5gb\n");
    }
    CommandResult xpart(std::vector<std::string> args) {
        std::vector<std::string> argv = {build_dir() + "/xpart", "--root", root_};
        argv.insert(argv.end(), args.begin(), args.end());
        argv.insert(argv.end(), {"--nvml-library", nvml_});
        if (args[0] != "discover") argv.insert(argv.end(), {"--xpart-conf", conf_});
        return run_command(argv);
    }
    json discover() {
        const auto r = xpart({"discover", "--json"});
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return r.exit_code == 0 ? json::parse(r.out) : json();
    }
    // GPU g's partition types, sorted.
    static std::vector<std::string> types(const json& node, unsigned g = 0) {
        std::vector<std::string> out;
        for (const auto& p : node.at("gpus").at(g).at("partitions")) out.push_back(p.at("type"));
        std::sort(out.begin(), out.end());
        return out;
    }
    static std::set<std::string> uuids(const json& node) {
        std::set<std::string> out;
        for (const auto& g : node.at("gpus"))
            for (const auto& p : g.at("partitions")) out.insert(p.at("uuid"));
        return out;
    }
    // Every device file discovery lists exists in the root (char devices where root may mknod).
    void expect_files_exist(const json& node) {
        for (const auto& g : node.at("gpus"))
            for (const auto& p : g.at("partitions"))
                for (const auto& f : p.at("device_files")) {
                    struct stat st {};
                    const std::string path = root_ + f.at("path").get<std::string>();
                    ASSERT_EQ(::lstat(path.c_str(), &st), 0) << path;
                    if (::geteuid() == 0) {
                        EXPECT_TRUE(S_ISCHR(st.st_mode)) << path;
                    }
                }
    }
    // Adds a running process on GPU 0's GPU instance `gi` to the fake's state.
    void hold(pid_t pid, unsigned gi) {
        const std::string file = root_ + "/usr/lib/xpart-sim/nvml-state.json";
        json state = json::parse(read_text(file));
        const std::string gpu = state.at("gpus").at(0).at("uuid");
        state["processes"].push_back({{"pid", pid}, {"gpu", gpu}, {"gi", gi}, {"ci", 0}});
        write_text(file, state.dump());
    }

    TempDir dir_;
    std::string root_, nvml_, conf_;
};

TEST_F(ReshapeSim, NextProcessDiscoversTheNewGeometryWithItsFiles) {
    build("h100-80gb");
    const json before = discover();
    EXPECT_EQ(types(before), (std::vector<std::string>{"1c.3g.40gb", "1c.3g.40gb", "1c.3g.40gb",
                                                       "1g.10gb", "1g.10gb"}));
    auto r = xpart({"reshape", "7x1g.10gb"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.rfind("GPU 0: 3g.40gb+2x1g.10gb -> 7x1g.10gb reshaped in ", 0), 0u) << r.out;
    EXPECT_NE(r.out.find("(discovery: 7 partitions)"), std::string::npos) << r.out;
    const json seven = discover();
    EXPECT_EQ(types(seven), std::vector<std::string>(7, "1g.10gb"));
    for (const auto& u : uuids(seven)) EXPECT_EQ(uuids(before).count(u), 0u) << u << " survived";
    expect_files_exist(seven);
    // The 3g instance (GI 1) is gone, its capability files with it.
    struct stat st {};
    EXPECT_NE(::stat((root_ + "/proc/driver/nvidia/capabilities/gpu0/mig/gi1").c_str(), &st), 0);

    r = xpart({"reshape", "7x1g.10gb"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("7x1g.10gb -> 7x1g.10gb already"), std::string::npos) << r.out;
    EXPECT_EQ(uuids(discover()), uuids(seven));

    r = xpart({"reshape", "h100-mixed"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json mixed = discover();
    EXPECT_EQ(types(mixed), (std::vector<std::string>{"1g.10gb", "1g.10gb", "2g.20gb", "3g.40gb"}));
    expect_files_exist(mixed);

    const auto g = xpart({"geometry", "--json"});
    ASSERT_EQ(g.exit_code, 0) << g.err;
    EXPECT_EQ(json::parse(g.out).at(0).at("geometry"), "3g.40gb+2g.20gb+2x1g.10gb");
}

TEST_F(ReshapeSim, RefusedWhileAProcessRunsThenDoneWhenItEnds) {
    build("h100-80gb");
    ASSERT_EQ(xpart({"reshape", "7x1g.10gb"}).exit_code, 0);
    const json seven = discover();
    const pid_t child = ::fork();
    if (child == 0) {
        ::pause();
        ::_exit(0);
    }
    hold(child, 7);
    auto r = xpart({"reshape", "2x3g.40gb"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.err, "xpart reshape: GPU 0: 1 process runs on it (pid " + std::to_string(child) +
                         " in GPU instance 7): not reshaped (NVML_ERROR_IN_USE)\n");
    EXPECT_EQ(uuids(discover()), uuids(seven));
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    r = xpart({"reshape", "2x3g.40gb"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(types(discover()), (std::vector<std::string>{"3g.40gb", "3g.40gb"}));
}

// A step failing in the middle (the fake's "<call>#<n>" fault: the third GPU instance of the
// seven): the node gets back the geometry it had, the 3g instance split in three compute
// instances as before, not merely the same GPU instances.
TEST_F(ReshapeSim, FailureMidReshapePutsTheOldGeometryBack) {
    build("h100-80gb");
    const json before = discover();
    ::setenv("XPART_SIM_NVML_FAULTS", "nvmlDeviceCreateGpuInstanceWithPlacement#3=23", 1);
    auto r = xpart({"reshape", "7x1g.10gb"});
    ::unsetenv("XPART_SIM_NVML_FAULTS");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.err,
              "xpart reshape: GPU 0: reshape to 7x1g.10gb failed: "
              "nvmlDeviceCreateGpuInstanceWithPlacement(gpu 0): NVML_ERROR_INSUFFICIENT_RESOURCES "
              "(23) (1g.10gb at 2); the previous geometry (3g.40gb@0 1g.10gb@4 1g.10gb@5) is back\n");
    EXPECT_EQ(types(discover()), types(before));
    // The next reshape, without the fault, goes through.
    r = xpart({"reshape", "7x1g.10gb"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(ReshapeSim, FailingPutBackIsSaidInTheSameLine) {
    build("h100-80gb");
    ::setenv("XPART_SIM_NVML_FAULTS",
             "nvmlDeviceCreateGpuInstanceWithPlacement#3=23,nvmlDeviceCreateGpuInstanceWithPlacement#4=999", 1);
    auto r = xpart({"reshape", "7x1g.10gb"});
    ::unsetenv("XPART_SIM_NVML_FAULTS");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
    EXPECT_NE(r.err.find("; restoring the previous geometry (3g.40gb@0 1g.10gb@4 1g.10gb@5) failed "
                         "too: nvmlDeviceCreateGpuInstanceWithPlacement(gpu 0): NVML_ERROR_UNKNOWN "
                         "(999) (3g.40gb at 0)"),
              std::string::npos)
        << r.err;
}

// Every MIG management call the fake can fail: one line naming the call and the GPU, exit 1,
// and after a reshape that had begun, the old geometry back.
struct CallFault {
    const char* fault;
    const char* command;  // "geometry" or "reshape" (to 7x1g.10gb)
    const char* says;     // in the one error line
    bool put_back;        // the reshape had begun: "... is back"
};

class ReshapeFault : public ReshapeSim, public ::testing::WithParamInterface<CallFault> {};

TEST_P(ReshapeFault, OneLineNamingTheCall) {
    build("h100-80gb");
    const json before = discover();
    ::setenv("XPART_SIM_NVML_FAULTS", GetParam().fault, 1);
    const std::string cmd = GetParam().command;
    auto r = cmd == "geometry" ? xpart({"geometry"}) : xpart({"reshape", "7x1g.10gb"});
    ::unsetenv("XPART_SIM_NVML_FAULTS");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
    EXPECT_EQ(r.err.rfind("xpart " + cmd + ": ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(GetParam().says), std::string::npos) << r.err;
    if (GetParam().put_back) {
        EXPECT_NE(r.err.find(") is back"), std::string::npos) << r.err;
        EXPECT_EQ(types(discover()), types(before));
    } else {
        EXPECT_EQ(uuids(discover()), uuids(before));
    }
}

INSTANTIATE_TEST_SUITE_P(
    H100, ReshapeFault,
    ::testing::Values(
        CallFault{"nvmlDeviceGetGpuInstanceProfileInfoV=999", "geometry",
                  "nvmlDeviceGetGpuInstanceProfileInfoV(gpu 0): NVML_ERROR_UNKNOWN (999)", false},
        CallFault{"nvmlDeviceGetGpuInstancePossiblePlacements_v2=999", "geometry",
                  "nvmlDeviceGetGpuInstancePossiblePlacements_v2(gpu 0): NVML_ERROR_UNKNOWN (999)", false},
        CallFault{"nvmlDeviceGetGpuInstances=999", "geometry",
                  "nvmlDeviceGetGpuInstances(gpu 0): NVML_ERROR_UNKNOWN (999)", false},
        CallFault{"nvmlDeviceGetComputeRunningProcesses_v3=999", "reshape",
                  "nvmlDeviceGetComputeRunningProcesses_v3(gpu 0): NVML_ERROR_UNKNOWN (999)", false},
        CallFault{"nvmlComputeInstanceDestroy#1=19", "reshape",
                  "failed: nvmlComputeInstanceDestroy(gpu 0): NVML_ERROR_IN_USE (19)", true},
        CallFault{"nvmlGpuInstanceDestroy#1=19", "reshape",
                  "failed: nvmlGpuInstanceDestroy(gpu 0): NVML_ERROR_IN_USE (19)", true},
        CallFault{"nvmlDeviceCreateGpuInstanceWithPlacement#1=23", "reshape",
                  "failed: nvmlDeviceCreateGpuInstanceWithPlacement(gpu 0): "
                  "NVML_ERROR_INSUFFICIENT_RESOURCES (23) (1g.10gb at 0)",
                  true},
        CallFault{"nvmlGpuInstanceCreateComputeInstance#2=999", "reshape",
                  "failed: nvmlGpuInstanceCreateComputeInstance(gpu 0): NVML_ERROR_UNKNOWN (999)", true},
        // The 22nd listing is in the read-back of what the driver made (listings 1-14 come
        // before anything changes, 15-21 during the tear-down and build, 22-28 read back).
        CallFault{"nvmlDeviceGetGpuInstances#22=999", "reshape",
                  "failed: nvmlDeviceGetGpuInstances(gpu 0): NVML_ERROR_UNKNOWN (999)", true}));

// A reshape killed at each step (SIGKILL as it makes that NVML call: nothing of it puts
// anything back) leaves the GPU half-made, neither geometry; the next `xpart reshape` makes it
// whole, to the old geometry (what the RebootProgram does before slurmd starts as the sibling
// that stays) or to the target (the sibling that comes).
struct KillPoint {
    const char* fault;
    const char* step;
    std::size_t partitions_left;  // what discovery shows of the half-made GPU
};

class ReshapeKilled : public ReshapeSim, public ::testing::WithParamInterface<KillPoint> {};

TEST_P(ReshapeKilled, HalfMadeThenWholeAgainEitherWay) {
    for (const bool back : {true, false}) {
        build("h100-80gb");
        const json before = discover();
        ::setenv("XPART_SIM_NVML_FAULTS", GetParam().fault, 1);
        auto r = xpart({"reshape", "7x1g.10gb"});
        ::unsetenv("XPART_SIM_NVML_FAULTS");
        EXPECT_EQ(r.exit_code, -1) << GetParam().step << " did not kill it: " << r.out << r.err;
        const auto half = xpart({"discover", "--json"});
        if (GetParam().partitions_left == 0) {
            // No instance left: discovery registers the GPU not at all (exit 4, one line).
            EXPECT_EQ(half.exit_code, 4) << GetParam().step;
            EXPECT_NE(half.err.find("MIG mode is on but no MIG device exists; not registered"), std::string::npos)
                << half.err;
        } else {
            ASSERT_EQ(half.exit_code, 0) << GetParam().step << ": " << half.err;
            const auto left = types(json::parse(half.out));
            EXPECT_EQ(left.size(), GetParam().partitions_left) << GetParam().step;
            EXPECT_NE(left, types(before)) << GetParam().step;
            EXPECT_NE(left, std::vector<std::string>(7, "1g.10gb")) << GetParam().step;
        }
        r = xpart({"reshape", back ? "3g.40gb+2x1g.10gb" : "7x1g.10gb"});
        ASSERT_EQ(r.exit_code, 0) << GetParam().step << ": " << r.err;
        EXPECT_EQ(types(discover()), back ? (std::vector<std::string>{"1g.10gb", "1g.10gb", "3g.40gb"})
                                          : std::vector<std::string>(7, "1g.10gb"))
            << GetParam().step;
        expect_files_exist(discover());
    }
}

// h100-80gb starts as 3g.40gb (three compute instances) + 2 x 1g.10gb: 5 partitions.
INSTANTIATE_TEST_SUITE_P(
    H100, ReshapeKilled,
    ::testing::Values(KillPoint{"nvmlComputeInstanceDestroy#2=kill", "between compute instance destroys", 4},
                      KillPoint{"nvmlGpuInstanceDestroy#1=kill", "its compute instances gone, the GPU instance not", 2},
                      KillPoint{"nvmlGpuInstanceDestroy#3=kill", "between GPU instance destroys", 0},
                      KillPoint{"nvmlDeviceCreateGpuInstanceWithPlacement#1=kill", "after the destroy", 0},
                      KillPoint{"nvmlDeviceCreateGpuInstanceWithPlacement#4=kill", "between creates", 3},
                      KillPoint{"nvmlGpuInstanceCreateComputeInstance#3=kill",
                                "a GPU instance made, its compute instance not", 2}));

// The fault "stop": the reshape stops itself as it makes that call (a power cut's moment, for
// reshape_flow_test), and once continued goes on as if no fault were set.
TEST_F(ReshapeSim, AStopFaultFreezesTheReshapeUntilItIsContinued) {
    build("h100-80gb");
    const std::vector<std::string> argv = {build_dir() + "/xpart", "--root", root_, "reshape", "7x1g.10gb",
                                           "--nvml-library", nvml_, "--xpart-conf", conf_};
    ::setenv("XPART_SIM_NVML_FAULTS", "nvmlDeviceCreateGpuInstanceWithPlacement#3=stop", 1);
    const pid_t child = ::fork();
    if (child == 0) {
        std::vector<char*> c;
        for (const auto& a : argv) c.push_back(const_cast<char*>(a.c_str()));
        c.push_back(nullptr);
        ::execv(c[0], c.data());
        ::_exit(127);
    }
    ::unsetenv("XPART_SIM_NVML_FAULTS");
    ASSERT_GT(child, 0);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, WUNTRACED), child);
    EXPECT_TRUE(WIFSTOPPED(status)) << "status " << status;
    EXPECT_EQ(types(discover()).size(), 2u) << "two of the seven made when it stopped";
    ::kill(child, SIGCONT);
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
    EXPECT_EQ(types(discover()), std::vector<std::string>(7, "1g.10gb"));
}

TEST(ReshapeFaults, EveryMigCallHasACase) {
    std::set<std::string> covered;
    for (const char* f : {"nvmlDeviceGetGpuInstanceProfileInfoV", "nvmlDeviceGetGpuInstancePossiblePlacements_v2",
                          "nvmlDeviceGetGpuInstances", "nvmlDeviceGetComputeRunningProcesses_v3",
                          "nvmlComputeInstanceDestroy", "nvmlGpuInstanceDestroy",
                          "nvmlDeviceCreateGpuInstanceWithPlacement", "nvmlGpuInstanceCreateComputeInstance"})
        covered.insert(f);
    for (const std::string& call : sim::nvml_mig_fault_calls()) EXPECT_EQ(covered.count(call), 1u) << call;
}

struct Refusal {
    const char* target;
    const char* err;
};

class ReshapeRefused : public ReshapeSim, public ::testing::WithParamInterface<Refusal> {};

TEST_P(ReshapeRefused, OneLineAndNothingChanged) {
    build("h100-80gb");
    const json before = discover();
    const auto r = xpart({"reshape", GetParam().target});
    EXPECT_EQ(r.exit_code, 1);
    std::string want = GetParam().err;
    if (auto at = want.find("<conf>"); at != std::string::npos) want.replace(at, 6, conf_);
    EXPECT_EQ(r.err, want + "\n");
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(uuids(discover()), uuids(before));
}

INSTANTIATE_TEST_SUITE_P(
    H100, ReshapeRefused,
    ::testing::Values(
        Refusal{"7g.80gb+1g.10gb",
                "xpart reshape: GPU 0: 7g.80gb+1g.10gb does not fit: 8 compute slices, a GPU has 7"},
        Refusal{"3x3g.40gb", "xpart reshape: GPU 0: 3x3g.40gb does not fit: at most 2 3g.40gb per GPU"},
        Refusal{"2x3g.40gb+1g.10gb",
                "xpart reshape: GPU 0: 2x3g.40gb+1g.10gb does not fit: no placement set keeps the "
                "instances' memory slices apart"},
        Refusal{"3g.20gb", "xpart reshape: GPU 0: '3g.20gb' is not a profile of this GPU (it has "
                           "1g.10gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb, 1g.10gb+me, 1g.20gb)"},
        Refusal{"banana", "xpart reshape: 'banana' is neither a Geometry= name of "
                          "<conf> nor a geometry ('banana': not a MIG profile name (expected e.g. "
                          "3g.40gb or 2x1g.10gb))"}));

TEST_F(ReshapeSim, GeometryListsWhatWouldServeAJob) {
    build("h100-80gb");
    auto r = xpart({"geometry", "--gres", "gpu:3g.40gb:2", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json g = json::parse(r.out).at(0);
    EXPECT_EQ(g.at("serves_now"), false);
    EXPECT_EQ(g.at("could_take"), json::parse(R"([{"name":"","geometry":"2x3g.40gb"}])"));
    r = xpart({"geometry", "--gres", "gpu:1g.10gb:2,gpu:2g.20gb", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(json::parse(r.out).at(0).at("serves_now"), false);
    EXPECT_EQ(json::parse(r.out).at(0).at("could_take"),
              json::parse(R"([{"name":"h100-mixed","geometry":"3g.40gb+2g.20gb+2x1g.10gb"}])"));
    r = xpart({"geometry", "--gres", "gpu:1g.10gb:2"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("would serve (now: yes) h100-mixed (3g.40gb+2g.20gb+2x1g.10gb), 7x1g.10gb"),
              std::string::npos)
        << r.out;
    r = xpart({"geometry", "--gres", "gpu:3g"});
    EXPECT_EQ(r.exit_code, 0);  // a type no geometry has: none listed
    r = xpart({"geometry", "--gres", "tpu:1"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.err, "xpart geometry: --gres: 'tpu:1': expected gpu[:<type>][:<count>][,...]\n");
    r = xpart({"geometry", "--job", "12;rm"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.err, "xpart geometry: --job '12;rm': expected a job id (digits, or <job>_<task>)\n");
}

// `reshape --dry-run` draws the slices now and under the target and changes nothing: a target
// that fits says it would reshape (exit 0), one that does not shows what of it would fit and
// where the rest may start, a process on the GPU refuses it (exit 1, one line each).
TEST_F(ReshapeSim, DryRunDrawsThePlanAndChangesNothing) {
    build("h100-80gb");
    ASSERT_EQ(xpart({"reshape", "7x1g.10gb"}).exit_code, 0);  // the fake's state, seven 1g at 0-6
    const auto before = uuids(discover());
    auto r = xpart({"reshape", "--dry-run", "2x3g.40gb"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto rows = lines_of(r.out);
    ASSERT_EQ(rows.size(), 5u) << r.out;
    EXPECT_EQ(rows[0].rfind("GPU 0  ", 0), 0u) << r.out;
    EXPECT_EQ(rows[1], "    slices      0         1         2         3         4         5         6         7");
    std::string placed = "    placed      ";
    for (int i = 0; i < 7; ++i) placed += "[1g.10gb ]";
    EXPECT_EQ(rows[2], placed + "    .");
    const std::string g3 = "[3g.40gb" + std::string(31, ' ') + "]";
    EXPECT_EQ(rows[3], "    target      " + g3 + g3);
    EXPECT_EQ(rows[4], "    dry run     would reshape to 2x3g.40gb");
    EXPECT_EQ(uuids(discover()), before);

    r = xpart({"reshape", "--dry-run", "2x3g.40gb+1g.10gb"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.out.find("    target      " + g3 + g3 + "\n    no place    1g.10gb (1 slice, may start at 0-6)\n"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.err, "xpart reshape: GPU 0: 2x3g.40gb+1g.10gb does not fit: no placement set keeps the instances' "
                     "memory slices apart (dry run)\n");

    r = xpart({"reshape", "--dry-run", "7x1g.10gb"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("    dry run     already 7x1g.10gb\n"), std::string::npos) << r.out;

    // A process on GPU instance 7: refused, whatever the target.
    struct Held {
        pid_t pid = ::fork();
        ~Held() {
            if (pid > 0) ::kill(pid, SIGKILL), ::waitpid(pid, nullptr, 0);
        }
    } held;
    if (held.pid == 0) {
        ::pause();
        ::_exit(0);
    }
    ASSERT_GT(held.pid, 0);
    hold(held.pid, 7);
    r = xpart({"reshape", "--dry-run", "7g.80gb"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.out.find("    dry run     refused: 1 process runs on it (pid " + std::to_string(held.pid) +
                         " in GPU instance 7) (NVML_ERROR_IN_USE)\n"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(uuids(discover()), before);
}

// Every GPU of an eight-GPU A100 node, in one command, the A100 40GB's profile names.
TEST_F(ReshapeSim, WholeNodeReshape) {
    build("a100-guide");
    auto r = xpart({"reshape", "a100-3g2g1g"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(lines_of(r.out).size(), 8u) << r.out;
    const json node = discover();
    for (unsigned g = 0; g < 8; ++g)
        EXPECT_EQ(types(node, g), (std::vector<std::string>{"1g.5gb", "2g.10gb", "3g.20gb"})) << g;
    expect_files_exist(node);
}

}  // namespace
}  // namespace xpart::test
