#include "libxpart/gres/gres_check.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <string_view>

#include "libxpart/text.hpp"

namespace xpart {
namespace {

std::string record_name(const GresRecord& r) {
    return r.type + " (" + (r.partition_uuid.empty() ? r.gpu_uuid : r.partition_uuid) + ")";
}

// A sysfs attribute as one read() returns it (trailing whitespace removed), or the errno of
// the open() or read() that failed. The paths are host paths, the root prefix applied when
// slurmd made the record, so they are read directly rather than through RootFs.
struct AttributeText {
    int error = 0;
    std::string text;
};

AttributeText read_attribute_once(const std::string& path) {
    AttributeText out;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return {errno, {}};
    char buf[128];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) out.error = errno;
    else out.text = trim(std::string_view(buf, static_cast<std::size_t>(n)));
    ::close(fd);
    return out;
}

// What changed, or nothing when the attribute still reads as slurmd registered it.
std::optional<std::string> content_change(const GresRecord& r, const ExpectedContent& c,
                                          const AttributeText& now) {
    if (!now.error && now.text == c.text) return std::nullopt;
    const std::string read_failed = c.path + ": " + std::strerror(now.error);
    if (c.kind == ContentKind::ComputeMode)
        return now.error ? read_failed + ": compute partition mode unreadable, slurmd registered " + c.text
                         : "compute partition mode is now " + now.text + ", slurmd registered " +
                               c.text + " (" + c.path + ")";
    return "KFD node " + std::to_string(r.kfd_node) + " gone or re-made (" +
           (now.error ? read_failed : c.path + ": gpu_id now " + now.text) +
           ", slurmd registered " + c.text + ")";
}

}  // namespace

std::vector<std::string> check_present(const std::vector<GresRecord>& records,
                                       const std::vector<bool>& alloc) {
    std::vector<std::string> lines;
    // Shared files (nvidiactl, the parent GPU, /dev/kfd, a GPU's compute mode) are named by
    // many records: one stat() or read() each per check.
    std::vector<const std::string*> checked;
    std::map<std::string_view, AttributeText> contents;
    for (std::size_t i = 0; i < records.size() && i < alloc.size(); ++i) {
        if (!alloc[i]) continue;
        const GresRecord& r = records[i];
        const std::string who = "gres/gpu index " + std::to_string(i) + " " + record_name(r) + ": ";
        struct stat st {};
        bool changed = false;  // one line per partition for what stat() and read() show
        for (const auto& p : r.presence_paths)
            if (::stat(p.c_str(), &st) != 0) {
                lines.push_back(who + p + ": " + std::strerror(errno) +
                                ": the partition is gone since slurmd started; " +
                                std::string(kReregisterAdvice));
                changed = true;
                break;
            }
        for (const auto& c : r.expected_contents) {
            if (changed) break;
            auto it = contents.find(c.path);
            if (it == contents.end()) it = contents.emplace(c.path, read_attribute_once(c.path)).first;
            if (auto what = content_change(r, c, it->second)) {
                lines.push_back(who + *what + "; " + std::string(kReregisterAdvice));
                changed = true;
            }
        }
        for (const auto& f : r.files) {
            if (std::any_of(checked.begin(), checked.end(),
                            [&](const std::string* p) { return *p == f.path; }))
                continue;
            checked.push_back(&f.path);
            if (::stat(f.path.c_str(), &st) != 0) {
                lines.push_back(who + f.path + ": " + std::strerror(errno));
            } else if (!S_ISCHR(st.st_mode) || major(st.st_rdev) != f.major ||
                       minor(st.st_rdev) != f.minor) {
                lines.push_back(who + f.path + ": is now " +
                                (S_ISCHR(st.st_mode)
                                     ? std::to_string(major(st.st_rdev)) + ":" +
                                           std::to_string(minor(st.st_rdev))
                                     : std::string("not a character device")) +
                                ", was " + std::to_string(f.major) + ":" +
                                std::to_string(f.minor));
            }
        }
    }
    return lines;
}

std::optional<std::string> autodetect_line(const std::vector<std::string>& methods,
                                           std::size_t registered) {
    if (methods.empty()) return std::nullopt;
    std::string named;
    for (const auto& m : methods) named += (named.empty() ? "" : ",") + m;
    const bool one = methods.size() == 1 && methods[0] != "full";  // full: every gpu/* in turn
    return "gres.conf AutoDetect=" + named + ": xpart's discovery registered the node's " +
           std::to_string(registered) + " GPU partition(s); Slurm's " +
           (one ? "gpu/" + methods[0] + " plugin is" : "gpu/* plugins are") +
           " not used with xpart's gres/gpu";
}

}  // namespace xpart
