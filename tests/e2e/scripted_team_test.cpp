// `evoteam optimize` end to end with LLM agents driven by the scripted provider: agents edit, compile, test and
// submit; repeated build failures make the supervisor add a Debugger, a repeated recorded failure adds a
// Knowledge Integrator; tokens are summed exactly as the replies reported them.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include <evoteam/core/fs.hpp>

#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

using testing::cites;
using testing::describe;
using testing::evaluations;
using testing::k_task;
using testing::only_run;
using testing::parse_stdout;
using testing::run_evoteam;

std::vector<std::string> role_names(const nlohmann::json& team) {
  std::vector<std::string> names;
  for (const nlohmann::json& role : team.at("roles")) names.push_back(role.at("name").get<std::string>());
  return names;
}

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

TEST(ScriptedTeamE2E, AgentsSubmitAndSupervisorAddsDebuggerThenKnowledgeIntegrator) {
  testing::TempDir dir;
  std::filesystem::path script =
      std::filesystem::path(EVOTEAM_SOURCE_DIR) / "tests" / "data" / "scripted" / "team_debug_story.jsonl";
  // The optimizer's failed compile in cycle 1 is a failure of that cycle beside its candidate: two alike. Three
  // recurrences block a path here, so the rules keep the pipeline the script's unaddressed replies are written for.
  ProcessResult result = run_evoteam(
      {"optimize", k_task.string(), "--provider", "scripted", "--set", "llm.scripted_file=" + script.string(), "--set",
       "supervisor.policy=rules", "--set", "supervisor.recurring_error_count=3", "--max-cycles", "3", "--runs-dir",
       (dir / "runs").string(), "--json"},
      std::chrono::seconds(600));
  ASSERT_EQ(result.exit_code, 0) << describe(result);
  nlohmann::json summary = parse_stdout(result);
  EXPECT_EQ(summary["status"], "finished");
  EXPECT_EQ(summary["cycles"], 3);
  // Twelve scripted replies of 10 input and 5 output tokens each, and nothing else.
  EXPECT_EQ(summary["tokens"]["input"], 120) << summary.dump();
  EXPECT_EQ(summary["tokens"]["output"], 60) << summary.dump();

  std::optional<std::filesystem::path> run = only_run(dir / "runs");
  ASSERT_TRUE(run.has_value());
  std::vector<nlohmann::json> records = evaluations(*run);
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[1]["author_role"], "optimizer");
  EXPECT_EQ(records[1]["verdict"], "COMPILE_ERROR");
  EXPECT_EQ(records[2]["author_role"], "debugger");
  EXPECT_EQ(records[2]["verdict"], "PASS");
  EXPECT_EQ(records[3]["verdict"], "COMPILE_ERROR");
  EXPECT_TRUE(records[3]["repeated_recorded_failure"].get<bool>());
  // The debugger worked the failing candidate: its candidate is c0002 with the stray line removed.
  EXPECT_EQ(records[2]["parent_id"], records[1]["candidate_id"]);
  std::string fixed =
      read_file(*run / "candidates" / records[2]["candidate_id"].get<std::string>() / "src" / "kernel.cpp");
  EXPECT_NE(fixed.find("// a stray declaration was removed"), std::string::npos);
  EXPECT_EQ(fixed.find("broken one;"), std::string::npos);

  nlohmann::json cycle1 = read_json_file(*run / "cycles" / "0001" / "team.json");
  nlohmann::json cycle2 = read_json_file(*run / "cycles" / "0002" / "team.json");
  nlohmann::json cycle3 = read_json_file(*run / "cycles" / "0003" / "team.json");
  EXPECT_FALSE(has(role_names(cycle1), "debugger"));
  EXPECT_TRUE(has(role_names(cycle2), "debugger")) << cycle2.dump(2);
  EXPECT_TRUE(cites(cycle2, "build_failure_rate")) << cycle2.dump(2);
  EXPECT_FALSE(has(role_names(cycle2), "knowledge-integrator"));
  EXPECT_TRUE(has(role_names(cycle3), "knowledge-integrator")) << cycle3.dump(2);
  EXPECT_TRUE(cites(cycle3, "repeated_failures")) << cycle3.dump(2);
  EXPECT_EQ(cycle3["knowledge"], "curated");

  // Each agent kept a transcript of its turn.
  for (const char* path :
       {"cycles/0001/agents/optimizer/transcript.jsonl", "cycles/0002/agents/debugger/transcript.jsonl"})
    EXPECT_TRUE(std::filesystem::exists(*run / path)) << path;
}

// A key the provider refuses fails every member's turn: the run stops with its own reason and exit code 6
// (README, "Exit codes") instead of finishing as a success with nothing done.
TEST(ScriptedTeamE2E, ARunWhoseEveryTurnIsRefusedByTheProviderStopsWithItsOwnExitCode) {
  testing::TempDir dir;
  std::string refusals;
  for (int i = 0; i < 12; ++i)
    refusals += R"({"failure": {"kind": "http_status", "http_status": 401, "message": "invalid x-api-key"}})"
                "\n";
  const std::filesystem::path script = dir / "refused.jsonl";
  write_file_atomic(script, refusals);
  ProcessResult result = run_evoteam(
      {"optimize", k_task.string(), "--provider", "scripted", "--set", "llm.scripted_file=" + script.string(), "--set",
       "supervisor.policy=rules", "--max-cycles", "5", "--runs-dir", (dir / "runs").string(), "--json"},
      std::chrono::seconds(600));
  EXPECT_EQ(result.exit_code, 6) << describe(result);
  nlohmann::json summary = parse_stdout(result);
  EXPECT_EQ(summary["stop_reason"], "provider_refused") << summary.dump();
  EXPECT_EQ(summary["status"], "failed") << summary.dump();
  EXPECT_EQ(summary["cycles"], 1) << summary.dump();
}

}  // namespace
}  // namespace evoteam
