// The simulator's NVML fault list (XPART_SIM_NVML_FAULTS).
#include "sim/nvidia_model.hpp"
#include "tests/fuzz/fuzz_target.hpp"

XPART_FUZZ_TARGET(nvml_faults) { (void)xpart::sim::parse_nvml_fault_list(xpart::fuzz::text_of(data, size)); }
