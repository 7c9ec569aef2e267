// Test helpers for AMD trees: a unique temporary root (mkdtemp, removed afterwards), a node
// built from a simulator spec, and small file edits to break it on purpose.
#pragma once

#include <ftw.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "sim/spec.hpp"
#include "sim/tree.hpp"

namespace xpart::testing {

class TempRoot {
public:
    // In tmpfs when there is one: a 64-XCP tree is ~8000 files, and creating and removing
    // them on a shared disk takes seconds instead of a tenth.
    TempRoot() {
        std::string tmpl = std::string(::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp") +
                           "/xpart-amd-test.XXXXXX";
        if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp " + tmpl + " failed");
        path_ = tmpl;
    }
    ~TempRoot() {
        ::nftw(path_.c_str(), [](const char* p, const struct stat*, int, struct FTW*) {
            return ::remove(p);
        }, 64, FTW_DEPTH | FTW_PHYS);
    }
    TempRoot(const TempRoot&) = delete;
    TempRoot& operator=(const TempRoot&) = delete;
    const std::string& path() const { return path_; }
    std::string host(const std::string& node_path) const { return path_ + node_path; }

    void write(const std::string& node_path, const std::string& text) const {
        std::string host_path = host(node_path);
        for (std::size_t pos = path_.size() + 1; pos < host_path.size(); ++pos)
            if (host_path[pos] == '/') ::mkdir(host_path.substr(0, pos).c_str(), 0755);
        std::ofstream(host_path, std::ios::trunc) << text;
    }
    std::string read(const std::string& node_path) const {
        std::ifstream in(host(node_path));
        std::stringstream ss;
        ss << in.rdbuf();
        return ss.str();
    }
    // Replaces the first `from` in a file by `to`; throws when absent (a test that edits
    // nothing would pass for the wrong reason).
    void replace(const std::string& node_path, const std::string& from, const std::string& to) const {
        std::string text = read(node_path);
        std::size_t at = text.find(from);
        if (at == std::string::npos)
            throw std::runtime_error(node_path + ": '" + from + "' not found");
        text.replace(at, from.size(), to);
        write(node_path, text);
    }
    void symlink(const std::string& node_path, const std::string& target) const {
        ::unlink(host(node_path).c_str());
        if (::symlink(target.c_str(), host(node_path).c_str()) != 0)
            throw std::runtime_error("symlink " + node_path);
    }
    void remove(const std::string& node_path) const { ::unlink(host(node_path).c_str()); }

private:
    std::string path_;
};

inline std::string srcdir() {
    const char* d = std::getenv("XPART_SRCDIR");
    return d && *d ? d : ".";
}

// Builds the tree of a spec (text or a file under sim/specs) into `root`; throws on error.
inline void build_spec_text(const TempRoot& root, const std::string& text) {
    auto spec = sim::parse_spec(text, "inline.json");
    if (!spec) throw std::runtime_error(spec.error().message);
    if (auto st = sim::build_tree(*spec, root.path()); !st) throw std::runtime_error(st.error().message);
}
inline void build_spec_file(const TempRoot& root, const std::string& name) {
    auto spec = sim::load_spec(srcdir() + "/sim/specs/" + name + ".json");
    if (!spec) throw std::runtime_error(spec.error().message);
    if (auto st = sim::build_tree(*spec, root.path()); !st) throw std::runtime_error(st.error().message);
}

}  // namespace xpart::testing
