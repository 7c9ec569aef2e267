// The node model: what discovery finds and every front end consumes. Plain data, no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace xpart {

enum class Vendor { Nvidia, Amd };

// How a physical GPU is split. NVIDIA: Full (MIG off or unsupported), Mig, or MigPending (a
// mode change waits for a GPU reset: report it, never bind it). AMD: the compute partition mode.
enum class PartitionMode { Full, Mig, MigPending, Spx, Dpx, Tpx, Qpx, Cpx };

// One character device a partition needs, as the node shows it (path relative to the node's
// root, e.g. "/dev/nvidia-caps/nvidia-cap12"). `shared` marks files every partition of the
// node needs (nvidiactl, nvidia-uvm, /dev/kfd, and the MIG monitor cap where the site grants
// it): a scheduler must not treat them as belonging to one partition.
struct DeviceFile {
    std::string path;
    unsigned major = 0;
    unsigned minor = 0;
    bool shared = false;

    bool operator==(const DeviceFile& o) const {
        return path == o.path && major == o.major && minor == o.minor && shared == o.shared;
    }
};

// What a job is bound to: a MIG device (one compute instance of one GPU instance), an AMD
// XCP, or a whole GPU that is not partitioned.
struct Partition {
    std::string uuid;          // "MIG-<uuid>", or the GPU's UUID for a whole GPU / an XCP
    std::string type;          // GRES type: "1g.10gb", "1c.3g.40gb", "cpx", "a100-sxm4-40gb"
    int gi = -1;               // MIG GPU-instance id
    int ci = -1;               // MIG compute-instance id
    int index = -1;            // MIG: NVML MIG index; AMD: partition index within the GPU
    int kfd_node = -1;         // AMD: KFD topology node id
    std::uint64_t memory_mb = 0;
    unsigned compute_units = 0;  // SMs (NVIDIA) or CUs (AMD)
    std::vector<DeviceFile> device_files;  // every file it needs, shared ones marked
};

// How far apart two PCI devices are, nearest first (NCCL's names in brackets). GPUDirect RDMA
// between a GPU and a NIC runs at full speed through PCIe switches only, slower through a
// host bridge, and may be very slow or fail across the inter-socket link.
enum class PciPath {
    Switch,       // below one PCIe switch / root port          [PIX, PXB]
    RootComplex,  // through one host bridge                     [PHB]
    Socket,       // between host bridges of one socket          [NODE]
    CrossSocket,  // across the inter-socket link (or unknown)   [SYS]
};

// One port of an RDMA device (/sys/class/infiniband/<nic>/ports/<n>/).
struct RdmaPort {
    unsigned number = 1;
    std::string state;       // "ACTIVE", "DOWN", "INIT", "ARMED" (the word of "4: ACTIVE")
    std::string link_layer;  // "InfiniBand" or "Ethernet" (RoCE)
    bool active() const { return state == "ACTIVE"; }
};

// An RDMA device (InfiniBand HCA or RoCE NIC) and the PCI function behind it.
struct RdmaNic {
    std::string name;        // "mlx5_0"
    std::string pci_bus_id;  // "0000:0c:00.0"
    int numa_node = -1;
    std::vector<RdmaPort> ports;
    // The first ACTIVE port's number, 0 when none is (the NIC is then never chosen).
    unsigned active_port() const;
};

// A GPU's way to one usable NIC. Gpu::nics lists them nearest first; [0] is the GPU's own:
// at equal distance GPUs are spread over the NICs, so ranks on different GPUs do not share one.
struct NicRoute {
    std::string nic;   // RdmaNic::name
    unsigned port = 1; // its first ACTIVE port
    PciPath path = PciPath::CrossSocket;

    bool operator==(const NicRoute& o) const { return nic == o.nic && port == o.port && path == o.path; }
};

struct Gpu {
    Vendor vendor = Vendor::Nvidia;
    std::string model;         // "NVIDIA A100-SXM4-40GB", "MI300X"
    std::string uuid;          // NVIDIA "GPU-<uuid>"; AMD "GPU-<16 hex of unique_id>"
    std::string pci_bus_id;    // sysfs form "0000:07:00.0"
    int index = -1;            // NVML index / order of physical GPUs for AMD
    int minor = -1;            // NVIDIA: N of /dev/nvidiaN; AMD: first render minor
    PartitionMode mode = PartitionMode::Full;
    std::string memory_mode;   // AMD: "NPS1".."NPS8" when known, else empty
    std::uint64_t memory_mb = 0;
    int numa_node = -1;
    std::vector<unsigned> cpus;  // CPUs local to the GPU, ascending
    std::vector<Partition> partitions;
    // Files of this GPU that discovery found but gives to no partition: the MIG monitor cap
    // unless xpart.conf says MigMonitorCapability=yes (it lets a process watch every MIG
    // instance of the GPU). Rule sets that deny the managed files deny these too.
    std::vector<DeviceFile> withheld_files;
    // Usable RDMA NICs, nearest first (empty: the node has none). Partitions share them.
    std::vector<NicRoute> nics;
};

// A partition's place in the node: gpus[gpu].partitions[partition].
struct PartitionPlace {
    std::size_t gpu = 0, partition = 0;

    bool operator==(const PartitionPlace& o) const { return gpu == o.gpu && partition == o.partition; }
};

struct Node {
    std::vector<Gpu> gpus;
    std::vector<RdmaNic> nics;  // every RDMA device, in PCI order, usable or not
    std::vector<std::string> warnings;  // non-fatal findings (pending MIG change, ...)
    // GPUs the node has that discovery could not read (NVML unavailable on a node with NVIDIA
    // GPUs), one line each; `gpus` then holds the rest. Empty for a complete node.
    std::vector<std::string> errors;
    // The gres plugin's records in Slurm's index order, as slurmd registered them: read from
    // the node cache (libxpart/node_cache.hpp); nullopt for a discovered node.
    std::optional<std::vector<PartitionPlace>> gres_records;

    std::size_t partition_count() const;
    // The partition with this UUID (MIG UUID) or nullptr; for AMD, UUIDs are shared by the
    // XCPs of one GPU, so look those up by (gpu, index) instead.
    const Partition* find_partition(const std::string& uuid) const;
    const Gpu* gpu_of(const Partition& p) const;
};

// The GRES types of a GPU's partitions, sorted: its geometry, to compare with another.
std::vector<std::string> partition_types(const Gpu& gpu);

const char* to_string(Vendor v);
const char* to_string(PartitionMode m);
std::optional<PartitionMode> parse_partition_mode(const std::string& s);  // case-insensitive
const char* to_string(PciPath p);  // "switch", "root-complex", "socket", "cross-socket"
std::optional<PciPath> parse_pci_path(const std::string& s);

}  // namespace xpart
