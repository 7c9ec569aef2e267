// Runs a built program and captures its exit status, stdout and stderr (CLI tests).
#pragma once

#include <string>
#include <vector>

namespace xpart::test {

struct CommandResult {
    int exit_code = -1;  // -1: did not exit normally
    std::string out;
    std::string err;
};

// argv[0] is a path; no shell is involved. XPART_ROOT and XPART_NVML_LIBRARY are cleared in
// the child so the caller's environment cannot leak into a test.
CommandResult run_command(const std::vector<std::string>& argv);

// Lines of `text` without their '\n' (a last line without '\n' counts too).
std::vector<std::string> lines_of(const std::string& text);

// $XPART_BUILDDIR / $XPART_SRCDIR (set by `make check`); fails the test when unset.
std::string build_dir();
std::string source_dir();

// A fresh directory under $TMPDIR (or /tmp), removed with its contents on destruction.
class TempDir {
public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

std::string read_text(const std::string& path);
void write_text(const std::string& path, const std::string& text);

}  // namespace xpart::test
