// gres.conf as Slurm 22.05 reads it: parse it, generate it from a discovered node, and check
// it against the node (the model is `mig-parted assert`). Plain structs, no Slurm types: the
// CLI and the gres plugin both call these on records they hold.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libxpart/nvidia/mig_naming.hpp"
#include "libxpart/node.hpp"
#include "libxpart/result.hpp"
#include "libxpart/root_fs.hpp"

namespace xpart {

// One gres.conf record (one logical line, after `\` continuation). Lists are expanded: File=
// /dev/nvidia[0-1] gives two files, NodeName=n[1-2] two names, Cores=0-1 two cores.
struct GresConfRecord {
    std::string file;                         // gres.conf path, for messages ("" if generated)
    unsigned line = 0;                        // first physical line of the record (1-based)
    std::vector<std::string> node_names;      // NodeName=; empty: the record is for every node
    std::string name;                         // Name= ("gpu"), as written
    std::string type;                         // Type=; "" when absent
    std::optional<std::uint64_t> count;       // Count= with its suffix applied; nullopt if absent
    std::vector<std::string> files;           // File= / Files=
    std::vector<std::string> multiple_files;  // MultipleFiles= (one GRES, several files)
    std::optional<std::vector<unsigned>> cores;  // Cores= / CPUs=; nullopt when absent
    std::string flags;                        // Flags= as written (tokens checked when parsed)
    std::string links;                        // Links= as written
    std::string autodetect;                   // AutoDetect= on this NodeName line; "" if absent

    // The GRES count Slurm derives: Count=, else the number of File= entries, else 1.
    std::uint64_t effective_count() const;
    // files, or multiple_files when those are given.
    const std::vector<std::string>& device_paths() const {
        return multiple_files.empty() ? files : multiple_files;
    }
};

struct GresConf {
    std::string autodetect;  // a global `AutoDetect=` line; "" when absent
    // File order (the order Slurm numbers GRES indices in). A `NodeName=... AutoDetect=...`
    // line without Name= is kept as a record with an empty name (node-local AutoDetect).
    std::vector<GresConfRecord> records;
};

// Parses gres.conf text. `file` names the source in messages. Every error is one line,
// "<file>:<line>: <Key>=<value>: <why>"; nothing is returned half-parsed.
Result<GresConf> parse_gres_conf(std::string_view text, const std::string& file);
// Reads `node_path` through the root prefix and parses it.
Result<GresConf> read_gres_conf(const RootFs& root, const std::string& node_path);

// The records a node named `node_name` uses: those without NodeName= and those whose
// NodeName= list holds it. Like Slurm, the name is matched exactly.
std::vector<GresConfRecord> records_for_node(const GresConf& conf, const std::string& node_name);

// Slurm's hostlist expansion as used for NodeName= and File=: "n[01-03,7],x" ->
// n01 n02 n03 n7 x (zero padding kept; several bracket groups multiply).
// Error: a one-line reason (caller adds file, line and key).
Result<std::vector<std::string>> expand_hostlist(std::string_view list);

// One record per partition of `node`, in discovery order (the order Slurm indices follow):
// Name=gpu Type=<partition type>, the partition's non-shared device files as host paths
// through `root` (MultipleFiles= when there are several, File= when one), Cores=<GPU cpus>.
std::vector<GresConfRecord> generate_gres_records(const Node& node, const RootFs& root);
// The gres.conf line for a record: "Name=gpu Type=1g.10gb MultipleFiles=a,b Cores=0-3".
std::string format_gres_record(const GresConfRecord& record);

struct GresMismatch {
    std::string file;  // gres.conf path
    unsigned line = 0;  // 0: about the file as a whole (a partition no record names)
    std::string message;  // one line, without the file:line prefix
    bool note = false;    // true: accepted, worth saying (type drift); not a difference

    // "<file>:<line>: <message>" (line left out when 0).
    std::string to_string() const;
};

// Decides whether a configured Type= names a discovered type despite driver drift
// ("3g.39gb" vs "3g.40gb"). Called only when the two differ (case-insensitively).
using TypeMatcher = std::function<bool(const std::string& configured,
                                       const std::string& discovered)>;

struct GresCheckOptions {
    RootFs root;               // to accept host paths of a simulated node's device files
    std::string file;          // gres.conf path used for whole-file findings
    // Default: mig_types_match (libxpart/nvidia/mig_naming.hpp), which accepts driver drift and
    // nothing else. Empty: types must be equal (case-insensitively).
    TypeMatcher types_match = mig_types_match;
};

// Compares the node's `gpu` records (others are ignored) with the hardware. Each difference is
// one entry naming the record's file:line and what the hardware has: type differs, missing
// partition, extra record, count differs, file of no partition, shared file in a record,
// cores differ, record naming no files, duplicate record, MIG mode change pending. Empty
// (or notes only): they agree.
std::vector<GresMismatch> check_gres_records(const std::vector<GresConfRecord>& records,
                                             const Node& node,
                                             const GresCheckOptions& options);

// The one check of a gres.conf against the node, run by slurmd (gres_node.hpp) and by `xpart
// discover --check`: the `gpu` records for `node_name` (records_for_node) through
// check_gres_records. A record naming only the files of a MIG or AMD GPU (a reshape sibling's,
// reshape_siblings.hpp) names one partition of its Type on that GPU. Without any record for
// the node there is nothing to compare: one note saying so. While discovery could not read
// some GPUs (node.errors), records without files are not compared.
std::vector<GresMismatch> check_node_gres_conf(const GresConf& conf, const std::string& node_name,
                                               const Node& node, const GresCheckOptions& options);

// True when any entry is a difference rather than a note.
bool has_differences(const std::vector<GresMismatch>& mismatches);

}  // namespace xpart
