// xpart-sim: build the root tree of a simulated node from a spec.
//   xpart-sim build SPEC ROOT     write ROOT (procfs, sysfs, dev nodes; the fake NVML beside it)
//   xpart-sim check SPEC          parse a spec and report the first error
//   xpart-sim driver SPEC ROOT    play amdgpu for ROOT's AMD GPUs: compute-partition switches
//   xpart-sim kfd-hold ROOT BDF   hold an AMD GPU of ROOT as a KFD process does (until SIGTERM)
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "sim/amd_driver.hpp"
#include "sim/kfd_hold.hpp"
#include "sim/nvidia_install.hpp"
#include "sim/spec.hpp"
#include "sim/tree.hpp"

// The fake NVML to install by default. Run from a build tree (the tests do), xpart-sim takes the
// fake built beside it; any other copy the installed one in PKGLIBDIR/sim, also where /proc is
// missing (a chroot being set up). No build path is compiled in: it exists only on the machine
// that built the package. A staged copy, DESTDIR/BINDIR/xpart-sim (make installcheck), takes
// the one staged beside it.
static std::string default_fake_nvml() {
    namespace fs = std::filesystem;
    std::error_code ec;
    const std::string exe = fs::read_symlink("/proc/self/exe", ec).string();
    if (ec) return XPART_SIM_FAKE_NVML_INSTALLED;
    const fs::path built = fs::path(exe).parent_path() / XPART_SIM_FAKE_NVML_BUILT;
    if (fs::exists(built, ec)) return built.string();
    const std::string installed_exe = std::string(XPART_SIM_BINDIR) + "/xpart-sim";
    if (exe.size() > installed_exe.size() &&
        exe.compare(exe.size() - installed_exe.size(), installed_exe.size(), installed_exe) == 0)
        return exe.substr(0, exe.size() - installed_exe.size()) + XPART_SIM_FAKE_NVML_INSTALLED;
    return XPART_SIM_FAKE_NVML_INSTALLED;
}

int main(int argc, char** argv) {
    CLI::App app{"xpart-sim: simulated GPU nodes for xpart (root trees and a fake NVML)"};
    app.require_subcommand(1);
    std::string spec_path, root;
    auto* build = app.add_subcommand("build", "write the root tree of a node spec");
    build->add_option("spec", spec_path, "node spec (JSON)")->required();
    build->add_option("root", root, "directory to create the tree in")->required();
    std::string nvml_lib = default_fake_nvml();
    build->add_option("--nvml-lib", nvml_lib,
                      "fake libnvidia-ml.so.1 to install into ROOT/usr/lib/xpart-sim (NVIDIA specs)")
        ->capture_default_str();
    auto* check = app.add_subcommand("check", "parse a node spec");
    check->add_option("spec", spec_path, "node spec (JSON)")->required();
    auto* driver = app.add_subcommand(
        "driver", "play the amdgpu driver for ROOT's AMD GPUs (compute-partition switches) until SIGTERM");
    driver->add_option("spec", spec_path, "node spec (JSON) ROOT was built from")->required();
    driver->add_option("root", root, "root tree `xpart-sim build SPEC ROOT` made")->required();
    auto* hold = app.add_subcommand("kfd-hold", "hold an AMD GPU of ROOT as a KFD process until SIGTERM");
    std::string bus_id;
    hold->add_option("root", root, "root tree of a simulated node")->required();
    hold->add_option("bdf", bus_id, "PCI bus id of the AMD GPU (0000:05:00.0)")->required();
    CLI11_PARSE(app, argc, argv);

    if (*hold) return xpart::sim::run_kfd_hold(root, bus_id);

    auto spec = xpart::sim::load_spec(spec_path);
    if (!spec) {
        std::cerr << "xpart-sim: " << spec.error().message << "\n";
        return 1;
    }
    if (*driver) return xpart::sim::run_amd_driver(*spec, root);
    if (*build) {
        // Before the tree is written: a missing library must not leave half a node behind.
        if (!spec->nvidia.empty() && ::access(nvml_lib.c_str(), R_OK) != 0) {
            std::cerr << "xpart-sim: fake NVML library " << nvml_lib << " (--nvml-lib): "
                      << std::strerror(errno) << "\n";
            return 1;
        }
        if (auto st = xpart::sim::build_tree(*spec, root); !st) {
            std::cerr << "xpart-sim: " << st.error().message << "\n";
            return 1;
        }
        if (!spec->nvidia.empty())
            if (auto st = xpart::sim::install_fake_nvml(spec_path, nvml_lib, root); !st) {
                std::cerr << "xpart-sim: " << st.error().message << "\n";
                return 1;
            }
    }
    return 0;
}
