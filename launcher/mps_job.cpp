#include "launcher/mps_job.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "libxpart/text.hpp"

namespace xpart::launch {
namespace {

namespace fs = std::filesystem;
constexpr const char* kEnded = "ended";
constexpr const char* kStepRecordsPrefix = "mps.step_";

std::string step_records(const std::string& step_id) { return kStepRecordsPrefix + step_id; }

MpsConfig step_mps_config(const JobDir& job, const std::string& step_id, const MpsJobOptions& o) {
    MpsConfig c = managed_mps_config(job, o);
    c.dir = job.user_dir() + "/mps_step_" + step_id;
    const std::string name = step_records(step_id);
    c.records.read = [job, name] { return job.read_file(name); };
    c.records.write = [job, name](const std::string& text) { return job.write_file(name, text); };
    return c;
}

// Root's daemons of one step (stop_daemons empties its records unless one survived).
void stop_step(const MpsJobOptions& o, const JobDir& job, const std::string& step_id,
               MpsJobStopReport& report) {
    auto r = stop_daemons(step_mps_config(job, step_id, o));
    report.notes.insert(report.notes.end(), r.notes.begin(), r.notes.end());
    report.survivors.insert(report.survivors.end(), r.survivors.begin(), r.survivors.end());
}

std::vector<std::string> step_dirs(const std::string& base, const std::string& prefix) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(base, ec)) {
        std::string n = e.path().filename();
        if (n.rfind(prefix, 0) == 0 && !e.is_symlink(ec) && e.is_directory(ec)) out.push_back(e.path());
    }
    return out;
}

// In a child that became the user: the daemons ranks started in `bases`, recorded in each
// base's own file (whatever the user wrote there, this child can only reach the user's own).
void stop_rank_daemons(const MpsJobOptions& o, const Credentials& user,
                       const std::vector<std::string>& bases, std::vector<std::string>& notes) {
    if (bases.empty()) return;
    auto rc = run_as(user, [&] {
        int bad = 0;
        for (const auto& base : bases) {
            MpsConfig c;
            c.control = o.control;
            c.dir = base;
            c.records = file_record_store(base + "/daemons");
            c.user = user;
            c.timeout = o.timeout;
            c.extra_env = o.extra_env;
            auto r = stop_daemons(c);
            bad += !r.survivors.empty();
            std::error_code ec;
            fs::remove_all(base, ec);
        }
        return bad ? 1 : 0;
    });
    if (!rc || *rc != 0)
        notes.push_back("daemons the ranks started as uid " + std::to_string(user.uid) +
                        " did not all stop");
}

MpsJobStopReport finish(const MpsJobOptions& o, const JobDir& job, const Credentials* tmp_user) {
    MpsJobStopReport report;
    report.had_job_dir = true;
    if (auto s = job.write_file(kEnded, "1\n"); !s) report.notes.push_back(s.error().message);
    if (job.has_file(kMpsRecords)) {
        auto r = stop_daemons(managed_mps_config(job, o));
        report.notes.insert(report.notes.end(), r.notes.begin(), r.notes.end());
        report.survivors = r.survivors;
    }
    for (const auto& name : job.file_names())
        if (name.rfind(kStepRecordsPrefix, 0) == 0)
            stop_step(o, job, name.substr(std::string(kStepRecordsPrefix).size()), report);
    stop_rank_daemons(o, job.user(), step_dirs(job.user_dir(), "step_"), report.notes);
    if (tmp_user)
        stop_rank_daemons(o, *tmp_user,
                          step_dirs(user_runtime_base(tmp_user->uid), "job-" + job.job_id() + "."),
                          report.notes);
    if (!report.survivors.empty()) return report;  // keep the records: a later Epilog retries
    if (auto s = job.remove(); !s) report.notes.push_back(s.error().message);
    return report;
}

}  // namespace

MpsConfig managed_mps_config(const JobDir& job, const MpsJobOptions& o) {
    MpsConfig c;
    c.control = o.control;
    c.dir = job.user_dir() + "/mps";
    c.records.read = [job] { return job.read_file(kMpsRecords); };
    c.records.write = [job](const std::string& text) { return job.write_file(kMpsRecords, text); };
    c.user = job.user();
    c.timeout = o.timeout;
    c.extra_env = o.extra_env;
    return c;
}

Result<JobDir> prepare_job(const MpsJobOptions& o, const std::string& job_id, const Credentials& user) {
    return JobDir::create(o.run_dir, job_id, user);
}

Result<MpsStartReport> start_job_daemons(const MpsJobOptions& o, const std::string& job_id,
                                         const Credentials& user,
                                         const std::vector<MpsInstance>& instances) {
    auto job = prepare_job(o, job_id, user);
    if (!job) return job.error();
    auto lock = job->lock(true);
    if (!lock) return lock.error();
    MpsConfig c = managed_mps_config(*job, o);
    auto report = start_daemons(c, instances);
    if (!report) {
        (void)job->write_file(kMpsFailed, "MPS daemons of job " + job_id + " failed to start: " +
                                              report.error().message + "\n");
        return report.error();
    }
    return report;
}

MpsJobStopReport stop_job_daemons(const MpsJobOptions& o, const std::string& job_id,
                                  const Credentials* user) {
    auto job = JobDir::open(o.run_dir, job_id);
    if (!job) return {false, {job.error().message}, {}};
    if (!*job) {
        MpsJobStopReport report;
        if (user)
            stop_rank_daemons(o, *user, step_dirs(user_runtime_base(user->uid), "job-" + job_id + "."),
                              report.notes);
        return report;
    }
    auto lock = (*job)->lock(true);
    if (!lock) return {true, {lock.error().message}, {}};
    return finish(o, **job, user);
}

Result<MpsConfig> start_step_daemons(const MpsJobOptions& o, const std::string& job_id,
                                     const std::string& step_id, const Credentials& user,
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
    MpsConfig c = step_mps_config(*job, step_id, o);
    auto started = start_daemons(c, instances);
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
    if (!lock) return {true, {lock.error().message}, {}};
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
        auto r = finish(o, **job, nullptr);
        if (r.survivors.empty() && r.notes.empty()) removed.push_back((*job)->path());
    }
    return removed;
}

std::string user_runtime_base(uid_t uid) { return "/tmp/xpart-mps-" + std::to_string(uid); }

Status make_private_dir(const std::string& dir) {
    if (mkdir(dir.c_str(), 0700) == 0) return ok_status();
    if (errno != EEXIST) return Error{dir + ": mkdir: " + std::strerror(errno)};
    struct stat st;
    if (lstat(dir.c_str(), &st) != 0) return Error{dir + ": " + std::strerror(errno)};
    if (!S_ISDIR(st.st_mode)) return Error{dir + ": exists and is not a directory"};
    if (st.st_uid != geteuid())
        return Error{dir + ": owned by uid " + std::to_string(st.st_uid) + ", expected " +
                     std::to_string(geteuid())};
    if ((st.st_mode & 077) != 0)
        return Error{dir + ": mode " + std::to_string(st.st_mode & 0777) +
                     " is open to others; expected 0700"};
    return ok_status();
}

}  // namespace xpart::launch
