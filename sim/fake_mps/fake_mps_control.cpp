// A fake nvidia-cuda-mps-control that behaves like the real one for what xpart uses, so the
// MPS lifecycle runs end to end without a GPU:
//   -d   daemonize (fork, setsid, parent exits 0 once the control socket listens), write
//        nvidia-cuda-mps-control.pid into $CUDA_MPS_PIPE_DIRECTORY, log to
//        $CUDA_MPS_LOG_DIRECTORY/control.log;
//   -f   the same in the foreground;
//   none a client: each stdin line is one command relayed over the "control" unix socket in
//        the pipe directory, the daemon's answer is printed.
// Commands: quit, get_server_list, get_client_list <pid>, start_server -uid <uid>,
// set_default_active_thread_percentage <p>, get_default_active_thread_percentage.
// A started "server" is a real child process (it sleeps), so get_server_list lists real pids.
// FAKE_MPS_START_DELAY_MS delays readiness (to test waiting ranks).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

namespace {

const char* kPidFile = "nvidia-cuda-mps-control.pid";

std::string env_or(const char* name, const char* fallback) {
    const char* v = std::getenv(name);
    return v && *v ? v : fallback;
}

std::string pipe_dir() { return env_or("CUDA_MPS_PIPE_DIRECTORY", "/tmp/nvidia-mps"); }
std::string log_dir() { return env_or("CUDA_MPS_LOG_DIRECTORY", "/var/log/nvidia-mps"); }

sockaddr_un control_address() {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::string path = pipe_dir() + "/control";
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
    return addr;
}

class Daemon {
public:
    int run(bool foreground);

private:
    void log(const std::string& what);
    std::string handle(const std::string& line, bool& quit);
    void reap();
    void shutdown();

