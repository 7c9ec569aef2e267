#include "mps/root/rank_mps_config.hpp"

#include <optional>

#include "libxpart/text.hpp"
#include "mps/private_dir.hpp"
#include "mps/root/job_dir.hpp"
#include "mps/root/mps_job.hpp"
#include "process/credentials.hpp"

namespace xpart::mps {

namespace {

RecordStore read_only(RecordStore s, const std::string& what) {
    s.write = [what](const std::string&) -> Status {
        return Error{what + " belongs to root's Prolog: ranks do not change it"};
    };
    return s;
}

}  // namespace

Result<MpsConfig> rank_mps_config(const MpsJobOptions& o, const std::string& job_id,
                                  const std::string& step_key, bool& managed) {
    MpsConfig c;
    c.control = o.control;
    c.user = process::current_credentials();
    c.timeout = o.timeout;
    c.extra_env = o.extra_env;
    managed = false;
    std::optional<JobDir> job;
    if (!job_id.empty()) {
        auto found = JobDir::open(o.run_dir, job_id);
        if (!found) return found.error();
        job = std::move(*found);
    }
    if (job) {
        if (auto failed = job->read_file(kMpsFailed); failed && *failed)
            return Error{trim(**failed)};
        if (job->has_file(kMpsRecords)) {
            MpsConfig m = managed_mps_config(*job, o);
            m.records = read_only(m.records, job->path() + "/" + kMpsRecords);
            m.user = c.user;
            m.extra_env = o.extra_env;
            managed = true;
            return m;
        }
        if (job->user().uid != c.user.uid)
            return Error{job->user_dir() + " belongs to uid " + std::to_string(job->user().uid) +
                         ", not to this rank's uid " + std::to_string(c.user.uid)};
        std::string step = step_key.substr(step_key.rfind('.') == std::string::npos ? 0 : step_key.rfind('.') + 1);
        c.dir = job->user_dir() + "/step_" + step;
        c.space_note = job->space_note();
    } else {
        // No Prolog hook on this node: the user's own directory in /tmp. Another user can
        // create that name first; then this fails closed and says what fixes it for good.
        const std::string base = user_runtime_base(c.user.uid);
        if (auto s = make_private_dir(base); !s)
            return Error{s.error().message + " (another user may have created it; the Prolog hook "
                         "etc/prolog.d/xpart-mps.sh gives each job a directory only root can make)"};
        c.dir = base + "/job-" + step_key;
    }
    c.records = file_record_store(c.dir + "/daemons");
    return c;
}

}  // namespace xpart::mps
