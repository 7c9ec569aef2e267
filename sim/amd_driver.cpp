#include "sim/amd_driver.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

#include "libxpart/amd/amd_models.hpp"
#include "libxpart/amd/amd_partition.hpp"
#include "libxpart/reshape/amd_reshape.hpp"
#include "libxpart/root_fs.hpp"
#include "libxpart/text.hpp"
#include "sim/amd_relayout.hpp"
#include "sim/kfd_registry.hpp"
#include "sim/tree.hpp"

namespace xpart::sim {

namespace {

constexpr const char* kCompute = "current_compute_partition";
constexpr const char* kMemory = "current_memory_partition";

void log(const std::string& line) { std::fprintf(stderr, "xpart-sim driver: %s\n", line.c_str()); }

class AmdDriver {
public:
    AmdDriver(NodeSpec spec, std::string root) : spec_(std::move(spec)), root_(std::move(root)) {}
    ~AmdDriver() {
        if (inotify_ >= 0) ::close(inotify_);
    }
    AmdDriver(const AmdDriver&) = delete;
    AmdDriver& operator=(const AmdDriver&) = delete;

    // Resolves each switchable GPU's PCI directory, takes its mode from the root, watches it.
    Status start();
    // Handles events until a signal of `stop` arrives on `signal_fd`.
    Status run(int signal_fd);

private:
    const AmdGpuSpec& gpu(std::size_t i) const { return spec_.amd.gpus[i]; }
    std::string attribute(std::size_t i, const char* file) const { return dirs_.at(i) + "/" + file; }
    Status watch_all();
    Status handle_events();
    void on_compute_write(std::size_t i);
    void on_memory_write(std::size_t i);
    // The file back to `value` and one "refused" line.
    void refuse(std::size_t i, const char* file, const std::string& value, const std::string& asked,
                const std::string& why) const;
    std::string read(const std::string& node_path) const {
        auto text = RootFs(root_).read(node_path);
        return text ? *text : std::string();
    }
    void write(const std::string& node_path, const std::string& value) const {
        if (auto st = TreeWriter(root_).write_file(node_path, value + "\n"); !st) log(st.error().message);
    }

