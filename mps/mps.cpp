#include "mps/mps.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <future>
#include <optional>
#include <sstream>
#include <thread>

#include "process/spawn.hpp"
#include "mps/whole_file.hpp"
#include "libxpart/text.hpp"
#include "libxpart/visibility.hpp"

namespace xpart::mps {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// What a daemon leaves in its pipe directory; a crashed one (SIGKILL) leaves them all, and
// the real daemon leaves the sockets even after quit.
const char* const kPipeFiles[] = {"control", "control_lock", "control_privileged", "log"};

// A child's exit code for ENOSPC, so the error can say which directory is full.
constexpr int kNoSpace = 28;
constexpr const char* kNoSpaceText = "no space left on device";

bool same_user(const process::Credentials& who) { return geteuid() == who.uid && getegid() == who.gid; }

// Runs `work` as the config's user: inline when that is us, else in a child that became them.
Status as_user(const MpsConfig& c, const std::string& what, const std::function<int()>& work) {
    int rc;
    if (same_user(c.user)) {
        rc = work();
    } else {
        auto r = run_as(c.user, work);
        if (!r) return Error{what + ": " + r.error().message};
        rc = *r;
    }
    if (rc == kNoSpace) return Error{what + ": " + kNoSpaceText};
    if (rc != 0) return Error{what + " failed (as uid " + std::to_string(c.user.uid) + ")"};
    return ok_status();
}

// Root's commands run in the daemon's own cgroup: a client the user could ptrace between
// its exec and its exit must not be a way around the job's device rules either.
Result<process::SpawnResult> control_command(const MpsConfig& c, const MpsInstance& inst,
                                    const std::string& command, std::chrono::milliseconds timeout) {
    process::ChildPlace place;
    if (!same_user(c.user)) place.as = &c.user;
    if (c.housing) place.cgroup_procs = c.housing->procs_file(inst.name);
    return process::run_with_input({c.control}, daemon_env(c, inst), command + "\n", timeout, place);
}

// Every instance's pipe and log directories, made (0700) by the user, with a crashed daemon's
// sockets removed: the real daemon starts over them, but a stale one must not be mistaken for
// a live one by its clients. One process for all of them: a fork of slurmstepd per daemon was
// the largest part of starting several (forks of one process serialize on its memory map).
Status prepare_instances(const MpsConfig& c, const std::vector<MpsInstance>& instances) {
    if (instances.empty()) return ok_status();
    std::string names;
    for (const auto& inst : instances) names += (names.empty() ? "" : ",") + inst.name;
    const std::string where = c.dir + "/" + (instances.size() == 1 ? names : "{" + names + "}");
    auto made = as_user(c, "MPS directories " + where, [&] {
        std::error_code ec;
        for (const auto& inst : instances) {
            const std::string pipe = mps_pipe_dir(c, inst.name);
            for (const auto& d : {pipe, mps_log_dir(c, inst.name)}) {
                fs::create_directories(d, ec);
                if (ec) return ec.value() == ENOSPC || ec.value() == EDQUOT ? kNoSpace : 1;
                if (chmod(d.c_str(), 0700) != 0) return 1;
            }
            for (const char* f : kPipeFiles) unlink((pipe + "/" + f).c_str());
        }
        return 0;
    });
    if (!made && made.error().message.find(kNoSpaceText) != std::string::npos && !c.space_note.empty())
        return Error{made.error().message + ": " + c.space_note};
    return made;
}

Result<std::vector<MpsDaemonRecord>> load_records(const MpsConfig& c) {
    auto text = c.records.read();
    if (!text) return text.error();
    if (!*text) return std::vector<MpsDaemonRecord>{};
    return parse_records(**text, "MPS records");
}

// A recorded daemon still running as the config's user. A record naming another user's
// process cannot be one of this user's daemons (records in a user's place can be forged).
bool runs_as_recorded(const MpsConfig& c, const MpsDaemonRecord& r) {
    return r.process.uid == c.user.uid && still_running(r.process);
}

const MpsDaemonRecord* find_record(const std::vector<MpsDaemonRecord>& records,
                                   const std::string& instance) {
    for (const auto& r : records)
        if (r.instance == instance) return &r;
    return nullptr;
}

// Runs `step` for every item at once (each waits on its own helper process) and returns the
// first error in order: seven instances cost about what one does.
template <class Item, class Step>
Status for_each_parallel(const std::vector<Item>& items, Step step) {
    std::vector<std::future<Status>> results;
    for (const auto& item : items)
        results.push_back(std::async(std::launch::async, [&step, &item] { return step(item); }));
    Status first = ok_status();
    for (auto& r : results) {
        Status s = r.get();
        if (first && !s) first = s;
    }
    return first;
}

// Does the daemon's control socket take a connection? (The daemon listens once it is ready
// for commands; a stale socket of a crashed one refuses.) NVIDIA's daemon listens on a
// SOCK_SEQPACKET socket; a stream one is tried too (EPROTOTYPE tells them apart).
bool accepts(const std::string& socket_path) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (socket_path.size() >= sizeof addr.sun_path) return false;
    std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
    for (int type : {SOCK_SEQPACKET, SOCK_STREAM}) {
        int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
        if (fd < 0) return false;
        int rc = connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
        int err = errno;
        close(fd);
        if (rc == 0) return true;
        if (err != EPROTOTYPE) return false;
    }
    return false;
}

