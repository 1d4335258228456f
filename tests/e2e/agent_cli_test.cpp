// Coding-agent CLIs as team members, end to end: the real evoteam binary runs stand-ins for `claude` and `codex`
// (tests/data/agent_clis: each CLI's documented headless flags and events, acting through the official MCP SDK
// against the `evoteam mcp` server the daemon registered) through stories — a competent one, a hang, a crash, garbage,
// a usage that crosses the token budget, a refused key, writes outside the workspace, no submit. And the SDK itself
// drives `evoteam mcp --run` through a candidate in both eras of the protocol. Needs a Python with the `mcp` package
// (scripts/test installs it); skipped without one unless EVOTEAM_REQUIRE_MCP is set.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include <evoteam/core/fs.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/core/text.hpp>

#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

constexpr const char* k_cli_key = "sk-ant-cli-canary-DO-NOT-LEAK-91c2";
const fs::path k_standins = fs::path(EVOTEAM_SOURCE_DIR) / "tests" / "data" / "agent_clis";
const std::string k_fast_params = "ACC_IN_REGISTERS=1, REG_ROWS=4, REG_COLS=64, TILE_N=256, TILE_K=128, LOOP_ORDER=1";

std::string mcp_python() {
  if (const char* python = std::getenv("EVOTEAM_TEST_PYTHON"); python != nullptr && *python != '\0') return python;
  return (fs::path(EVOTEAM_TEST_HELPERS_DIR) / "pyenv" / "bin" / "python").string();
}

bool mcp_sdk_installed() {
  Command probe;
  probe.argv = {mcp_python(), "-c", "import mcp"};
  probe.timeout = std::chrono::seconds(60);
  return system_runner().run(probe).ok();
}

#define REQUIRE_MCP_SDK()                                                         \
  do {                                                                            \
    static const bool have = mcp_sdk_installed();                                 \
    if (!have && std::getenv("EVOTEAM_REQUIRE_MCP") != nullptr)                   \
      FAIL() << mcp_python() << " has no mcp package (scripts/test installs it)"; \
    if (!have) GTEST_SKIP() << mcp_python() << " has no mcp package";             \
  } while (0)

// A bin directory holding `cli` (claude or codex) that plays `story`, as the stand-ins' README says.
fs::path standin_bin(const fs::path& root, const std::string& cli, const std::string& story) {
  const fs::path bin = root / "bin";
  evoteam::create_directories(bin);
  const fs::path wrapper = bin / cli;
  write_file_atomic(wrapper, "#!/bin/sh\nexport EVOTEAM_STANDIN_STORY=" + (k_standins / "stories" / story).string() +
                                 ".json\nexec " + mcp_python() + " " + (k_standins / cli).string() + " \"$@\"\n");
  fs::permissions(wrapper, fs::perms::owner_all);
  return bin;
}

// The wrapper starts the stand-in from the source tree with the test Python; either may sit under /tmp, which the
// sandbox replaces, so a run names them as a user names a CLI installed there.
// The interpreter a virtual environment was made from (its base prefix): it may live under a home directory (a
// pyenv install), which the sandbox hides.
std::string python_base_prefix() {
  Command probe;
  probe.argv = {mcp_python(), "-c", "import sys; print(sys.base_prefix)"};
  probe.timeout = std::chrono::seconds(60);
  const ProcessResult result = system_runner().run(probe);
  return trim(result.out.text);
}

std::string standins_readable() {
  nlohmann::json paths = {k_standins.string(), fs::path(mcp_python()).parent_path().parent_path().string()};
  if (const std::string base = python_base_prefix(); !base.empty()) paths.push_back(base);
  return "agent.cli.readable=" + paths.dump();
}

std::map<std::string, std::string> env_with(const fs::path& bin) {
  return scrubbed_env({{"PATH", bin.string() + ":" + std::getenv("PATH")},
                       {"ANTHROPIC_API_KEY", k_cli_key},
                       {"OPENAI_API_KEY", k_cli_key},
                       {"EVOTEAM_LOG__VERBOSITY", "normal"}});
}

struct CliRun {
  ProcessResult process;
  fs::path run_dir;
  std::vector<nlohmann::json> turns;  // the journal's turn records
};

