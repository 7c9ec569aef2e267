#include "mps/root/mps_job.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "libxpart/text.hpp"
#include "mps/root/mps_cgroups.hpp"

namespace xpart::mps {
namespace {

namespace fs = std::filesystem;
constexpr const char* kEnded = "ended";
constexpr const char* kStepRecordsPrefix = "mps.step_";

std::string step_records(const std::string& step_id) { return kStepRecordsPrefix + step_id; }

// Root houses what it starts (mps_cgroups.hpp); a caller that is not root (tests, a user's
// own run directory) cannot, and its daemons are its own anyway.
Status house(MpsConfig& c, const MpsJobOptions& o, const std::string& job_id, const std::string& scope) {
    if (geteuid() != 0) return ok_status();
    auto cgroups = MpsCgroups::for_job(o.run_dir, job_id);
    if (!cgroups) return cgroups.error();
    c.housing = std::make_shared<const MpsCgroupHousing>(std::move(*cgroups), scope);
    return ok_status();
}

Result<MpsConfig> step_mps_config(const JobDir& job, const std::string& step_id, const MpsJobOptions& o) {
    MpsConfig c = managed_mps_config(job, o);
    c.dir = job.user_dir() + "/mps_step_" + step_id;
    const std::string name = step_records(step_id);
    c.records.read = [job, name] { return job.read_file(name); };
    c.records.write = [job, name](const std::string& text) { return job.write_file(name, text); };
    if (auto s = house(c, o, job.job_id(), "step_" + step_id); !s) return s.error();
    return c;
}

void add(MpsJobStopReport& report, const MpsCgroups::Ended& r) {
    report.ended.insert(report.ended.end(), r.ended.begin(), r.ended.end());
    report.survivors.insert(report.survivors.end(), r.failed.begin(), r.failed.end());
}

void add(MpsJobStopReport& report, const MpsStopReport& r) {
    report.ended.insert(report.ended.end(), r.ended.begin(), r.ended.end());
    report.notes.insert(report.notes.end(), r.notes.begin(), r.notes.end());
    report.survivors.insert(report.survivors.end(), r.survivors.begin(), r.survivors.end());
}

// Root's daemons of one step (stop_daemons empties its records unless one survived).
void stop_step(const MpsJobOptions& o, const JobDir& job, const std::string& step_id,
               MpsJobStopReport& report) {
    auto c = step_mps_config(job, step_id, o);
    if (!c) {
        report.survivors.push_back(c.error().message);
        return;
    }
    add(report, stop_daemons(*c));
    if (!c->housing) return;
    auto cgroups = MpsCgroups::for_job(o.run_dir, job.job_id());  // what the records missed
    if (!cgroups) {
        report.survivors.push_back(cgroups.error().message);
        return;
    }
    add(report, cgroups->end_all(mps_cgroup_name("step_" + step_id, ""), o.timeout));
}

// Every cgroup root made for the job's daemons (what records missed included).
void end_job_cgroups(const MpsJobOptions& o, const std::string& job_id, MpsJobStopReport& report) {
    if (geteuid() != 0) return;
    auto cgroups = MpsCgroups::for_job(o.run_dir, job_id);
    if (!cgroups) {
        report.survivors.push_back(cgroups.error().message);
        return;
    }
    add(report, cgroups->end_all("", o.timeout));
}

// In a child that became the user: the daemons ranks started in <leaf>/step_*, recorded in
// each step directory's own file (whatever the user wrote there, this child can only reach
// the user's own). The listing happens in the child too: root never reads the user's place.
void stop_rank_daemons(const MpsJobOptions& o, const process::Credentials& user, const std::string& leaf,
                       std::vector<std::string>& notes) {
    auto rc = process::run_as(user, [&] {
        int bad = 0;
        std::error_code ec;
        fs::permissions(leaf, fs::perms::owner_all, fs::perm_options::add, ec);  // a chmod of its own
        for (const auto& e : fs::directory_iterator(leaf, ec)) {
            const std::string name = e.path().filename();
            if (name.rfind("step_", 0) != 0 || e.is_symlink(ec) || !e.is_directory(ec)) continue;
            MpsConfig c;
            c.control = o.control;
            c.dir = e.path();
            c.records = file_record_store(c.dir + "/daemons");
            c.user = user;
            c.timeout = o.timeout;
            c.extra_env = o.extra_env;
            auto r = stop_daemons(c);
            bad += !r.survivors.empty();
            fs::remove_all(c.dir, ec);
        }
        return bad ? 1 : 0;
    });
    if (!rc || *rc != 0)
        notes.push_back("daemons the ranks started as uid " + std::to_string(user.uid) +
                        " did not all stop");
}

// Under the job's lock: what the records name (quit first, so daemons end cleanly), every
// cgroup left, the ranks' own daemons (as the user), then the directory.
MpsJobStopReport finish(const MpsJobOptions& o, const JobDir& job) {
    MpsJobStopReport report;
    report.had_job_dir = true;
    if (auto s = job.write_file(kEnded, "1\n"); !s) report.notes.push_back(s.error().message);
    if (job.has_file(kMpsRecords)) {
        MpsConfig c = managed_mps_config(job, o);
        if (auto s = house(c, o, job.job_id(), "job"); !s)
            report.survivors.push_back(s.error().message);
        else
            add(report, stop_daemons(c));
    }
    for (const auto& name : job.file_names())
        if (name.rfind(kStepRecordsPrefix, 0) == 0)
            stop_step(o, job, name.substr(std::string(kStepRecordsPrefix).size()), report);
    end_job_cgroups(o, job.job_id(), report);
    if (job.has_user_dir()) stop_rank_daemons(o, job.user(), job.user_dir(), report.notes);
    if (!report.survivors.empty()) return report;  // keep the records: a later Epilog retries
    if (auto s = job.remove(); !s) report.notes.push_back(s.error().message);
    return report;
}

}  // namespace

MpsConfig managed_mps_config(const JobDir& job, const MpsJobOptions& o) {
    MpsConfig c;
    c.space_note = job.space_note();
    c.control = o.control;
    c.dir = job.user_dir() + "/mps";
    c.records.read = [job] { return job.read_file(kMpsRecords); };
    c.records.write = [job](const std::string& text) { return job.write_file(kMpsRecords, text); };
    c.user = job.user();
    c.timeout = o.timeout;
    c.extra_env = o.extra_env;
    return c;
}

Result<JobDir> prepare_job(const MpsJobOptions& o, const std::string& job_id, const process::Credentials& user) {
    return JobDir::create(o.run_dir, job_id, user, o.job_dir_mib);
}

Result<MpsStartReport> start_job_daemons(const MpsJobOptions& o, const std::string& job_id,
                                         const process::Credentials& user,
                                         const std::vector<MpsInstance>& instances) {
    auto job = prepare_job(o, job_id, user);
    if (!job) return job.error();
    auto lock = job->lock(true);
    if (!lock) return lock.error();
    MpsConfig c = managed_mps_config(*job, o);
    if (auto s = house(c, o, job_id, "job"); !s) return s.error();
    auto report = start_daemons(c, instances);
    if (!report) {
        (void)job->write_file(kMpsFailed, "MPS daemons of job " + job_id + " failed to start: " +
                                              report.error().message + "\n");
        return report.error();
    }
    return report;
}

MpsJobStopReport stop_job_daemons(const MpsJobOptions& o, const std::string& job_id) {
    MpsJobStopReport report;
    auto job = JobDir::open(o.run_dir, job_id);
    if (job && *job) {
        if (auto lock = (*job)->lock(true); !lock)
            report.notes.push_back(lock.error().message);
        else
            report = finish(o, **job);
    } else if (!job) {
        report.notes.push_back(job.error().message);
    }
    // Whatever the directory said (or if there was none to read): root's cgroups of the job.
    end_job_cgroups(o, job_id, report);
    return report;
}

std::string describe_stop(const MpsJobStopReport& r) {
    auto joined = [](const std::vector<std::string>& v) {
        std::string out;
        for (const auto& x : v) out += (out.empty() ? "" : ", ") + x;
        return out.empty() ? std::string("none") : out;
    };
    return "MPS daemons ended: " + joined(r.ended) + "; could not end: " + joined(r.survivors);
}

Result<MpsConfig> start_step_daemons(const MpsJobOptions& o, const std::string& job_id,
                                     const std::string& step_id, const process::Credentials& user,
                                     const std::vector<MpsInstance>& instances, bool& managed,
                                     MpsStartReport& report) {
    if (auto s = check_job_id(step_id); !s) return Error{"step id: " + s.error().message};
    auto job = prepare_job(o, job_id, user);
    if (!job) return job.error();
    auto lock = job->lock(true);
    if (!lock) return lock.error();
    if (job->has_file(kEnded)) return Error{"job " + job_id + " is ending: no MPS daemon started"};
    if (auto failed = job->read_file(kMpsFailed); failed && *failed)
        return Error{trim(**failed)};
    managed = job->has_file(kMpsRecords);
    if (managed) return managed_mps_config(*job, o);
    auto c = step_mps_config(*job, step_id, o);
    if (!c) return c.error();
    auto started = start_daemons(*c, instances);
    if (!started) return started.error();
    report = std::move(*started);
    return c;
}

MpsJobStopReport stop_step_daemons(const MpsJobOptions& o, const std::string& job_id,
                                   const std::string& step_id) {
    MpsJobStopReport report;
    auto job = JobDir::open(o.run_dir, job_id);
    if (!job || !*job) {
        if (!job) report.notes.push_back(job.error().message);
        return report;
    }
    report.had_job_dir = true;
    auto lock = (*job)->lock(true);
    if (!lock) return {true, {}, {lock.error().message}, {}};
    if ((*job)->has_file(step_records(step_id))) stop_step(o, **job, step_id, report);
    return report;
}

std::vector<std::string> cleanup_ended_jobs(const MpsJobOptions& o) {
    std::vector<std::string> removed;
    for (const auto& id : job_ids_in(o.run_dir)) {
        auto job = JobDir::open(o.run_dir, id);
        if (!job || !*job || !(*job)->has_file(kEnded)) continue;
        auto lock = (*job)->lock(false);
        if (!lock || !*lock) continue;  // its Epilog (or a start) is at work
        auto r = finish(o, **job);
        if (r.survivors.empty() && r.notes.empty()) removed.push_back((*job)->path());
    }
    return removed;
}

}  // namespace xpart::mps