// Waits until every daemon's control socket accepts, polled by one process as the user (the
// sockets are in the user's directory: root never connects through a path a user can plant),
// so N daemons cost one fork instead of a client exec per daemon and poll. An error names the
// first daemon that exited or did not answer in time.
Status wait_all_ready(const MpsConfig& c, const std::vector<MpsDaemonRecord>& recs, Clock::time_point deadline) {
    if (recs.empty()) return ok_status();
    auto poll = [&] {
        std::vector<bool> ready(recs.size(), false);
        for (;;) {
            bool all = true;
            for (std::size_t i = 0; i < recs.size(); ++i) {
                if (ready[i]) continue;
                // A socket alone is not the daemon: a child may hold a dead daemon's listener.
                if (!still_running(recs[i].process)) return 1;
                ready[i] = accepts(mps_pipe_dir(c, recs[i].instance) + "/control");
                all = all && ready[i];
            }
            if (all) return 0;
            if (Clock::now() >= deadline) return 1;
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    };
    if (same_user(c.user) ? poll() == 0 : [&] { auto r = run_as(c.user, poll); return r && *r == 0; }())
        return ok_status();
    for (const auto& rec : recs)
        if (!runs_as_recorded(c, rec))
            return Error{"MPS control daemon for " + rec.uuid + " (pid " + std::to_string(rec.process.pid) +
                         ") exited; see " + mps_log_dir(c, rec.instance) + "/control.log"};
    return Error{"MPS control daemon for " + recs.front().uuid + " did not answer within " +
                 std::to_string(c.timeout.count()) + " ms; see " + mps_log_dir(c, recs.front().instance) +
                 "/control.log"};
}

}  // namespace

Result<MpsInstance> mps_instance_of(const Node& node, const binding::AllottedPartition& part) {
    const Gpu& gpu = node.gpus[part.gpu];
    const Partition& p = gpu.partitions[part.partition];
    if (gpu.vendor != Vendor::Nvidia)
        return Error{"--mps: partition " + p.uuid + " is an AMD partition; MPS is NVIDIA only"};
    std::string name = "gpu" + std::to_string(gpu.minor >= 0 ? gpu.minor : gpu.index);
    if (p.gi >= 0) name += "-gi" + std::to_string(p.gi);
    return MpsInstance{name, p.gi >= 0 ? p.uuid : gpu.uuid};
}

Result<std::vector<MpsInstance>> mps_instances(const Node& node,
                                               const std::vector<binding::AllottedPartition>& parts) {
    std::vector<MpsInstance> out;
    std::vector<std::vector<const Partition*>> members;
    for (const auto& p : parts) {
        auto inst = mps_instance_of(node, p);
        if (!inst) return inst.error();
        std::size_t i = 0;
        while (i < out.size() && out[i].name != inst->name) ++i;
        if (i == out.size()) {
            out.push_back(*inst);
            members.emplace_back();
        }
        members[i].push_back(&node.gpus[p.gpu].partitions[p.partition]);
    }
    const auto managed = cgroup::node_managed_rules(node);
    for (std::size_t i = 0; i < out.size(); ++i) {
        out[i].rules.policy = cgroup::DevicePolicy::DenyManaged;
        for (const auto& r : cgroup::partition_rules(members[i])) out[i].rules.add_allow(r);
        out[i].rules.managed = managed;
    }
    return out;
}

std::string format_records(const std::vector<MpsDaemonRecord>& records) {
    std::string out;
    for (const auto& r : records)
        out += r.instance + " " + r.uuid + " " + format_identity(r.process) + "\n";
    return out;
}

Result<std::vector<MpsDaemonRecord>> parse_records(const std::string& text, const std::string& file) {
    std::vector<MpsDaemonRecord> out;
    std::istringstream in(text);
    std::string line;
    for (unsigned n = 1; std::getline(in, line); ++n) {
        if (trim(line).empty()) continue;
        std::istringstream words(line);
        std::string instance, uuid, rest;
        words >> instance >> uuid;
        std::getline(words, rest);
        auto id = process::parse_identity(rest);
        bool name_ok = instance.rfind("gpu", 0) == 0 && instance.find('/') == std::string::npos &&
                       instance.find("..") == std::string::npos;
        if (!name_ok || uuid.empty() || !id)
            return Error{file + ":" + std::to_string(n) + ": not an MPS daemon record: '" + line + "'"};
        out.push_back({instance, uuid, *id});
    }
    return out;
}

