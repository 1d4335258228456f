#pragma once
// The GPU's peaks for roofline fractions: configured figures (eval.cuda.peak_*), or measured once per GPU by the
// CUDA harness (`--peaks`: a streaming copy and a cuBLAS bf16 GEMM) and cached by the GPU's UUID. A re-measurement
// keeps the higher figures, so one probe on a busy GPU cannot make a good kernel look impossible twice.
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <evoteam/core/process.hpp>
#include <evoteam/eval/eval_settings.hpp>

#include "eval/classify.hpp"

namespace evoteam::eval {

class GpuPeaks {
 public:
  // Only the peaks of `cuda` are read.
  GpuPeaks(const CudaSettings& cuda, ProcessRunner& runner, std::filesystem::path cache_dir);
  // `harness` is a CUDA harness executable (any task's). nullopt when the figures cannot be had.
  std::optional<Peaks> get(const std::filesystem::path& harness, bool remeasure);

 private:
  std::vector<nlohmann::json> harness_records(const std::filesystem::path& harness, const std::string& mode,
                                              int timeout_s);

  Peaks m_configured;  // both 0: measure
  ProcessRunner& m_runner;
  std::filesystem::path m_cache_dir;
  std::mutex m_mutex;
  std::optional<Peaks> m_peaks;
};

}  // namespace evoteam::eval
