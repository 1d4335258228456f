#pragma once
// This machine's peaks for roofline fractions: configured figures, or measured once by the peaks probe and
// cached per CPU, compiler and flags. A re-measurement keeps the higher figures, so a probe that ran on a busy
// machine cannot make a good kernel look impossible twice.
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>

#include <evoteam/core/process.hpp>
#include <evoteam/eval/eval_settings.hpp>

#include "eval/classify.hpp"
#include "eval/host/host_build.hpp"

namespace evoteam::eval {

// Size of the largest CPU cache level in bytes, from /sys (0 when unknown).
double last_level_cache_bytes();

class MachinePeaks {
 public:
  MachinePeaks(const MachineSettings& machine, ProcessRunner& runner, HostBuilder& builder,
               std::filesystem::path cache_dir);
  // nullopt when they cannot be had (the probe failed); `remeasure` ignores the cached figures.
  std::optional<Peaks> get(bool remeasure);
  std::string source() const;  // "config", "measured", "cached" or ""

 private:
  Peaks m_configured;  // both 0: measure
  ProcessRunner& m_runner;
  HostBuilder& m_builder;
  std::filesystem::path m_cache_dir;
  std::mutex m_mutex;
  std::optional<Peaks> m_peaks;
  std::string m_source;
};

}  // namespace evoteam::eval
