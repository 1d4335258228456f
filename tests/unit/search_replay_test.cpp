// The builtin team's search over the measured landscapes (bench/landscapes/), through the replay fixture: a short run
// is deterministic for a seed, a region of the param space the team has learned to be invalid is never entered
// again, and the supervisor's stagnation directive recovers a lineage the search had written off. The bench
// (bench/search_bench.sh) measures how good the search is; these tests hold what it relies on.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <evoteam/core/log.hpp>

#include "support/replay_run.hpp"
#include "support/temp_dir.hpp"
#include "team/builtin_common.hpp"

namespace evoteam {
namespace {

namespace fs = std::filesystem;

struct SearchLandscape {
  const char* task;
  int budget;
  // Whether the search, within that budget, fails often enough inside one region to learn it. On host_conv2d it
  // does not (its 254 failing configurations are spread thinly over the pairs of values, and the search meets few):
  // there the test holds only that no learned region is entered, and none is learned.
  bool learns_a_region;
};

class SearchReplay : public ::testing::TestWithParam<SearchLandscape> {
 protected:
  static const testing::Landscape& landscape_of(const std::string& task) {
    static std::map<std::string, testing::Landscape> loaded;
    auto it = loaded.find(task);
    if (it == loaded.end())
      it = loaded
               .emplace(task, testing::Landscape::load(fs::path(EVOTEAM_SOURCE_DIR) / "bench/landscapes" /
                                                       (task + std::string(".json"))))
               .first;
    return it->second;
  }

