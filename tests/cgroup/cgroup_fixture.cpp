#include <gtest/gtest.h>

#include "tests/cgroup/cgroup_fixture.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "cgroup/layout.hpp"

namespace xpart::cgroup::test {

const std::string& test_prefix() {
    static const std::string prefix = [] {
        std::random_device rd;
        std::ostringstream s;
        s << "xpart_test_" << ::getpid() << "_" << std::hex << (rd() & 0xffffff);
        return s.str();
    }();
    return prefix;
}

std::string test_parent(Hierarchy h) {
    static const auto layout = detect_cgroup_layout(RootFs("/"));
    if (!layout || !layout->has(h)) return "";
    return layout->own(h);
}

namespace {

void kill_members(const std::string& dir) {
    std::ifstream procs(dir + "/cgroup.procs");
    pid_t pid;
    while (procs >> pid) ::kill(pid, SIGKILL);
}

}  // namespace

bool remove_cgroup_tree(const std::string& dir) {
    if (DIR* d = ::opendir(dir.c_str())) {
        std::vector<std::string> subdirs;
        while (dirent* e = ::readdir(d))
            if (e->d_type == DT_DIR && std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, ".."))
                subdirs.push_back(dir + "/" + e->d_name);
        ::closedir(d);
        for (const auto& s : subdirs) remove_cgroup_tree(s);
    }
    for (int attempt = 0; attempt < 200; ++attempt) {
        kill_members(dir);
        if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) return true;
        ::usleep(5000);  // a killed process leaves its cgroup when it is reaped
    }
    return false;
}

std::vector<std::string> sweep_test_cgroups() {
    std::vector<std::string> left;
    for (Hierarchy h : {Hierarchy::V1, Hierarchy::V2}) {
        const std::string parent = test_parent(h);
        if (parent.empty()) continue;
        DIR* d = ::opendir(parent.c_str());
        if (!d) continue;
        std::vector<std::string> ours;
        while (dirent* e = ::readdir(d))
            if (std::string(e->d_name).rfind(test_prefix(), 0) == 0) ours.push_back(parent + "/" + e->d_name);
        ::closedir(d);
        for (const auto& dir : ours)
            if (!remove_cgroup_tree(dir)) left.push_back(dir);
    }
    return left;
}

ScopedCgroup::ScopedCgroup(Hierarchy h, const std::string& parent)
    : cg_([&] {
          static int counter = 0;
          const std::string where = parent.empty() ? test_parent(h) : parent;
          auto cg = DeviceCgroup::create(h, where, test_prefix() + "_" + std::to_string(++counter));
          if (!cg) throw std::runtime_error(cg.error().message);
          return *cg;
      }()) {}

ScopedCgroup::~ScopedCgroup() {
    remove_cgroup_tree(cg_.path());
    if (cg_.hierarchy() == Hierarchy::V1) V1DeviceController(cg_.path()).forget();
}

DeviceNodes::DeviceNodes() {
    // Debian 13 mounts /tmp as a nodev tmpfs (systemd's tmp.mount), where no device node can
    // be opened (EACCES): the nodes go to /var/tmp there.
    struct statvfs st {};
    std::string tmpl = ::statvfs("/tmp", &st) == 0 && (st.f_flag & ST_NODEV) ? "/var/tmp" : "/tmp";
    tmpl += "/xpart-devnodes-XXXXXX";
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
    dir_ = tmpl;
}

DeviceNodes::~DeviceNodes() {
    for (const auto& p : made_) ::unlink(p.c_str());
    ::rmdir(dir_.c_str());
}

std::string DeviceNodes::node(char type, unsigned major, unsigned minor) {
    const std::string path = dir_ + "/" + type + std::to_string(major) + "_" + std::to_string(minor);
    if (::access(path.c_str(), F_OK) == 0) return path;
    const mode_t kind = type == 'b' ? S_IFBLK : S_IFCHR;
    if (::mknod(path.c_str(), kind | 0666, ::makedev(major, minor)) != 0)
        throw std::runtime_error("mknod " + path + ": " + std::strerror(errno));
    made_.push_back(path);
    return path;
}

namespace {
struct ProbeRequest {
    char path[240];
    int flags;
};
bool read_all(int fd, void* buf, std::size_t n) {
    auto* p = static_cast<char*>(buf);
    while (n > 0) {
        ssize_t r = ::read(fd, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        p += r;
        n -= static_cast<std::size_t>(r);
    }
    return true;
}
}  // namespace

ProbeChild::ProbeChild() {
    int down[2], up[2];
    if (::pipe2(down, O_CLOEXEC) != 0 || ::pipe2(up, O_CLOEXEC) != 0)
        throw std::runtime_error("pipe failed");
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
        ::close(down[1]);
        ::close(up[0]);
        ProbeRequest req;
        while (read_all(down[0], &req, sizeof req)) {
            int fd = ::open(req.path, req.flags | O_CLOEXEC | O_NOCTTY);
            int result = fd >= 0 ? 0 : errno;
            if (fd >= 0) ::close(fd);
            if (::write(up[1], &result, sizeof result) != sizeof result) break;
        }
        ::_exit(0);
    }
    ::close(down[0]);
    ::close(up[1]);
    to_child_ = down[1];
    from_child_ = up[0];
}

ProbeChild::ProbeChild(const DeviceCgroup& cgroup) : ProbeChild() {
    auto st = cgroup.move(pid_);
    if (!st) throw std::runtime_error(st.error().message);
}

ProbeChild::~ProbeChild() {
    ::close(to_child_);
    ::close(from_child_);
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
}

int ProbeChild::open_errno(const std::string& path, int flags) {
    ProbeRequest req{};
    std::strncpy(req.path, path.c_str(), sizeof req.path - 1);
    req.flags = flags;
    if (::write(to_child_, &req, sizeof req) != sizeof req) return -1;
    int result = -1;
    if (!read_all(from_child_, &result, sizeof result)) return -1;
    return result;
}

bool ProbeChild::alive() {
    int status = 0;
    return ::waitpid(pid_, &status, WNOHANG) == 0 && ::kill(pid_, 0) == 0;
}

namespace {
std::string describe(const std::string& path, int flags) {
    struct stat st {};
    ::stat(path.c_str(), &st);
    std::string mode = (flags & O_ACCMODE) == O_RDONLY ? "O_RDONLY" : (flags & O_ACCMODE) == O_WRONLY ? "O_WRONLY" : "O_RDWR";
    return std::string(S_ISBLK(st.st_mode) ? "b " : "c ") + std::to_string(::major(st.st_rdev)) + ":" +
           std::to_string(::minor(st.st_rdev)) + " " + mode;
}
}  // namespace

::testing::AssertionResult Allowed(ProbeChild& c, const std::string& path, int flags) {
    const int e = c.open_errno(path, flags);
    if (e == ENXIO || e == ENODEV) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << describe(path, flags) << ": expected ENXIO/ENODEV (allowed, no driver), got "
                                         << (e < 0 ? "probe failure" : std::strerror(e));
}

::testing::AssertionResult Denied(ProbeChild& c, const std::string& path, int flags) {
    const int e = c.open_errno(path, flags);
    if (e == EPERM) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << describe(path, flags) << ": expected EPERM (denied), got "
                                         << (e < 0 ? "probe failure" : e == 0 ? "success" : std::strerror(e));
}

}  // namespace xpart::cgroup::test
