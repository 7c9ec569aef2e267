// `xpart geometry`: each GPU's MIG geometry now, the profiles and placements its driver offers,
// and the geometries it could take (the site's named ones from xpart.conf Geometry=, and each
// profile alone); with --gres, only those that would serve the request.
// `xpart reshape <geometry>` (root): reshapes GPUs to a named or written geometry through
// libxpart/reshape/mig_reshape (reshape_and_verify: a result discovery, as slurmd would see it, does
// not confirm is undone); --dry-run draws its plan (plan_reshape) and changes nothing.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdio.h>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/amd_reshape_cmd.hpp"
#include "cli/command.hpp"
#include "cli/discovery_args.hpp"
#include "cli/nvml_geometry.hpp"
#include "cli/slice_picture.hpp"
#include "libxpart/defaults.hpp"
#include "libxpart/discovery.hpp"
#include "libxpart/slurm_text/gpu_request.hpp"
#include "libxpart/reshape/mig_reshape.hpp"
#include "libxpart/nvidia/nvidia_presence.hpp"
#include "libxpart/text.hpp"
#include "libxpart/gres/xpart_conf.hpp"

namespace xpart::cli {

namespace {

constexpr const char* kDefaultConf = defaults::kXpartConf;

struct GeometryArgs {
    int gpu = -1;  // -1: every GPU
    std::string gres;
    std::string job;
    std::string target;
    std::string slurm_node;
    std::string conf = kDefaultConf;
    std::string nvml_library;
    bool json = false;
    bool allow_reboot_class = false;
    bool dry_run = false;
};

// `scontrol show <what> -o <id>`'s one line; `id` is checked first (letters, digits and
// "-_.", nothing a shell would read: it is a job id or a NodeName).
Result<std::string> scontrol_show(const std::string& what, const std::string& option, const std::string& id) {
    const bool plain = !id.empty() && id[0] != '-' &&
                       id.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") ==
                           std::string::npos;
    if (!plain) return Error{option + " '" + id + "': expected a " + what + " name or id"};
    FILE* p = ::popen(("scontrol show " + what + " -o " + id + " 2>&1").c_str(), "r");
    if (!p) return Error{option + " " + id + ": cannot run scontrol"};
    std::string out;
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    const int rc = ::pclose(p);
    if (rc != 0) {
        // One line: scontrol's last says why ("Node x not found", "fatal: ...").
        std::string why = trim(out);
        if (const auto nl = why.rfind('\n'); nl != std::string::npos) why = trim(why.substr(nl + 1));
        return Error{option + " " + id + ": scontrol: " + why};
    }
    return out;
}

// The GPUs job `id` asks for, from `scontrol show job -o`.
Result<GpuRequest> request_of_job(const std::string& id) {
    if (id.find_first_not_of("0123456789_") != std::string::npos)
        return Error{"--job '" + id + "': expected a job id (digits, or <job>_<task>)"};
    auto line = scontrol_show("job", "--job", id);
    if (!line) return line.error();
    return job_gpu_request(*line);
}

std::string slot_list(const GpuGeometry& g) {
    std::string out;
    for (const auto& i : g.instances)
        out += (out.empty() ? "" : ", ") + i.profile + "@" + std::to_string(i.start) + " gi " +
               std::to_string(i.gi);
    return out;
}

int run_geometry(const GeometryArgs& args, const GlobalOptions& global) {
    auto conf = load_xpart_conf(args.conf);
    if (!conf) return fail("geometry", conf.error().message);
    GpuRequest wanted;
    if (!args.gres.empty() || !args.job.empty()) {
        auto w = args.job.empty() ? parse_gpu_gres(args.gres) : request_of_job(args.job);
        if (!w) return fail("geometry", (args.job.empty() ? "--gres: " : "") + w.error().message);
        wanted = *w;
    }
    nlohmann::json doc = nlohmann::json::array();
    // AMD GPUs first (their modes come from sysfs); NVML only where NVIDIA GPUs are, or nothing else.
    auto amd = amd_geometry(global, args.gpu, wanted, conf->amd_type_naming, args.json, doc);
    if (!amd) return fail("geometry", amd.error().message);
    const RootFs root = global.root.empty() ? RootFs::from_env() : RootFs(global.root);
    if (*amd > 0 && !has_nvidia_gpus(root)) {
        if (args.json) std::cout << doc.dump(1) << "\n";
        return 0;
    }
    auto n = open_nvml(args.nvml_library.empty() ? conf->nvml_library : args.nvml_library);
    if (!n) return fail("geometry", n.error().message);
    auto gpus = gpus_of(*n, args.gpu);
    if (!gpus) return fail("geometry", gpus.error().message);
    for (unsigned i : *gpus) {
        auto g = read_gpu_geometry(*n->session, *n->control, i);
        if (!g) return fail("geometry", g.error().message);
        nlohmann::json j = {{"gpu", i}, {"name", g->name}, {"uuid", g->uuid},
                            {"mig", !g->mig_capable ? "unsupported" : g->mig_on ? "on" : "off"}};
        if (!g->mig_on) {
            if (!args.json)
                std::cout << "GPU " << i << "  " << g->name << "  " << g->uuid << "  MIG "
                          << j["mig"].get<std::string>() << "\n";
            doc.push_back(j);
            continue;
        }
        const std::string now = g->instances.empty() ? "none" : format_mig_geometry(g->profile_names(), g->profiles);
        j["geometry"] = now;
        j["memory_slices"] = mig_memory_slices(g->profiles);
        j["instances"] = nlohmann::json::array();
        for (const auto& inst : g->instances)
            j["instances"].push_back({{"profile", inst.profile}, {"start", inst.start},
                                      {"size", mig_instance_size(g->profiles, inst.profile)}, {"gi", inst.gi},
                                      {"compute_instances", inst.compute_instances}});
        j["profiles"] = nlohmann::json::array();
        for (const auto& p : g->profiles) {
            nlohmann::json starts = nlohmann::json::array();
            for (const auto& pl : p.placements) starts.push_back(pl.start);
            j["profiles"].push_back({{"name", p.name}, {"id", p.id}, {"max", p.max_count},
                                     {"memory_mib", p.memory_mib}, {"slices", p.slices},
                                     {"size", p.placements.empty() ? 0u : p.placements.front().size},
                                     {"starts", starts}});
        }
        j["could_take"] = nlohmann::json::array();
        for (const auto& c : candidates(*g, *conf)) {
            if (!wanted.empty() && !geometry_serves(c.profiles, wanted)) continue;
            j["could_take"].push_back({{"name", c.name}, {"geometry", format_mig_geometry(c.profiles, g->profiles)}});
        }
        if (!wanted.empty()) j["serves_now"] = geometry_serves(g->profile_names(), wanted);
        doc.push_back(j);
        if (args.json) continue;
        std::cout << "GPU " << i << "  " << g->name << "  " << g->uuid << "  MIG on\n";
        std::cout << "    now         " << now;
        if (!g->instances.empty()) std::cout << "  (" << slot_list(*g) << ")";
        std::cout << "\n";
        for (const auto& row : mig_picture(*g)) std::cout << row << "\n";
        std::cout << "    profiles   ";
        for (const auto& p : j["profiles"])
            std::cout << " " << p["name"].get<std::string>() << " x" << p["max"].get<unsigned>();
        std::cout << "\n    " << (wanted.empty() ? "could take " : "would serve") << " ";
        if (!wanted.empty() && j["serves_now"].get<bool>()) std::cout << "(now: yes) ";
        std::string list;
        for (const auto& c : j["could_take"]) {
            const std::string name = c["name"].get<std::string>();
            list += (list.empty() ? "" : ", ") +
                    (name.empty() ? c["geometry"].get<std::string>()
                                  : name + " (" + c["geometry"].get<std::string>() + ")");
        }
        std::cout << (list.empty() ? "none" : list) << "\n";
    }
    if (args.json) std::cout << doc.dump(1) << "\n";
    return 0;
}

// A Geometry= name of xpart.conf as what it stands for; anything else as written.
std::string named_target(const std::string& target, const XpartConf& conf) {
    for (const auto& g : conf.geometries)
        if (g.name == target) return g.profiles;
    return target;
}

// The target as MIG profile names: a Geometry= name of xpart.conf, else written out.
Result<std::vector<std::string>> resolve_target(const std::string& target, const XpartConf& conf) {
    auto names = parse_mig_geometry(named_target(target, conf));
    if (!names)
        return Error{"'" + target + "' is neither a Geometry= name of " + conf.file + " nor a geometry (" +
                     names.error().message + ")"};
    return names;
}

// The geometry each MIG GPU of `gpus` takes for a node's configured Gres (`scontrol show node`
// line; the reshape flow: the sibling NodeName being resumed).
Result<std::vector<std::string>> slurm_node_target(const std::string& node_line, const Nvml& n,
                                                    const std::vector<unsigned>& gpus) {
    unsigned mig = 0;
    for (unsigned i : gpus) {
        auto g = read_gpu_geometry(*n.session, *n.control, i);
        if (!g) return g.error();
        mig += g->mig_capable ? 1 : 0;
    }
    return node_gpu_geometry(node_line, mig);
}

// `xpart reshape --dry-run`: each MIG GPU's slices now and under the target, and whether the
// reshape would be made; nothing changes. 0 when every GPU would take the target (or has it),
// else 1 with a line for each that would refuse.
int dry_run_reshape(const Nvml& n, const std::vector<unsigned>& gpus, const std::vector<std::string>& target,
                    int one_gpu) {
    int status = 0;
    for (unsigned i : gpus) {
        auto g = read_gpu_geometry(*n.session, *n.control, i);
        if (!g) return fail("reshape", g.error().message);
        if (!g->mig_capable && one_gpu < 0) continue;  // whole-node reshape: MIG GPUs only
        auto plan = plan_reshape(*n.session, *n.control, i, *g, target);
        if (!plan) {
            status = fail("reshape", plan.error().message);
            continue;
        }
        std::cout << "GPU " << i << "  " << g->name << "  " << g->uuid << "\n";
        for (const auto& row : mig_reshape_picture(*plan)) std::cout << row << "\n";
        const std::string to = format_mig_geometry(target, g->profiles);
        std::string refused = !plan->misfit.empty() ? plan->misfit
                              : !plan->in_use.empty() ? plan->in_use + " (NVML_ERROR_IN_USE)" : "";
        std::cout << "    dry run     "
                  << (!refused.empty() ? "refused: " + refused : plan->already ? "already " + to : "would reshape to " + to)
                  << "\n" << std::flush;
        if (!refused.empty()) status = fail("reshape", "GPU " + std::to_string(i) + ": " + refused + " (dry run)");
    }
    return status;
}

int run_reshape(const GeometryArgs& args, const GlobalOptions& global) {
    if (::geteuid() != 0 && !args.dry_run)
        return fail("reshape", "must run as root: it changes the GPU under every job of the node");
    if (args.target.empty() == args.slurm_node.empty())
        return fail("reshape", "give a geometry or --slurm-node <NodeName>, one of them");
    auto conf = load_xpart_conf(args.conf);
    if (!conf) return fail("reshape", conf.error().message);
    // The target, as far as it is known before NVML: a geometry, or the node's Slurm record.
    Result<std::vector<std::string>> target = std::vector<std::string>();
    Result<std::string> node_line = std::string();
    if (!args.target.empty()) target = resolve_target(args.target, *conf);
    else node_line = scontrol_show("node", "--slurm-node", args.slurm_node);
    if (!node_line) return fail("reshape", node_line.error().message);
    // An AMD compute partition mode ("cpx", a Geometry= naming one, or the node's GRES types).
    auto amd = args.target.empty() ? amd_slurm_node_target(global, args.slurm_node, *node_line)
                                   : parse_amd_target(named_target(args.target, *conf));
    if (!amd) return fail("reshape", amd.error().message);
    if (*amd && args.dry_run) return dry_run_amd_reshape(global, args.gpu, **amd, args.allow_reboot_class);
    if (*amd) return run_amd_reshape(global, args.gpu, **amd, args.allow_reboot_class);
    if (!target) return fail("reshape", target.error().message);
    const std::string lib = args.nvml_library.empty() ? conf->nvml_library : args.nvml_library;
    auto n = open_nvml(lib);
    if (!n) return fail("reshape", n.error().message);
    auto gpus = gpus_of(*n, args.gpu);
    if (!gpus) return fail("reshape", gpus.error().message);
    if (!args.slurm_node.empty()) {
        target = slurm_node_target(*node_line, *n, *gpus);
        if (!target) return fail("reshape", target.error().message);
    }
    if (args.dry_run) return dry_run_reshape(*n, *gpus, *target, args.gpu);
    int status = 0;
    for (unsigned i : *gpus) {
        auto before = read_gpu_geometry(*n->session, *n->control, i);
        if (!before) return fail("reshape", before.error().message);
        if (!before->mig_capable && args.gpu < 0) continue;  // whole-node reshape: MIG GPUs only
        const auto t0 = std::chrono::steady_clock::now();
        auto out = reshape_and_verify(*n->session, *n->control, i, *target, discovery_options(global, "nvidia", lib));
        const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (!out) {
            status = fail("reshape", out.error().message);
            continue;
        }
        std::printf("GPU %u: %s -> %s %s in %.2f s (discovery: %zu partitions", i, out->from.c_str(), out->to.c_str(),
                    out->changed ? "reshaped" : "already", secs, out->partitions);
        if (out->nodes_made) std::printf(", %u device nodes made", out->nodes_made);
        std::printf(")\n");
    }
    return status;
}

void add_common(CLI::App* cmd, GeometryArgs& args) {
    cmd->add_option("--gpu", args.gpu, "one GPU (NVML index); default every GPU");
    cmd->add_option("--xpart-conf", args.conf, "xpart.conf with the site's Geometry= names")
        ->capture_default_str();
    cmd->add_option("--nvml-library", args.nvml_library, "NVML library to load")
        ->envname("XPART_NVML_LIBRARY");
}

}  // namespace

void add_geometry_command(CLI::App& app, const GlobalOptions& global, Runner& run) {
    auto args = std::make_shared<GeometryArgs>();
    auto* cmd = app.add_subcommand("geometry", "Each GPU's MIG geometry or AMD compute partition mode, and the ones it could take");
    add_common(cmd, *args);
    auto* gres = cmd->add_option("--gres", args->gres, "only geometries serving this request (gpu:3g.40gb:1,...)");
    cmd->add_option("--job", args->job, "only geometries serving this job's GPU request (scontrol show job)")
        ->excludes(gres);
    cmd->add_flag("--json", args->json, "as JSON");
    cmd->callback([args, &global, &run] { run = [args, &global] { return run_geometry(*args, global); }; });
}

void add_reshape_command(CLI::App& app, const GlobalOptions& global, Runner& run) {
    auto args = std::make_shared<GeometryArgs>();
    auto* cmd = app.add_subcommand("reshape", "Reshape MIG GPUs to a geometry, or AMD GPUs to a compute partition "
                                              "mode (root; refused while anything runs)");
    auto* geometry = cmd->add_option("geometry", args->target,
                                     "a Geometry= name of xpart.conf, e.g. 3g.40gb+2x1g.10gb, or an AMD mode (cpx, cpx.nps4)");
    cmd->add_option("--slurm-node", args->slurm_node,
                    "the geometry that gives this NodeName its configured Gres (scontrol show node), "
                    "shared equally among the MIG GPUs")
        ->excludes(geometry);
    cmd->add_flag("--allow-reboot-class", args->allow_reboot_class,
                  "AMD: write a memory partition (NPS) change the mode needs; amdgpu applies it when it loads again "
                  "(exit status 6: reboot, then reshape again)");
    cmd->add_flag("--dry-run", args->dry_run,
                  "draw each GPU's slices (MIG) or XCPs (AMD) now and under the target, say whether the reshape would "
                  "be made or why not (exit status 1), change nothing; needs no root");
    add_common(cmd, *args);
    cmd->callback([args, &global, &run] { run = [args, &global] { return run_reshape(*args, global); }; });
}

}  // namespace xpart::cli
