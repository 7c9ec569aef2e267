// The reshape engine (libxpart/reshape/reshape_engine) over a fake vendor: for each step that
// fails, the steps it ran, in order (a put back only after a failed apply or verify, nothing
// after a refusal), and what it returned. The vendors' own steps are tested on their
// simulations (amd_reshape_test, tests/cli/reshape_sim_test, amd_reshape_sim_test).
#include <gtest/gtest.h>

#include <string>

#include "libxpart/reshape/reshape_engine.hpp"

namespace xpart {
namespace {

// Each step's answer; the fake writes down the steps it was asked for.
struct Script {
    Result<ReshapeDecision> plan = ReshapeDecision{};
    StepResult apply = StepResult::done();
    StepResult verify = StepResult::done();
    Status put_back = ok_status();
};

class FakeVendor final : public ReshapeVendor {
public:
    explicit FakeVendor(Script script) : script_(std::move(script)) {}
    Result<ReshapeDecision> plan() override { return step("plan", script_.plan); }
    StepResult apply() override { return step("apply", script_.apply); }
    StepResult verify() override { return step("verify", script_.verify); }
    Status put_back() override { return step("put_back", script_.put_back); }
    std::string calls;

private:
    template <class T>
    T step(const char* name, const T& answer) {
        calls += (calls.empty() ? "" : " ") + std::string(name);
        return answer;
    }
    Script script_;
};

const ReshapeWords kWords{"GPU 0", "7x1g.10gb", "reshaped to 7x1g.10gb", "3g.40gb+2x1g.10gb",
                          "the previous geometry (3g.40gb@0 1g.10gb@4 1g.10gb@5)"};

ReshapeDecision go(bool already = false) { return {"", already, kWords}; }

struct Case {
    const char* name;
    Script script;
    const char* calls;
    const char* error;  // nullptr: it succeeds
    bool changed;
};

TEST(ReshapeEngine, EachFailingStepRunsTheRightStepsAndSaysWhat) {
    const StepResult done = StepResult::done();
    const Case cases[] = {
        {"done", {go()}, "plan apply verify", nullptr, true},
        {"plan cannot read the GPU", {Error{"nvmlDeviceGetHandleByIndex_v2(gpu 0): NVML_ERROR_UNKNOWN (999)"}},
         "plan", "nvmlDeviceGetHandleByIndex_v2(gpu 0): NVML_ERROR_UNKNOWN (999)", false},
        {"refused", {ReshapeDecision{"GPU 0: 1 process runs on it (pid 505 in GPU instance 1): not reshaped", false,
                                     kWords}},
         "plan", "GPU 0: 1 process runs on it (pid 505 in GPU instance 1): not reshaped", false},
        {"refused beats already", {ReshapeDecision{"GPU 0: held: not reshaped", true, kWords}},
         "plan", "GPU 0: held: not reshaped", false},
        {"already", {go(true)}, "plan verify", nullptr, false},
        {"already, discovery does not show it", {go(true), done, StepResult::failed("discovery shows no partition")},
         "plan verify put_back",
         "GPU 0: reshaped to 7x1g.10gb but discovery shows no partition; put back 3g.40gb+2x1g.10gb", false},
        {"apply fails, put back works", {go(), StepResult::failed("nvmlGpuInstanceDestroy(gpu 0): NVML_ERROR_IN_USE")},
         "plan apply put_back",
         "GPU 0: reshape to 7x1g.10gb failed: nvmlGpuInstanceDestroy(gpu 0): NVML_ERROR_IN_USE; "
         "the previous geometry (3g.40gb@0 1g.10gb@4 1g.10gb@5) is back",
         false},
        {"apply fails, put back fails", {go(), StepResult::failed("the driver made no instance"), done, Error{"gone"}},
         "plan apply put_back",
         "GPU 0: reshape to 7x1g.10gb failed: the driver made no instance; "
         "restoring the previous geometry (3g.40gb@0 1g.10gb@4 1g.10gb@5) failed too: gone",
         false},
        {"apply refused by the driver", {go(), StepResult::refused("GPU 0: amdgpu refused CPX: not reshaped")},
         "plan apply", "GPU 0: amdgpu refused CPX: not reshaped", false},
        {"verify fails, put back works", {go(), done, StepResult::failed("discovery shows 6x1g.10gb")},
         "plan apply verify put_back",
         "GPU 0: reshaped to 7x1g.10gb but discovery shows 6x1g.10gb; put back 3g.40gb+2x1g.10gb", false},
        {"verify fails, put back fails", {go(), done, StepResult::failed("discovery failed"), Error{"it shows SPX"}},
         "plan apply verify put_back",
         "GPU 0: reshaped to 7x1g.10gb but discovery failed; putting back 3g.40gb+2x1g.10gb failed: it shows SPX",
         false},
        {"verify: the driver kept the old state", {go(), done, StepResult::refused("GPU 0: kept SPX: not reshaped")},
         "plan apply verify", "GPU 0: kept SPX: not reshaped", false},
    };
    for (const auto& c : cases) {
        FakeVendor vendor(c.script);
        auto run = run_reshape_steps(vendor);
        EXPECT_EQ(vendor.calls, c.calls) << c.name;
        if (!c.error) {
            ASSERT_TRUE(run) << c.name << ": " << run.error().message;
            EXPECT_EQ(run->changed, c.changed) << c.name;
            continue;
        }
        ASSERT_FALSE(run) << c.name;
        EXPECT_EQ(run.error().message, c.error) << c.name;
    }
}

}  // namespace
}  // namespace xpart
