// A fake nvidia-cuda-mps-control that behaves like NVIDIA's real one (535, checked on a
// machine without a GPU) in everything xpart sees, and adds what needs a GPU: a server that
// stays up and serves.
//   -f   foreground: log lines on stdout, like the real daemon;
//   -d   daemonize (fork, setsid, the parent exits 0 once detached), log to
//        $CUDA_MPS_LOG_DIRECTORY/control.log;
//   none a client: each stdin line is one command relayed over the "control" unix socket in
//        the pipe directory, the daemon's answer printed; no daemon: "Cannot find MPS control
//        daemon process", exit 1.
// Like the real daemon it writes NO pid file; the pipe directory (made if missing) holds
// `control` (socket, 0666), `control_lock` (0666, flocked while a daemon runs: a second one
// says "An instance of this daemon is already running" and exits 1), `control_privileged`
// (socket, 0755) and `log` (fifo). quit removes only the fifo; a SIGKILLed daemon leaves all.
// Both sockets are SOCK_SEQPACKET, as the real daemon's (a stream client gets EPROTOTYPE).
// Log lines: "[YYYY-mm-dd HH:MM:SS.mmm Control <pid>] Cmd:quit".
// Beyond the real daemon, so that a daemon gone for no visible reason explains itself: each
// command is logged with its client ("Client: pid 12 uid 1000 (cmdline), parent 10 (cmdline)",
// from SO_PEERCRED), and each catchable signal that ends it with its sender ("Signal 15
// (Terminated) from pid ... (cmdline), parent ..."); SIGTERM/SIGINT still end it cleanly like
// quit, any other such signal then ends it by that signal as it would have.
// Commands: quit, get_server_list, get_client_list <pid>, start_server -uid <uid>,
// set_default_active_thread_percentage <p>, get_default_active_thread_percentage.
// A started "server" is a real child process (it sleeps), so get_server_list lists real pids.
// FAKE_MPS_START_DELAY_MS delays readiness (to test waiting ranks).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>

namespace {

std::string env_or(const char* name, const char* fallback) {
    const char* v = std::getenv(name);
    return v && *v ? v : fallback;
}

std::string pipe_dir() { return env_or("CUDA_MPS_PIPE_DIRECTORY", "/tmp/nvidia-mps"); }
std::string log_dir() { return env_or("CUDA_MPS_LOG_DIRECTORY", "/var/log/nvidia-mps"); }

// A /proc file of another process, read with plain read(2): that process may exit and be
// reaped between open and read (ESRCH), as a client that connected and left does. An ifstream
// would throw from its buffer there and take the daemon down with it.
std::optional<std::string> read_proc_file(const std::string& path) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    std::string out;
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
    close(fd);
    if (n < 0) return std::nullopt;
    return out;
}

// "pid 12 uid 1000 (cmdline), parent 10 (cmdline)": who a client or a signal's sender is. A
// process gone already (a `kill` that exited) says so; its pid and uid are still known.
std::string describe_process(pid_t pid, uid_t uid) {
    auto cmdline = [](pid_t p) {
        auto s = read_proc_file("/proc/" + std::to_string(p) + "/cmdline");
        if (!s) return std::string("gone");
        if (s->empty()) return std::string("no command line: a zombie or a kernel thread");
        while (!s->empty() && s->back() == '\0') s->pop_back();
        for (char& c : *s)
            if (c == '\0') c = ' ';
        return *s;
    };
    std::string out = "pid " + std::to_string(pid) + " uid " + std::to_string(uid) + " (" + cmdline(pid) + ")";
    auto stat = pid > 0 ? read_proc_file("/proc/" + std::to_string(pid) + "/stat") : std::nullopt;
    if (stat && stat->rfind(')') != std::string::npos) {
        // The parent is the second field after the command, which may hold spaces and ')'.
        std::istringstream rest(stat->substr(stat->rfind(')') + 1));
        std::string state;
        pid_t ppid = 0;
        if (rest >> state >> ppid)
            out += ", parent " + std::to_string(ppid) + " (" + cmdline(ppid) + ")";
    }
    return out;
}

