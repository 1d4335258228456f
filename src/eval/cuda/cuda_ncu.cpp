// Nsight Compute command line, raw-page CSV parser and the compact profile summary.
#include <evoteam/core/error.hpp>
#include <evoteam/core/text.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "eval/cuda/cuda_ncu.hpp"

namespace evoteam::eval::cuda {
namespace {

const std::string k_sm = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
const std::string k_memory = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed";
const std::string k_dram = "dram__throughput.avg.pct_of_peak_sustained_elapsed";
const std::string k_l2 = "lts__throughput.avg.pct_of_peak_sustained_elapsed";
const std::string k_l2_hit = "lts__t_sector_hit_rate.pct";
const std::string k_occupancy = "sm__warps_active.avg.pct_of_peak_sustained_active";
const std::string k_stall_prefix = "smsp__warp_issue_stalled_";
const std::string k_stall_suffix = "_per_warp_active.pct";
const std::string k_limit_prefix = "launch__occupancy_limit_";
const double k_bound_threshold_pct = 60.0;

const std::vector<std::string> k_metrics = {
    "gpu__time_duration.sum",
    k_sm,
    k_memory,
    k_dram,
    k_l2,
    k_l2_hit,
    "l1tex__t_sector_hit_rate.pct",
    k_occupancy,
    "launch__registers_per_thread",
    "launch__occupancy_limit_registers",
    "launch__occupancy_limit_shared_mem",
    "launch__occupancy_limit_blocks",
    "launch__occupancy_limit_warps",
    "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct",
    "smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct",
    "smsp__warp_issue_stalled_barrier_per_warp_active.pct",
    "smsp__warp_issue_stalled_membar_per_warp_active.pct",
    "smsp__warp_issue_stalled_branch_resolving_per_warp_active.pct",
    "smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct",
    "smsp__warp_issue_stalled_math_pipe_throttle_per_warp_active.pct",
    "smsp__warp_issue_stalled_wait_per_warp_active.pct",
    "smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct",
    "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
};

// One CSV record; quoted fields may hold commas and doubled quotes.
std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c != '\r') {
      fields.back() += c;
    }
  }
  return fields;
}

// ncu prints thousands separators in some locales and versions ("1,024.50").
bool parse_number(std::string text, double* value) {
  text.erase(std::remove(text.begin(), text.end(), ','), text.end());
  if (text.empty()) return false;
  try {
    std::size_t used = 0;
    *value = std::stod(text, &used);
    return used == text.size() && std::isfinite(*value);
  } catch (const std::exception&) {
    return false;
  }
}

double round3(double value) {
  if (value == 0 || !std::isfinite(value)) return value;
  const double scale = std::pow(10.0, 2 - static_cast<int>(std::floor(std::log10(std::fabs(value)))));
  return std::round(value * scale) / scale;
}

double metric(const std::map<std::string, double>& metrics, const std::string& name, double fallback) {
  const auto found = metrics.find(name);
  return found == metrics.end() ? fallback : found->second;
}

}  // namespace

const std::vector<std::string>& pinned_metrics() { return k_metrics; }

std::vector<std::string> ncu_command(const NcuInvocation& invocation) {
  std::vector<std::string> argv = {invocation.ncu, "--target-processes", "all", "--kernel-name-base", "function"};
  if (!invocation.kernels.empty())
    argv.insert(argv.end(), {"--kernel-name", "regex:^(" + join(invocation.kernels, "|") + ")$"});
  const std::string metrics = join(k_metrics, ",");
  argv.insert(argv.end(),
              {"--launch-skip", std::to_string(invocation.launch_skip), "--launch-count",
               std::to_string(invocation.launch_count), "--replay-mode", "kernel", "--cache-control", "all",
               "--clock-control", "none", "--metrics", metrics, "--csv", "--page", "raw", "--print-units", "base"});
  if (!invocation.report.empty()) argv.insert(argv.end(), {"-f", "-o", invocation.report});
  argv.insert(argv.end(), invocation.program.begin(), invocation.program.end());
  return argv;
}

std::vector<NcuLaunch> parse_ncu_csv(const std::string& text, const std::string& origin) {
  std::istringstream lines(text);
  std::string line;
  std::vector<std::string> header;
  // ncu may print its own "==PROF==" lines and the program's output before the table.
  while (std::getline(lines, line)) {
    if (line.find("\"Kernel Name\"") == std::string::npos && line.find("Kernel Name,") == std::string::npos) continue;
    header = split_csv(line);
    break;
  }
  if (header.empty()) throw InvalidInput(origin + ": no ncu raw-page header (a row with \"Kernel Name\")");
  const auto column = [&](const std::string& name) {
    const auto found = std::find(header.begin(), header.end(), name);
    return found == header.end() ? -1 : static_cast<int>(found - header.begin());
  };
  const int id_column = column("ID");
  const int kernel_column = column("Kernel Name");
  // The line search above matches text; only a cell that is exactly "Kernel Name" makes a header we can index.
  if (kernel_column < 0) throw InvalidInput(origin + ": the ncu header row has no \"Kernel Name\" column");
  std::map<std::string, std::string> units;
  std::vector<NcuLaunch> launches;
  bool first = true;
  while (std::getline(lines, line)) {
    if (line.empty() || line.rfind("==", 0) == 0) continue;
    const std::vector<std::string> fields = split_csv(line);
    if (fields.size() != header.size()) continue;
    // The units row follows the header: its ID and kernel cells are empty.
    if (first && fields[static_cast<std::size_t>(kernel_column)].empty()) {
      for (std::size_t i = 0; i < header.size(); ++i)
        if (!fields[i].empty()) units[header[i]] = fields[i];
      first = false;
      continue;
    }
    first = false;
    NcuLaunch launch;
    launch.kernel = fields[static_cast<std::size_t>(kernel_column)];
    double id = -1;
    // A launch ID is a small non-negative integer; anything else is not converted (a double out of int's range
    // would be undefined behaviour).
    if (id_column >= 0 && parse_number(fields[static_cast<std::size_t>(id_column)], &id) && id >= 0 && id <= 1e9)
      launch.id = static_cast<int>(id);
    for (std::size_t i = 0; i < header.size(); ++i) {
      // Metric names contain "__"; the descriptive columns (Block Size, Device, ...) do not.
      if (header[i].find("__") == std::string::npos) continue;
      double value = 0;
      if (!parse_number(fields[i], &value)) continue;
      launch.metrics[header[i]] = value;
      if (units.count(header[i]) != 0) launch.units[header[i]] = units[header[i]];
    }
    launches.push_back(launch);
  }
  return launches;
}

