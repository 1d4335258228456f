#include "eval/host/host_profile.hpp"

#include <sstream>

#include "eval/statistics.hpp"

namespace evoteam::eval {

nlohmann::json parse_perf_csv(const std::string& text) {
  nlohmann::json counters = nlohmann::json::object();
  nlohmann::json unsupported = nlohmann::json::array();
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields;
    std::stringstream parts(line);
    std::string field;
    while (std::getline(parts, field, ',')) fields.push_back(field);
    if (fields.size() < 3 || fields[2].empty()) continue;
    const std::string& event = fields[2];
    if (fields[0].find("not supported") != std::string::npos || fields[0].find("not counted") != std::string::npos) {
      unsupported.push_back(event);
      continue;
    }
    try {
      counters[event] = {{"value", std::stod(fields[0])}, {"unit", fields[1]}};
    } catch (const std::exception&) {
      unsupported.push_back(event);
    }
  }
  return {{"counters", counters}, {"unsupported", unsupported}};
}

bool perf_counts_hardware(ProcessRunner& runner, const std::filesystem::path& perf) {
  Command probe;
  probe.argv = {perf.string(), "stat", "-x,", "-e", "cycles,instructions", "--", "true"};
  probe.timeout = std::chrono::milliseconds(10'000);
  const ProcessResult result = runner.run(probe);
  if (!result.ok()) return false;
  // perf stat writes its CSV to stderr.
  return !parse_perf_csv(result.err.text).value("counters", nlohmann::json::object()).empty();
}

nlohmann::json profile_summary(const BatteryWorkload& workload, const SampleStats& stats, const nlohmann::json& perf,
                               const std::optional<Peaks>& peaks) {
  nlohmann::json summary;
  summary["workload"] = workload.name;
  summary["calls"] = stats.samples;
  summary["median_s"] = stats.median_s;
  summary["relstdev"] = stats.relstdev;
  const double seconds = stats.median_s;
  if (seconds > 0) {
    summary["gflops"] = workload.flops / seconds / 1e9;
    summary["gbytes_per_s"] = workload.bytes / seconds / 1e9;
  }
  if (workload.bytes > 0) summary["arithmetic_intensity"] = workload.flops / workload.bytes;
  if (peaks && peaks->gbytes_per_s > 0 && peaks->gflops > 0) {
    const double balance = peaks->gflops / peaks->gbytes_per_s;
    summary["machine_balance"] = balance;
    summary["peak_gflops"] = peaks->gflops;
    summary["peak_gbytes_per_s"] = peaks->gbytes_per_s;
    if (std::optional<double> fraction = roofline_fraction(workload, seconds, peaks))
      summary["roofline_fraction"] = *fraction;
    if (workload.bytes > 0) {
      const double intensity = workload.flops / workload.bytes;
      // Below the machine balance the roof is bandwidth; above it, arithmetic. Far under the roof either way
      // means latency or poor use of the core (vectorisation, register blocking).
      const bool compute_roof = intensity >= balance;
      const double fraction = compute_roof ? (workload.flops / seconds / 1e9) / peaks->gflops
                                           : (workload.bytes / seconds / 1e9) / peaks->gbytes_per_s;
      summary["bound"] = fraction < 0.3 ? "latency (far below both roofs: vectorise, block for registers and cache)"
                                        : (compute_roof ? "compute" : "memory");
    }
  }
  summary["tool"] =
      perf.is_object() && !perf.value("counters", nlohmann::json::object()).empty() ? "perf stat" : "timing";
  if (perf.is_object()) {
    summary["counters"] = perf.value("counters", nlohmann::json::object());
    summary["unsupported_counters"] = perf.value("unsupported", nlohmann::json::array());
    const nlohmann::json& counters = summary["counters"];
    if (counters.contains("cycles") && counters.contains("instructions") &&
        counters["cycles"]["value"].get<double>() > 0)
      summary["ipc"] = counters["instructions"]["value"].get<double>() / counters["cycles"]["value"].get<double>();
  }
  return summary;
}

}  // namespace evoteam::eval
