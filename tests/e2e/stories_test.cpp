// Stories, end to end: `evoteam optimize` on kernels/host_matmul with scripted LLM agents and the LLM supervisor
// (supervisor.policy=llm, its replies in the same script, addressed with "for"). Each story plays one trigger and
// checks three things: what the supervisor decided (decided_by "llm", the evidence it cited), that the signal the
// rules react to really fired in the saved signals (cycles/<nnnn>/team.json, and the rules' decision beside the
// reply in supervisor.json), and what came of it in the run (evaluation records, journal, run.json).
// Scripts: tests/data/scripted/stories/, each with a header saying what it plays.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include <evoteam/agent/transcript.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/store/store.hpp>
#include <evoteam/team/role.hpp>

#include "supervisor/run_state.hpp"
#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"
#include "support/test_cache.hpp"

namespace evoteam {
namespace {

namespace fs = std::filesystem;
using testing::cites;
using testing::describe;
using testing::parse_stdout;
using testing::run_evoteam;

// The exit code of a run that a budget ended, as README's "Exit codes" table documents it: 5 ("budget exhausted"),
// whether or not a --target-speedup was set.
constexpr int k_budget_exhausted = 5;

const std::chrono::seconds k_story_timeout(300);

fs::path story_script(const std::string& name) {
  return fs::path(EVOTEAM_SOURCE_DIR) / "tests" / "data" / "scripted" / "stories" / name;
}

// What one story left behind.
struct Story {
  ProcessResult result;
  nlohmann::json summary;  // the --json output
  fs::path run;            // the run directory
  double seconds = 0;      // wall time of the optimize command, for the report
};

// Runs `optimize` on `task` with the scripted provider and the LLM supervisor.
Story play(const testing::TempDir& dir, const std::string& script, std::vector<std::string> extra,
           const fs::path& task = testing::k_task) {
  std::vector<std::string> args = {
      "optimize", task.string(), "--provider", "scripted", "--set",
      "llm.scripted_file=" + story_script(script).string(), "--set", "supervisor.policy=llm", "--set",
      "team.evaluations_per_cycle=2", "--runs-dir", (dir / "runs").string(),
      // The suite's own result cache: a speedup a story needs (target_reached) is not
      // one a loaded machine measured for another run into the user's cache.
      "--set", "eval.cache_dir=" + (testing::test_cache_root() / "test-cache" / "stories").string(), "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const auto start = std::chrono::steady_clock::now();
  Story story;
  story.result = run_evoteam(args, k_story_timeout);
  story.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  story.summary = nlohmann::json::parse(story.result.out.text, nullptr, false);
  if (std::optional<fs::path> run = testing::only_run(dir / "runs")) story.run = *run;
  std::cout << "[ story    ] " << script << ": " << story.seconds << " s\n";
  return story;
}

std::string cycle_name(int cycle) {
  char name[8];
  std::snprintf(name, sizeof name, "%04d", cycle);
  return name;
}

nlohmann::json team_of(const Story& story, int cycle) {
  return read_json_file(story.run / "cycles" / cycle_name(cycle) / "team.json");
}

nlohmann::json exchange_of(const Story& story, int cycle) {
  return read_json_file(story.run / "cycles" / cycle_name(cycle) / "supervisor.json");
}

bool has_role(const nlohmann::json& team, const std::string& name) {
  for (const nlohmann::json& role : team.at("roles"))
    if (role.at("name") == name) return true;
  return false;
}

nlohmann::json role_of(const nlohmann::json& team, const std::string& name) {
  for (const nlohmann::json& role : team.at("roles"))
    if (role.at("name") == name) return role;
  return nullptr;
}

// The signal as the run computed it before deciding (team.json's "signals"); null when absent.
nlohmann::json signal_of(const nlohmann::json& team, const std::string& name) {
  if (!team.contains("signals") || !team["signals"].is_object()) return nullptr;
  for (const nlohmann::json& signal : team["signals"].at("signals"))
    if (signal.at("signal") == name) return signal;
  return nullptr;
}

// The LLM supervisor decided cycle `cycle`'s team and added `role` citing `signal`; the signal fired in the saved
// signals, the supervisor's prompt showed it fired, and the rules, asked beside it, would have added the role for it.
void expect_llm_added(const Story& story, int cycle, const std::string& role, const std::string& signal) {
  SCOPED_TRACE("cycle " + std::to_string(cycle) + ", +" + role + " for " + signal);
  const nlohmann::json team = team_of(story, cycle);
  EXPECT_EQ(team["decided_by"], "llm") << team.dump(2);
  EXPECT_TRUE(has_role(team, role)) << team.dump(2);
  EXPECT_FALSE(has_role(team_of(story, cycle - 1), role)) << "the role was there before";
  EXPECT_TRUE(cites(team, signal)) << team.dump(2);
  const nlohmann::json fired = signal_of(team, signal);
  ASSERT_TRUE(fired.is_object()) << team.dump(2);
  EXPECT_TRUE(fired["triggered"].get<bool>()) << fired.dump(2);

  const nlohmann::json exchange = exchange_of(story, cycle);
  EXPECT_EQ(exchange["taken"], "llm") << exchange.dump(2);
  EXPECT_NE(exchange.value("system", "").find("- " + signal + " = "), std::string::npos);
  const std::string system = exchange.value("system", "");
  const std::size_t line = system.find("- " + signal + " = ");
  EXPECT_NE(system.substr(line, system.find('\n', line) - line).find("TRIGGERED"), std::string::npos) << system;
  const nlohmann::json& rules = exchange["rules_decision"];
  EXPECT_TRUE(has_role(rules, role)) << rules.dump(2);
  EXPECT_TRUE(cites(rules, signal)) << rules.dump(2);
}

// The evaluation records by candidate id, and the first one a role wrote.
std::map<std::string, nlohmann::json> records_by_id(const Story& story) {
  std::map<std::string, nlohmann::json> records;
  for (const nlohmann::json& record : testing::evaluations(story.run)) records[record["candidate_id"]] = record;
  return records;
}

std::vector<nlohmann::json> records_by(const Story& story, const std::string& role) {
  std::vector<nlohmann::json> records;
  for (const nlohmann::json& record : testing::evaluations(story.run))
    if (record["author_role"] == role) records.push_back(record);
  return records;
}

// The history as the run rebuilds it from its journal (what resume and the supervisor read), with profiles and
// rulings applied to the records.
RunHistory replayed_history(const Story& story) {
  std::set<std::string> roles;
  for (const auto& [name, role] : load_roles(default_roles_dir())) roles.insert(name);
  return replay_run_state(read_json_file(story.run / "run.json"), replay_journal(story.run / "journal.jsonl"), roles)
      .history;
}

// The names of the tools an agent called, in order, from its transcript.
std::vector<std::string> tools_called(const fs::path& transcript) {
  std::vector<std::string> names;
  std::istringstream lines(read_file(transcript));
  for (std::string line; std::getline(lines, line);) {
    nlohmann::json record = nlohmann::json::parse(line, nullptr, false);
    if (record.is_discarded() || record.value("type", "") != "message" || record.value("role", "") != "assistant")
      continue;
    for (const nlohmann::json& block : record.value("content", nlohmann::json::array()))
      if (block.value("type", "") == "tool_use") names.push_back(block.value("name", ""));
  }
  return names;
}

std::vector<nlohmann::json> journal_of_type(const Story& story, const std::string& type) {
  std::vector<nlohmann::json> found;
  for (const nlohmann::json& record : testing::journal_records(story.run))
    if (record.value("type", "") == type) found.push_back(record);
  return found;
}

// a. Builds keep failing: the Debugger joins, in parallel with the Optimizer, each on its own lineage.
TEST(StoriesE2E, CompileErrorsBringADebuggerInParallelOnTheFailingLineage) {
  testing::TempDir dir;
  Story story = play(dir, "debugger_parallel.jsonl", {"--max-cycles", "2"});
  ASSERT_EQ(story.result.exit_code, 0) << describe(story.result);
  EXPECT_EQ(story.summary["cycles"], 2) << story.summary.dump(2);

  expect_llm_added(story, 2, "debugger", "build_failure_rate");
  const nlohmann::json team = team_of(story, 2);
  EXPECT_EQ(team["pattern"], "parallel");
  EXPECT_EQ(role_of(team, "debugger")["lineage"], "failing");
  EXPECT_EQ(role_of(team, "optimizer")["lineage"], "best");

  std::map<std::string, nlohmann::json> records = records_by_id(story);
  ASSERT_EQ(records.count("c0002"), 1u);
  EXPECT_EQ(records["c0002"]["verdict"], "COMPILE_ERROR");
  const std::vector<nlohmann::json> fixes = records_by(story, "debugger");
  const std::vector<nlohmann::json> tiles = records_by(story, "optimizer");
  ASSERT_EQ(fixes.size(), 1u) << describe(story.result);
  ASSERT_EQ(tiles.size(), 2u) << describe(story.result);  // c0002 in cycle 1, TILE_M 64 in cycle 2
  // The Debugger worked the failing candidate, the Optimizer the best: two lineages, both built and passed.
  EXPECT_EQ(fixes[0]["parent_id"], "c0002");
  EXPECT_EQ(fixes[0]["lineage"], "failing");
  EXPECT_EQ(fixes[0]["cycle"], 2);
  EXPECT_EQ(fixes[0]["verdict"], "PASS");
  EXPECT_EQ(tiles[1]["parent_id"], "c0001");
  EXPECT_EQ(tiles[1]["lineage"], "best");
  EXPECT_EQ(tiles[1]["cycle"], 2);
  EXPECT_EQ(tiles[1]["verdict"], "PASS");
  const std::string fixed =
      read_file(story.run / "candidates" / fixes[0]["candidate_id"].get<std::string>() / "src/kernel.cpp");
  EXPECT_EQ(fixed.find("broken one;"), std::string::npos);
  EXPECT_NE(fixed.find("a stray declaration was removed"), std::string::npos);
  // Both members worked in cycle 2, each with its own transcript.
  for (const char* role : {"optimizer", "debugger"})
    EXPECT_TRUE(fs::exists(story.run / "cycles/0002/agents" / role / "transcript.jsonl")) << role;
}

// b. The best is not profiled: the Profiling Scientist joins, profiles it, and leaves once it is profiled.
TEST(StoriesE2E, AnUnprofiledBestBringsAProfilingScientistWhoLeavesOnceItIsProfiled) {
  testing::TempDir dir;
  Story story = play(dir, "profiler_in_and_out.jsonl", {"--max-cycles", "3"});
  ASSERT_EQ(story.result.exit_code, 0) << describe(story.result);
  EXPECT_EQ(story.summary["cycles"], 3) << story.summary.dump(2);
  EXPECT_EQ(story.summary["best_candidate"], "c0002") << story.summary.dump(2);

  expect_llm_added(story, 2, "profiling-scientist", "unprofiled_best");
  EXPECT_EQ(team_of(story, 2)["pattern"], "pipeline");
  EXPECT_NE(signal_of(team_of(story, 2), "unprofiled_best")["evidence"].get<std::string>().find("c0002 has no profile"),
            std::string::npos);

  // It profiled the best: the record is marked, the journal and the candidate hold the profile.
  RunHistory history = replayed_history(story);
  const EvaluationRecord* best = history.find("c0002");
  ASSERT_NE(best, nullptr);
  EXPECT_TRUE(best->profiled);
  EXPECT_FALSE(best->profile_bound.empty());
  const std::vector<nlohmann::json> profiles = journal_of_type(story, "profile");
  ASSERT_EQ(profiles.size(), 1u);
  EXPECT_EQ(profiles[0]["candidate_id"], "c0002");
  EXPECT_TRUE(fs::exists(story.run / "candidates/c0002/profile.json"));

  // The cycle after, the trigger has cleared: the LLM and the rules both let the Profiling Scientist go.
  const nlohmann::json after = team_of(story, 3);
  EXPECT_EQ(after["decided_by"], "llm");
  EXPECT_FALSE(has_role(after, "profiling-scientist")) << after.dump(2);
  EXPECT_TRUE(cites(after, "unprofiled_best")) << after.dump(2);
  const nlohmann::json cleared = signal_of(after, "unprofiled_best");
  EXPECT_FALSE(cleared["triggered"].get<bool>()) << cleared.dump(2);
  EXPECT_NE(cleared["evidence"].get<std::string>().find("c0002 profiled (bound: " + best->profile_bound + ")"),
            std::string::npos)
      << cleared.dump(2);
  EXPECT_FALSE(has_role(exchange_of(story, 3)["rules_decision"], "profiling-scientist"));
}

// c. A recorded failure is tried again: the Knowledge Integrator joins, writes the plan, the Optimizer reads it.
TEST(StoriesE2E, ARepeatedRecordedFailureBringsAKnowledgeIntegrator) {
  testing::TempDir dir;
  Story story = play(dir, "integrator_after_repeats.jsonl", {"--max-cycles", "3"});
  ASSERT_EQ(story.result.exit_code, 0) << describe(story.result);
  EXPECT_EQ(story.summary["cycles"], 3) << story.summary.dump(2);

  std::map<std::string, nlohmann::json> records = records_by_id(story);
  ASSERT_EQ(records.size(), 4u) << describe(story.result);
  EXPECT_EQ(records["c0002"]["verdict"], "COMPILE_ERROR");
  EXPECT_FALSE(records["c0002"]["repeated_recorded_failure"].get<bool>());
  EXPECT_EQ(records["c0003"]["verdict"], "COMPILE_ERROR");
  EXPECT_TRUE(records["c0003"]["repeated_recorded_failure"].get<bool>());

  // Cycle 2: the LLM kept the Optimizer alone (the rules would have called a Debugger): its call, recorded.
  EXPECT_EQ(team_of(story, 2)["decided_by"], "llm");
  EXPECT_FALSE(has_role(team_of(story, 2), "knowledge-integrator"));
  EXPECT_FALSE(signal_of(team_of(story, 2), "repeated_failures")["triggered"].get<bool>());

  expect_llm_added(story, 3, "knowledge-integrator", "repeated_failures");
  EXPECT_NE(signal_of(team_of(story, 3), "repeated_failures")["evidence"].get<std::string>().find("c0003"),
            std::string::npos);
  EXPECT_EQ(team_of(story, 3)["knowledge"], "curated");
  EXPECT_EQ(exchange_of(story, 3)["rules_decision"]["knowledge"], "curated");

  // The integrator's plan reached the Optimizer, which then passed where it had failed twice.
  const std::string plan = read_file(story.run / "knowledge/action_plan.md");
  EXPECT_NE(plan.find("c0002 and c0003 failed to build the same way"), std::string::npos) << plan;
  const std::string transcript = read_file(story.run / "cycles/0003/agents/optimizer/transcript.jsonl");
  EXPECT_NE(transcript.find("c0002 and c0003 failed to build the same way"), std::string::npos);
  EXPECT_EQ(records["c0004"]["author_role"], "optimizer");
  EXPECT_EQ(records["c0004"]["cycle"], 3);
  EXPECT_EQ(records["c0004"]["verdict"], "PASS");
}

// d. A candidate bundles two changes: the Disciplinarian joins and rejects it with the rule tool, so it loses the
// best it held; the one-change candidate becomes the best. The LLM put the reviewer first; the team runs it after the
// Optimizer, whose candidate of the cycle it then has to review.
TEST(StoriesE2E, ATwoChangeCandidateIsRejectedByTheDisciplinarianAndLosesTheBest) {
  testing::TempDir dir;
  Story story = play(dir, "disciplinarian_rejects.jsonl", {"--max-cycles", "2"});
  ASSERT_EQ(story.result.exit_code, 0) << describe(story.result);

  std::map<std::string, nlohmann::json> records = records_by_id(story);
  ASSERT_EQ(records.size(), 3u) << describe(story.result);
  EXPECT_EQ(records["c0002"]["changes"], 2);
  EXPECT_EQ(records["c0002"]["verdict"], "PASS");
  // The bundle was clearly better than the start, so only the ruling keeps it from the best.
  ASSERT_GT(records["c0002"]["speedup"].get<double>(), 1.5 * records["c0001"]["speedup"].get<double>());
  EXPECT_EQ(read_json_file(story.run / "cycles/0001/summary.json")["best_candidate"], "c0002");

  expect_llm_added(story, 2, "disciplinarian", "changes_per_candidate");
  EXPECT_EQ(team_of(story, 2)["directives"], nlohmann::json::array({"One measurable change per candidate"}));

  const std::vector<nlohmann::json> rulings = journal_of_type(story, "ruling");
  ASSERT_EQ(rulings.size(), 1u);
  EXPECT_EQ(rulings[0]["candidate_id"], "c0002");
  EXPECT_FALSE(rulings[0]["accepted"].get<bool>());
  EXPECT_EQ(rulings[0]["role"], "disciplinarian");
  EXPECT_NE(rulings[0]["reason"].get<std::string>().find("two regions"), std::string::npos);
  const RunHistory history = replayed_history(story);  // find() points into it
  const EvaluationRecord* rejected = history.find("c0002");
  ASSERT_NE(rejected, nullptr);
  EXPECT_TRUE(rejected->rejected);

  // The team as it ran: the reviewer after the Optimizer, the record saying why.
  const nlohmann::json ran = team_of(story, 2);
  ASSERT_EQ(ran["roles"].size(), 2u);
  EXPECT_EQ(ran["roles"][0]["name"], "optimizer");
  EXPECT_EQ(ran["roles"][1]["name"], "disciplinarian");
  EXPECT_NE(
      ran["rationale"].get<std::string>().find("the Disciplinarian reviews after the members who make candidates"),
      std::string::npos)
      << ran.dump(2);
  // The Optimizer, before the ruling, took the header comment back from the best: one change, the register blocking
  // alone; the Disciplinarian, after it, was handed that candidate to review.
  EXPECT_EQ(records["c0003"]["author_role"], "optimizer");
  EXPECT_EQ(records["c0003"]["parent_id"], "c0002");
  EXPECT_EQ(records["c0003"]["changes"], 1);
  const std::string redo = read_file(story.run / "candidates/c0003/src/kernel.cpp");
  EXPECT_EQ(redo.find("Register-blocked kernel"), std::string::npos);
  EXPECT_NE(redo.find("#define TILE_N 256"), std::string::npos);
  const std::string reviewer =
      read_transcript(story.run / "cycles/0002/agents/disciplinarian/transcript.jsonl").at(0).value("content", "");
  EXPECT_NE(reviewer.find("candidates of cycle 2 to review:\n- c0003"), std::string::npos) << reviewer;
  EXPECT_EQ(records["c0003"]["verdict"], "PASS");
  const nlohmann::json run_json = read_json_file(story.run / "run.json");
  EXPECT_EQ(run_json["summary"]["best_candidate"], "c0003") << run_json["summary"].dump(2);
  EXPECT_EQ(story.summary["best_candidate"], "c0003");
  EXPECT_EQ(read_json_file(story.run / "cycles/0002/summary.json")["best_candidate"], "c0003");
}

// A copy of host_matmul whose task.json forbids #undef in the source: params come from the build.
fs::path task_forbidding_undef(const testing::TempDir& dir) {
  const fs::path task = dir / "host_matmul_no_undef";
  copy_tree(testing::k_task, task);
  nlohmann::json spec = nlohmann::json::parse(read_file(task / "task.json"), nullptr, true, true);
  spec["static_constraints"] = {{{"name", "params-from-the-build"},
                                 {"scope", "source"},
                                 {"forbid", "#\\s*undef"},
                                 {"message", "params are set by the build; the code must not redefine them"}}};
  write_file_atomic(task / "task.json", spec.dump(2));
  return task;
}

// e. A candidate breaks a static constraint of the task: rejected before it is built, never the best; the
// Disciplinarian joins for the violation.
TEST(StoriesE2E, AStaticConstraintViolationIsRejectedAndBringsADisciplinarian) {
  testing::TempDir dir;
  Story story = play(dir, "static_constraint.jsonl", {"--max-cycles", "2"}, task_forbidding_undef(dir));
  ASSERT_EQ(story.result.exit_code, 0) << describe(story.result);

  std::map<std::string, nlohmann::json> records = records_by_id(story);
  ASSERT_EQ(records.size(), 3u) << describe(story.result);
  EXPECT_EQ(records["c0001"]["verdict"], "PASS");  // the starting kernel keeps the constraint
  EXPECT_EQ(records["c0002"]["verdict"], "STATIC_REJECT");
  EXPECT_FALSE(records["c0002"]["speedup"].is_number());
  const std::string eval = read_file(story.run / "candidates/c0002/eval.json");
  EXPECT_NE(eval.find("params-from-the-build"), std::string::npos) << eval;
  EXPECT_NE(read_file(story.run / "task/task.json").find("params-from-the-build"), std::string::npos);

  expect_llm_added(story, 2, "disciplinarian", "constraint_violations");
  EXPECT_NE(signal_of(team_of(story, 2), "constraint_violations")["evidence"].get<std::string>().find("c0002"),
            std::string::npos);
  // The constraint reached the supervisor's prompt.
  EXPECT_NE(exchange_of(story, 2)["system"].get<std::string>().find(
                "forbidden: params are set by the build; the code must not redefine them"),
            std::string::npos);

  // The legal change that followed passed, the Disciplinarian accepted it, and it is the best: the violation is not.
  EXPECT_EQ(records["c0003"]["verdict"], "PASS");
  EXPECT_EQ(records["c0003"]["parent_id"], "c0001");
  const std::vector<nlohmann::json> rulings = journal_of_type(story, "ruling");
  ASSERT_EQ(rulings.size(), 1u);
  EXPECT_EQ(rulings[0]["candidate_id"], "c0003");
  EXPECT_TRUE(rulings[0]["accepted"].get<bool>());
  EXPECT_NE(story.summary["best_candidate"], "c0002");
}

// f. A token budget runs out in the middle of cycle 2: the member's turn ends there, the next member never calls,
// the run stops with budget_tokens. Resuming the finished run changes nothing: it stops again at once.
TEST(StoriesE2E, ATokenBudgetEndsTheRunMidCycleAndAResumeStopsAgainAtOnce) {
  testing::TempDir dir;
  Story story = play(dir, "token_budget_mid_cycle.jsonl", {"--max-cycles", "4", "--budget-tokens", "75"});
  EXPECT_EQ(story.result.exit_code, k_budget_exhausted) << describe(story.result);
  EXPECT_EQ(story.summary["status"], "finished") << story.summary.dump(2);
  EXPECT_EQ(story.summary["stop_reason"], "budget_tokens") << story.summary.dump(2);
  EXPECT_EQ(story.summary["cycles"], 2);
  EXPECT_EQ(story.summary["tokens"]["input"], 50) << story.summary.dump(2);  // five replies of 10 in, 5 out
  EXPECT_EQ(story.summary["tokens"]["output"], 25) << story.summary.dump(2);
  const nlohmann::json run_json = read_json_file(story.run / "run.json");
  EXPECT_EQ(run_json["stop_reason"], "budget_tokens");
  EXPECT_EQ(run_json["status"], "finished");

  expect_llm_added(story, 2, "debugger", "build_failure_rate");
  // Mid-cycle: the Debugger's turn ended on the budget before its submit, the Optimizer after it never called.
  const nlohmann::json turns = read_json_file(story.run / "cycles/0002/summary.json")["turns"];
  EXPECT_EQ(turns["debugger"]["summary"].get<std::string>().rfind("token_limit", 0), 0u) << turns.dump(2);
  EXPECT_EQ(turns["optimizer"]["summary"].get<std::string>().rfind("token_limit", 0), 0u) << turns.dump(2);
  EXPECT_EQ(tools_called(story.run / "cycles/0002/agents/debugger/transcript.jsonl"),
            (std::vector<std::string>{"read_file", "edit_file"}));
  EXPECT_EQ(testing::evaluations(story.run).size(), 2u);  // the start and cycle 1's attempt: nothing submitted after

  // resume: README says it continues "a stopped or killed run"; a finished one has its budget spent, so the loop
  // stops before another cycle with the same reason and exit code, and nothing new is evaluated or spent.
  ProcessResult resumed = run_evoteam({"resume", story.run.string(), "--json"}, k_story_timeout);
  EXPECT_EQ(resumed.exit_code, k_budget_exhausted) << describe(resumed);
  nlohmann::json again = parse_stdout(resumed);
  EXPECT_EQ(again["stop_reason"], "budget_tokens") << again.dump(2);
  EXPECT_EQ(again["status"], "finished");
  EXPECT_EQ(again["cycles"], 2);
  EXPECT_EQ(again["evaluations"], story.summary["evaluations"]);
  EXPECT_EQ(again["tokens"], story.summary["tokens"]);
  EXPECT_FALSE(fs::exists(story.run / "cycles/0003"));
  EXPECT_EQ(journal_of_type(story, "resume").size(), 1u);
  EXPECT_EQ(journal_of_type(story, "stop").size(), 2u);
}

// h. Issue 28's stall, replayed under the rules policy: two candidates fail to build, the rules add a Debugger, and
// the Debugger works the failing candidate — its workspace holds c0003's code and build log, its hand-off names it and
// carries the log — and fixes it. The optimizer resubmitting c0002's broken code byte for byte ("identical to c0002
// (COMPILE_ERROR), not re-evaluated") counts as a failure of its cycle, so the Debugger is not dismissed with "0 of 0
// failed to build" while the broken code keeps coming back; the run goes on to a new best.
TEST(StoriesE2E, UnderTheRulesTheDebuggerWorksTheFailingCandidateAndTheRunLeavesTheStall) {
  testing::TempDir dir;
  // Three recurrences block a path, not two: the two failures do not put the Debugger in a parallel team on the
  // failing lineage by that rule, and the rules place it in a pipeline, as in the run the issue reported.
  Story story =
      play(dir, "debugger_leaves_the_stall.jsonl",
           {"--set", "supervisor.policy=rules", "--set", "supervisor.recurring_error_count=3", "--max-cycles", "3"});
  ASSERT_EQ(story.result.exit_code, 0) << describe(story.result);
  EXPECT_EQ(story.summary["cycles"], 3) << story.summary.dump(2);
  std::map<std::string, nlohmann::json> records = records_by_id(story);
  ASSERT_EQ(records.count("c0003"), 1u);
  EXPECT_EQ(records["c0002"]["verdict"], "COMPILE_ERROR");
  EXPECT_EQ(records["c0003"]["verdict"], "COMPILE_ERROR");

  // Cycle 2: the rules added the Debugger, on the failing lineage.
  const nlohmann::json team = team_of(story, 2);
  EXPECT_EQ(team["decided_by"], "rules") << team.dump(2);
  EXPECT_EQ(team["pattern"], "pipeline") << team.dump(2);
  ASSERT_TRUE(has_role(team, "debugger")) << team.dump(2);
  EXPECT_EQ(role_of(team, "debugger")["lineage"], "failing") << team.dump(2);
  EXPECT_TRUE(signal_of(team, "build_failure_rate")["triggered"].get<bool>()) << team.dump(2);

  // Its workspace held the failing code and its build log, and its hand-off named the candidate and carried the log.
  const std::vector<nlohmann::json> transcript =
      read_transcript(story.run / "cycles/0002/agents/debugger/transcript.jsonl");
  ASSERT_FALSE(transcript.empty());
  const std::string system = transcript[0].value("content", "");
  EXPECT_NE(system.find("failing candidate c0003 (COMPILE_ERROR"), std::string::npos) << system.substr(0, 4000);
  const std::string build_log = read_file(story.run / "candidates/c0003/build.log");
  ASSERT_FALSE(build_log.empty());
  EXPECT_NE(system.find("Its build log"), std::string::npos);
  std::vector<std::string> tool_results;
  for (const nlohmann::json& record : transcript)
    if (record.value("role", "") == "user" && record.contains("content") && record["content"].is_array())
      for (const nlohmann::json& block : record["content"])
        if (block.value("type", "") == "tool_result") tool_results.push_back(block.value("content", ""));
  ASSERT_GE(tool_results.size(), 2u);
  EXPECT_NE(tool_results[0].find("int broken = ;"), std::string::npos) << tool_results[0].substr(0, 400);
  EXPECT_EQ(tool_results[1], build_log);
  // ... and it fixed that candidate.
  const std::vector<nlohmann::json> fixes = records_by(story, "debugger");
  ASSERT_FALSE(fixes.empty()) << describe(story.result);
  EXPECT_EQ(fixes[0]["parent_id"], "c0003");
  EXPECT_EQ(fixes[0]["lineage"], "failing");
  EXPECT_EQ(fixes[0]["cycle"], 2);
  EXPECT_EQ(fixes[0]["verdict"], "PASS");

  // The optimizer's resubmission of c0002 was not re-evaluated, but the cycle counts it as a failure: the Debugger
  // stays for cycle 3 instead of leaving on "0 of 0 failed to build". There it is not handed c0003 again, which
  // c0004 fixed, but c0002, the failure nobody fixed; its story's edit was written for c0003's code, so it resubmits
  // c0002 unchanged: a second failure without a record of its own.
  const std::vector<nlohmann::json> unrecorded = journal_of_type(story, "unrecorded_failure");
  ASSERT_EQ(unrecorded.size(), 2u);
  EXPECT_EQ(unrecorded[0].value("author_role", ""), "optimizer");
  EXPECT_EQ(unrecorded[1].value("author_role", ""), "debugger");
  EXPECT_EQ(unrecorded[1].value("candidate_id", ""), "c0002");
  const nlohmann::json next = team_of(story, 3);
  EXPECT_TRUE(has_role(next, "debugger")) << next.dump(2);
  const std::string evidence = signal_of(next, "build_failure_rate")["evidence"];
  EXPECT_NE(evidence.find("c0002 resubmitted by optimizer COMPILE_ERROR"), std::string::npos) << evidence;
  // The run left the stall: cycle 3's optimizer built on the best and passed.
  const std::vector<nlohmann::json> tiles = records_by(story, "optimizer");
  ASSERT_EQ(tiles.size(), 3u) << describe(story.result);  // c0002, c0003 and cycle 3's TILE_M 64
  EXPECT_EQ(tiles[2]["cycle"], 3);
  EXPECT_EQ(tiles[2]["verdict"], "PASS");
}

// g. The target is reached in cycle 2: the run stops there with target_reached and exit 0.
TEST(StoriesE2E, ReachingTheTargetStopsTheRun) {
  testing::TempDir dir;
  // The Debugger's fix (register blocking) measures 2.5x to 3.2x here with the machine loaded or not; 2 is a target
  // it reaches however loaded, and the starting kernel (1x) does not.
  Story story = play(dir, "target_reached.jsonl", {"--max-cycles", "4", "--target-speedup", "2"});
  ASSERT_EQ(story.result.exit_code, 0) << describe(story.result);
  EXPECT_EQ(story.summary["status"], "finished");
  EXPECT_EQ(story.summary["stop_reason"], "target_reached") << story.summary.dump(2);
  EXPECT_EQ(story.summary["cycles"], 2);
  EXPECT_FALSE(fs::exists(story.run / "cycles/0003"));
  EXPECT_EQ(read_json_file(story.run / "run.json")["stop_reason"], "target_reached");

  expect_llm_added(story, 2, "debugger", "build_failure_rate");
  std::map<std::string, nlohmann::json> records = records_by_id(story);
  EXPECT_EQ(records["c0002"]["verdict"], "COMPILE_ERROR");
  EXPECT_EQ(records["c0003"]["author_role"], "debugger");
  EXPECT_EQ(records["c0003"]["parent_id"], "c0002");
  EXPECT_EQ(records["c0003"]["verdict"], "PASS");
  EXPECT_EQ(story.summary["best_candidate"], "c0003");
  EXPECT_GE(story.summary["best_speedup"].get<double>(), 2.0) << story.summary.dump(2);
  // Before the fix the best was below the target: cycle 1 did not stop the run.
  EXPECT_LT(read_json_file(story.run / "cycles/0001/summary.json")["best_speedup"].get<double>(), 2.0);
}

}  // namespace
}  // namespace evoteam
