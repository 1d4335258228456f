#include "eval/cuda/gpu_peaks.hpp"

#include <evoteam/core/fs.hpp>

#include <algorithm>

#include "eval/harness_run.hpp"

namespace evoteam::eval {
namespace {

namespace fs = std::filesystem;

}  // namespace

std::vector<nlohmann::json> GpuPeaks::harness_records(const fs::path& harness, const std::string& mode, int timeout_s) {
  Command command;
  command.argv = {harness.string(), "--result-fd", "3", mode};
  command.result_fd = 3;
  command.timeout = std::chrono::milliseconds(timeout_s * 1000);
  const ProcessResult result = m_runner.run(command);
  bool truncated = false;
  return parse_records(result.result.text, &truncated);
}

GpuPeaks::GpuPeaks(const CudaSettings& cuda, ProcessRunner& runner, fs::path cache_dir)
    : m_configured{cuda.peak_gflops, cuda.peak_gbytes_per_s}, m_runner(runner), m_cache_dir(std::move(cache_dir)) {}

std::optional<Peaks> GpuPeaks::get(const fs::path& harness, bool remeasure) {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (m_configured.gflops > 0 || m_configured.gbytes_per_s > 0) return m_configured;
  if (m_peaks && !remeasure) return m_peaks;
  const std::string uuid = [&] {
    for (const nlohmann::json& record : harness_records(harness, "--probe", 60))
      if (record.value("ev", "") == "probe") return record.value("uuid", std::string());
    return std::string();
  }();
  if (uuid.empty()) return m_peaks;
  const fs::path file = m_cache_dir / "machine" / ("gpu-peaks-" + uuid + ".json");
  std::optional<Peaks> cached;
  if (fs::is_regular_file(file)) {
    const nlohmann::json value = read_json_file(file);
    cached = Peaks{value.value("peak_gflops", 0.0), value.value("peak_gbytes_per_s", 0.0)};
  }
  if (cached && !remeasure) {
    m_peaks = cached;
    return m_peaks;
  }
  std::optional<Peaks> measured;
  for (const nlohmann::json& record : harness_records(harness, "--peaks", 180))
    if (record.value("ev", "") == "peaks" && record.value("peak_gflops", 0.0) > 0 &&
        record.value("peak_gbytes_per_s", 0.0) > 0)
      measured = Peaks{record.value("peak_gflops", 0.0), record.value("peak_gbytes_per_s", 0.0)};
  if (!measured) return cached ? cached : m_peaks;
  if (cached) {
    measured->gflops = std::max(measured->gflops, cached->gflops);
    measured->gbytes_per_s = std::max(measured->gbytes_per_s, cached->gbytes_per_s);
  }
  evoteam::create_directories(file.parent_path());
  write_json_atomic(file,
                    {{"peak_gflops", measured->gflops}, {"peak_gbytes_per_s", measured->gbytes_per_s}, {"uuid", uuid}});
  m_peaks = measured;
  return m_peaks;
}

}  // namespace evoteam::eval
