#pragma once
// The host profile: what is cheap and real on a CPU. The candidate runs repeatedly on one workload under
// `perf stat` where perf works (unsupported counters are listed as such); the summary adds timing-derived
// figures (GFLOP/s, GB/s, arithmetic intensity, roofline fraction) and a bound verdict, compact enough for an
// agent's prompt.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eval/battery.hpp"
#include "eval/classify.hpp"

namespace evoteam::eval {

// `perf stat -x,` output: {"counters": {"task-clock": {"value": 12.3, "unit": "msec"}, ...}, "unsupported": [...]}.
nlohmann::json parse_perf_csv(const std::string& text);

nlohmann::json profile_summary(const BatteryWorkload& workload, const std::vector<double>& samples,
                               const nlohmann::json& perf, const std::optional<Peaks>& peaks);

}  // namespace evoteam::eval