    NodeSpec spec_;  // what the root shows now
    std::string root_;
    int inotify_ = -1;
    std::map<std::size_t, std::string> dirs_;  // GPU index -> node path of its PCI directory
    std::map<int, std::size_t> watches_;       // inotify watch -> GPU index
};

Status AmdDriver::start() {
    for (std::size_t i = 0; i < spec_.amd.gpus.size(); ++i) {
        AmdGpuSpec& g = spec_.amd.gpus[i];
        const AmdModel& model = *find_amd_model(g.model);
        if (!model.partitionable || !g.pci_attributes) continue;
        auto dir = resolve_in_root(root_, "/sys/bus/pci/devices/" + g.pci_bus_id());
        if (!dir) return dir.error();
        dirs_[i] = *dir;
        // An earlier driver run may have switched it: the root's mode, not the spec's.
        auto text = RootFs(root_).read(attribute(i, kCompute));
        if (!text) return text.error();
        const std::string name = to_upper(trim(*text));
        auto mode = parse_amd_compute_partition(name);
        if (!mode || !amd_mode_listed(model.compute_modes, name))
            return Error{root_ + attribute(i, kCompute) + ": '" + trim(*text) + "' is not a mode of the " +
                         model.name + " (" + model.compute_modes + ")"};
        if (*mode != g.compute_partition) {
            g.compute_partition = *mode;
            g.partitions_present = amd_mode_partition_count(*mode, model);
        }
    }
    if (dirs_.empty())
        return Error{spec_.file + ": no AMD GPU with compute partitions (pci_attributes) to play the driver for"};
    inotify_ = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    if (inotify_ < 0) return errno_error("inotify_init1", errno);
    return watch_all();
}

// Also after a re-lay: a directory made anew needs a new watch (the same one gets its old id).
Status AmdDriver::watch_all() {
    for (const auto& [i, dir] : dirs_) {
        const std::string host = root_ + dir;
        const int wd = ::inotify_add_watch(inotify_, host.c_str(), IN_CLOSE_WRITE);
        if (wd < 0) return errno_error(host + ": inotify_add_watch", errno);
        watches_[wd] = i;
    }
    return ok_status();
}

Status AmdDriver::run(int signal_fd) {
    pollfd fds[2] = {{inotify_, POLLIN, 0}, {signal_fd, POLLIN, 0}};
    for (;;) {
        if (::poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            return errno_error("poll", errno);
        }
        if (fds[1].revents) return ok_status();
        if (fds[0].revents)
            if (auto st = handle_events(); !st) return st;
    }
}

Status AmdDriver::handle_events() {
    alignas(inotify_event) char buf[16384];
    const ssize_t n = ::read(inotify_, buf, sizeof buf);
    if (n < 0) return errno == EAGAIN || errno == EINTR ? ok_status() : errno_error("inotify read", errno);
    for (ssize_t at = 0; at < n;) {
        const auto* ev = reinterpret_cast<const inotify_event*>(buf + at);
        at += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
        if (ev->mask & IN_Q_OVERFLOW) {  // events lost: look at every GPU's files
            for (const auto& [i, dir] : dirs_) {
                on_compute_write(i);
                on_memory_write(i);
            }
            continue;
        }
        if (ev->mask & IN_IGNORED) watches_.erase(ev->wd);
        auto w = watches_.find(ev->wd);
        if (w == watches_.end() || ev->len == 0) continue;
        if (std::strcmp(ev->name, kCompute) == 0) on_compute_write(w->second);
        if (std::strcmp(ev->name, kMemory) == 0) on_memory_write(w->second);
    }
    return ok_status();
}

void AmdDriver::refuse(std::size_t i, const char* file, const std::string& value,
                       const std::string& asked, const std::string& why) const {
    write(attribute(i, file), value);
    log(gpu(i).pci_bus_id() + ": " + (asked.empty() ? "''" : asked) + " refused: " + why);
}

// The driver's own writes (and repeated ones) leave the canonical value, which ends here.
void AmdDriver::on_compute_write(std::size_t i) {
    const AmdGpuSpec& g = gpu(i);
    const AmdModel& model = *find_amd_model(g.model);
    const std::string current = amd_mode_name(g.compute_partition);
    const std::string text = read(attribute(i, kCompute));
    if (text == current + "\n") return;
    const std::string asked = to_upper(trim(text));
    if (asked == current) return write(attribute(i, kCompute), current);

    auto mode = parse_amd_compute_partition(asked);
    if (!mode || !amd_mode_listed(model.compute_modes, asked))
        return refuse(i, kCompute, current, asked,
                      std::string("EINVAL (not a mode of the ") + model.name + ": " + model.compute_modes + ")");
    const unsigned count = amd_mode_partition_count(*mode, model);
    if (!amd_mode_fits_memory(*mode, model, g.memory_partition)) {
        std::string allowed;
        for (const std::string& m : split(model.compute_modes, ','))
            if (amd_mode_fits_memory(*parse_amd_compute_partition(trim(m)), model, g.memory_partition))
                allowed += (allowed.empty() ? "" : ", ") + trim(m);
        return refuse(i, kCompute, current, asked,
                      "EINVAL (" + g.memory_partition + " allows " + allowed + " only)");
    }
    for (int pid : reap_exited_kfd_processes(root_))
        log("KFD process " + std::to_string(pid) + " is gone: its registry removed");
    auto ids = kfd_gpu_ids(root_, g.pci_bus_id());
    if (!ids) return refuse(i, kCompute, current, asked, "EIO (" + ids.error().message + ")");
    if (auto pid = kfd_holder(root_, *ids))
        return refuse(i, kCompute, current, asked, "EBUSY (pid " + std::to_string(*pid) + " holds it)");

    NodeSpec next = spec_;
    next.amd.gpus[i].compute_partition = *mode;
    next.amd.gpus[i].partitions_present = count;
    const Status relaid = relay_amd_tree(spec_, next, root_);
    const std::string bus = g.pci_bus_id();  // `g` lives in spec_, replaced next
    spec_ = std::move(next);  // even half done, the tree is nearer the new layout than the old
    if (!relaid) return log(bus + ": re-lay as " + asked + " failed: " + relaid.error().message);
    if (to_upper(trim(read(attribute(i, kCompute)))) == asked) write(attribute(i, kCompute), asked);
    log(bus + ": " + current + " -> " + asked + " (" + std::to_string(count) +
        (count == 1 ? " partition)" : " partitions)"));
    if (auto st = watch_all(); !st) log(st.error().message);
}

void AmdDriver::on_memory_write(std::size_t i) {
    const AmdGpuSpec& g = gpu(i);
    const AmdModel& model = *find_amd_model(g.model);
    const std::string text = read(attribute(i, kMemory));
    if (text == g.memory_partition + "\n") return;
    const std::string asked = to_upper(trim(text));
    write(attribute(i, kMemory), g.memory_partition);
    if (asked == g.memory_partition) return;
    if (!parse_amd_memory_partition(asked) || !amd_mode_listed(model.memory_modes, asked))
        return log(g.pci_bus_id() + ": " + (asked.empty() ? "''" : asked) + " refused: EINVAL (not a memory mode of the " +
                   model.name + ": " + model.memory_modes + ")");
    log(g.pci_bus_id() + ": " + asked + " requested: applied at the next driver load (reboot)");
}

}  // namespace

int run_amd_driver(const NodeSpec& spec, const std::string& root) {
    auto fail = [](const std::string& message) {
        std::fprintf(stderr, "xpart-sim driver: %s\n", message.c_str());
        return 1;
    };
    if (spec.amd.empty()) return fail(spec.file + ": no AMD GPUs (the driver plays amdgpu)");
    if (auto st = check_sim_root(root); !st) return fail(st.error().message);
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    ::sigprocmask(SIG_BLOCK, &stop, nullptr);
    const int signal_fd = ::signalfd(-1, &stop, SFD_CLOEXEC);
    if (signal_fd < 0) return fail(std::string("signalfd: ") + std::strerror(errno));
    AmdDriver driver(spec, root);
    if (auto st = driver.start(); !st) return fail(st.error().message);
    std::printf("ready\n");
    std::fflush(stdout);
    const Status ended = driver.run(signal_fd);
    ::close(signal_fd);
    return ended ? 0 : fail(ended.error().message);
}

}  // namespace xpart::sim
