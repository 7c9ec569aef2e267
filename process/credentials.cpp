#include "process/credentials.hpp"

#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "process/exit_status.hpp"

namespace xpart::process {

Credentials current_credentials() { return {geteuid(), getegid()}; }

Status become(const Credentials& who) {
    if (geteuid() == who.uid && getegid() == who.gid && getuid() == who.uid) return ok_status();
    const std::string as = "uid " + std::to_string(who.uid) + " gid " + std::to_string(who.gid);
    if (geteuid() == 0 && setgroups(1, &who.gid) != 0)
        return Error{"setgroups for " + as + ": " + std::strerror(errno)};
    if (setresgid(who.gid, who.gid, who.gid) != 0)
        return Error{"setresgid for " + as + ": " + std::strerror(errno)};
    if (setresuid(who.uid, who.uid, who.uid) != 0)
        return Error{"setresuid for " + as + ": " + std::strerror(errno)};
    if (who.uid != 0 && (setuid(0) == 0 || geteuid() == 0))
        return Error{"could regain root after becoming " + as};
    return ok_status();
}

Result<int> run_as(const Credentials& who, const std::function<int()>& work) {
    pid_t pid = fork();
    if (pid < 0) return Error{std::string("fork: ") + std::strerror(errno)};
    if (pid == 0) {
        int rc = 125;
        if (become(who)) rc = work();
        _exit(rc);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return Error{std::string("waitpid: ") + std::strerror(errno)};
    return exit_status(status);
}

}  // namespace xpart::process