std::string to_string(Bound bound) {
  switch (bound) {
    case Bound::memory: return "memory";
    case Bound::compute: return "compute";
    case Bound::latency: return "latency";
    case Bound::unknown: return "unknown";
  }
  return "unknown";
}

Bound bound_verdict(double sm_pct, double memory_pct) {
  if (!std::isfinite(sm_pct) || !std::isfinite(memory_pct) || sm_pct < 0 || memory_pct < 0) return Bound::unknown;
  if (std::max(sm_pct, memory_pct) < k_bound_threshold_pct) return Bound::latency;
  return memory_pct >= sm_pct ? Bound::memory : Bound::compute;
}

nlohmann::json profile_json(const std::vector<NcuLaunch>& launches) {
  nlohmann::json out = {{"source", "ncu"}, {"metrics_pinned", k_metrics}, {"launches", nlohmann::json::array()}};
  for (const NcuLaunch& launch : launches)
    out["launches"].push_back(
        {{"id", launch.id}, {"kernel", launch.kernel}, {"metrics", launch.metrics}, {"units", launch.units}});
  return out;
}

nlohmann::json profile_summary(const std::vector<NcuLaunch>& launches) {
  // Average each metric over the launches of one kernel, in first-seen order.
  std::vector<std::string> order;
  std::map<std::string, std::map<std::string, std::pair<double, int>>> sums;
  for (const NcuLaunch& launch : launches) {
    if (sums.count(launch.kernel) == 0) order.push_back(launch.kernel);
    for (const auto& [name, value] : launch.metrics) {
      auto& slot = sums[launch.kernel][name];
      slot.first += value;
      ++slot.second;
    }
  }
  nlohmann::json kernels = nlohmann::json::array();
  for (const std::string& kernel : order) {
    std::map<std::string, double> m;
    for (const auto& [name, slot] : sums[kernel]) m[name] = slot.first / slot.second;
    const double sm = metric(m, k_sm, -1);
    const double memory = metric(m, k_memory, -1);
    nlohmann::json entry = {{"kernel", kernel}, {"bound", to_string(bound_verdict(sm, memory))}};
    const auto put = [&](const char* key, const std::string& name) {
      const auto found = m.find(name);
      if (found != m.end()) entry[key] = round3(found->second);
    };
    put("time_ns", "gpu__time_duration.sum");
    put("sm_pct", k_sm);
    put("memory_pct", k_memory);
    put("dram_pct", k_dram);
    put("l2_pct", k_l2);
    put("l2_hit_pct", k_l2_hit);
    put("occupancy_pct", k_occupancy);
    put("registers", "launch__registers_per_thread");
    put("tensor_gmma_pct", "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active");
    put("tensor_hmma_pct", "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active");
    put("tensor_pct", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed");
    // The occupancy limiter is the launch__occupancy_limit_* with the fewest blocks per SM.
    std::string limiter;
    double fewest = 0;
    std::vector<std::pair<double, std::string>> stalls;
    for (const auto& [name, value] : m) {
      if (name.rfind(k_limit_prefix, 0) == 0 && (limiter.empty() || value < fewest)) {
        limiter = name.substr(k_limit_prefix.size());
        fewest = value;
      }
      if (name.rfind(k_stall_prefix, 0) == 0 && name.size() > k_stall_prefix.size() + k_stall_suffix.size() &&
          name.compare(name.size() - k_stall_suffix.size(), k_stall_suffix.size(), k_stall_suffix) == 0)
        stalls.emplace_back(
            value, name.substr(k_stall_prefix.size(), name.size() - k_stall_prefix.size() - k_stall_suffix.size()));
    }
    if (!limiter.empty()) entry["occupancy_limiter"] = limiter;
    std::sort(stalls.begin(), stalls.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    nlohmann::json top = nlohmann::json::array();
    for (std::size_t i = 0; i < stalls.size() && i < 3; ++i)
      top.push_back({{"reason", stalls[i].second}, {"pct", round3(stalls[i].first)}});
    entry["top_stalls"] = top;
    entry["local_sectors"] = round3(metric(m, "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", 0) +
                                    metric(m, "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum", 0));
    entry["bank_conflicts"] = round3(metric(m, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", 0) +
                                     metric(m, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", 0));
    kernels.push_back(entry);
  }
  return {{"source", "ncu"}, {"kernels", kernels}};
}

}  // namespace evoteam::eval::cuda
