#include "libxpart/gres_check.hpp"

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

std::string describe(const ConfiguredGpu& c) {
    std::string out;
    if (!c.type.empty()) out += "Type=" + c.type;
    if (!c.files.empty()) {
        if (!out.empty()) out += ' ';
        out += "File=";
        for (std::size_t i = 0; i < c.files.size(); ++i) out += (i ? "," : "") + c.files[i];
    } else {
        if (!out.empty()) out += ' ';
        out += "Count=" + std::to_string(c.count);
    }
    return out;
}

std::string record_name(const GresRecord& r) {
    return r.type + " (" + (r.partition_uuid.empty() ? r.gpu_uuid : r.partition_uuid) + ")";
}

std::map<std::string, std::uint64_t> type_counts(const std::vector<GresRecord>& hw) {
    std::map<std::string, std::uint64_t> counts;
    for (const auto& r : hw) ++counts[to_lower(r.type)];
    return counts;
}

std::string inventory(const std::vector<GresRecord>& hw) {
    std::string out;
    for (const auto& [type, n] : type_counts(hw))
        out += (out.empty() ? "" : ", ") + type + " x" + std::to_string(n);
    return out.empty() ? "no GPU partitions" : out;
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

std::vector<std::string> check_configured(const std::vector<ConfiguredGpu>& configured,
                                          const std::vector<GresRecord>& hardware) {
    std::vector<std::string> lines;
    std::map<std::string, std::uint64_t> wanted_by_type;  // records without files
    std::map<std::string, std::string> source_by_type;
    for (const auto& c : configured) {
        const std::string what = c.source + ": " + describe(c) + ": hardware has ";
        if (c.files.empty()) {
            wanted_by_type[to_lower(c.type)] += c.count;
            source_by_type.emplace(to_lower(c.type), c.source + ": " + describe(c));
            continue;
        }
        for (const auto& file : c.files) {
            std::vector<const GresRecord*> users, owners;
            for (const auto& r : hardware)
                for (const auto& f : r.files)
                    if (f.path == file) {
                        users.push_back(&r);
                        if (!f.shared) owners.push_back(&r);
                    }
            if (users.empty()) {
                lines.push_back(what + "no GPU partition using " + file + " (" +
                                inventory(hardware) + ")");
                break;
            }
            if (c.type.empty()) continue;
            // A shared file (nvidiactl, a MIG GPU's nvidiaN) matches the type of any partition
            // using it: a reshape flow sibling's gres.conf names, for slurmctld, partitions
            // that do not exist yet by the files they will share.
            const auto& named = owners.empty() ? users : owners;
            const bool type_matches = std::any_of(named.begin(), named.end(), [&](auto* r) {
                return to_lower(r->type) == to_lower(c.type);
            });
            if (!type_matches) {
                std::string found;
                for (auto* r : owners.empty() ? users : owners)
                    found += (found.empty() ? "" : ", ") + record_name(*r);
                lines.push_back(what + file + (owners.empty() ? " shared by " : " used by ") +
                                found);
                break;
            }
        }
    }
    const auto counts = type_counts(hardware);
    for (const auto& [type, wanted] : wanted_by_type) {
        std::uint64_t have = 0;
        if (type.empty()) have = hardware.size();
        else if (auto it = counts.find(type); it != counts.end()) have = it->second;
        if (have != wanted)
            lines.push_back(source_by_type[type] + ": hardware has " + std::to_string(have) +
                            (type.empty() ? " GPU partition(s)" : " of type " + type) + " (" +
                            inventory(hardware) + ")");
    }
    return lines;
}

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
