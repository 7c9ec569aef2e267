// gres.conf against the hardware. A record is tied to a partition by its device files (what
// Slurm uses to constrain devices), then its Type= and Cores= are compared. Every finding is
// one line an admin can act on: it names the record and what the hardware has.
#include "libxpart/slurm_text/gres_conf.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "libxpart/slurm_text/reshape_siblings.hpp"
#include "libxpart/text.hpp"

namespace xpart {

namespace {

struct PartitionSlot {
    std::size_t gpu_position = 0;
    const Gpu* gpu = nullptr;
    const Partition* partition = nullptr;
    std::set<std::string> files;   // non-shared node paths
    const GresConfRecord* claimed_by = nullptr;
};

std::string join(const std::vector<std::string>& items, const char* sep) {
    std::string out;
    for (const std::string& s : items) out += (out.empty() ? "" : sep) + s;
    return out;
}

bool iequals(const std::string& a, const std::string& b) { return to_lower(a) == to_lower(b); }

// "GPU 0 MIG 1g.10gb gi 7 ci 0 (MIG-...)", "GPU 1 XCP 3 cpx (GPU-...)", "GPU 2 a100 (GPU-...)".
std::string describe(const PartitionSlot& s) {
    const Partition& p = *s.partition;
    std::string out = "GPU " + std::to_string(s.gpu_position) + " ";
    if (s.gpu->vendor == Vendor::Amd)
        out += "XCP " + std::to_string(p.index) + " " + p.type;
    else if (p.gi >= 0)
        out += "MIG " + p.type + " gi " + std::to_string(p.gi) + " ci " + std::to_string(p.ci);
    else
        out += "whole GPU " + p.type;
    return out + " (" + p.uuid + ")";
}

class Checker {
public:
    Checker(const Node& node, const GresCheckOptions& options) : options_(options) {
        for (std::size_t g = 0; g < node.gpus.size(); ++g) {
            for (const Partition& p : node.gpus[g].partitions) {
                PartitionSlot slot{g, &node.gpus[g], &p, {}, nullptr};
                for (const DeviceFile& f : p.device_files) {
                    if (f.shared)
                        shared_.insert(f.path);
                    else
                        slot.files.insert(f.path);
                }
                slots_.push_back(std::move(slot));
            }
        }
        for (std::size_t i = 0; i < slots_.size(); ++i)
            for (const std::string& f : slots_[i].files) owners_[f].push_back(i);
        // The files a reshape sibling's record names a partition by (reshape_siblings.hpp):
        // only where a GPU has partitions, as siblings' GPUs do (MIG, AMD modes).
        for (const Gpu& gpu : node.gpus)
            if (gpu.vendor == Vendor::Amd || gpu.mode == PartitionMode::Mig) {
                const auto files = sibling_files(gpu, RootFs("/"));
                gpu_files_.emplace_back(files.begin(), files.end());
            } else {
                gpu_files_.emplace_back();
            }
    }

    void check_record(const GresConfRecord& r) {
        if (r.device_paths().empty()) return check_count_only(r);
        const std::string key = r.multiple_files.empty() ? "File" : "MultipleFiles";
        if (!r.multiple_files.empty()) {
            if (auto gpu = gpu_named_by(r.multiple_files)) return check_gpu_named(r, *gpu);
            return check_unit(r, key, r.multiple_files);
        }
        for (const std::string& f : r.files) check_unit(r, key, {f});
    }

    void check_node(const Node& node) {
        for (std::size_t g = 0; g < node.gpus.size(); ++g) {
            const Gpu& gpu = node.gpus[g];
            if (gpu.mode == PartitionMode::MigPending)
                add(nullptr, "GPU " + std::to_string(g) + " (" + gpu.uuid + ", " + gpu.pci_bus_id +
                                 "): MIG mode change pending: reset the GPU, then regenerate "
                                 "gres.conf");
        }
        for (const PartitionSlot& s : slots_) {
            if (s.claimed_by) continue;
            Node one;
            Gpu gpu = *s.gpu;
            gpu.partitions = {*s.partition};
            one.gpus.push_back(gpu);
            add(nullptr, "missing partition: " + describe(s) + " has no record; expected: " +
                             format_gres_record(generate_gres_records(one, options_.root)[0]));
        }
    }

