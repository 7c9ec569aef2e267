// `xpart reshape` and `xpart geometry` on a simulated MI300X, with `xpart-sim driver` playing
// amdgpu: a mode switch is written to current_compute_partition, the driver re-lays the KFD
// topology and render nodes, and the next discovery (as slurmd) sees every XCP of the new mode.
// A KFD process holding the GPU (`xpart-sim kfd-hold`) makes xpart refuse before writing.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/cli/run_command.hpp"

namespace xpart::test {
namespace {

using nlohmann::json;

const std::string kBdf = "0000:05:00.0";

// A program in the background whose stdout's first line is "ready" once it serves (waited for
// up to 10 s); stopped (SIGTERM, then reaped) when this goes out of scope.
class ReadyProcess {
public:
    explicit ReadyProcess(const std::vector<std::string>& argv) {
        int fds[2];
        if (::pipe(fds) != 0) return;
        pid_ = ::fork();
        if (pid_ == 0) {
            ::dup2(fds[1], 1);
            ::close(fds[0]);
            ::close(fds[1]);
            std::vector<char*> args;
            for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
            args.push_back(nullptr);
            ::execv(args[0], args.data());
            ::_exit(127);
        }
        ::close(fds[1]);
        std::string line;
        char c;
        pollfd p{fds[0], POLLIN, 0};
        while (::poll(&p, 1, 10000) == 1 && ::read(fds[0], &c, 1) == 1 && c != '\n') line += c;
        ::close(fds[0]);
        ready_ = line == "ready";
    }
    ~ReadyProcess() {
        if (pid_ <= 0) return;
        ::kill(pid_, SIGTERM);
        ::waitpid(pid_, nullptr, 0);
    }
    ReadyProcess(const ReadyProcess&) = delete;
    ReadyProcess& operator=(const ReadyProcess&) = delete;
    bool ready() const { return ready_; }
    pid_t pid() const { return pid_; }

private:
    pid_t pid_ = -1;
    bool ready_ = false;
};

class AmdReshapeSim : public ::testing::Test {
protected:
    void SetUp() override {
        spec_ = dir_.path() + "/mi300x.json";
        root_ = dir_.path() + "/root";
        write_text(spec_, R"({"name":"mi300x-1","cpus":"0-15","numa":[{"node":0,"cpus":"0-15"}],
          "amd":{"gpus":[{"model":"MI300X","unique_id":16404946649897475633,"pci_bus_id":")" + kBdf +
                              R"(","numa_node":0,"compute_partition":"SPX","memory_partition":"NPS1","xcp_naming":"underscore"}]}})");
        const auto built = run_command({build_dir() + "/xpart-sim", "build", spec_, root_});
        ASSERT_EQ(built.exit_code, 0) << built.err;
        conf_ = dir_.path() + "/xpart.conf";
        write_text(conf_, "Geometry=mi300x-cpx:cpx.nps1\n");
        driver_ = std::make_unique<ReadyProcess>(std::vector<std::string>{build_dir() + "/xpart-sim", "driver", spec_, root_});
        ASSERT_TRUE(driver_->ready());
    }
    CommandResult xpart(std::vector<std::string> args) {
        std::vector<std::string> argv = {build_dir() + "/xpart", "--root", root_};
        argv.insert(argv.end(), args.begin(), args.end());
        if (args[0] != "discover") argv.insert(argv.end(), {"--xpart-conf", conf_});
        return run_command(argv);
    }
    // "type:count" of GPU 0's partitions, and their render nodes.
    std::pair<std::string, std::vector<std::string>> layout() {
        const auto r = xpart({"discover", "--json"});
        EXPECT_EQ(r.exit_code, 0) << r.err;
        if (r.exit_code != 0) return {};
        const json node = json::parse(r.out);
        const auto& parts = node.at("gpus").at(0).at("partitions");
        std::vector<std::string> render;
        for (const auto& p : parts)
            for (const auto& f : p.at("device_files"))
                if (!f.value("shared", false)) render.push_back(f.at("path"));
        return {parts.at(0).at("type").get<std::string>() + ":" + std::to_string(parts.size()), render};
    }

