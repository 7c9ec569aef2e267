#include "cgroup/device_cgroup.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "libxpart/unique_fd.hpp"
#include "cgroup/v1_device_controller.hpp"
#include "cgroup/v2_device_program.hpp"

namespace xpart::cgroup {

namespace {
Error sys_error(const std::string& what, int err) { return Error{what + ": " + std::strerror(err)}; }

// The file that marks a directory as a cgroup of this hierarchy.
const char* marker(Hierarchy h) { return h == Hierarchy::V1 ? "devices.allow" : "cgroup.controllers"; }

// Writers of one cgroup's rules take turns (two `xpart cgroup apply`, a launcher and an
// admin): v1 reads the current list and writes the difference in several writes, so two at
// once would leave the union of both sets, more than either asked for. flock() on the cgroup
// directory itself: nothing to create or clean up, released when the process dies.
Result<UniqueFd> lock_rules(const std::string& dir) {
    UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd.valid()) return sys_error("cannot open cgroup " + dir, errno);
    while (::flock(fd.get(), LOCK_EX) != 0)
        if (errno != EINTR) return sys_error("cannot lock cgroup " + dir, errno);
    return Result<UniqueFd>(std::move(fd));
}
}  // namespace

Result<DeviceCgroup> DeviceCgroup::open(Hierarchy hierarchy, const std::string& dir) {
    const std::string probe = dir + "/" + marker(hierarchy);
    if (::access(probe.c_str(), F_OK) != 0)
        return Error{"cgroup " + dir + " is not a " + std::string(to_string(hierarchy)) +
                     (hierarchy == Hierarchy::V1 ? " devices" : "") + " cgroup (" + probe + ": " +
                     std::strerror(errno) + ")"};
    return DeviceCgroup(hierarchy, dir);
}

Result<DeviceCgroup> DeviceCgroup::create(Hierarchy hierarchy, const std::string& parent,
                                          const std::string& name) {
    if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos)
        return Error{"bad cgroup name '" + name + "'"};
    auto p = open(hierarchy, parent);
    if (!p) return p.error();
    const std::string dir = parent + "/" + name;
    if (::mkdir(dir.c_str(), 0755) != 0) return sys_error("cannot create cgroup " + dir, errno);
    return DeviceCgroup(hierarchy, dir);
}

Status DeviceCgroup::move(pid_t pid) const {
    const std::string file = dir_ + "/cgroup.procs";
    UniqueFd fd(::open(file.c_str(), O_WRONLY | O_CLOEXEC));
    if (!fd.valid()) return sys_error("cannot open " + file, errno);
    const std::string text = std::to_string(pid);
    if (::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
        return sys_error("cannot move pid " + text + " into " + dir_, errno);
    return ok_status();
}

Status DeviceCgroup::apply(const DeviceRuleSet& set) const {
    auto lock = lock_rules(dir_);
    if (!lock) return lock.error();
    if (hierarchy_ == Hierarchy::V1) return V1DeviceController(dir_).apply(set);
    auto program = V2DeviceProgram::load(set);
    if (!program) return Error{"cgroup " + dir_ + ": " + program.error().message};
    return program->attach(dir_);
}

Result<std::optional<DeviceRuleSet>> DeviceCgroup::current_rules() const {
    if (hierarchy_ == Hierarchy::V1) return V1DeviceController(dir_).current_rules();
    return V2DeviceProgram::attached_rules(dir_);
}

Status DeviceCgroup::clear() const {
    auto lock = lock_rules(dir_);
    if (!lock) return lock.error();
    if (hierarchy_ == Hierarchy::V1) return V1DeviceController(dir_).clear();
    return V2DeviceProgram::detach_own(dir_);
}

Status DeviceCgroup::remove() const {
    if (::rmdir(dir_.c_str()) != 0) return sys_error("cannot remove cgroup " + dir_, errno);
    if (hierarchy_ == Hierarchy::V1) V1DeviceController(dir_).forget();
    return ok_status();
}

}  // namespace xpart::cgroup