    std::vector<GresMismatch> take() { return std::move(out_); }

private:
    void add(const GresConfRecord* r, const std::string& message, bool note = false) {
        out_.push_back({r ? r->file : options_.file, r ? r->line : 0, message, note});
    }

    // Host paths of a simulated node become node paths again.
    std::string node_path(const std::string& path) const {
        const std::string& root = options_.root.root();
        if (!options_.root.is_real_root() && path.size() > root.size() &&
            path.compare(0, root.size(), root) == 0 && path[root.size()] == '/')
            return path.substr(root.size());
        return path;
    }

    bool type_matches(const std::string& configured, const std::string& discovered) const {
        return iequals(configured, discovered) ||
               (options_.types_match && options_.types_match(configured, discovered));
    }

    // The GPU whose sibling files (and nothing else) `paths` are.
    std::optional<std::size_t> gpu_named_by(const std::vector<std::string>& paths) const {
        std::set<std::string> named;
        for (const std::string& p : paths) named.insert(node_path(p));
        for (std::size_t g = 0; g < gpu_files_.size(); ++g)
            if (!gpu_files_[g].empty() && gpu_files_[g] == named) return g;
        return std::nullopt;
    }

    // A reshape sibling's record names one partition of its type on GPU `g` by the GPU's
    // files: it claims the first such partition no record has named.
    void check_gpu_named(const GresConfRecord& r, std::size_t g) {
        const std::string written = "MultipleFiles=" + join(r.multiple_files, ",");
        std::vector<std::string> types;
        for (PartitionSlot& s : slots_) {
            if (s.gpu_position != g) continue;
            types.push_back(s.partition->type);
            if (s.claimed_by || r.type.empty() || !type_matches(r.type, s.partition->type)) continue;
            s.claimed_by = &r;
            return compare_type_and_cores(r, s);
        }
        add(&r, "type differs: " + (r.type.empty() ? std::string("no Type=") : "Type=" + r.type) +
                    " " + written + ": these are GPU " + std::to_string(g) +
                    "'s files, which name one of its partitions by type, and it has no " +
                    (r.type.empty() ? std::string("untyped partition") : "other of type " + r.type) +
                    " (it has " + join(types, ", ") + ")");
    }

    // A record without files only counts: it claims that many partitions of its type.
    void check_count_only(const GresConfRecord& r) {
        const std::uint64_t wanted = r.effective_count();
        std::uint64_t got = 0;
        for (PartitionSlot& s : slots_) {
            if (got == wanted) break;
            if (s.claimed_by || (!r.type.empty() && !type_matches(r.type, s.partition->type)))
                continue;
            s.claimed_by = &r;
            ++got;
        }
        const std::string what = r.type.empty() ? "untyped" : "of type " + r.type;
        if (got < wanted)
            add(&r, "count differs: Count=" + std::to_string(wanted) + " Type=" + r.type +
                        ", the hardware has " + std::to_string(got) + " partitions " + what +
                        " not named by another record");
    }

    void check_unit(const GresConfRecord& r, const std::string& key,
                    const std::vector<std::string>& paths) {
        const std::string written = key + "=" + join(paths, ",");
        std::set<std::string> known;
        std::vector<std::string> unknown;
        for (const std::string& raw : paths) {
            const std::string p = node_path(raw);
            if (shared_.count(p))
                add(&r, written + ": " + p + " is shared by every partition; naming it in one "
                                             "record denies it to jobs on the others");
            else if (owners_.count(p))
                known.insert(p);
            else
                unknown.push_back(p);
        }
        if (known.empty() && !unknown.empty()) {
            add(&r, "extra record: " + written + ": no partition on this node uses " +
                        join(unknown, ", "));
            return;
        }
        for (const std::string& p : unknown)
            add(&r, written + ": " + p + " belongs to no partition on this node");
        if (known.empty()) return;

        PartitionSlot* exact = nullptr;  // the first unclaimed one with these files
        for (PartitionSlot& s : slots_)
            if (s.files == known && (!exact || (exact->claimed_by && !s.claimed_by))) exact = &s;
        if (!exact) return report_files_differ(r, written, known);
        if (exact->claimed_by) {
            add(&r, "duplicate record: " + written + ": " + describe(*exact) +
                        " is already named at line " + std::to_string(exact->claimed_by->line));
            return;
        }
        exact->claimed_by = &r;
        compare_type_and_cores(r, *exact);
    }

