#pragma once
// The host profile: what is cheap and real on a CPU. Where perf counts hardware events, the candidate runs
// repeatedly on one workload under `perf stat` (unsupported counters are listed as such); elsewhere a run of its
// own would only measure again what the timing stage measured, so the figures come from the timing stage's
// samples. Either way the summary has timing-derived figures (GFLOP/s, GB/s, arithmetic intensity, roofline
// fraction) and a bound verdict, compact enough for an agent's prompt.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <evoteam/core/process.hpp>
#include <evoteam/eval/evaluator.hpp>

#include "eval/battery.hpp"
#include "eval/classify.hpp"

namespace evoteam::eval {

// `perf stat -x,` output: {"counters": {"task-clock": {"value": 12.3, "unit": "msec"}, ...}, "unsupported": [...]}.
nlohmann::json parse_perf_csv(const std::string& text);

// Whether `perf stat` counts cycles or instructions here (a virtual machine or perf_event_paranoid may allow
// only software events). Runs perf once.
bool perf_counts_hardware(ProcessRunner& runner, const std::filesystem::path& perf);

// `stats`: the candidate's per-call times on `workload`; `perf`: parse_perf_csv's result, or null.
nlohmann::json profile_summary(const BatteryWorkload& workload, const SampleStats& stats, const nlohmann::json& perf,
                               const std::optional<Peaks>& peaks);

}  // namespace evoteam::eval
