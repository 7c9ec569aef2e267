#include "sim/kfd_hold.hpp"

#include <signal.h>
#include <unistd.h>

#include <cstdio>

#include "sim/kfd_registry.hpp"
#include "sim/tree.hpp"

namespace xpart::sim {

int run_kfd_hold(const std::string& root, const std::string& bdf) {
    // Blocked before registering: a SIGTERM from a quick harness still unregisters.
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    ::sigprocmask(SIG_BLOCK, &stop, nullptr);
    auto fail = [](const std::string& message) {
        std::fprintf(stderr, "xpart-sim kfd-hold: %s\n", message.c_str());
        return 1;
    };
    if (auto st = check_sim_root(root); !st) return fail(st.error().message);
    auto ids = kfd_gpu_ids(root, bdf);
    if (!ids) return fail(ids.error().message);
    const int pid = static_cast<int>(::getpid());
    if (auto st = register_kfd_process(root, pid, *ids); !st) {
        unregister_kfd_process(root, pid);
        return fail(st.error().message);
    }
    std::printf("ready\n");
    std::fflush(stdout);
    int signal = 0;
    ::sigwait(&stop, &signal);
    unregister_kfd_process(root, pid);
    return 0;
}

}  // namespace xpart::sim