// Signals whose default action ends the daemon and that a handler could catch: each is
// blocked and taken from the pending set (with its sender) in the daemon's loop.
sigset_t ending_signals() {
    sigset_t set;
    sigemptyset(&set);
    for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM,
                    SIGPROF, SIGXCPU, SIGXFSZ, SIGIO, SIGPWR, SIGSTKFLT})
        sigaddset(&set, sig);
    for (int sig = SIGRTMIN; sig <= SIGRTMAX; ++sig) sigaddset(&set, sig);
    return set;
}

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
    std::string handle(const std::string& line, const std::string& client, bool& quit);
    void reap();
    void shutdown();
    bool take_signal(const sigset_t& ending, int& sig);

    int listen_fd_ = -1;
    FILE* log_ = nullptr;
    bool foreground_ = false;
    std::map<unsigned, pid_t> servers_;  // uid -> server pid
    unsigned thread_percentage_ = 100;
};

void Daemon::log(const std::string& what) {
    timeval tv;
    gettimeofday(&tv, nullptr);
    char stamp[64];
    std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", std::localtime(&tv.tv_sec));
    FILE* out = foreground_ ? stdout : log_;
    if (!out) return;
    std::fprintf(out, "[%s.%03ld Control %6d] %s\n", stamp, static_cast<long>(tv.tv_usec / 1000),
                 getpid(), what.c_str());
    std::fflush(out);
}

void Daemon::reap() {
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
        for (auto it = servers_.begin(); it != servers_.end(); ++it)
            if (it->second == pid) {
                log("Server " + std::to_string(pid) + " exited with status 0");
                servers_.erase(it);
                break;
            }
}