RecordStore file_record_store(const std::string& path) {
    RecordStore s;
    s.read = [path] { return read_whole_file(AT_FDCWD, path, path); };
    s.write = [path](const std::string& content) {
        return write_whole_file(AT_FDCWD, path, content, 0600, path);
    };
    return s;
}

std::string mps_pipe_dir(const MpsConfig& c, const std::string& instance) {
    return c.dir + "/" + instance + "/pipe";
}
std::string mps_log_dir(const MpsConfig& c, const std::string& instance) {
    return c.dir + "/" + instance + "/log";
}

EnvMap daemon_env(const MpsConfig& c, const MpsInstance& inst) {
    EnvMap env = c.extra_env;
    env["PATH"] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    apply_changes(env, mps_daemon_visibility(inst.uuid));
    env["CUDA_MPS_PIPE_DIRECTORY"] = mps_pipe_dir(c, inst.name);
    env["CUDA_MPS_LOG_DIRECTORY"] = mps_log_dir(c, inst.name);
    return env;
}

Result<MpsStartReport> start_daemons(const MpsConfig& c, const std::vector<MpsInstance>& instances) {
    auto records = load_records(c);
    if (!records) return records.error();
    std::vector<MpsDaemonRecord> kept, fresh;
    for (const auto& r : *records)
        if (runs_as_recorded(c, r)) kept.push_back(r);
    std::vector<MpsInstance> missing;
    for (const auto& inst : instances)
        if (!find_record(kept, inst.name)) missing.push_back(inst);
    auto undo = [&](const Error& e) -> Result<MpsStartReport> {
        for (const auto& r : fresh) signal_if_same(r.process, SIGKILL);
        for (const auto& inst : missing)
            if (c.housing) (void)c.housing->end(inst.name, std::chrono::seconds(2), std::chrono::milliseconds(0));
        (void)c.records.write(format_records(kept));
        return e;
    };
    if (auto s = prepare_instances(c, missing); !s) return undo(s.error());
    // All at once: seven instances should cost about what one does.
    std::vector<std::optional<MpsDaemonRecord>> spawned(missing.size());
    auto started = for_each_parallel(missing, [&](const MpsInstance& inst) -> Status {
        process::DaemonSpec spec{{c.control, "-f"}, daemon_env(c, inst), c.user,
                        mps_log_dir(c, inst.name) + "/control.log", c.dir + "/" + inst.name, ""};
        if (c.housing) {
            if (auto s = c.housing->make(inst.name, inst.rules); !s)
                return Error{"MPS control daemon for " + inst.uuid + ": " + s.error().message};
            spec.cgroup_procs = c.housing->procs_file(inst.name);
        }
        auto id = process::spawn_daemon(spec);
        if (!id) return Error{"MPS control daemon for " + inst.uuid + ": " + id.error().message};
        spawned[static_cast<std::size_t>(&inst - missing.data())] = MpsDaemonRecord{inst.name, inst.uuid, *id};
        return ok_status();
    });
    for (auto& r : spawned)
        if (r) fresh.push_back(std::move(*r));
    if (!started) return undo(started.error());
    std::vector<MpsDaemonRecord> all = kept;
    all.insert(all.end(), fresh.begin(), fresh.end());
    if (auto s = c.records.write(format_records(all)); !s) return undo(s.error());
    if (auto s = wait_all_ready(c, fresh, Clock::now() + c.timeout); !s) return undo(s.error());

    // Each server pre-started for the user and the list asked in one client session: one
    // exec per daemon.
    MpsStartReport report;
    std::vector<std::string> warnings(fresh.size());
    (void)for_each_parallel(fresh, [&](const MpsDaemonRecord& r) -> Status {
        const MpsInstance inst{r.instance, r.uuid};
        std::string& warning = warnings[static_cast<std::size_t>(&r - fresh.data())];
        const std::string pre = "start_server -uid " + std::to_string(c.user.uid);
        auto answer = control_command(c, inst, pre + "\nget_server_list", c.timeout);
        std::string refused, servers;
        if (answer)
            for (const auto& line : split(answer->output, '\n'))
                (parse_u64(trim(line)) ? servers : refused) += trim(line).empty() ? "" : trim(line) + " ";
        if (!answer || !refused.empty())
            warning = "MPS " + r.uuid + ": " + pre + " refused: " +
                      (answer ? trim(refused) : answer.error().message);
        else if (servers.empty() || answer->exit_status != 0)  // the real client: 1 after a server failed
            warning = "MPS " + r.uuid + ": the server pre-started for uid " +
                      std::to_string(c.user.uid) + " did not stay up (see " +
                      mps_log_dir(c, r.instance) + "/control.log); the daemon starts one "
                      "when a client connects";
        return ok_status();
    });
    for (auto& w : warnings)
        if (!w.empty()) report.warnings.push_back(std::move(w));
    return report;
}