    int listen_fd_ = -1;
    FILE* log_ = nullptr;
    bool foreground_ = false;
    std::map<unsigned, pid_t> servers_;  // uid -> server pid
    unsigned thread_percentage_ = 100;
};

void Daemon::log(const std::string& what) {
    char stamp[64];
    std::time_t now = std::time(nullptr);
    std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", std::localtime(&now));
    if (log_) {
        std::fprintf(log_, "[%s] %s\n", stamp, what.c_str());
        std::fflush(log_);
    }
    if (foreground_) std::fprintf(stderr, "[%s] %s\n", stamp, what.c_str());
}

void Daemon::reap() {
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
        for (auto it = servers_.begin(); it != servers_.end(); ++it)
            if (it->second == pid) {
                log("Server " + std::to_string(pid) + " exited");
                servers_.erase(it);
                break;
            }
}

std::string Daemon::handle(const std::string& line, bool& quit) {
    std::istringstream in(line);
    std::string cmd;
    in >> cmd;
    log("CMD: " + line);
    if (cmd == "quit") {
        quit = true;
        return "";
    }
    if (cmd == "get_server_list") {
        std::string out;
        for (const auto& [uid, pid] : servers_) out += std::to_string(pid) + "\n";
        return out;
    }
    if (cmd == "get_client_list") {
        long pid = 0;
        if (!(in >> pid)) return "Missing server PID\n";
        for (const auto& [uid, spid] : servers_)
            if (spid == pid) return "";
        return "Invalid server PID " + std::to_string(pid) + "\n";
    }
    if (cmd == "start_server") {
        std::string flag;
        long uid = -1;
        if (!(in >> flag >> uid) || flag != "-uid" || uid < 0) return "Usage: start_server -uid <uid>\n";
        if (servers_.count(static_cast<unsigned>(uid))) return "";
        pid_t pid = fork();
        if (pid == 0) {
            // The "server": lives until the control daemon goes away.
            prctl(PR_SET_PDEATHSIG, SIGTERM);
            // Drop the daemon's sockets: a held client connection would never see EOF.
            for (int fd = 3; fd < 1024; ++fd) close(fd);
            sigset_t none;
            sigemptyset(&none);
            sigprocmask(SIG_SETMASK, &none, nullptr);
            if (getuid() == 0 && uid != 0 && setuid(static_cast<uid_t>(uid)) != 0) _exit(1);
            for (;;) pause();
        }
        if (pid < 0) return std::string("Failed to start server: ") + std::strerror(errno) + "\n";
        servers_[static_cast<unsigned>(uid)] = pid;
        log("Starting new server " + std::to_string(pid) + " for user " + std::to_string(uid));
        FILE* slog = std::fopen((log_dir() + "/server.log").c_str(), "a");
        if (slog) {
            std::fprintf(slog, "Server %d started for uid %ld\n", pid, uid);
            std::fclose(slog);
        }
        return "";
    }
    if (cmd == "set_default_active_thread_percentage") {
        long p = -1;
        if (!(in >> p) || p <= 0 || p > 100) return "Invalid percentage\n";
        thread_percentage_ = static_cast<unsigned>(p);
        return std::to_string(p) + ".0\n";
    }
    if (cmd == "get_default_active_thread_percentage")
        return std::to_string(thread_percentage_) + ".0\n";
    return "Unrecognized command: " + cmd + "\n";
}

void Daemon::shutdown() {
    for (const auto& [uid, pid] : servers_) kill(pid, SIGTERM);
    for (const auto& [uid, pid] : servers_) waitpid(pid, nullptr, 0);
    servers_.clear();
    unlink((pipe_dir() + "/control").c_str());
    unlink((pipe_dir() + "/" + kPidFile).c_str());
    log("Exit");
}

int Daemon::run(bool foreground) {
    foreground_ = foreground;
    const std::string pid_path = pipe_dir() + "/" + kPidFile;
    // Like the real daemon: refuse to start over a live instance; a stale pid file is replaced.
    if (FILE* f = std::fopen(pid_path.c_str(), "r")) {
        long old = 0;
        bool live = std::fscanf(f, "%ld", &old) == 1 && old > 0 && kill(static_cast<pid_t>(old), 0) == 0;
        std::fclose(f);
        if (live) {
            std::fprintf(stderr, "An instance of this daemon is already running\n");
            return 1;
        }
    }
    struct stat st;
    if (stat(pipe_dir().c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        std::fprintf(stderr, "Cannot use pipe directory %s: %s\n", pipe_dir().c_str(),
                     std::strerror(errno ? errno : ENOTDIR));
        return 1;
    }
    log_ = std::fopen((log_dir() + "/control.log").c_str(), "a");
    if (!log_) {
        std::fprintf(stderr, "Cannot open %s/control.log: %s\n", log_dir().c_str(), std::strerror(errno));
        return 1;
    }

    int ready[2] = {-1, -1};
    if (!foreground) {
        if (pipe(ready) != 0) return 1;
        pid_t child = fork();
        if (child < 0) return 1;
        if (child > 0) {
            // The parent exits 0 once the daemon has detached.
            close(ready[1]);
            char ok = 0;
            ssize_t n = read(ready[0], &ok, 1);
            return n == 1 && ok == 'y' ? 0 : 1;
        }
        close(ready[0]);
        setsid();
        if (fork() > 0) _exit(0);  // the daemon is not a session leader
        int devnull = open("/dev/null", O_RDWR);
        dup2(devnull, 0);
        dup2(devnull, 1);
        dup2(devnull, 2);
        if (devnull > 2) close(devnull);
        // Like the real `-d`: return once daemonized; readiness shows on the control socket.
        ssize_t n = write(ready[1], "y", 1);
        (void)n;
        close(ready[1]);
        ready[1] = -1;
    }
    // The pid file comes first, the control socket when the daemon is ready to answer.
    if (FILE* f = std::fopen(pid_path.c_str(), "w")) {
        std::fprintf(f, "%d\n", getpid());
        std::fclose(f);
    }
    if (const char* d = std::getenv("FAKE_MPS_START_DELAY_MS")) usleep(static_cast<useconds_t>(std::atoi(d)) * 1000);

    sockaddr_un addr = control_address();
    unlink(addr.sun_path);
    listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listen_fd_ < 0 || bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        listen(listen_fd_, 64) != 0) {
        log(std::string("Cannot listen on ") + addr.sun_path + ": " + std::strerror(errno));
        return 1;
    }
    log("Control daemon started, pid " + std::to_string(getpid()) + ", device " +
        env_or("CUDA_VISIBLE_DEVICES", "(all)"));

    signal(SIGPIPE, SIG_IGN);
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigaddset(&term, SIGINT);
    // Blocked and polled between connections: SIGTERM ends the daemon cleanly, like quit.
    sigprocmask(SIG_BLOCK, &term, nullptr);
    bool quit = false;
    while (!quit) {
        pollfd p{listen_fd_, POLLIN, 0};
        int rc = poll(&p, 1, 200);
        reap();
        sigset_t pending;
        sigpending(&pending);
        if (sigismember(&pending, SIGTERM) || sigismember(&pending, SIGINT)) break;
        if (rc <= 0) continue;
        int c = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0) continue;
        std::string line;
        char buf[512];
        ssize_t n;
        while ((n = read(c, buf, sizeof buf)) > 0) line.append(buf, static_cast<size_t>(n));
        while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
        std::string answer = handle(line, quit);
        ssize_t w = write(c, answer.data(), answer.size());
        (void)w;
        close(c);
    }
    close(listen_fd_);
    shutdown();
    return 0;
}

// Client: one connection per command, the answer is relayed to stdout.
int client() {
    sockaddr_un addr = control_address();
    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.empty()) continue;
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
            std::fprintf(stderr, "Cannot find MPS control daemon process\n");
            if (fd >= 0) close(fd);
            return 1;
        }
        line += "\n";
        ssize_t w = write(fd, line.data(), line.size());
        shutdown(fd, SHUT_WR);
        char buf[4096];
        ssize_t n;
        while ((n = read(fd, buf, sizeof buf)) > 0) std::fwrite(buf, 1, static_cast<size_t>(n), stdout);
        close(fd);
        if (w < 0) return 1;
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 1) return client();
    std::string mode = argv[1];
    if (argc == 2 && (mode == "-d" || mode == "-f")) return Daemon().run(mode == "-f");
    std::fprintf(stderr, "usage: nvidia-cuda-mps-control [-d | -f]\n");
    return 1;
}