    TempDir dir_;
    std::string spec_, root_, conf_;
    std::unique_ptr<ReadyProcess> driver_;
};

TEST_F(AmdReshapeSim, SpxToCpxAndBackAsDiscoverySeesIt) {
    EXPECT_EQ(layout().first, "spx:1");
    auto r = xpart({"reshape", "mi300x-cpx"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.rfind("GPU " + kBdf + ": SPX -> CPX reshaped in ", 0), 0u) << r.out;
    EXPECT_NE(r.out.find("(discovery: 8 partitions)"), std::string::npos) << r.out;
    const auto cpx = layout();
    EXPECT_EQ(cpx.first, "cpx:8");
    EXPECT_EQ(cpx.second.size(), 8u);
    r = xpart({"reshape", "cpx"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("CPX -> CPX already"), std::string::npos) << r.out;
    r = xpart({"reshape", "spx"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(layout().first, "spx:1");
}

TEST_F(AmdReshapeSim, RefusedWhileAKfdProcessHoldsTheGpuThenDone) {
    {
        ReadyProcess holder({build_dir() + "/xpart-sim", "kfd-hold", root_, kBdf});
        ASSERT_TRUE(holder.ready());
        const auto r = xpart({"reshape", "cpx"});
        EXPECT_EQ(r.exit_code, 1);
        EXPECT_EQ(r.err, "xpart reshape: GPU " + kBdf + ": 1 KFD process holds it (pid " + std::to_string(holder.pid()) +
                             "): not reshaped (EBUSY)\n");
        EXPECT_EQ(layout().first, "spx:1");
    }
    const auto r = xpart({"reshape", "cpx"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(layout().first, "cpx:8");
}

// `reshape --dry-run` with a mode: the XCPs and memory partitions now and under the target,
// the verdict reshape would reach, and nothing written.
TEST_F(AmdReshapeSim, DryRunDrawsTheTargetModeAndWritesNothing) {
    auto r = xpart({"reshape", "--dry-run", "dpx"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string half = std::string(40 - 7, ' ');
    EXPECT_EQ(r.out, "GPU 0  MI300X  " + kBdf + "  GPU-e3aa140f9a5f9e31\n"
                     "    XCDs        0         1         2         3         4         5         6         7\n"
                     "    XCPs        [xcp 0" + std::string(73, ' ') + "]\n"
                     "    memory      [NPS1" + std::string(74, ' ') + "]\n"
                     "    target      [xcp 0" + half + "][xcp 1" + half + "]\n"
                     "    memory      [NPS1" + std::string(74, ' ') + "]\n"
                     "    dry run     would reshape to DPX\n");
    r = xpart({"reshape", "--dry-run", "cpx.nps4"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.out.find("    dry run     refused: CPX needs NPS4, the GPU is in NPS1: a memory partition change"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.err, "xpart reshape: GPU " + kBdf + ": CPX needs NPS4, the GPU is in NPS1: a memory partition change "
                     "takes effect only when amdgpu loads again (reboot class): not reshaped (dry run)\n");
    r = xpart({"reshape", "--dry-run", "--allow-reboot-class", "cpx.nps4"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("    memory      [nps 0             ][nps 1"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("    dry run     would write NPS4 (amdgpu applies it when it loads again: reboot, then "
                         "reshape to CPX.NPS4)\n"),
              std::string::npos)
        << r.out;
    {
        ReadyProcess holder({build_dir() + "/xpart-sim", "kfd-hold", root_, kBdf});
        ASSERT_TRUE(holder.ready());
        r = xpart({"reshape", "--dry-run", "cpx"});
        EXPECT_EQ(r.exit_code, 1);
        EXPECT_NE(r.out.find("    dry run     refused: 1 KFD process holds it (pid " + std::to_string(holder.pid()) +
                             "): not reshaped (EBUSY)\n"),
                  std::string::npos)
            << r.out;
    }
    const std::string memory = root_ + "/sys/bus/pci/devices/" + kBdf + "/current_memory_partition";
    EXPECT_EQ(read_text(memory), "NPS1\n");
    EXPECT_EQ(layout().first, "spx:1");
}

TEST_F(AmdReshapeSim, MemoryPartitionChangeIsRebootClass) {
    auto r = xpart({"reshape", "cpx.nps4"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.err, "xpart reshape: GPU " + kBdf + ": CPX needs NPS4, the GPU is in NPS1: a memory partition change "
                     "takes effect only when amdgpu loads again (reboot class): not reshaped\n");
    r = xpart({"reshape", "cpx.nps4", "--allow-reboot-class"});
    EXPECT_EQ(r.exit_code, 6) << r.err;  // kExitRebootNeeded: not the checks' "differences" (3)
    EXPECT_EQ(r.out, "GPU " + kBdf + ": NPS1 -> NPS4 written: amdgpu applies it when it loads again; reboot, "
                     "then reshape to CPX.NPS4\n");
    // The driver keeps NPS1 until it loads again (it writes the file back once it has seen the
    // write: waited for, up to 5 s); nothing else changed.
    const std::string memory = root_ + "/sys/bus/pci/devices/" + kBdf + "/current_memory_partition";
    for (int i = 0; i < 250 && read_text(memory) != "NPS1\n"; ++i) ::usleep(20000);
    EXPECT_EQ(read_text(memory), "NPS1\n");
    EXPECT_EQ(layout().first, "spx:1");
}

TEST_F(AmdReshapeSim, GeometryListsTheModesAndWhatServesAJob) {
    auto r = xpart({"geometry"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "GPU 0  MI300X  " + kBdf + "  GPU-e3aa140f9a5f9e31\n"
                     "    now         SPX.NPS1 (1 x spx)\n"
                     "    XCDs        0         1         2         3         4         5         6         7\n"
                     "    XCPs        [xcp 0" + std::string(73, ' ') + "]\n"
                     "    memory      [NPS1" + std::string(74, ' ') + "]\n"
                     "    could take  SPX.NPS1 (1 x spx), DPX.NPS1 (2 x dpx), QPX.NPS1 (4 x qpx), CPX.NPS1 (8 x cpx), "
                     "QPX.NPS4 (4 x qpx, reboot), CPX.NPS4 (8 x cpx, reboot)\n");
    r = xpart({"geometry", "--gres", "gpu:qpx:3", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json doc = json::parse(r.out);
    ASSERT_EQ(doc.size(), 1u);
    EXPECT_FALSE(doc[0].at("serves_now").get<bool>());
    std::vector<std::string> serving;
    for (const auto& c : doc[0].at("could_take")) serving.push_back(c.at("geometry"));
    EXPECT_EQ(serving, (std::vector<std::string>{"QPX.NPS1", "QPX.NPS4"}));
}

}  // namespace
}  // namespace xpart::test