Status wait_ready(const MpsConfig& c, const std::vector<MpsInstance>& instances) {
    auto records = load_records(c);
    if (!records) return records.error();
    std::vector<MpsDaemonRecord> wanted;
    for (const auto& inst : instances) {
        const MpsDaemonRecord* r = find_record(*records, inst.name);
        if (!r) return Error{"MPS control daemon for " + inst.uuid + " was not started"};
        wanted.push_back(*r);
    }
    return wait_all_ready(c, wanted, Clock::now() + c.timeout);
}

Result<std::vector<MpsDaemonState>> daemon_states(const MpsConfig& c, bool probe) {
    auto records = load_records(c);
    if (!records) return records.error();
    std::vector<MpsDaemonState> out;
    for (const auto& r : *records) {
        MpsDaemonState s;
        s.record = r;
        s.alive = runs_as_recorded(c, r);
        if (probe && s.alive) {
            auto a = control_command(c, {r.instance, r.uuid}, "get_server_list", c.timeout);
            s.answers = a && a->exit_status == 0;
            if (s.answers) s.servers = a->output;
        }
        out.push_back(std::move(s));
    }
    return out;
}

std::optional<process::ProcessIdentity> live_daemon(const MpsConfig& c, const std::string& instance) {
    auto records = load_records(c);
    if (!records) return std::nullopt;
    const MpsDaemonRecord* r = find_record(*records, instance);
    if (r && runs_as_recorded(c, *r)) return r->process;
    return std::nullopt;
}

MpsStopReport stop_daemons(const MpsConfig& c) {
    MpsStopReport report;
    auto records = load_records(c);
    if (!records) {
        report.notes.push_back(records.error().message);
        return report;
    }
    std::vector<MpsDaemonRecord> live;
    for (const auto& r : *records) {
        if (runs_as_recorded(c, r))
            live.push_back(r);
        else if (r.process.uid != c.user.uid)
            report.notes.push_back("record of pid " + std::to_string(r.process.pid) + " (uid " +
                                   std::to_string(r.process.uid) + ") is not a daemon of uid " +
                                   std::to_string(c.user.uid) + ": ignored");
    }
    // quit asks each daemon to stop its servers and exit. Its exit status says nothing: the
    // real daemon, and its client, exit 1 after a server failed; and a user may keep a daemon
    // from answering. Whether the recorded process exits is what counts.
    (void)for_each_parallel(live, [&](const MpsDaemonRecord& r) -> Status {
        (void)control_command(c, {r.instance, r.uuid}, "quit", c.timeout);
        return ok_status();
    });
    const auto deadline = Clock::now() + c.timeout;
    for (const auto& r : live) {
        if (process::exits_by(r.process, deadline)) continue;
        // Root's: ending the cgroup below kills it with whatever it forked.
        if (!c.housing && signal_if_same(r.process, SIGKILL))
            report.notes.push_back("MPS control daemon " + std::to_string(r.process.pid) + " for " +
                                   r.uuid + " ignored quit; killed");
        if (!c.housing && !process::exits_by(r.process, Clock::now() + std::chrono::seconds(2)))
            report.survivors.push_back("MPS control daemon " + std::to_string(r.process.pid) +
                                       " for " + r.uuid + " survived SIGKILL");
    }
    for (const auto& r : *records) {
        if (!c.housing) break;
        // What quit lets go (its servers) leaves by itself until the quit's deadline.
        const auto grace = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (auto line = c.housing->end(r.instance, std::chrono::seconds(2), std::max(grace, std::chrono::milliseconds(0))); line)
            report.ended.push_back(*line);
        else
            report.survivors.push_back(line.error().message);
    }
    std::vector<std::string> instances;
    for (const auto& r : *records) instances.push_back(r.instance);
    if (auto s = as_user(c, "removing " + c.dir,
                         [&] {
                             std::error_code ec;
                             for (const auto& i : instances) fs::remove_all(c.dir + "/" + i, ec);
                             return ec ? 1 : 0;
                         });
        !s)
        report.notes.push_back(s.error().message);
    if (auto s = c.records.write(""); !s) report.notes.push_back(s.error().message);
    return report;
}

}  // namespace xpart::mps