CliRun optimize_with(const TempDir& temp, const std::string& cli, const std::string& story,
                     std::vector<std::string> extra = {}) {
  const fs::path bin = standin_bin(temp.path(), cli, story);
  std::vector<std::string> args = {"optimize",   testing::k_task.string(),
                                   "--provider", "builtin",
                                   "--agent",    cli == "claude" ? "claude-code" : "codex",
                                   "--runs-dir", (temp.path() / "runs").string(),
                                   "--set",      standins_readable(),
                                   "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  CliRun run;
  run.process = testing::run_evoteam(args, std::chrono::seconds(600), env_with(bin));
  if (std::optional<fs::path> dir = testing::only_run(temp.path() / "runs")) {
    run.run_dir = *dir;
    for (const nlohmann::json& record : testing::journal_records(*dir))
      if (record.value("type", "") == "turn") run.turns.push_back(record);
  }
  return run;
}

// The usage the CLIs reported in a run: the sum over every turn transcript's cli_end record.
nlohmann::json reported_usage(const fs::path& run_dir) {
  std::uint64_t tokens = 0;
  double cost = 0;
  for (const auto& entry : fs::recursive_directory_iterator(run_dir / "cycles")) {
    if (entry.path().filename() != "transcript.jsonl") continue;
    std::ifstream in(entry.path());
    for (std::string line; std::getline(in, line);) {
      const nlohmann::json record = nlohmann::json::parse(line);
      if (record.value("type", "") != "cli_end") continue;
      for (const auto& [kind, count] : record["usage"].items()) tokens += count.get<std::uint64_t>();
      cost += record.value("cost_usd", 0.0);
    }
  }
  return {{"tokens", tokens}, {"cost_usd", cost}};
}

std::uint64_t meter_tokens(const nlohmann::json& outcome) {
  std::uint64_t total = 0;
  for (const auto& [kind, count] : outcome["tokens"].items()) total += count.get<std::uint64_t>();
  return total;
}

// No file of the run holds the key.
void expect_no_key(const fs::path& run_dir) {
  for (const auto& entry : fs::recursive_directory_iterator(run_dir)) {
    if (entry.is_regular_file()) {
      EXPECT_EQ(read_file(entry.path()).find(k_cli_key), std::string::npos) << entry.path() << " holds the key";
    }
  }
}

std::string turn_summary(const CliRun& run, int cycle, const std::string& role) {
  for (const nlohmann::json& turn : run.turns)
    if (turn.value("cycle", 0) == cycle && turn.value("role", "") == role) return turn.value("summary", "");
  return "";
}

TEST(AgentCli, ClaudeCodeMembersFindAFasterKernelAndTheMeterHoldsWhatTheyReported) {
  REQUIRE_MCP_SDK();
  TempDir temp;
  const CliRun run = optimize_with(temp, "claude", "competent", {"--max-cycles", "2"});
  ASSERT_EQ(run.process.exit_code, 0) << testing::describe(run.process);
  const nlohmann::json outcome = testing::parse_stdout(run.process);
  EXPECT_GT(outcome.value("best_speedup", 0.0), 1.5);
  // The optimizer's submit is the run's candidate, recorded by the lab with the stand-in's params.
  bool submitted = false;
  for (const nlohmann::json& record : testing::evaluations(run.run_dir))
    submitted |= record.value("author_role", "") == "optimizer" && record.value("cycle", 0) == 1 &&
                 record["params"].contains("REG_COLS") &&
                 record["params"]["REG_COLS"].dump().find("64") != std::string::npos;
  EXPECT_TRUE(submitted);
  EXPECT_NE(turn_summary(run, 1, "optimizer").find("claude-code finished"), std::string::npos);
  // Every turn played the story's 11 steps of (1200 in, 300 out, 800 cached) and $0.0084 each; the meter holds what the
  // transcripts say the CLIs reported, no more and no less.
  const nlohmann::json first = reported_usage(run.run_dir);
  EXPECT_EQ(meter_tokens(outcome), first["tokens"].get<std::uint64_t>());
  EXPECT_NEAR(outcome.value("cost_usd", 0.0), first["cost_usd"].get<double>(), 1e-9);
  EXPECT_EQ(first["tokens"].get<std::uint64_t>() % (11 * (1200 + 300 + 800)), 0u);
  EXPECT_GE(first["tokens"].get<std::uint64_t>(), 11u * (1200 + 300 + 800));
  expect_no_key(run.run_dir);
}

TEST(AgentCli, CodexMembersAreChargedFromThePriceTable) {
  REQUIRE_MCP_SDK();
  TempDir temp;
  const CliRun run = optimize_with(temp, "codex", "competent", {"--max-cycles", "1", "--set", "agent.cli.model=gpt-5"});
  ASSERT_EQ(run.process.exit_code, 0) << testing::describe(run.process);
  const nlohmann::json outcome = testing::parse_stdout(run.process);
  EXPECT_GT(outcome.value("best_speedup", 0.0), 1.5);
  // Codex reports tokens once, at turn.completed (its input includes the cached part), and no cost.
  EXPECT_EQ(outcome["tokens"].value("input", 0), 11 * 1200);
  EXPECT_EQ(outcome["tokens"].value("cache_read", 0), 11 * 800);
  EXPECT_EQ(outcome["tokens"].value("output", 0), 11 * 300);
  EXPECT_NEAR(outcome.value("cost_usd", 0.0), 11 * (1200 * 1.25e-6 + 800 * 1.25e-7 + 300 * 1e-5), 1e-9);
  expect_no_key(run.run_dir);
}

TEST(AgentCli, ACliThatHangsIsKilledAtTheTurnsDeadlineAndTheRunGoesOn) {
  REQUIRE_MCP_SDK();
  TempDir temp;
  const CliRun run =
      optimize_with(temp, "claude", "hang", {"--max-cycles", "1", "--set", "agent.cli.turn_timeout_s=5"});
  ASSERT_EQ(run.process.exit_code, 0) << testing::describe(run.process);
  EXPECT_NE(turn_summary(run, 1, "optimizer").find("timed_out"), std::string::npos)
      << turn_summary(run, 1, "optimizer");
  EXPECT_LT(run.process.wall_s, 120);
}

TEST(AgentCli, ACrashGarbageAndARefusedKeyAreTypedEndsOfTheTurn) {
  REQUIRE_MCP_SDK();
  struct Story {
    std::string name, end;
    int exit_code;  // a refused key stops the run as provider_refused (6): every later turn would be refused too
  };
  for (const Story& story : std::vector<Story>{{"crash", "claude-code failed", 0},
                                               {"garbage", "claude-code truncated", 0},
                                               {"auth", "claude-code auth_failed", 6}}) {
    TempDir temp;
    const CliRun run = optimize_with(temp, "claude", story.name, {"--max-cycles", "2"});
    EXPECT_EQ(run.process.exit_code, story.exit_code) << story.name << ": " << testing::describe(run.process);
    EXPECT_NE(turn_summary(run, 1, "optimizer").find(story.end), std::string::npos)
        << story.name << ": " << turn_summary(run, 1, "optimizer");
  }
}

TEST(AgentCli, UsageThatCrossesTheTokenBudgetStopsTheCliAtOnce) {
  REQUIRE_MCP_SDK();
  TempDir temp;
  const CliRun run = optimize_with(temp, "claude", "over_budget", {"--budget-tokens", "100000"});
  EXPECT_EQ(run.process.exit_code, 5) << testing::describe(run.process);
  const nlohmann::json outcome = testing::parse_stdout(run.process);
  EXPECT_NE(turn_summary(run, 1, "optimizer").find("over_budget"), std::string::npos);
  // Charged: exactly what the CLI reported before it was stopped. A step is 40500 tokens: the CLI may print the step
  // it was in when the stop reached it, but no more, and it never finished its 9 steps.
  EXPECT_EQ(meter_tokens(outcome), reported_usage(run.run_dir)["tokens"].get<std::uint64_t>());
  EXPECT_GE(meter_tokens(outcome), 100000u);
  EXPECT_LE(meter_tokens(outcome), 100000u + 2 * 40500u);
  EXPECT_LT(meter_tokens(outcome), 9 * 40500u);
}

TEST(AgentCli, WritesOutsideTheWorkspaceAreRefusedAndAMissingSubmitIsEvaluatedOnce) {
  REQUIRE_MCP_SDK();
  TempDir temp;
  const fs::path escape = "/tmp/evoteam-escape-standin.txt";
  fs::remove(escape);
  const CliRun outside = optimize_with(temp, "claude", "outside_write", {"--max-cycles", "1"});
  ASSERT_EQ(outside.process.exit_code, 0) << testing::describe(outside.process);
  EXPECT_FALSE(fs::exists(escape));
  EXPECT_FALSE(fs::exists(outside.run_dir / "cycles" / "0001" / "agents" / "escape.txt"));

  TempDir again;
  const CliRun silent = optimize_with(again, "claude", "no_submit", {"--max-cycles", "1"});
  ASSERT_EQ(silent.process.exit_code, 0) << testing::describe(silent.process);
  EXPECT_NE(turn_summary(silent, 1, "optimizer").find("no submit came"), std::string::npos)
      << turn_summary(silent, 1, "optimizer");
  int by_optimizer = 0;
  for (const nlohmann::json& record : testing::evaluations(silent.run_dir))
    by_optimizer += record.value("author_role", "") == "optimizer";
  EXPECT_EQ(by_optimizer, 1);
}

// A CLI installed under /tmp (here: a copy of the stand-in, started by a wrapper) is hidden by the sandbox's fresh
// /tmp until the run names its tree in agent.cli.readable; a path that is not absolute is refused before the run.
TEST(AgentCli, ACliInstalledUnderTmpRunsOnceTheRunNamesItsTree) {
  REQUIRE_MCP_SDK();
  TempDir temp;
  if (temp.path().string().rfind("/tmp/", 0) != 0) GTEST_SKIP() << "the temporary directory is not under /tmp";
  const fs::path tree = temp.path() / "cli-install";
  evoteam::create_directories(tree);
  for (const char* file : {"claude", "standin.py", "stories/competent.json"})
    fs::copy_file(k_standins / file, tree / fs::path(file).filename());
  const fs::path bin = temp.path() / "bin";
  evoteam::create_directories(bin);
  write_file_atomic(bin / "claude", "#!/bin/sh\nexport EVOTEAM_STANDIN_STORY=" + (tree / "competent.json").string() +
                                        "\nexec " + mcp_python() + " " + (tree / "claude").string() + " \"$@\"\n");
  fs::permissions(bin / "claude", fs::perms::owner_all);
  const std::string python_tree = fs::path(mcp_python()).parent_path().parent_path().string();
  const std::string python_base = python_base_prefix();
  auto run_with = [&](const nlohmann::json& readable, const std::string& runs) {
    return testing::run_evoteam(
        {"optimize", testing::k_task.string(), "--provider", "builtin", "--agent", "claude-code", "--max-cycles", "1",
         "--runs-dir", (temp.path() / runs).string(), "--set", "agent.cli.readable=" + readable.dump(), "--json"},
        std::chrono::seconds(600), env_with(bin));
  };
  auto optimizer_summary = [&](const std::string& runs) {
    std::string summary;
    for (const nlohmann::json& record : testing::journal_records(testing::only_run(temp.path() / runs).value()))
      if (record.value("type", "") == "turn" && record.value("role", "") == "optimizer")
        summary = record.value("summary", "");
    return summary;
  };

  const ProcessResult relative = run_with({"cli-install"}, "relative");
  EXPECT_EQ(relative.exit_code, 3) << testing::describe(relative);
  EXPECT_NE(relative.err.text.find("agent.cli.readable"), std::string::npos) << relative.err.text;
  EXPECT_FALSE(testing::only_run(temp.path() / "relative").has_value());

  const ProcessResult hidden = run_with({python_tree, python_base}, "hidden");
  ASSERT_EQ(hidden.exit_code, 0) << testing::describe(hidden);
  const fs::path hidden_member =
      testing::only_run(temp.path() / "hidden").value() / "cycles" / "0001" / "agents" / "optimizer";
  const nlohmann::json start = nlohmann::json::parse(first_line(read_file(hidden_member / "transcript.jsonl")));
  if (start.value("sandbox", "") != "bwrap") GTEST_SKIP() << "bubblewrap does not work here";
  EXPECT_EQ(optimizer_summary("hidden").find("claude-code finished"), std::string::npos) << optimizer_summary("hidden");
  EXPECT_NE(read_file(hidden_member / "cli_stderr.txt").find((tree / "claude").string()), std::string::npos);

  const ProcessResult named = run_with({python_tree, python_base, tree.string()}, "named");
  ASSERT_EQ(named.exit_code, 0) << testing::describe(named);
  EXPECT_NE(optimizer_summary("named").find("claude-code finished"), std::string::npos) << optimizer_summary("named");
}

TEST(AgentCli, ACliThatIsNotInstalledIsRefusedBeforeTheRunExists) {
  TempDir temp;
  const ProcessResult result =
      testing::run_evoteam({"optimize", testing::k_task.string(), "--provider", "builtin", "--agent", "codex",
                            "--runs-dir", (temp.path() / "runs").string()},
                           std::chrono::seconds(120), scrubbed_env({{"PATH", "/usr/bin:/bin"}}));
  EXPECT_EQ(result.exit_code, 3) << testing::describe(result);
  EXPECT_NE(result.err.text.find("'codex'"), std::string::npos) << result.err.text;
  EXPECT_FALSE(testing::only_run(temp.path() / "runs").has_value());
}

// An agent that can read any file and write anywhere is not started unconfined by default: without bubblewrap,
// `auto` refuses before the run exists, naming the fix; `none` runs it, said in so many words.
TEST(AgentCli, WithoutBubblewrapAutoRefusesAndOnlyNoneSaidSoRunsUnconfined) {
  REQUIRE_MCP_SDK();
  TempDir temp;
  const fs::path bin = standin_bin(temp.path(), "claude", "competent");
  // A PATH with the CLI and nothing else: no bwrap to be found.
  const ProcessResult refused = testing::run_evoteam(
      {"optimize", testing::k_task.string(), "--provider", "builtin", "--agent", "claude-code", "--runs-dir",
       (temp.path() / "runs").string()},
      std::chrono::seconds(120), scrubbed_env({{"PATH", bin.string()}, {"ANTHROPIC_API_KEY", k_cli_key}}));
  EXPECT_EQ(refused.exit_code, 3) << testing::describe(refused);
  EXPECT_NE(refused.err.text.find("bubblewrap"), std::string::npos) << refused.err.text;
  EXPECT_NE(refused.err.text.find("agent.cli.sandbox=none"), std::string::npos) << refused.err.text;
  EXPECT_FALSE(testing::only_run(temp.path() / "runs").has_value());

  const CliRun unconfined =
      optimize_with(temp, "claude", "competent", {"--max-cycles", "1", "--set", "agent.cli.sandbox=none"});
  ASSERT_EQ(unconfined.process.exit_code, 0) << testing::describe(unconfined.process);
  EXPECT_NE(unconfined.process.err.text.find("unconfined"), std::string::npos) << unconfined.process.err.text;
  const fs::path member = unconfined.run_dir / "cycles" / "0001" / "agents" / "optimizer";
  const nlohmann::json start = nlohmann::json::parse(first_line(read_file(member / "transcript.jsonl")));
  EXPECT_EQ(start.value("sandbox", ""), "none");
}

// A template CLI has no last event: its exit says how the turn ended. One that changed the kernel finished (and its
// workspace is evaluated); one that reached no tool and changed nothing did nothing, and says so. Its prompt names
// the tools it has — evoteam's, over MCP — and no GPU architecture on this host task.
TEST(AgentCli, ATemplatesExitEndsItsTurnAndATurnThatDidNothingSaysSo) {
  TempDir temp;
  const fs::path edited = temp.path() / "edit" / "kernel.cpp";
  evoteam::create_directories(edited.parent_path());
  write_file_atomic(edited, read_file(testing::k_task / "kernel.cpp") + "\n// edited by a template member\n");
  auto run_template = [&](const std::string& member, const std::string& runs) {
    CliRun run;
    run.process =
        testing::run_evoteam({"optimize", testing::k_task.string(), "--provider", "builtin", "--agent", member,
                              "--max-cycles", "1", "--runs-dir", (temp.path() / runs).string(), "--set",
                              "agent.cli.readable=" + nlohmann::json({edited.parent_path().string()}).dump()},
                             std::chrono::seconds(600), scrubbed_env({{"PATH", std::getenv("PATH")}}));
    if (std::optional<fs::path> dir = testing::only_run(temp.path() / runs)) {
      run.run_dir = *dir;
      for (const nlohmann::json& record : testing::journal_records(*dir))
        if (record.value("type", "") == "turn") run.turns.push_back(record);
    }
    return run;
  };
  const CliRun copies = run_template("cp " + edited.string() + " {workspace}/kernel.cpp", "copies");
  ASSERT_EQ(copies.process.exit_code, 0) << testing::describe(copies.process);
  const std::string copied = turn_summary(copies, 1, "optimizer");
  EXPECT_EQ(copied.rfind("template:cp finished", 0), 0U) << copied;
  EXPECT_NE(copied.find("its workspace evaluated"), std::string::npos) << copied;
  const nlohmann::json start = nlohmann::json::parse(
      first_line(read_file(copies.run_dir / "cycles" / "0001" / "agents" / "optimizer" / "transcript.jsonl")));
  const std::string prompt = start.value("prompt", "");
  EXPECT_NE(prompt.find("evoteam's tools, from the MCP server"), std::string::npos) << prompt;
  EXPECT_EQ(prompt.find("write_file {path"), std::string::npos) << "evoteam's file tools are not the member's";
  EXPECT_EQ(prompt.find("(sm_90a)"), std::string::npos) << "a host task's prompt has no Hopper section";

  const CliRun idle = run_template("true {prompt}", "idle");
  ASSERT_EQ(idle.process.exit_code, 0) << testing::describe(idle.process);
  const std::string nothing = turn_summary(idle, 1, "optimizer");
  EXPECT_EQ(nothing.rfind("template:true did_nothing", 0), 0U) << nothing;
}

// An evolving team of stand-ins restructures as a team of built-in members does: the Optimizer breaks the build in
// cycle 1, so the rules bring a Debugger (a CLI member too) into cycle 2, where the Optimizer submits its fast
// config. Each role's story is picked by the wrapper from the role its prompt names. The Debugger, whatever kind of
// member, works the failing candidate: its edit of the stray line applies only to the broken code, and its fix passes.
TEST(AgentCli, AnEvolvingTeamOfCliMembersRestructuresAsBuiltinMembersDo) {
  REQUIRE_MCP_SDK();
  TempDir temp;
  const fs::path bin = temp.path() / "bin";
  evoteam::create_directories(bin);
  const fs::path stories = k_standins / "stories";
  write_file_atomic(bin / "claude",
                    "#!/bin/sh\ncase \"$*\" in\n"
                    "  *\"You are the **Debugger**\"*) story=fixes_the_build ;;\n"
                    "  *\"Cycle 1.\"*) story=breaks_the_build ;;\n"
                    "  *) story=competent ;;\nesac\n"
                    "export EVOTEAM_STANDIN_STORY=" +
                        stories.string() + "/$story.json\nexec " + mcp_python() + " " +
                        (k_standins / "claude").string() + " \"$@\"\n");
  fs::permissions(bin / "claude", fs::perms::owner_all);
  const ProcessResult result = testing::run_evoteam(
      {"optimize", testing::k_task.string(), "--provider", "builtin", "--agent", "claude-code", "--max-cycles", "2",
       "--runs-dir", (temp.path() / "runs").string(), "--set", standins_readable(), "--json"},
      std::chrono::seconds(600), env_with(bin));
  ASSERT_EQ(result.exit_code, 0) << testing::describe(result);
  const fs::path run = testing::only_run(temp.path() / "runs").value();
  const nlohmann::json team = nlohmann::json::parse(read_file(run / "cycles" / "0002" / "team.json"));
  std::map<std::string, std::string> lineage;
  for (const nlohmann::json& role : team["roles"]) lineage[role["name"]] = role.value("lineage", "");
  ASSERT_EQ(lineage.count("debugger"), 1u) << team.dump(2);
  EXPECT_EQ(lineage["debugger"], "failing") << team.dump(2);
  EXPECT_TRUE(testing::cites(team, "build_failure_rate")) << team.dump(2);
  std::string broken_verdict, broken_id, optimizer_cycle2_verdict, debugger_turn;
  nlohmann::json debugger_fix;
  for (const nlohmann::json& record : testing::evaluations(run)) {
    if (record.value("author_role", "") == "optimizer" && record.value("cycle", 0) == 1)
      broken_verdict = record.value("verdict", ""), broken_id = record.value("candidate_id", "");
    if (record.value("author_role", "") == "debugger") debugger_fix = record;
    if (record.value("author_role", "") == "optimizer" && record.value("cycle", 0) == 2)
      optimizer_cycle2_verdict = record.value("verdict", "");
  }
  for (const nlohmann::json& record : testing::journal_records(run))
    if (record.value("type", "") == "turn" && record.value("role", "") == "debugger")
      debugger_turn = record.value("summary", "");
  EXPECT_EQ(broken_verdict, "COMPILE_ERROR");
  // The Debugger's workspace held the broken candidate (its edit of the stray line applied) and its fix of it passed.
  ASSERT_TRUE(debugger_fix.is_object()) << testing::describe(result);
  EXPECT_EQ(debugger_fix.value("parent_id", ""), broken_id) << debugger_fix.dump(2);
  EXPECT_EQ(debugger_fix.value("lineage", ""), "failing") << debugger_fix.dump(2);
  EXPECT_EQ(debugger_fix.value("verdict", ""), "PASS") << debugger_fix.dump(2);
  EXPECT_EQ(
      read_file(run / "candidates" / debugger_fix.value("candidate_id", "") / "src" / "kernel.cpp").find("broken one;"),
      std::string::npos);
  EXPECT_EQ(debugger_turn.rfind("claude-code finished", 0), 0u) << debugger_turn;
  EXPECT_TRUE(fs::exists(run / "cycles" / "0002" / "agents" / "debugger" / "transcript.jsonl"));
  EXPECT_EQ(optimizer_cycle2_verdict, "PASS");
  EXPECT_GT(testing::parse_stdout(result).value("best_speedup", 0.0), 1.5);
}

// --- evoteam mcp driven by the official SDK ------------------------------------------------------------------

using McpCalls = std::vector<std::pair<std::string, nlohmann::json>>;  // tool, arguments

nlohmann::json drive_mcp(const TempDir& temp, const std::string& mode, const McpCalls& calls,
                         const std::vector<std::string>& server_args) {
  nlohmann::json listed = nlohmann::json::array();
  for (const auto& [tool, arguments] : calls) listed.push_back(nlohmann::json::array({tool, arguments}));
  write_file_atomic(temp.path() / "calls.json", listed.dump());
  Command command;
  command.argv = {mcp_python(), (fs::path(EVOTEAM_SOURCE_DIR) / "tests" / "mcp" / "sdk_client.py").string(),
                  "--mode",     mode,
                  "--calls",    (temp.path() / "calls.json").string(),
                  "--",         (fs::path(EVOTEAM_TEST_HELPERS_DIR) / "evoteam").string()};
  command.argv.insert(command.argv.end(), server_args.begin(), server_args.end());
  command.timeout = std::chrono::seconds(600);
  command.output_cap = 0;
  const ProcessResult result = system_runner().run(command);
  EXPECT_TRUE(result.ok()) << result.describe() << "\n" << result.err.text;
  return nlohmann::json::parse(result.out.text);
}

// "A=1, B=2" as its words "A=1", "B=2".
std::vector<std::string> split_params(const std::string& text) {
  std::vector<std::string> pairs;
  std::string pair;
  for (char c : text + ",") {
    if (c == ',') {
      if (!pair.empty()) pairs.push_back(pair);
      pair.clear();
    } else if (c != ' ') {
      pair += c;
    }
  }
  return pairs;
}

fs::path builtin_run(const TempDir& temp, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {
      "optimize",   testing::k_task.string(),       "--provider", "builtin", "--max-cycles", "1",
      "--runs-dir", (temp.path() / "runs").string()};
  args.insert(args.end(), extra.begin(), extra.end());
  const ProcessResult made = testing::run_evoteam(args, std::chrono::seconds(600));
  EXPECT_TRUE(made.exit_code == 0 || made.exit_code == 5) << testing::describe(made);
  return testing::only_run(temp.path() / "runs").value();
}

TEST(McpSdk, TheSdkClientRecordsACandidateUnderARunInBothEras) {
  REQUIRE_MCP_SDK();
  TempDir temp;
  const fs::path run = builtin_run(temp);
  const std::size_t before = testing::evaluations(run).size();
  // A config the builtin run did not measure (its search follows measured times, so which it measured varies): the
  // session's submit must be a candidate of its own, not the reuse of one of the run's.
  std::string fresh;
  for (const char* config : {"ACC_IN_REGISTERS=1, REG_ROWS=2, REG_COLS=32, TILE_N=64, TILE_K=128, LOOP_ORDER=1",
                             "ACC_IN_REGISTERS=1, REG_ROWS=1, REG_COLS=32, TILE_N=256, TILE_K=32, LOOP_ORDER=0",
                             "ACC_IN_REGISTERS=1, REG_ROWS=4, REG_COLS=32, TILE_N=64, TILE_K=32, LOOP_ORDER=0",
                             "ACC_IN_REGISTERS=0, REG_ROWS=2, REG_COLS=64, TILE_N=256, TILE_K=32, LOOP_ORDER=1"}) {
    bool measured = false;
    for (const nlohmann::json& record : testing::evaluations(run)) {
      std::vector<std::string> pairs;
      for (const auto& [name, value] : record["params"].items()) pairs.push_back(name + "=" + value.get<std::string>());
      std::vector<std::string> wanted = split_params(config);
      std::sort(pairs.begin(), pairs.end());
      std::sort(wanted.begin(), wanted.end());
      measured |= pairs == wanted;
    }
    if (!measured) {
      fresh = config;
      break;
    }
  }
  ASSERT_FALSE(fresh.empty()) << "the builtin run measured every config this test knows";
  for (const std::string mode : {"legacy", "auto"}) {
    const McpCalls calls = {{"describe_task", nlohmann::json::object()},
                            {"compile", nlohmann::json::object()},
                            {"run_tests", {{"params", "TILE_N=64"}}},
                            {"benchmark", {{"params", fresh}}},
                            {"submit", {{"summary", "register block"}, {"params", fresh}}},
                            {"no_such_tool", nlohmann::json::object()},
                            {"compile", {{"bogus", "x"}}}};
    const nlohmann::json answer =
        drive_mcp(temp, mode, calls, {"mcp", "--run", run.string(), "--workspace", (temp.path() / mode).string()});
    EXPECT_EQ(answer["protocol_version"], mode == "auto" ? "2026-07-28" : "2025-11-25");
    const std::vector<std::string> tools = answer["tools"];
    for (const char* tool : {"describe_task", "compile", "run_tests", "benchmark", "profile", "submit"})
      EXPECT_NE(std::find(tools.begin(), tools.end(), tool), tools.end()) << tool;
    const nlohmann::json& results = answer["calls"];
    EXPECT_NE(results[0]["text"].get<std::string>().find("host_matmul"), std::string::npos);
    for (int i = 1; i <= 4; ++i) EXPECT_FALSE(results[i]["is_error"].get<bool>()) << results[i].dump();
    EXPECT_NE(results[3]["text"].get<std::string>().find("speedup"), std::string::npos);
    EXPECT_NE(results[4]["text"].get<std::string>().find("recorded c"), std::string::npos);
    EXPECT_EQ(results[5].value("protocol_error", 0), -32602);  // an unknown tool is a protocol error
    EXPECT_TRUE(results[6]["is_error"].get<bool>());           // bad arguments are the tool's error
  }
  int by_session = 0;
  for (const nlohmann::json& record : testing::evaluations(run)) by_session += record.value("author_role", "") == "mcp";
  EXPECT_EQ(by_session, 1);  // the second session's submit is identical: reused, not evaluated again
  EXPECT_GT(testing::evaluations(run).size(), before);
}

TEST(McpSdk, ACallAfterTheTurnOrOverTheBudgetIsAToolError) {
  REQUIRE_MCP_SDK();
  TempDir temp;
  // A binding whose turn is over: its socket is gone.
  write_file_atomic(temp.path() / "mcp_turn.json",
                    nlohmann::json{{"run_id", "R"},
                                   {"cycle", 3},
                                   {"role", "optimizer"},
                                   {"socket", (temp.path() / "gone.sock").string()},
                                   {"token", "t"},
                                   {"instructions", "i"},
                                   {"tools", {{{"name", "compile"}, {"input_schema", {{"type", "object"}}}}}}}
                        .dump());
  const nlohmann::json ended = drive_mcp(temp, "legacy", {{"compile", nlohmann::json::object()}},
                                         {"mcp", "--turn", (temp.path() / "mcp_turn.json").string()});
  EXPECT_TRUE(ended["calls"][0]["is_error"].get<bool>());
  EXPECT_NE(ended["calls"][0]["text"].get<std::string>().find("has ended"), std::string::npos);

  // A run whose evaluation budget is spent.
  TempDir spent;
  const fs::path run = builtin_run(spent, {"--budget-evaluations", "1"});
  const nlohmann::json answer =
      drive_mcp(spent, "legacy", {{"benchmark", nlohmann::json::object()}},
                {"mcp", "--run", run.string(), "--workspace", (spent.path() / "ws").string()});
  EXPECT_TRUE(answer["calls"][0]["is_error"].get<bool>());
  EXPECT_NE(answer["calls"][0]["text"].get<std::string>().find("budget"), std::string::npos)
      << answer["calls"][0].dump();
}

}  // namespace
}  // namespace evoteam
