#include "tests/fuzz/fuzz_target.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <set>

namespace xpart::fuzz {

std::map<std::string, Harness>& harnesses() {
    static std::map<std::string, Harness> table;  // filled by static constructors: built on first use
    return table;
}

std::map<std::string, std::string> env_of(std::string_view text) {
    std::map<std::string, std::string> env;
    while (!text.empty()) {
        std::size_t eol = text.find('\n');
        std::string_view line = text.substr(0, eol);
        text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
        const std::size_t eq = line.find('=');
        if (eq != std::string_view::npos) env[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
    }
    return env;
}

std::vector<std::string> words_of(std::string_view text) {
    std::vector<std::string> words;
    std::size_t pos = 0;
    while ((pos = text.find_first_not_of(" \t\n", pos)) != std::string_view::npos) {
        const std::size_t end = text.find_first_of(" \t\n", pos);
        words.emplace_back(text.substr(pos, end - pos));
        pos = end;
    }
    return words;
}

namespace {
struct TempRoot {
    std::string path;
    TempRoot() {
        const char* tmp = getenv("TMPDIR");
        std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/xpart-fuzz.XXXXXX";
        if (!mkdtemp(tmpl.data())) {
            std::perror("mkdtemp");
            std::abort();
        }
        path = tmpl;
    }
    ~TempRoot() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
};
}  // namespace

const std::string& temp_root_with(const std::string& node_path, std::string_view content) {
    static TempRoot root;
    static std::set<std::string> made;  // directories once: this runs at every execution
    const std::string file = root.path + node_path;
    if (made.insert(node_path).second) std::filesystem::create_directories(std::filesystem::path(file).parent_path());
    const int fd = open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, content.data(), content.size()) != static_cast<ssize_t>(content.size())) {
        std::perror(file.c_str());
        std::abort();
    }
    close(fd);
    return root.path;
}

}  // namespace xpart::fuzz
