#pragma once
// What is installed and usable on this machine: compilers, CUDA tools, a GPU, the sandbox, a Slurm client and
// provider keys (whether set, never their values). Used by `evoteam doctor` and by the evaluator to pick paths.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <evoteam/core/process.hpp>

namespace evoteam {

struct ToolProbe {
  std::string name;  // "nvcc", "gpu", "bubblewrap", ...
  bool usable = false;
  std::string detail;     // version, GPU name and driver, or why it is not usable
  std::string fix;        // one line telling the user how to get it, empty when usable
  bool required = false;  // evoteam cannot work without it
};

// Looks a program up in PATH, then in the CUDA toolkit's usual places (CUDA_HOME, /usr/local/cuda/bin).
std::optional<std::filesystem::path> find_program(const std::string& name);

// The GPU visible through nvidia-smi, if any: "NVIDIA H200, driver 570.1".
std::optional<std::string> detect_gpu(ProcessRunner& runner);

// Every tool, then whether each of `key_variables` is set (the providers' keys: the LLM provider table names them;
// core knows no provider).
std::vector<ToolProbe> probe_inventory(ProcessRunner& runner, const std::vector<std::string>& key_variables = {});
nlohmann::json to_json(const std::vector<ToolProbe>& probes);

}  // namespace evoteam
