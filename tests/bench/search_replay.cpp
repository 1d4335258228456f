// bench/search_bench.sh's runner of the builtin teams over a landscape: for each team and budget, one whole
// optimize run (team and supervisor) per seed against the replay fixture, printed as one JSON line per run.
// Usage: evoteam_search_replay LANDSCAPE_JSON TASK_DIR TEAMS BUDGETS SEEDS
//   TEAMS: single,fixed,evolving; BUDGETS: evaluations, e.g. 38,77,115; SEEDS: how many (1..SEEDS)
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include <evoteam/core/log.hpp>
#include <evoteam/supervisor/supervisor_settings.hpp>

#include "support/replay_run.hpp"
#include "support/temp_dir.hpp"

namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

// The evaluations until a passing point within 95% of the landscape's best was measured; 0 when none was.
int evaluations_to_95(const std::vector<evoteam::testing::ReplayCallLog::Call>& calls, double best) {
  for (std::size_t i = 0; i < calls.size(); ++i)
    if (calls[i].speedup && *calls[i].speedup >= 0.95 * best) return static_cast<int>(i + 1);
  return 0;
}

// Each cycle's team in a few words: roles, pattern, directives, who decided.
nlohmann::json team_summary(const nlohmann::json& team) {
  std::string roles;
  for (const nlohmann::json& role : team.value("roles", nlohmann::json::array()))
    roles += (roles.empty() ? "" : "+") + role.value("name", "?");
  std::string directives;
  for (const nlohmann::json& directive : team.value("directives", nlohmann::json::array()))
    if (directive.is_string())
      directives += (directives.empty() ? "" : "; ") + directive.get<std::string>().substr(0, 40);
  return roles + " " + team.value("pattern", "?") + (directives.empty() ? "" : " [" + directives + "]");
}

}  // namespace

int main(int argc, char** argv) {
  using namespace evoteam;
  if (argc != 6) {
    std::cerr << "usage: evoteam_search_replay LANDSCAPE_JSON TASK_DIR TEAMS BUDGETS SEEDS\n";
    return 2;
  }
  setup_console_logging(Verbosity::quiet);
  const testing::Landscape landscape = testing::Landscape::load(argv[1]);
  const double best = landscape.best_speedup();
  const int seeds = std::stoi(argv[5]);
  for (const std::string& team : split_list(argv[3]))
    for (const std::string& budget : split_list(argv[4]))
      for (int seed = 1; seed <= seeds; ++seed) {
        testing::TempDir runs;
        testing::ReplayRunRequest request;
        request.task_dir = argv[2];
        request.mode = team_mode_from_string(team);
        request.budget_evaluations = std::stoi(budget);
        request.seed = static_cast<std::uint64_t>(seed);
        request.runs_dir = runs.path();
        const testing::ReplayRunResult result = testing::run_replayed(landscape, request);
        nlohmann::json teams = nlohmann::json::array();
        for (const nlohmann::json& cycle_team : result.teams) teams.push_back(team_summary(cycle_team));
        const double reached = result.outcome.best_speedup.value_or(0.0);
        nlohmann::json line = {{"landscape", landscape.task},
                               {"team", team},
                               {"budget", request.budget_evaluations},
                               {"seed", seed},
                               {"best_speedup", reached},
                               {"fraction", best > 0 ? reached / best : 0.0},
                               {"evaluations", result.calls.size()},
                               {"evaluations_to_95", evaluations_to_95(result.calls, best)},
                               {"teams", teams}};
        if (std::getenv("EVOTEAM_REPLAY_TRACE") != nullptr) {
          nlohmann::json calls = nlohmann::json::array();
          for (const testing::ReplayCallLog::Call& call : result.calls) {
            std::string point;
            for (const auto& [name, value] : call.params) point += name + "=" + value + " ";
            calls.push_back(point + to_string(call.verdict) +
                            (call.speedup ? " " + std::to_string(*call.speedup) : ""));
          }
          line["calls"] = calls;
        }
        std::cout << line.dump() << std::endl;
      }
  return 0;
}
