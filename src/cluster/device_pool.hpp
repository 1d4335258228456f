#pragma once
// Which devices of this machine evaluate (`--devices`), and the pool that spreads evaluations over them.
#include <optional>
#include <string>
#include <vector>

#include <evoteam/core/process.hpp>
#include <evoteam/task/task.hpp>

namespace evoteam::cluster {

struct GpuInfo {
  std::string index;  // nvidia-smi's
  std::string uuid;   // GPU-...
  std::string name;   // NVIDIA H100 80GB HBM3
};

// The GPUs nvidia-smi lists (empty without nvidia-smi or a GPU).
std::vector<GpuInfo> visible_gpus(ProcessRunner& runner);

// The devices of a pool for `spec` ("all", or a comma-separated list): for the host target, "all" is the host
// itself ("") and a list names that many simulated lanes; for CUDA, each entry is what one evaluator's harnesses
// get as CUDA_VISIBLE_DEVICES, chosen among `visible` (CUDA_VISIBLE_DEVICES's own entries when it is set, which is
// how Slurm hands a job its GPUs; else nvidia-smi's indices). A task with a ranks axis uses every GPU itself, so it
// gets one evaluator (""). Throws InvalidInput for a device that is not there, and for a list that mixes GPU
// models: speedups measured on different models are not comparable.
std::vector<std::string> resolve_devices(const std::string& spec, const Task& task, const std::vector<GpuInfo>& gpus,
                                         const std::optional<std::string>& cuda_visible_devices);

}  // namespace evoteam::cluster