    // The files are a partition's, but not exactly one partition's set. Name the partition
    // a file belongs to alone (a MIG cap file, an XCP render node) and claim it.
    void report_files_differ(const GresConfRecord& r, const std::string& written,
                             const std::set<std::string>& known) {
        for (const std::string& f : known) {
            const std::vector<std::size_t>& owners = owners_.at(f);
            if (owners.size() != 1 || slots_[owners[0]].claimed_by) continue;
            PartitionSlot& s = slots_[owners[0]];
            s.claimed_by = &r;
            add(&r, "files differ: " + written + ", " + describe(s) + " has " +
                        join(std::vector<std::string>(s.files.begin(), s.files.end()), ","));
            return;
        }
        add(&r, written + ": these files are not the files of any one partition");
    }

    void compare_type_and_cores(const GresConfRecord& r, const PartitionSlot& s) {
        const std::string& hw = s.partition->type;
        if (r.type.empty())
            add(&r, "type differs: no Type=, the hardware has " + hw + " (" + describe(s) + ")");
        else if (iequals(r.type, hw))
            (void)0;  // agrees
        else if (options_.types_match && options_.types_match(r.type, hw))
            add(&r, "Type=" + r.type + " accepted as " + hw +
                        " (MIG profile names drift between drivers)", true);
        else
            add(&r, "type differs: Type=" + r.type + ", the hardware has " + hw + " (" +
                        describe(s) + ")");
        if (r.cores && *r.cores != s.gpu->cpus)
            add(&r, "cores differ: Cores=" + format_cpu_list(*r.cores) + ", GPU " +
                        std::to_string(s.gpu_position) + " is local to " +
                        (s.gpu->cpus.empty() ? std::string("no CPU list")
                                             : "CPUs " + format_cpu_list(s.gpu->cpus)));
    }

    const GresCheckOptions& options_;
    std::vector<PartitionSlot> slots_;
    std::set<std::string> shared_;
    std::map<std::string, std::vector<std::size_t>> owners_;  // file -> partitions using it
    std::vector<std::set<std::string>> gpu_files_;  // per GPU; empty: records cannot name it so
    std::vector<GresMismatch> out_;
};

}  // namespace

std::string GresMismatch::to_string() const {
    std::string out = file;
    if (line > 0) out += ":" + std::to_string(line);
    return out + ": " + (note ? "note: " : "") + message;
}

std::vector<GresMismatch> check_gres_records(const std::vector<GresConfRecord>& records,
                                             const Node& node, const GresCheckOptions& options) {
    Checker checker(node, options);
    for (const GresConfRecord& r : records)
        if (iequals(r.name, "gpu")) checker.check_record(r);
    checker.check_node(node);
    return checker.take();
}

std::vector<GresMismatch> check_node_gres_conf(const GresConf& conf, const std::string& node_name,
                                               const Node& node, const GresCheckOptions& options) {
    std::vector<GresConfRecord> records;
    std::set<std::string> other_nodes;
    for (const GresConfRecord& r : records_for_node(conf, node_name)) {
        if (!iequals(r.name, "gpu")) continue;
        // GPUs discovery could not read are said by discovery; a count without files would
        // only repeat that. A record naming files is still checked.
        if (node.errors.empty() || !r.device_paths().empty()) records.push_back(r);
    }
    if (records.empty()) {
        for (const GresConfRecord& r : conf.records)
            if (iequals(r.name, "gpu")) other_nodes.insert(r.node_names.begin(), r.node_names.end());
        std::vector<std::string> named(other_nodes.begin(), other_nodes.end());
        std::string note = "no Name=gpu record for NodeName=" + node_name +
                           ": nothing to compare; xpart's gres/gpu registers the partitions it "
                           "discovers";
        if (!named.empty()) note += " (the records name " + join(named, ",") + ")";
        return {{options.file, 0, note, true}};
    }
    return check_gres_records(records, node, options);
}

bool has_differences(const std::vector<GresMismatch>& mismatches) {
    return std::any_of(mismatches.begin(), mismatches.end(),
                       [](const GresMismatch& m) { return !m.note; });
}

}  // namespace xpart
