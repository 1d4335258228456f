#pragma once
// A whole optimize run — the builtin team and the supervisor — against a landscape through the replay fixture:
// what the unit tests check and what bench/search_bench.sh measures, in one place.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <evoteam/supervisor/supervisor.hpp>

#include "support/replay_evaluator.hpp"

namespace evoteam::testing {

struct ReplayRunRequest {
  std::filesystem::path task_dir;  // the task the landscape was measured on (its param space and starting kernel)
  TeamMode mode = TeamMode::evolving;
  int budget_evaluations = 0;
  std::uint64_t seed = 1;
  std::optional<std::uint64_t> noise_seed;  // resample the recorded noise; unset: the measured speedups
  std::filesystem::path runs_dir;           // where the run directory goes
};

struct ReplayRunResult {
  RunOutcome outcome;
  std::vector<ReplayCallLog::Call> calls;  // every evaluation the run asked for, in order
  std::vector<nlohmann::json> teams;       // each cycle's team.json
};

ReplayRunResult run_replayed(const Landscape& landscape, const ReplayRunRequest& request);

}  // namespace evoteam::testing
