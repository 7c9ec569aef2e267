#include "reshape_request/poll_turn.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <functional>

namespace xpart::reshape_request {

namespace {

class FlockTurn final : public PollTurn {
public:
    explicit FlockTurn(int fd) : fd_(fd) {}
    ~FlockTurn() override { close(fd_); }  // the lock goes with the descriptor
    FlockTurn(const FlockTurn&) = delete;
    FlockTurn& operator=(const FlockTurn&) = delete;

    bool take() override {
        if (!held_) held_ = flock(fd_, LOCK_EX | LOCK_NB) == 0;
        return held_;
    }

private:
    int fd_;
    bool held_ = false;
};

}  // namespace

std::string turn_file_name(const std::string& nodelist) {
    std::string name;
    for (char c : nodelist)
        name += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_') ? c : '_';
    if (name.size() > 100) name = name.substr(0, 80) + "-" + std::to_string(std::hash<std::string>{}(nodelist));
    return name.empty() ? "_" : name;
}

Result<std::unique_ptr<PollTurn>> shared_turn(const std::string& dir, const std::string& nodelist) {
    if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return errno_error(dir + ": mkdir", errno);
    const int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0) return errno_error(dir, errno);
    struct stat st {};
    if (fstat(dfd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
        close(dfd);
        return Error{dir + ": not a directory of uid " + std::to_string(geteuid()) + " that only it may use"};
    }
    const std::string file = turn_file_name(nodelist) + ".lock";
    const int fd = openat(dfd, file.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    const int err = errno;
    close(dfd);
    if (fd < 0) return errno_error(dir + "/" + file, err);
    return std::unique_ptr<PollTurn>(std::make_unique<FlockTurn>(fd));
}

}  // namespace xpart::reshape_request