std::string Daemon::handle(const std::string& line, const std::string& client, bool& quit) {
    std::istringstream in(line);
    std::string cmd;
    in >> cmd;
    log("Accepting connection...");
    log("NEW UI");
    log("Client: " + client);
    log("Cmd:" + line);
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
        const pid_t daemon = getpid();
        pid_t pid = fork();
        if (pid == 0) {
            // The "server": lives until the control daemon goes away. A daemon killed before
            // the signal was asked for sends none: then the server is already an orphan.
            // FAKE_MPS_SERVER_DELAY_MS (tests) widens the window before the signal is asked for.
            if (const char* d = std::getenv("FAKE_MPS_SERVER_DELAY_MS"))
                usleep(static_cast<useconds_t>(std::atoi(d)) * 1000);
            prctl(PR_SET_PDEATHSIG, SIGTERM);
            if (getppid() != daemon) _exit(0);
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

// A pending ending signal, logged with its sender; false when none is pending.
bool Daemon::take_signal(const sigset_t& ending, int& sig) {
    siginfo_t info{};
    const timespec now{0, 0};
    sig = sigtimedwait(&ending, &info, &now);
    if (sig <= 0) return false;
    std::string from = info.si_code == SI_USER || info.si_code == SI_TKILL || info.si_code == SI_QUEUE
                           ? "from " + describe_process(info.si_pid, info.si_uid)
                           : "from the kernel (si_code " + std::to_string(info.si_code) + ")";
    log("Signal " + std::to_string(sig) + " (" + strsignal(sig) + ") " + from);
    return true;
}

void Daemon::shutdown() {
    for (const auto& [uid, pid] : servers_) kill(pid, SIGTERM);
    for (const auto& [uid, pid] : servers_) waitpid(pid, nullptr, 0);
    servers_.clear();
    // Like the real daemon: the sockets and the lock file stay, the fifo goes.
    unlink((pipe_dir() + "/log").c_str());
    log("Exit with status 0");
}

int Daemon::run(bool foreground) {
    foreground_ = foreground;
    mkdir(pipe_dir().c_str(), 0755);
    // The real daemon's instance lock: held for the daemon's life.
    int lock = open((pipe_dir() + "/control_lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (lock < 0) {
        std::fprintf(stderr, "Cannot open %s/control_lock: %s\n", pipe_dir().c_str(), std::strerror(errno));
        return 1;
    }
    fchmod(lock, 0666);
    if (flock(lock, LOCK_EX | LOCK_NB) != 0) {
        std::fprintf(stderr, "An instance of this daemon is already running\n");
        return 1;
    }
    if (!foreground) {
        log_ = std::fopen((log_dir() + "/control.log").c_str(), "a");
        if (!log_) {
            std::fprintf(stderr, "Cannot open %s/control.log: %s\n", log_dir().c_str(), std::strerror(errno));
            return 1;
        }
        int ready[2];
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
        ssize_t n = write(ready[1], "y", 1);
        (void)n;
        close(ready[1]);
    }
    if (const char* d = std::getenv("FAKE_MPS_START_DELAY_MS")) usleep(static_cast<useconds_t>(std::atoi(d)) * 1000);

    sockaddr_un addr = control_address();
    unlink(addr.sun_path);
    listen_fd_ = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (listen_fd_ < 0 || bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        listen(listen_fd_, 64) != 0) {
        log(std::string("Cannot listen on ") + addr.sun_path + ": " + std::strerror(errno));
        return 1;
    }
    chmod(addr.sun_path, 0666);
    // The privileged socket and the log fifo exist as with the real daemon; nothing uses them.
    sockaddr_un priv = addr;
    std::snprintf(priv.sun_path, sizeof priv.sun_path, "%s/control_privileged", pipe_dir().c_str());
    unlink(priv.sun_path);
    int priv_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (priv_fd >= 0 && bind(priv_fd, reinterpret_cast<sockaddr*>(&priv), sizeof priv) == 0) {
        listen(priv_fd, 1);
        chmod(priv.sun_path, 0755);
    }
    const std::string fifo = pipe_dir() + "/log";
    unlink(fifo.c_str());
    mkfifo(fifo.c_str(), 0777);
    chmod(fifo.c_str(), 0777);
    log("Starting control daemon using socket " + std::string(addr.sun_path));
    log("To connect CUDA applications to this daemon, set env CUDA_MPS_PIPE_DIRECTORY=" + pipe_dir());

    signal(SIGPIPE, SIG_IGN);
    // Blocked and taken between connections: SIGTERM ends the daemon cleanly, like quit; the
    // others end it as their default action would, once their sender is logged.
    const sigset_t ending = ending_signals();
    sigprocmask(SIG_BLOCK, &ending, nullptr);
    bool quit = false;
    int sig = 0;
    while (!quit) {
        pollfd p{listen_fd_, POLLIN, 0};
        int rc = poll(&p, 1, 200);
        reap();
        if (take_signal(ending, sig)) break;
        if (rc <= 0) continue;
        int c = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0) continue;
        std::string line;
        char buf[512];
        ssize_t n;
        while ((n = read(c, buf, sizeof buf)) > 0) line.append(buf, static_cast<size_t>(n));
        while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
        std::string answer;
        if (line.empty()) {  // a connection that sent nothing (a readiness probe), as the real one logs it
            log("Accepting connection...");
            log("NEW UI");
        } else {
            // Who sent the command: a quit from anywhere but xpart's stop is then plain to see.
            ucred peer{};
            socklen_t len = sizeof peer;
            const std::string client = getsockopt(c, SOL_SOCKET, SO_PEERCRED, &peer, &len) == 0
                                           ? describe_process(peer.pid, peer.uid)
                                           : std::string("unknown: ") + std::strerror(errno);
            answer = handle(line, client, quit);
        }
        ssize_t w = write(c, answer.data(), answer.size());
        (void)w;
        close(c);
        log("UI closed");
    }
    if (sig > 0 && sig != SIGTERM && sig != SIGINT) {
        // Ends as it would have unlogged: by that signal's default action, no cleanup (its
        // servers go by their parent-death signal).
        signal(sig, SIG_DFL);
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, sig);
        raise(sig);
        sigprocmask(SIG_UNBLOCK, &one, nullptr);
        _exit(128 + sig);  // not reached: a default action that ends the process
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
        int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
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
