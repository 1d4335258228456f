#include "eval/host/machine_peaks.hpp"

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>

#include <algorithm>
#include <fstream>

namespace evoteam::eval {
namespace {

namespace fs = std::filesystem;

double parse_cache_size(const std::string& text) {
  double value = 0;
  try {
    value = std::stod(text);
  } catch (const std::exception&) {
    return 0;
  }
  if (text.find('K') != std::string::npos) return value * 1024;
  if (text.find('M') != std::string::npos) return value * 1024 * 1024;
  if (text.find('G') != std::string::npos) return value * 1024 * 1024 * 1024;
  return value;
}

}  // namespace

double last_level_cache_bytes() {
  int best_level = -1;
  double best_size = 0;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator("/sys/devices/system/cpu/cpu0/cache", error)) {
    if (entry.path().filename().string().rfind("index", 0) != 0) continue;
    std::ifstream level_file(entry.path() / "level");
    std::ifstream size_file(entry.path() / "size");
    int level = 0;
    std::string size;
    if (!(level_file >> level) || !(size_file >> size)) continue;
    if (level > best_level) {
      best_level = level;
      best_size = parse_cache_size(size);
    }
  }
  return best_size;
}

MachinePeaks::MachinePeaks(const MachineSettings& machine, ProcessRunner& runner, HostBuilder& builder,
                           fs::path cache_dir)
    : m_configured{machine.peak_gflops, machine.peak_gbytes_per_s},
      m_runner(runner),
      m_builder(builder),
      m_cache_dir(std::move(cache_dir)) {}

std::string MachinePeaks::source() const { return m_source; }

std::optional<Peaks> MachinePeaks::get(bool remeasure) {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (m_configured.gflops > 0 || m_configured.gbytes_per_s > 0) {
    m_source = "config";
    return m_configured;
  }
  if (m_peaks && !remeasure) return m_peaks;
  try {
    const HostToolchain& tools = m_builder.toolchain();
    // probe-v2: timed on the thread's CPU clock; figures of the wall-clock probe, which a loaded machine lowered,
    // are not read again.
    std::string key = "probe-v2 " + tools.identity;
    for (const std::string& flag : tools.flags) key += " " + flag;
    const fs::path file = m_cache_dir / "machine" / ("host-peaks-" + sha256_hex(key).substr(0, 24) + ".json");
    std::optional<Peaks> cached;
    if (fs::is_regular_file(file)) {
      nlohmann::json value = read_json_file(file);
      cached = Peaks{value.value("peak_gflops", 0.0), value.value("peak_gbytes_per_s", 0.0)};
    }
    if (cached && !remeasure) {
      m_peaks = cached;
      m_source = "cached";
      return m_peaks;
    }
    Command command;
    command.argv = {m_builder.peaks_program().string(), "256"};
    command.timeout = std::chrono::milliseconds(120'000);
    ProcessResult result = m_runner.run(command);
    if (!result.ok()) return cached;
    nlohmann::json measured = nlohmann::json::parse(result.out.text, nullptr, false);
    if (measured.is_discarded()) return cached;
    Peaks peaks{measured.value("peak_gflops", 0.0), measured.value("peak_gbytes_per_s", 0.0)};
    if (cached) {
      peaks.gflops = std::max(peaks.gflops, cached->gflops);
      peaks.gbytes_per_s = std::max(peaks.gbytes_per_s, cached->gbytes_per_s);
    }
    evoteam::create_directories(file.parent_path());
    write_json_atomic(file, {{"peak_gflops", peaks.gflops},
                             {"peak_gbytes_per_s", peaks.gbytes_per_s},
                             {"toolchain", tools.identity},
                             {"probe", measured}});
    m_peaks = peaks;
    m_source = "measured";
    return m_peaks;
  } catch (const Error&) {
    return m_peaks;
  }
}

}  // namespace evoteam::eval
