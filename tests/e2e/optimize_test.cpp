// `evoteam optimize` end to end with the builtin offline team on kernels/host_matmul (no key, no GPU): it
// improves the kernel, restructures the team with evidence, and survives a kill -9 followed by `resume`.
#include <gtest/gtest.h>

#include <map>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include <evoteam/core/fs.hpp>
#include <evoteam/core/process.hpp>

#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"
#include "support/test_cache.hpp"
#include "unit/eval_test_support.hpp"

extern char** environ;

namespace evoteam {
namespace {

using namespace evoteam::testing;

TEST(OptimizeE2E, BuiltinTeamImprovesHostMatmulAndRestructures) {
  testing::TempDir dir;
  // A cache of its own, so every evaluation really runs: the speedup is measured, not remembered.
  ProcessResult result =
      run_evoteam({"--set", "eval.cache_dir=" + (dir / "cache").string(), "optimize", k_task.string(), "--provider",
                   "builtin", "--runs-dir", (dir / "runs").string(), "--max-cycles", "4", "--json"},
                  std::chrono::seconds(300));
  ASSERT_TRUE(result.ok()) << describe(result);
  nlohmann::json summary = parse_stdout(result);
  ASSERT_TRUE(summary.is_object()) << describe(result);
  for (const char* key : {"run_dir", "status", "stop_reason", "best_candidate", "best_speedup", "cycles", "evaluations",
                          "tokens", "cost_usd"})
    EXPECT_TRUE(summary.contains(key)) << key << "\n" << summary.dump(2);
  EXPECT_EQ(summary["status"], "finished") << summary.dump(2);
  ASSERT_TRUE(summary["best_speedup"].is_number()) << summary.dump(2);
  EXPECT_GE(summary["best_speedup"].get<double>(), 2.0) << summary.dump(2);
  EXPECT_EQ(summary["cycles"], 4) << summary.dump(2);

  std::filesystem::path run_dir = summary["run_dir"].get<std::string>();
  ASSERT_TRUE(std::filesystem::exists(run_dir / "run.json"));
  // At least one restructuring decision after the first cycle, with its evidence.
  int restructured = 0;
  std::string seen;
  for (int cycle = 2; cycle <= 4; ++cycle) {
    char name[8];
    std::snprintf(name, sizeof name, "%04d", cycle);
    std::filesystem::path file = run_dir / "cycles" / name / "team.json";
    if (!std::filesystem::exists(file)) continue;
    std::ifstream in(file);
    nlohmann::json team = nlohmann::json::parse(in);
    ASSERT_TRUE(team.contains("roles") && team["roles"].is_array() && !team["roles"].empty()) << team.dump(2);
    ASSERT_TRUE(team["roles"][0].contains("name")) << team.dump(2);
    for (const char* key : {"pattern", "directives", "rationale", "evidence"}) EXPECT_TRUE(team.contains(key)) << key;
    seen += name + std::string(": ") + team.value("change", "?") + "\n";
    if (team["evidence"].is_array() && !team["evidence"].empty() && team.value("change", "no change") != "no change")
      ++restructured;
  }
  EXPECT_GE(restructured, 1) << seen;

  ProcessResult runs = run_evoteam({"runs", "--runs-dir", (dir / "runs").string(), "--json"}, std::chrono::seconds(60));
  ASSERT_TRUE(runs.ok()) << describe(runs);
  nlohmann::json list = parse_stdout(runs);
  ASSERT_TRUE(list.is_array() && list.size() == 1u) << runs.out.text;
  EXPECT_EQ(list[0]["id"], run_dir.filename().string());
  EXPECT_EQ(list[0]["status"], "finished");

  ProcessResult show = run_evoteam({"show", run_dir.string(), "--json"}, std::chrono::seconds(60));
  ASSERT_TRUE(show.ok()) << describe(show);
  nlohmann::json description = parse_stdout(show);
  EXPECT_TRUE(description.is_object()) << show.out.text;
  EXPECT_NE(show.out.text.find(run_dir.filename().string()), std::string::npos) << show.out.text;
}

TEST(OptimizeE2E, ResumeAfterKill9LosesNothing) {
  testing::TempDir dir;
  const std::filesystem::path runs_dir = dir / "runs";
  // A cache of its own: with results cached by earlier runs the whole run would end before the kill.
  std::vector<std::string> args = {EVOTEAM_BINARY,
                                   "--set",
                                   "team.evaluations_per_cycle=4",
                                   "--set",
                                   "eval.cache_dir=" + (dir / "cache").string(),
                                   "optimize",
                                   k_task.string(),
                                   "--provider",
                                   "builtin",
                                   "--runs-dir",
                                   runs_dir.string(),
                                   "--max-cycles",
                                   "3",
                                   "--json"};
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, (dir / "stdout").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, (dir / "stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  // Its own process group, so the kill takes its compilers and harnesses with it, as a machine crash would.
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  pid_t pid = 0;
  int spawned = posix_spawn(&pid, argv[0], &actions, &attributes, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  ASSERT_EQ(spawned, 0);

  // Wait until at least three evaluations are journaled, then kill -9 mid-run.
  std::optional<std::filesystem::path> run_dir;
  bool exited = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(240);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      break;
    }
    if (!run_dir) run_dir = only_run(runs_dir);
    if (run_dir && evaluations(*run_dir).size() >= 3) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!exited) {
    kill(-pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
  }
  ASSERT_FALSE(exited) << "the run ended before it could be killed";
  ASSERT_TRUE(run_dir.has_value()) << "no run directory under " << runs_dir;
  std::vector<nlohmann::json> before = evaluations(*run_dir);
  ASSERT_GE(before.size(), 3u) << "timed out waiting for three evaluations";

  ProcessResult resumed = run_evoteam({"resume", run_dir->string(), "--json"}, std::chrono::seconds(300));
  ASSERT_TRUE(resumed.ok()) << describe(resumed);
  nlohmann::json summary = parse_stdout(resumed);
  ASSERT_TRUE(summary.is_object());
  EXPECT_EQ(summary["status"], "finished") << summary.dump(2);
  EXPECT_EQ(summary["cycles"], 3) << summary.dump(2);

  std::vector<nlohmann::json> after = evaluations(*run_dir);
  std::set<std::string> ids_after;
  for (const nlohmann::json& record : after) ids_after.insert(record.value("candidate_id", ""));
  for (const nlohmann::json& record : before)
    EXPECT_TRUE(ids_after.count(record.value("candidate_id", ""))) << "lost " << record.dump();
  EXPECT_GT(after.size(), before.size());

  // No candidate was evaluated twice: non-blocked evaluations have distinct sources_hash + params.
  std::set<std::string> keys;
  for (const nlohmann::json& record : after) {
    if (record.value("blocked_by_knowledge", false)) continue;
    std::string key = record.value("sources_hash", "") + record.value("params", nlohmann::json::object()).dump();
    EXPECT_TRUE(keys.insert(key).second) << "evaluated twice: " << record.dump();
  }
}

TEST(OptimizeE2E, InvalidTaskDirExitsThreeNamingTaskJson) {
  testing::TempDir dir;
  std::filesystem::create_directories(dir / "not_a_task");
  ProcessResult result = run_evoteam({"optimize", (dir / "not_a_task").string(), "--provider", "builtin", "--runs-dir",
                                      (dir / "runs").string(), "--max-cycles", "1", "--json"},
                                     std::chrono::seconds(60));
  EXPECT_EQ(result.exit_code, 3) << describe(result);
  EXPECT_NE((result.err.text + result.out.text).find("task.json"), std::string::npos) << describe(result);
}

// Budgets that are not finite numbers of 0 or more are usage errors on the command line (exit 2) and invalid
// configuration (exit 3); neither leaves a run behind.
TEST(OptimizeE2E, NonFiniteOrNegativeBudgetsAreRefusedBeforeARunExists) {
  testing::TempDir dir;
  const std::vector<std::pair<std::vector<std::string>, int>> cases = {
      {{"--budget-usd", "nan"}, 2}, {{"--budget-hours", "inf"}, 2},          {{"--target-speedup", "nan"}, 2},
      {{"--budget-usd", "-1"}, 2},  {{"--budget-evaluations", "-2"}, 2},     {{"--max-cycles", "-1"}, 2},
      {{"--seed", "-1"}, 2},        {{"--set", "budgets.max_cycles=-1"}, 3}, {{"--set", "budgets.usd=-0.5"}, 3}};
  for (const auto& [extra, code] : cases) {
    std::vector<std::string> args = {"optimize",   testing::k_task.string(), "--provider", "builtin",
                                     "--runs-dir", (dir / "runs").string()};
    if (extra[0] == "--set")
      args.insert(args.begin(), extra.begin(), extra.end());
    else
      args.insert(args.end(), extra.begin(), extra.end());
    ProcessResult result = run_evoteam(args, std::chrono::seconds(60));
    EXPECT_EQ(result.exit_code, code) << extra[0] << " " << extra[1] << "\n" << describe(result);
    EXPECT_FALSE(testing::only_run(dir / "runs").has_value()) << extra[0] << " " << extra[1];
  }
}

// Every --budget-* flag through `optimize` itself: each ends the run with exit code 5 and its own stop reason,
// overshooting by at most one evaluation or one LLM call. The evaluation, hours and GPU-seconds budgets hold within
// a cycle (the lab refuses evaluations past them), so the run does not finish the cycle's work first.
TEST(OptimizeE2E, EveryBudgetFlagEndsTheRunWithExitFiveAndItsStopReason) {
  testing::TempDir dir;
  const std::string script =
      (std::filesystem::path(EVOTEAM_SOURCE_DIR) / "tests/data/scripted/team_debug_story.jsonl").string();
  const std::vector<std::string> scripted = {
      "--provider", "scripted", "--set", "llm.scripted_file=" + script, "--set", "supervisor.policy=rules"};
  struct Case {
    std::vector<std::string> flags;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {{"--provider", "builtin", "--budget-evaluations", "3"}, "budget_evaluations"},
      {{"--provider", "builtin", "--budget-hours", "0.00001"}, "budget_hours"},
      // A result served from the cache held no device: a cache of its own makes the starting kernel run.
      {{"--provider", "builtin", "--budget-gpu-seconds", "0.000001", "--set",
        "eval.cache_dir=" + (dir / "cache").string()},
       "budget_gpu_seconds"},
      {{"--budget-tokens", "40"}, "budget_tokens"},
      {{"--model", "claude-sonnet-4-5", "--budget-usd", "0.0002"}, "budget_usd"}};
  for (const Case& run : cases) {
    std::vector<std::string> args = {"optimize",   testing::k_task.string(),    "--max-cycles", "0",
                                     "--runs-dir", (dir / run.reason).string(), "--json"};
    args.insert(args.end(), run.flags.begin(), run.flags.end());
    if (run.flags[0] != "--provider") args.insert(args.end(), scripted.begin(), scripted.end());
    ProcessResult result = run_evoteam(args, std::chrono::seconds(300));
    ASSERT_EQ(result.exit_code, 5) << run.reason << "\n" << describe(result);
    nlohmann::json summary = parse_stdout(result);
    EXPECT_EQ(summary["stop_reason"], run.reason) << summary.dump(2);
    EXPECT_EQ(summary["status"], "finished") << summary.dump(2);
    const nlohmann::json run_json = read_json_file(*testing::only_run(dir / run.reason) / "run.json");
    EXPECT_EQ(run_json["stop_reason"], run.reason);
    const int tokens = summary["tokens"]["input"].get<int>() + summary["tokens"]["output"].get<int>();
    if (run.reason == "budget_evaluations") {
      EXPECT_LE(summary["evaluations"].get<int>() + summary["trials"].get<int>(), 3) << summary.dump(2);
    } else if (run.reason == "budget_hours") {
      EXPECT_EQ(summary["cycles"], 1) << summary.dump(2);
    } else if (run.reason == "budget_gpu_seconds") {
      // The starting kernel crosses the budget; nothing is evaluated after it, in its cycle or later.
      EXPECT_GT(summary["gpu_seconds"].get<double>(), 0.0) << summary.dump(2);
      EXPECT_EQ(summary["evaluations"], 1) << summary.dump(2);
      EXPECT_EQ(summary["cycles"], 1) << summary.dump(2);
    } else if (run.reason == "budget_tokens") {
      EXPECT_GE(tokens, 40) << summary.dump(2);
      EXPECT_LE(tokens, 40 + 15) << "more than one call past the budget\n" << summary.dump(2);
    } else {
      // 10 input and 5 output tokens a reply at the model's price: 0.000105 USD.
      EXPECT_GE(summary["cost_usd"].get<double>(), 0.0002) << summary.dump(2);
      EXPECT_LE(summary["cost_usd"].get<double>(), 0.0002 + 0.000106) << summary.dump(2);
    }
  }
}

// A configuration value outside its range or closed set is refused at load (exit 3), naming the layer and the key,
// before a run directory exists; before, such values were clamped, ignored or failed the run's first evaluation.
TEST(OptimizeE2E, ConfigurationValuesOutsideTheirRulesAreRefusedBeforeARunExists) {
  testing::TempDir dir;
  const std::pair<const char*, const char*> cases[] = {
      {"eval.timing.min_samples=-5", "'eval.timing.min_samples' must be at least 2, got -5"},
      {"eval.correctness.seeds=0", "'eval.correctness.seeds' must be at least 1, got 0"},
      {"team.evaluations_per_cycle=0", "'team.evaluations_per_cycle' must be at least 1, got 0"},
      {"log.verbosity=loud", "'log.verbosity' must be one of quiet, normal, verbose, debug"},
      {"eval.pipeline=[\"nope\"]", "'eval.pipeline' entry 0 must be one of static, build"},
      {"llm.backoff_initial_s=99",
       "'llm.backoff_initial_s' (99, from --set llm.backoff_initial_s=99) must not exceed"}};
  for (const auto& [assignment, expected] : cases) {
    ProcessResult result = run_evoteam({"--set", assignment, "optimize", testing::k_task.string(), "--provider",
                                        "builtin", "--runs-dir", (dir / "runs").string()},
                                       std::chrono::seconds(60));
    EXPECT_EQ(result.exit_code, 3) << assignment << "\n" << describe(result);
    EXPECT_NE(result.err.text.find(expected), std::string::npos) << assignment << "\n" << describe(result);
    EXPECT_FALSE(testing::only_run(dir / "runs").has_value()) << assignment;
  }
}

// log.verbosity sets the console level when no -q/-v flag is given (it was read by nothing before); the flags win.
TEST(OptimizeE2E, LogVerbosityFromTheConfigurationUnlessAFlagSaysOtherwise) {
  testing::TempDir dir;
  const std::string line = "configuration: team.seed=7 from --set team.seed=7";
  auto stderr_of = [&](std::vector<std::string> args) {
    args.insert(args.end(), {"runs", "--runs-dir", (dir / "runs").string()});
    ProcessResult result = run_evoteam(args, std::chrono::seconds(60));
    EXPECT_EQ(result.exit_code, 0) << describe(result);
    return result.err.text;
  };
  EXPECT_NE(stderr_of({"--set", "log.verbosity=debug", "--set", "team.seed=7"}).find(line), std::string::npos);
  EXPECT_EQ(stderr_of({"--set", "team.seed=7"}).find(line), std::string::npos);
  EXPECT_EQ(stderr_of({"-q", "--set", "log.verbosity=debug", "--set", "team.seed=7"}).find(line), std::string::npos);
}

// Errors that need no run (a provider that does not exist, an LLM setup that cannot work) leave no run behind.
TEST(OptimizeE2E, AProviderThatCannotWorkIsRefusedBeforeARunExists) {
  testing::TempDir dir;
  for (const std::vector<std::string>& extra : std::vector<std::vector<std::string>>{
           {"--provider", "bogus"}, {"--provider", "openai", "--model", "no-such-model-anywhere"}}) {
    std::vector<std::string> args = {"optimize", testing::k_task.string(), "--runs-dir", (dir / "runs").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    ProcessResult result = run_evoteam(args, std::chrono::seconds(60));
    EXPECT_EQ(result.exit_code, 3) << extra[1] << "\n" << describe(result);
    EXPECT_FALSE(testing::only_run(dir / "runs").has_value()) << extra[1];
  }
}

// Every regular file under `dir` with its bytes.
std::map<std::string, std::string> files_of(const std::filesystem::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir))
    if (entry.is_regular_file()) files[std::filesystem::relative(entry.path(), dir).string()] = read_file(entry.path());
  return files;
}

// A journal cut in the middle (a bad copy, a disk that lost its tail) must never lead resume to reuse ids and
// write over the files of the cycles it lost: resume refuses with exit 3, and every file is byte-identical.
TEST(OptimizeE2E, ResumeAfterTheJournalWasCutInTheMiddleChangesNoFile) {
  testing::TempDir dir;
  const std::filesystem::path runs_dir = dir / "runs";
  // A cache in the build tree: after the first run of this test its evaluations are served from it.
  const std::string cache = (testing::test_cache_root() / "test-cache/journal-cut").string();
  ProcessResult first = run_evoteam(
      {"--set", "team.evaluations_per_cycle=2", "--set", "eval.cache_dir=" + cache, "optimize", k_task.string(),
       "--provider", "builtin", "--runs-dir", runs_dir.string(), "--max-cycles", "3", "--json"},
      std::chrono::seconds(300));
  ASSERT_TRUE(first.ok()) << describe(first);
  std::optional<std::filesystem::path> run_dir = only_run(runs_dir);
  ASSERT_TRUE(run_dir.has_value());

  // Cut inside the line that starts cycle 2: cycles 2 and 3 stay on disk, the journal forgets them.
  const std::filesystem::path journal = *run_dir / "journal.jsonl";
  const std::string text = read_file(journal);
  const std::string marker = "\"type\":\"cycle_start\"";
  const std::size_t first_start = text.find(marker);
  ASSERT_NE(first_start, std::string::npos);
  const std::size_t second_start = text.find(marker, first_start + 1);
  ASSERT_NE(second_start, std::string::npos) << "the run had one cycle";
  write_file_atomic(journal, text.substr(0, second_start));
  ASSERT_TRUE(std::filesystem::exists(*run_dir / "cycles/0003/summary.json"));
  const std::map<std::string, std::string> before = files_of(*run_dir);

  ProcessResult resumed = run_evoteam({"resume", run_dir->string(), "--json"}, std::chrono::seconds(120));
  EXPECT_EQ(resumed.exit_code, 3) << describe(resumed);
  EXPECT_NE(resumed.err.text.find("journal.jsonl ends before"), std::string::npos) << describe(resumed);
  EXPECT_EQ(files_of(*run_dir), before) << "resume changed files of the run";
}

// `optimize --workloads published` evaluates only the task's published workloads, in every evaluation, and
// keeps the choice in run.json for resume.
TEST(OptimizeE2E, TheWorkloadsChoiceIsRecordedAndEveryEvaluationUsesOnlyThoseWorkloads) {
  testing::TempDir dir;
  small_matmul_task(dir / "task");
  nlohmann::json task = read_json_file(dir / "task" / "task.json");
  task["workloads"][0]["origin"] = "published";
  task["workloads"][0]["source"] = "a-trace-uuid";
  write_json_atomic(dir / "task" / "task.json", task);
  ProcessResult result = run_evoteam(
      {"--set", "eval.cache_dir=" + (dir / "cache").string(), "--set", "eval.timing.min_time_s=0.02", "--set",
       "eval.timing.warmup_s=0.005", "optimize", (dir / "task").string(), "--provider", "builtin", "--runs-dir",
       (dir / "runs").string(), "--max-cycles", "1", "--budget-evaluations", "2", "--workloads", "published", "--json"},
      std::chrono::seconds(300));
  ASSERT_TRUE(result.exit_code == 0 || result.exit_code == 5) << describe(result);
  std::optional<std::filesystem::path> run_dir = only_run(dir / "runs");
  ASSERT_TRUE(run_dir.has_value());
  EXPECT_EQ(read_json_file(*run_dir / "run.json")["options"]["workloads"], "published");
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(*run_dir / "candidates")) {
    if (!std::filesystem::is_regular_file(entry.path() / "eval.json")) continue;
    const nlohmann::json eval = read_json_file(entry.path() / "eval.json");
    if (!eval.contains("workloads") || eval["workloads"].empty()) continue;
    std::vector<std::string> names;
    for (const nlohmann::json& workload : eval["workloads"]) names.push_back(workload.value("name", ""));
    EXPECT_EQ(names, std::vector<std::string>{"small"}) << entry.path();
    ++checked;
  }
  EXPECT_GT(checked, 0) << "no evaluation timed any workload";
}

// A full disk while the task is frozen into the new run (here a file-size limit the copy of a large task file
// exceeds): exit 74 naming the file, and no run is left behind whose frozen task is cut short, which resume
// would refuse for ever.
TEST(OptimizeE2E, AFullDiskWhileTheTaskIsFrozenLeavesNoHalfMadeRun) {
  testing::TempDir dir;
  const std::filesystem::path task = dir / "task";
  copy_tree(k_task, task);
  write_file_atomic(task / "notes.bin", std::string(256 * 1024, 'x'));
  const std::filesystem::path runs_dir = dir / "runs";
  // bash counts ulimit -f in KiB; SIGXFSZ ignored, so the write fails with EFBIG as on a full disk.
  const std::string script = "trap '' XFSZ; ulimit -f 64; exec \"$0\" \"$@\"";
  Command command;
  command.argv = {"/bin/bash",    "-c",
                  script,         EVOTEAM_BINARY,
                  "--set",        "eval.cache_dir=" + (dir / "cache").string(),
                  "optimize",     task.string(),
                  "--provider",   "builtin",
                  "--runs-dir",   runs_dir.string(),
                  "--max-cycles", "1"};
  command.timeout = std::chrono::seconds(120);
  command.output_cap = 0;
  ProcessResult result = system_runner().run(command);
  EXPECT_EQ(result.exit_code, 74) << describe(result);
  EXPECT_NE(result.err.text.find("notes.bin"), std::string::npos) << describe(result);
  std::vector<std::string> left;
  if (std::filesystem::exists(runs_dir))
    for (const auto& entry : std::filesystem::directory_iterator(runs_dir)) left.push_back(entry.path().string());
  EXPECT_TRUE(left.empty()) << "left behind: " << left.front();
}

// A run written by the main of 2026-12-04, before the journal's records were typed (a scripted team whose
// Disciplinarian rejected c0002, with the meter's ticks), still resumes: the run ran its cycles, so the resume ends
// it again with the same best and the meter's totals restored, and it reports.
TEST(OptimizeE2E, ARunWrittenBeforeTypedRecordsResumesAndReports) {
  testing::TempDir dir;
  const std::filesystem::path run = dir / "run";
  copy_tree(std::filesystem::path(EVOTEAM_SOURCE_DIR) / "tests/data/runs_before_typed_records/scripted_run", run);
  ProcessResult resumed = run_evoteam({"resume", run.string(), "--json"}, std::chrono::seconds(120));
  ASSERT_TRUE(resumed.ok()) << describe(resumed);
  const nlohmann::json summary = parse_stdout(resumed);
  EXPECT_EQ(summary["status"], "finished") << summary.dump(2);
  EXPECT_EQ(summary["stop_reason"], "max_cycles");
  EXPECT_EQ(summary["exit_code"], 0);
  EXPECT_EQ(summary["best_candidate"], "c0003");
  EXPECT_EQ(summary["best_speedup"], 3.558048121461536);
  EXPECT_EQ(summary["evaluations"], 3);
  EXPECT_EQ(summary["tokens"]["input"], 90) << "the meter's totals come back from the old budget ticks";
  EXPECT_EQ(summary["tokens"]["output"], 45);
  const std::vector<nlohmann::json> records = testing::journal_records(run);
  ASSERT_GE(records.size(), 2u);
  EXPECT_EQ(records[records.size() - 2]["type"], "resume");
  EXPECT_EQ(records.back()["type"], "stop");
  EXPECT_EQ(records.back()["status"], "finished");

  ProcessResult report =
      run_evoteam({"report", run.string(), "--out", (dir / "report").string()}, std::chrono::seconds(60));
  ASSERT_TRUE(report.ok()) << describe(report);
  const std::string markdown = read_file(dir / "report" / "report.md");
  EXPECT_NE(markdown.find("Best path: c0001 (1.01x) → c0003 (3.56x)"), std::string::npos) << markdown;
}

}  // namespace
}  // namespace evoteam
