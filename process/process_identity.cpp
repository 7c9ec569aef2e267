#include "process/process_identity.hpp"

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <csignal>
#include <sstream>
#include <thread>

#include "libxpart/proc_stat.hpp"
#include "libxpart/text.hpp"

namespace xpart::process {
namespace {

std::optional<uid_t> real_uid(pid_t pid) {
    auto status = RootFs("/").read("/proc/" + std::to_string(pid) + "/status");
    if (!status) return std::nullopt;  // gone
    for (const std::string& line : split(*status, '\n'))
        if (line.rfind("Uid:", 0) == 0) {
            std::istringstream fields(line.substr(4));
            unsigned long long uid;
            if (fields >> uid) return static_cast<uid_t>(uid);
        }
    return std::nullopt;
}

}  // namespace

std::optional<ProcessIdentity> identify(pid_t pid) {
    auto stat = read_proc_stat(RootFs("/"), pid);
    if (!stat || stat->gone() || !stat->start_time) return std::nullopt;
    auto uid = real_uid(pid);
    if (!uid) return std::nullopt;
    return ProcessIdentity{pid, *stat->start_time, *uid};
}

bool still_running(const ProcessIdentity& id) {
    auto now = identify(id.pid);
    return now && now->start_time == id.start_time && now->uid == id.uid;
}

bool signal_if_same(const ProcessIdentity& id, int sig) {
    auto fd = open_pidfd(id.pid);
    return fd.valid() && still_running(id) && syscall(SYS_pidfd_send_signal, fd.get(), sig, nullptr, 0) == 0;
}

bool exits_by(const ProcessIdentity& id, std::chrono::steady_clock::time_point deadline) {
    auto fd = open_pidfd(id.pid);  // before still_running: see the header
    while (still_running(id)) {
        if (std::chrono::steady_clock::now() >= deadline) return false;
        await_exit(fd, deadline);
    }
    return true;
}

UniqueFd open_pidfd(pid_t pid) {
    return UniqueFd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
}

void await_exit(const UniqueFd& pidfd, std::chrono::steady_clock::time_point deadline) {
    if (!pidfd.valid()) {  // none (out of descriptors): a nap, as before
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        return;
    }
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{pidfd.get(), POLLIN, 0};
    (void)poll(&p, 1, static_cast<int>(std::clamp<long long>(left.count(), 0, INT_MAX)));
}

std::string format_identity(const ProcessIdentity& id) {
    return std::to_string(id.pid) + " " + std::to_string(id.start_time) + " " +
           std::to_string(id.uid);
}

std::optional<ProcessIdentity> parse_identity(const std::string& text) {
    std::istringstream in(text);
    std::string words[3], extra;
    if (!(in >> words[0] >> words[1] >> words[2]) || (in >> extra)) return std::nullopt;
    auto pid = parse_u64(words[0]), start = parse_u64(words[1]), uid = parse_u64(words[2]);
    if (!pid || !start || !uid || *pid == 0 || *pid >= (1u << 30) || *uid >= (1ull << 32))
        return std::nullopt;
    return ProcessIdentity{static_cast<pid_t>(*pid), *start, static_cast<uid_t>(*uid)};
}

}  // namespace xpart::process
