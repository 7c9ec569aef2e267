// Test helper: a simulated NVIDIA node in a unique temp dir (mkdtemp, removed afterwards),
// built by the simulator from a spec, with the fake NVML installed into it.
#pragma once

#include <ftw.h>
#include <stdlib.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "libxpart/discovery.hpp"
#include "sim/nvidia_install.hpp"
#include "sim/spec.hpp"
#include "sim/tree.hpp"

namespace xpart::testing {

inline std::string source_dir() { return XPART_TEST_SRCDIR; }
inline std::string spec_file(const std::string& name) {
    return source_dir() + "/sim/specs/" + name + ".json";
}
inline std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}
inline void write_text(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::trunc) << text;
}
// A shipped spec as JSON (comments dropped), for tests that derive variants from it.
inline nlohmann::json spec_json(const std::string& name) {
    return nlohmann::json::parse(read_text(spec_file(name)), nullptr, true, true);
}

class SimRoot {
public:
    // Builds from spec text; error() is non-empty when the spec or the build failed.
    explicit SimRoot(const std::string& spec_text) {
        char tmpl[] = "/tmp/xpart-nvidia-test-XXXXXX";
        if (!::mkdtemp(tmpl)) {
            error_ = "mkdtemp failed";
            return;
        }
        dir_ = tmpl;
        root_ = dir_ + "/root";
        const std::string spec_path = dir_ + "/spec.json";
        write_text(spec_path, spec_text);
        auto spec = sim::load_spec(spec_path);
        if (!spec) {
            error_ = spec.error().message;
            return;
        }
        if (auto st = sim::build_tree(*spec, root_); !st) {
            error_ = st.error().message;
            return;
        }
        if (auto st = sim::install_fake_nvml(spec_path, XPART_TEST_FAKE_NVML, root_); !st)
            error_ = st.error().message;
    }
    explicit SimRoot(const nlohmann::json& spec) : SimRoot(spec.dump()) {}
    ~SimRoot() {
        if (!dir_.empty())
            ::nftw(dir_.c_str(), [](const char* p, const struct stat*, int, struct FTW*) {
                return ::remove(p);
            }, 16, FTW_DEPTH | FTW_PHYS);
    }
    SimRoot(const SimRoot&) = delete;
    SimRoot& operator=(const SimRoot&) = delete;

    const std::string& error() const { return error_; }
    const std::string& root() const { return root_; }
    std::string host(const std::string& node_path) const { return root_ + node_path; }
    std::string nvml_library() const { return sim::fake_nvml_path(root_); }
    // What makes discover() read this node: its root and its fake NVML, NVIDIA only.
    DiscoveryOptions discovery_options() const {
        DiscoveryOptions o;
        o.root = RootFs(root_);
        o.amd = false;
        o.nvml_library = nvml_library();
        return o;
    }
    // Replaces the spec the fake NVML reads at its next nvmlInit_v2.
    void set_nvml_spec(const nlohmann::json& spec) const {
        write_text(root_ + sim::kFakeNvmlDir + "/nvml-spec.json", spec.dump());
    }

private:
    std::string dir_, root_, error_;
};

// Sets an environment variable for one scope.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const std::string& value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old, had_ = true;
        ::setenv(name, value.c_str(), 1);
    }
    ~ScopedEnv() {
        if (had_) ::setenv(name_, old_.c_str(), 1);
        else ::unsetenv(name_);
    }

private:
    const char* name_;
    std::string old_;
    bool had_ = false;
};

}  // namespace xpart::testing
