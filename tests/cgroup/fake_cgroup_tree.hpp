// Fake cgroup directories and a fake /proc in a temporary directory, for the sweep's tests.
// A fake cgroup is a directory with a cgroup.procs file; removing it (FakeCgroupTree::remover)
// deletes that file and then rmdirs, so, as on cgroupfs, a directory with a child directory
// cannot be removed.
#pragma once

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cgroup/rank_leftover.hpp"

namespace xpart::cgroup::testing {

class FakeCgroupTree {
public:
    FakeCgroupTree() {
        char tmpl[] = "/tmp/xpart-sweep-test.XXXXXX";
        const char* made = ::mkdtemp(tmpl);
        root_ = made ? made : "";
        std::filesystem::create_directories(root_ + "/proc");
    }
    ~FakeCgroupTree() {
        std::error_code ec;
        std::filesystem::remove_all(root_, ec);
    }
    FakeCgroupTree(const FakeCgroupTree&) = delete;
    FakeCgroupTree& operator=(const FakeCgroupTree&) = delete;

    const std::string& root() const { return root_; }
    std::string path(const std::string& rel) const { return root_ + "/cg/" + rel; }

    // A cgroup (and its parents, each a cgroup) holding the given pids.
    void cgroup(const std::string& rel, const std::vector<int>& pids = {}) {
        std::string at = root_ + "/cg";
        for (const auto& part : split_path(rel)) {
            at += "/" + part;
            if (!std::filesystem::exists(at)) {
                std::filesystem::create_directories(at);
                write(at + "/cgroup.procs", "");
            }
        }
        std::string text;
        for (int p : pids) text += std::to_string(p) + "\n";
        write(at + "/cgroup.procs", text);
    }
    // A process in the fake /proc: /proc/<pid>/stat with that comm and state.
    void process(int pid, const std::string& comm, char state = 'S') {
        const std::string dir = root_ + "/proc/" + std::to_string(pid);
        std::filesystem::create_directories(dir);
        write(dir + "/stat", std::to_string(pid) + " (" + comm + ") " + state + " 1 1 1 0 -1 4194560\n");
    }
    bool exists(const std::string& rel) const { return std::filesystem::exists(path(rel)); }

    SweepHost host(bool dry_run = false) {
        SweepHost h;
        h.proc = RootFs(root_);
        h.dry_run = dry_run;
        h.remove = [this](Hierarchy, const std::string& dir) -> Status {
            removed.push_back(dir);
            ::unlink((dir + "/cgroup.procs").c_str());
            if (::rmdir(dir.c_str()) != 0) return Error{"rmdir " + dir + " failed"};
            return ok_status();
        };
        return h;
    }
    std::vector<std::string> removed;  // every directory the sweep asked to remove

private:
    static void write(const std::string& file, const std::string& text) { std::ofstream(file) << text; }
    static std::vector<std::string> split_path(const std::string& rel) {
        std::vector<std::string> out;
        std::string cur;
        for (char c : rel) {
            if (c == '/') {
                if (!cur.empty()) out.push_back(cur);
                cur.clear();
            } else {
                cur += c;
            }
        }
        if (!cur.empty()) out.push_back(cur);
        return out;
    }
    std::string root_;
};

}  // namespace xpart::cgroup::testing
