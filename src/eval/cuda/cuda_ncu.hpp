#pragma once
// The profile stage's Nsight Compute side: the pinned metric list, the ncu command line, the parser of
// `ncu --csv --page raw` output, and the compact summary with a bound verdict that goes into an agent's prompt
// (evaluator-spec §5.2, §6.6).
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace evoteam::eval::cuda {

// The metrics every profile collects, in a fixed order (part of the profile's cache key).
const std::vector<std::string>& pinned_metrics();

struct NcuInvocation {
  std::string ncu = "ncu";
  std::vector<std::string> kernels;  // plan kernel names, matched exactly
  int launch_skip = 0;
  int launch_count = 1;
  std::string report;                // -o path, without .ncu-rep
  std::vector<std::string> program;  // the harness command line in profile mode
};
// argv for ncu: pinned metrics, --csv --page raw --print-units base, --clock-control none (never touch clocks).
std::vector<std::string> ncu_command(const NcuInvocation& invocation);

// One profiled launch: a row of the raw page.
struct NcuLaunch {
  int id = -1;
  std::string kernel;
  std::map<std::string, double> metrics;     // numeric metrics only
  std::map<std::string, std::string> units;  // metric -> unit, from the units row
};
// Throws InvalidInput (naming `origin`) when the text has no header row with "Kernel Name"; a cell that is not a
// number (n/a, empty) is left out of `metrics`.
std::vector<NcuLaunch> parse_ncu_csv(const std::string& text, const std::string& origin);

enum class Bound { memory, compute, latency, unknown };
std::string to_string(Bound bound);
// [ours] Speed-of-light rule: the larger of SM and memory throughput (% of peak) decides when it reaches
// k_bound_threshold_pct; below it in both the kernel neither saturates a unit, so it is latency/occupancy bound.
Bound bound_verdict(double sm_pct, double memory_pct);

// profile.json: every launch with all its metrics and units.
nlohmann::json profile_json(const std::vector<NcuLaunch>& launches);
// Per kernel (launches of the same kernel averaged): the bound verdict, SOL, DRAM/L2, occupancy and its
// limiter, tensor-pipe use, the top three stall reasons, spills and bank conflicts; about 20 numbers per kernel,
// rounded to three significant digits. "source": "ncu" (a static profile says "static").
nlohmann::json profile_summary(const std::vector<NcuLaunch>& launches);

}  // namespace evoteam::eval::cuda