  testing::ReplayRunResult run(std::uint64_t seed, int budget, const fs::path& runs_dir) {
    testing::ReplayRunRequest request;
    request.task_dir = fs::path(EVOTEAM_SOURCE_DIR) / "kernels" / GetParam().task;
    request.mode = TeamMode::evolving;
    request.budget_evaluations = budget;
    request.seed = seed;
    request.noise_seed = seed;  // the recorded noise resampled: determinism must hold with it, not only without
    request.runs_dir = runs_dir;
    return testing::run_replayed(landscape_of(GetParam().task), request);
  }
};

std::string call_text(const testing::ReplayCallLog::Call& call) {
  return describe_params(call.params) + " " + to_string(call.verdict) +
         (call.speedup ? " " + std::to_string(*call.speedup) : std::string());
}

TEST_P(SearchReplay, AShortRunIsTheSameForTheSameSeed) {
  setup_console_logging(Verbosity::quiet);
  testing::TempDir first_runs;
  testing::TempDir second_runs;
  const testing::ReplayRunResult first = run(3, 30, first_runs.path());
  const testing::ReplayRunResult second = run(3, 30, second_runs.path());
  ASSERT_GE(first.calls.size(), 10u) << "the run evaluated too little to say anything";
  std::vector<std::string> first_calls;
  std::vector<std::string> second_calls;
  for (const auto& call : first.calls) first_calls.push_back(call_text(call));
  for (const auto& call : second.calls) second_calls.push_back(call_text(call));
  // Members of a parallel pattern evaluate side by side, so the order in which their calls reach the evaluator is
  // the scheduler's; what was evaluated, and with what result, is the seed's.
  std::sort(first_calls.begin(), first_calls.end());
  std::sort(second_calls.begin(), second_calls.end());
  EXPECT_EQ(first_calls, second_calls);
  ASSERT_TRUE(first.outcome.best_speedup && second.outcome.best_speedup);
  EXPECT_DOUBLE_EQ(*first.outcome.best_speedup, *second.outcome.best_speedup);
  ASSERT_EQ(first.teams.size(), second.teams.size());
  for (std::size_t i = 0; i < first.teams.size(); ++i) {
    EXPECT_EQ(first.teams[i].value("roles", nlohmann::json()), second.teams[i].value("roles", nlohmann::json()))
        << "cycle " << i + 1;
    EXPECT_EQ(first.teams[i].value("pattern", ""), second.teams[i].value("pattern", "")) << "cycle " << i + 1;
  }
}

// What the search would have learned from what it evaluated so far, by the rule it states (learned_invalid_regions,
// held to its clauses in builtin_search_test.cpp), recomputed here over the run's evaluations in order: a search that
// ignored what it learned would be caught whatever its own bookkeeping says.
TEST_P(SearchReplay, ARegionLearnedInvalidIsNeverEnteredAgain) {
  setup_console_logging(Verbosity::quiet);
  const testing::Landscape& landscape = landscape_of(GetParam().task);
  std::set<std::string> learned_anywhere;
  for (std::uint64_t seed : {1, 2, 3}) {
    testing::TempDir runs;
    const testing::ReplayRunResult result = run(seed, GetParam().budget, runs.path());
    std::vector<builtin::Measurement> measured;
    std::set<std::string> seen;
    for (const testing::ReplayCallLog::Call& call : result.calls) {
      const std::string point_text = describe_params(call.params);
      // The same point asked again (a compile-only check before a full one) teaches nothing new.
      if (!seen.insert(point_text).second) continue;
      const std::vector<builtin::InvalidRegion> learned = builtin::learned_invalid_regions(landscape.space, measured);
      for (const builtin::InvalidRegion& region : learned) learned_anywhere.insert(region.describe());
      const builtin::InvalidRegion* inside = builtin::region_holding(learned, call.params);
      EXPECT_EQ(inside, nullptr) << "seed " << seed << ": " << point_text << " lies in " << inside->describe()
                                 << ", already learned invalid";
      const testing::Landscape::Point* point = landscape.find(call.params);
      ASSERT_NE(point, nullptr) << point_text;
      builtin::Measurement measurement{call.params, builtin::Measurement::Outcome::passed, point->speedup.value_or(0)};
      if (!point->speedup) {
        measurement.outcome = builtin::Measurement::Outcome::failed;
        measurement.failure = point->signature.substr(0, point->signature.find(':'));
      }
      measured.push_back(measurement);
    }
  }
  if (GetParam().learns_a_region) {
    EXPECT_FALSE(learned_anywhere.empty()) << "the search learned no region: the check above tested nothing";
  }
}

// The gemm landscape's best (NC=256 with NR=32) hides behind early failures of NR=32 (beside NC=48, where 48 is no
// multiple of 32, and beside PACK_B=1 with K_UNROLL=4): a search that gives NR=32 up stays on the 2.06x lineage
// (66% of the best). The evolving team's supervisor sees the stagnation and its directive reopens what was given up:
// every seed here reaches 98% of the best within 15% of the space (before, seeds 1, 3 and 4 stayed at 66%).
TEST(SupervisedSearch, AStagnationDirectiveRecoversTheLineageAGivenUpValueHid) {
  setup_console_logging(Verbosity::quiet);
  const testing::Landscape landscape =
      testing::Landscape::load(fs::path(EVOTEAM_SOURCE_DIR) / "bench/landscapes/host_gemm_packed.json");
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    testing::TempDir runs;
    testing::ReplayRunRequest request;
    request.task_dir = fs::path(EVOTEAM_SOURCE_DIR) / "kernels/host_gemm_packed";
    request.mode = TeamMode::evolving;
    request.budget_evaluations = 115;
    request.seed = seed;
    request.runs_dir = runs.path();
    const testing::ReplayRunResult result = testing::run_replayed(landscape, request);
    EXPECT_GE(result.outcome.best_speedup.value_or(0.0), 0.98 * landscape.best_speedup()) << "seed " << seed;
  }
}

INSTANTIATE_TEST_SUITE_P(Landscapes, SearchReplay,
                         ::testing::Values(SearchLandscape{"host_gemm_packed", 60, true},
                                           SearchLandscape{"host_conv2d", 108, false}),
                         [](const ::testing::TestParamInfo<SearchLandscape>& landscape_info) {
                           return std::string(landscape_info.param.task);
                         });

}  // namespace
}  // namespace evoteam
