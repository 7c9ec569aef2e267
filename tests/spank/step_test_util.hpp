// Helpers of the SPANK-side launcher tests (step_plan_test, step_session_test): a private
// temp directory and the fake MPS control daemon of the build tree.
#pragma once

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace xpart::testing {

// A private temp directory (short: MPS socket paths must stay under 108 bytes), removed
// with everything in it.
class ScratchDir {
public:
    ScratchDir() {
        char tmpl[] = "/tmp/xps-XXXXXX";
        if (::mkdtemp(tmpl)) path_ = tmpl;
    }
    ~ScratchDir() {
        std::error_code ec;
        if (!path_.empty()) std::filesystem::remove_all(path_, ec);
    }
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

inline std::string fake_mps_control() {
    const char* b = std::getenv("XPART_BUILDDIR");
    return std::string(b ? b : ".") + "/sim/fake_mps/nvidia-cuda-mps-control";
}

}  // namespace xpart::testing
