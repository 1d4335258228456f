// The real coding-agent CLIs as team members: Claude Code and Codex (pinned in scripts/setup.sh, linked into
// EVOTEAM_REAL_CLI_BIN) run by the real evoteam binary against a scripted model endpoint
// (tests/agent_endpoint/scripted_endpoint.py) that plays a story and keeps a ledger of every request it served.
// The endpoint and evoteam run inside a network namespace of their own (unshare -n) with loopback only, so nothing a
// CLI does reaches the internet whatever evoteam passes it. docs/agent-clis-tested.md holds what the CLIs do.
//
// Skipped when EVOTEAM_REAL_CLI_BIN is unset; failed when EVOTEAM_REQUIRE_REAL_CLIS is set and the CLIs are missing.
//
// Each run uses the default relative runs dir (evoteam starts in a working directory of its own), a HOME of the
// test's with a planted secret, and one result cache for every story, so that only the first run measures the
// starting kernel.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include <evoteam/core/fs.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/core/text.hpp>

#include "support/cli_runner.hpp"
#include "support/temp_dir.hpp"
#include "support/test_cache.hpp"

namespace evoteam {
namespace real_cli_test {

namespace fs = std::filesystem;
using testing::TempDir;

const fs::path k_endpoint_dir = fs::path(EVOTEAM_SOURCE_DIR) / "tests" / "agent_endpoint";
constexpr int k_port = 18080;  // inside the test's own network namespace: always free
constexpr const char* k_anthropic_key = "sk-ant-test-real-cli-0c41";
constexpr const char* k_codex_key = "sk-test-real-cli-codex-77a2";
constexpr const char* k_secret = "evoteam-planted-secret-5f0e9b2d";
const std::string k_fast_params = "ACC_IN_REGISTERS=1, REG_ROWS=4, REG_COLS=64, TILE_N=256, TILE_K=128, LOOP_ORDER=1";

std::string endpoint_python() {
  if (const char* python = std::getenv("EVOTEAM_TEST_PYTHON"); python != nullptr && *python != '\0') return python;
  return "python3";
}

bool runs(const std::vector<std::string>& argv) {
  Command probe;
  probe.argv = argv;
  probe.timeout = std::chrono::seconds(30);
  return system_runner().run(probe).ok();
}

// How to get a network namespace with loopback only: as root, or through a user namespace; empty when neither works.
std::vector<std::string> isolation() {
  static const std::vector<std::string> found = [] {
    for (std::vector<std::string> prefix :
         {std::vector<std::string>{"unshare", "-n"}, std::vector<std::string>{"unshare", "-rn"}}) {
      std::vector<std::string> argv = prefix;
      argv.insert(argv.end(), {"sh", "-c", "ip link set lo up"});
      if (runs(argv)) return prefix;
    }
    return std::vector<std::string>{};
  }();
  return found;
}

std::optional<fs::path> real_cli_bin() {
  const char* bin = std::getenv("EVOTEAM_REAL_CLI_BIN");
  if (bin == nullptr || *bin == '\0') return std::nullopt;
  return fs::path(bin);
}

#define REQUIRE_REAL_CLI(program)                                                                             \
  do {                                                                                                        \
    const bool required = std::getenv("EVOTEAM_REQUIRE_REAL_CLIS") != nullptr;                                \
    const std::optional<fs::path> bin = real_cli_bin();                                                       \
    if (!bin && required) FAIL() << "EVOTEAM_REQUIRE_REAL_CLIS is set but EVOTEAM_REAL_CLI_BIN is not";       \
    if (!bin) GTEST_SKIP() << "EVOTEAM_REAL_CLI_BIN is unset (scripts/test installs the real CLIs)";          \
    if (!fs::exists(*bin / (program))) {                                                                      \
      if (required) FAIL() << (*bin / (program)) << " is missing (scripts/setup.sh installs it)";             \
      GTEST_SKIP() << (*bin / (program)) << " is missing";                                                    \
    }                                                                                                         \
    if (isolation().empty()) {                                                                                \
      if (required) FAIL() << "cannot make a network namespace (unshare -n / -rn): the real CLIs stay unrun"; \
      GTEST_SKIP() << "cannot make a network namespace (unshare -n / -rn)";                                   \
    }                                                                                                         \
  } while (0)

struct Cli {
  std::string program;  // claude, codex
  std::string member;   // claude-code, codex
  std::string prefix;   // the stories' prefix
  std::string model;    // agent.cli.model: priced by configs/models.json
  // models.json's prices of `model`: input, output, cache read, cache write (per token)
  double in, out, cache_read, cache_write;
};
const Cli k_claude{"claude", "claude-code", "claude", "claude-sonnet-4-5", 3e-6, 1.5e-5, 3e-7, 3.75e-6};
const Cli k_codex{"codex", "codex", "codex", "gpt-5", 1.25e-6, 1e-5, 1.25e-7, 0};

struct RealRun {
  ProcessResult process;
  fs::path work;  // evoteam's working directory: the default runs/ is here
  fs::path home;  // the user's HOME, with a planted secret
  fs::path run_dir;
  std::vector<nlohmann::json> ledger;
  std::vector<nlohmann::json> journal;
  fs::path requests;  // every request the endpoint received, one file each
};

struct RunOptions {
  std::string story;  // a file of tests/agent_endpoint/stories
  std::vector<std::string> extra;
  bool unreachable = false;  // the CLI is pointed at a closed port
  int max_cycles = 1;
};

// The user's configuration for the CLI: where the model is, as a user of a gateway writes it.
std::vector<std::string> endpoint_settings(const Cli& cli, const fs::path& temp, int port) {
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  if (cli.program == "claude") {
    const nlohmann::json env = {"CLAUDE_CODE_MAX_RETRIES=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"};
    return {"--set", "agent.cli.env=" + env.dump()};
  }
  const fs::path config = temp / "codex-config.toml";
  write_file_atomic(config, "model_provider = \"evo\"\n\n[model_providers.evo]\nname = \"evo\"\nbase_url = \"" + url +
                                "/v1\"\nenv_key = \"CODEX_API_KEY\"\nwire_api = \"responses\"\n"
                                "supports_websockets = false\nrequest_max_retries = 1\nstream_max_retries = 1\n");
  return {"--set", "agent.cli.config.codex=" + config.string()};
}

RealRun run_real(const TempDir& temp, const Cli& cli, const RunOptions& options) {
  RealRun run;
  run.work = temp.path() / "work";
  run.home = temp.path() / "home";
  run.requests = temp.path() / "requests";
  evoteam::create_directories(run.work);
  evoteam::create_directories(run.home / ".secrets");
  write_file_atomic(run.home / ".secrets" / "token.txt", std::string(k_secret) + "\n");
  fs::permissions(run.home / ".secrets" / "token.txt", fs::perms::owner_read | fs::perms::owner_write);
  const fs::path ledger = temp.path() / "ledger.jsonl";
  const int port = options.unreachable ? 9 : k_port;

  const fs::path bin = *real_cli_bin();
  // The CLIs' trees (wherever the link leads) are named readable, as a user of a CLI installed under /tmp does.
  nlohmann::json readable = nlohmann::json::array();
  for (const char* program : {"claude", "codex"}) {
    std::error_code error;
    const fs::path target = fs::canonical(bin / program, error);
    if (!error) readable.push_back(target.parent_path().string());
  }
  std::vector<std::string> argv = isolation();
  argv.insert(
      argv.end(),
      {"sh", "-c", "ip link set lo up && exec \"$@\"", "sh", endpoint_python(),
       (k_endpoint_dir / "scripted_endpoint.py").string(), "--story",
       (k_endpoint_dir / "stories" / options.story).string(), "--ledger", ledger.string(), "--requests-dir",
       run.requests.string(), "--port", std::to_string(k_port), "--", EVOTEAM_BINARY, "optimize",
       testing::k_task.string(), "--provider", "builtin", "--agent", cli.member, "--max-cycles",
       std::to_string(options.max_cycles), "--set", "agent.cli.model=" + cli.model, "--set",
       "agent.cli.readable=" + readable.dump(),
       // One result cache for every story (HOME is the test's, so the default would be new
       // each time): the starting kernel and a config already measured are not measured again.
       "--set", "eval.cache_dir=" + (testing::test_cache_root() / "test-cache" / "real-cli").string(), "--json"});
  const std::vector<std::string> settings = endpoint_settings(cli, temp.path(), port);
  argv.insert(argv.end(), settings.begin(), settings.end());
  argv.insert(argv.end(), options.extra.begin(), options.extra.end());

  Command command;
  command.argv = argv;
  command.cwd = run.work;  // the default relative runs dir
  command.env = scrubbed_env({{"PATH", bin.string() + ":" + std::getenv("PATH")},
                              {"HOME", run.home.string()},
                              {"ANTHROPIC_API_KEY", k_anthropic_key},
                              {"ANTHROPIC_BASE_URL", "http://127.0.0.1:" + std::to_string(port)},
                              {"CODEX_API_KEY", k_codex_key},
                              {"EVOTEAM_LOG__VERBOSITY", "normal"}});
  command.timeout = std::chrono::seconds(600);
  command.output_cap = 0;
  run.process = system_runner().run(command);
  if (std::optional<fs::path> dir = testing::only_run(run.work / "runs")) {
    run.run_dir = *dir;
    run.journal = testing::journal_records(*dir);
  }
  if (fs::exists(ledger)) {
    std::ifstream in(ledger);
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) run.ledger.push_back(nlohmann::json::parse(line));
  }
  return run;
}

std::string describe(const RealRun& run) {
  std::string ledger;
  for (const nlohmann::json& entry : run.ledger) ledger += entry.dump() + "\n";
  return testing::describe(run.process) + "\nledger:\n" + ledger;
}

int main_requests(const RealRun& run) {
  int count = 0;
  for (const nlohmann::json& entry : run.ledger) count += entry.value("kind", "") == "main";
  return count;
}

std::string turn_summary(const RealRun& run, int cycle, const std::string& role) {
  for (const nlohmann::json& record : run.journal)
    if (record.value("type", "") == "turn" && record.value("cycle", 0) == cycle && record.value("role", "") == role)
      return record.value("summary", "");
  return "";
}

bool cycle_started(const RealRun& run, int cycle) {
  for (const nlohmann::json& record : run.journal)
    if (record.value("type", "") == "cycle_start" && record.value("cycle", 0) == cycle) return true;
  return false;
}

// Every file under `root` that holds `text`.
std::vector<std::string> files_holding(const fs::path& root, const std::string& text) {
  std::vector<std::string> found;
  if (!fs::exists(root)) return found;
  for (const auto& entry : fs::recursive_directory_iterator(root))
    if (entry.is_regular_file() && read_file(entry.path()).find(text) != std::string::npos)
      found.push_back(entry.path().string());
  return found;
}

void expect_no_keys(const RealRun& run) {
  for (const char* key : {k_anthropic_key, k_codex_key})
    EXPECT_TRUE(files_holding(run.run_dir, key).empty()) << join(files_holding(run.run_dir, key), ", ");
}

// The meter holds what the endpoint served, token for token, and its price at the model the CLI ran; so do the
// journal's turn records.
void expect_meter_equals_the_ledger(const RealRun& run, const Cli& cli) {
  std::uint64_t served = 0;
  double priced = 0;
  for (const nlohmann::json& entry : run.ledger) {
    const nlohmann::json& usage = entry["usage"];
    const auto count = [&usage](const char* kind) { return usage.value(kind, std::uint64_t{0}); };
    served += count("input") + count("output") + count("cache_read") + count("cache_write");
    priced += static_cast<double>(count("input")) * cli.in + static_cast<double>(count("output")) * cli.out +
              static_cast<double>(count("cache_read")) * cli.cache_read +
              static_cast<double>(count("cache_write")) * cli.cache_write;
  }
  const nlohmann::json outcome = testing::parse_stdout(run.process);
  std::uint64_t metered = 0;
  for (const auto& [kind, count] : outcome["tokens"].items()) metered += count.get<std::uint64_t>();
  EXPECT_EQ(metered, served) << describe(run);
  EXPECT_NEAR(outcome.value("cost_usd", 0.0), priced, 1e-9) << describe(run);
  // The journal's turn records say the same.
  std::uint64_t turns = 0;
  double turn_cost = 0;
  for (const nlohmann::json& record : run.journal) {
    if (record.value("type", "") != "turn") continue;
    const nlohmann::json usage = record.value("usage", nlohmann::json::object());
    turns += usage.value("tokens", std::uint64_t{0});
    turn_cost += usage.value("cost_usd", 0.0);
  }
  EXPECT_EQ(turns, served) << describe(run);
  EXPECT_NEAR(turn_cost, priced, 1e-9) << describe(run);
}

// --- a good turn ---------------------------------------------------------------------------------------------

void good_turn(const Cli& cli) {
  TempDir temp;
  const RealRun run = run_real(temp, cli, {cli.prefix + "_good.json", {}, false, 1});
  ASSERT_EQ(run.process.exit_code, 0) << describe(run);
  EXPECT_GT(main_requests(run), 0) << "the CLI never reached the endpoint\n" << describe(run);
  const nlohmann::json outcome = testing::parse_stdout(run.process);
  EXPECT_GT(outcome.value("best_speedup", 0.0), 1.5) << describe(run);
  // The optimizer's submit is recorded with the story's params and the edited kernel.
  nlohmann::json submitted;
  for (const nlohmann::json& record : testing::evaluations(run.run_dir))
    if (record.value("author_role", "") == "optimizer" && record["params"].dump().find("64") != std::string::npos)
      submitted = record;
  ASSERT_TRUE(submitted.is_object()) << describe(run);
  EXPECT_EQ(submitted.value("verdict", ""), "PASS") << submitted.dump(2);
  const fs::path kernel = run.run_dir / "candidates" / submitted.value("candidate_id", "") / "src" / "kernel.cpp";
  EXPECT_NE(read_file(kernel).find("// real-cli edit"), std::string::npos) << kernel;
  EXPECT_NE(turn_summary(run, 1, "optimizer").find(cli.member + " finished"), std::string::npos)
      << turn_summary(run, 1, "optimizer");
  // The default runs dir is relative to the working directory, and nothing else was written there.
  EXPECT_EQ(run.run_dir.parent_path(), run.work / "runs");
  expect_no_keys(run);
  expect_meter_equals_the_ledger(run, cli);
}

TEST(RealCli, ClaudeCodeEditsTheKernelSubmitsAFasterOneAndIsChargedTheLedger) {
  REQUIRE_REAL_CLI("claude");
  good_turn(k_claude);
}

TEST(RealCli, CodexEditsTheKernelSubmitsAFasterOneAndIsChargedTheLedger) {
  REQUIRE_REAL_CLI("codex");
  good_turn(k_codex);
}

// A stream cut mid-call (the endpoint closes after the call's start): what the stream showed is charged, and equals
// what the endpoint reported serving; a CLI that reports usage only when a turn completes (Codex) says the turn's
// tokens are unknown instead of charging nothing in silence.
void cut_turn_charges_what_was_served(const Cli& cli) {
  TempDir temp;
  const RealRun run = run_real(temp, cli, {"cut.json", {}, false, 1});
  ASSERT_GT(main_requests(run), 0) << "the CLI never reached the endpoint\n" << describe(run);
  std::uint64_t served = 0;
  for (const nlohmann::json& entry : run.ledger)
    for (const auto& [kind, count] : entry["usage"].items()) served += count.get<std::uint64_t>();
  std::uint64_t metered = 0;
  for (const nlohmann::json& record : run.journal)
    if (record.value("type", "") == "turn")
      metered += record.value("usage", nlohmann::json::object()).value("tokens", std::uint64_t{0});
  const std::string summary = turn_summary(run, 1, "optimizer");
  if (cli.program == "claude") {
    EXPECT_EQ(metered, served) << summary << describe(run);
  } else {
    EXPECT_NE(summary.find("tokens are unknown"), std::string::npos) << summary << describe(run);
  }
  EXPECT_EQ(summary.find(cli.member + " finished"), std::string::npos) << summary;
}

TEST(RealCli, ClaudeCodeCutStreamIsChargedWhatItShowed) {
  REQUIRE_REAL_CLI("claude");
  cut_turn_charges_what_was_served(k_claude);
}

TEST(RealCli, CodexCutStreamSaysItsTokensAreUnknown) {
  REQUIRE_REAL_CLI("codex");
  cut_turn_charges_what_was_served(k_codex);
}

// A dollar budget holds within one model call: the turn is capped by what the budget has left (--max-budget-usd), and
// the meter stops the CLI as soon as the stream shows the budget spent. The good story's calls cost $0.008715 each at
// claude-sonnet-4-5; a budget of $0.01 is spent by the second.
TEST(RealCli, ClaudeCodeOvershootsADollarBudgetByAtMostOneCall) {
  REQUIRE_REAL_CLI("claude");
  TempDir temp;
  const double budget = 0.01, one_call = 0.008715;
  const RealRun run = run_real(temp, k_claude, {"claude_good.json", {"--budget-usd", "0.01"}, false, 2});
  ASSERT_GT(main_requests(run), 0) << "the CLI never reached the endpoint\n" << describe(run);
  const nlohmann::json outcome = testing::parse_stdout(run.process);
  EXPECT_EQ(outcome.value("stop_reason", ""), "budget_usd") << describe(run);
  EXPECT_GE(outcome.value("cost_usd", 0.0), budget) << describe(run);
  EXPECT_LE(outcome.value("cost_usd", 0.0), budget + one_call + 1e-9) << describe(run);
  EXPECT_FALSE(cycle_started(run, 2)) << describe(run);
}

// --- a broken build fixed by a Debugger in the restructured team ------------------------------------------------

void debugger_fixes_the_build(const Cli& cli) {
  TempDir temp;
  const RealRun run = run_real(temp, cli, {cli.prefix + "_debugger.json", {}, false, 2});
  ASSERT_EQ(run.process.exit_code, 0) << describe(run);
  const nlohmann::json team = nlohmann::json::parse(read_file(run.run_dir / "cycles" / "0002" / "team.json"));
  bool has_debugger = false;
  for (const nlohmann::json& role : team["roles"]) has_debugger |= role.value("name", "") == "debugger";
  ASSERT_TRUE(has_debugger) << team.dump(2) << describe(run);
  std::string broken_verdict, broken_id;
  nlohmann::json fix;
  for (const nlohmann::json& record : testing::evaluations(run.run_dir)) {
    if (record.value("author_role", "") == "optimizer" && record.value("cycle", 0) == 1)
      broken_verdict = record.value("verdict", ""), broken_id = record.value("candidate_id", "");
    if (record.value("author_role", "") == "debugger") fix = record;
  }
  EXPECT_EQ(broken_verdict, "COMPILE_ERROR") << describe(run);
  ASSERT_TRUE(fix.is_object()) << describe(run);
  EXPECT_EQ(fix.value("parent_id", ""), broken_id) << fix.dump(2);
  EXPECT_EQ(fix.value("verdict", ""), "PASS") << fix.dump(2);
  EXPECT_NE(turn_summary(run, 2, "debugger").find(cli.member + " finished"), std::string::npos)
      << turn_summary(run, 2, "debugger");
}

TEST(RealCli, ClaudeCodeDebuggerFixesABrokenBuild) {
  REQUIRE_REAL_CLI("claude");
  debugger_fixes_the_build(k_claude);
}

TEST(RealCli, CodexDebuggerFixesABrokenBuild) {
  REQUIRE_REAL_CLI("codex");
  debugger_fixes_the_build(k_codex);
}

// --- faults of the model endpoint --------------------------------------------------------------------------------

void hang_times_out(const Cli& cli) {
  TempDir temp;
  const RealRun run = run_real(temp, cli, {"hang.json", {"--set", "agent.cli.turn_timeout_s=20"}, false, 1});
  bool hung = false;
  for (const nlohmann::json& entry : run.ledger) hung |= entry.value("sent", "") == "hang";
  EXPECT_TRUE(hung) << "the CLI never reached the endpoint\n" << describe(run);
  EXPECT_NE(turn_summary(run, 1, "optimizer").find("timed_out"), std::string::npos)
      << turn_summary(run, 1, "optimizer") << describe(run);
  EXPECT_LT(run.process.wall_s, 180) << describe(run);
}

TEST(RealCli, ClaudeCodeTurnAgainstAHungEndpointTimesOut) {
  REQUIRE_REAL_CLI("claude");
  hang_times_out(k_claude);
}

TEST(RealCli, CodexTurnAgainstAHungEndpointTimesOut) {
  REQUIRE_REAL_CLI("codex");
  hang_times_out(k_codex);
}

// A member that cannot reach its model (a refused key, no endpoint, a stream that never parses) stops the run after
// the first cycle of such turns, with a non-zero exit status.
void cannot_reach_the_model(const Cli& cli, const std::string& story, bool unreachable) {
  TempDir temp;
  const RealRun run = run_real(temp, cli, {story, {}, unreachable, 2});
  if (!unreachable) {
    EXPECT_GT(main_requests(run), 0) << "the CLI never reached the endpoint\n" << describe(run);
  }
  EXPECT_NE(run.process.exit_code, 0) << describe(run);
  EXPECT_FALSE(cycle_started(run, 2)) << describe(run);
  const std::string summary = turn_summary(run, 1, "optimizer");
  EXPECT_EQ(summary.find(cli.member + " finished"), std::string::npos) << summary;
  // Only the starting kernel, which every run measures first, was evaluated: no member got anywhere.
  for (const nlohmann::json& record : testing::evaluations(run.run_dir))
    EXPECT_EQ(record.value("author_role", ""), "start") << record.dump(2);
}

TEST(RealCli, ClaudeCodeRefusedKeyStopsTheRun) {
  REQUIRE_REAL_CLI("claude");
  cannot_reach_the_model(k_claude, "refused_key.json", false);
}

TEST(RealCli, CodexRefusedKeyStopsTheRun) {
  REQUIRE_REAL_CLI("codex");
  cannot_reach_the_model(k_codex, "refused_key.json", false);
}

TEST(RealCli, ClaudeCodeUnreachableEndpointStopsTheRun) {
  REQUIRE_REAL_CLI("claude");
  cannot_reach_the_model(k_claude, "claude_good.json", true);
}

TEST(RealCli, CodexUnreachableEndpointStopsTheRun) {
  REQUIRE_REAL_CLI("codex");
  cannot_reach_the_model(k_codex, "codex_good.json", true);
}

TEST(RealCli, ClaudeCodeMalformedStreamStopsTheRun) {
  REQUIRE_REAL_CLI("claude");
  cannot_reach_the_model(k_claude, "malformed.json", false);
}

TEST(RealCli, CodexMalformedStreamStopsTheRun) {
  REQUIRE_REAL_CLI("codex");
  cannot_reach_the_model(k_codex, "malformed.json", false);
}

// --- the sandbox ---------------------------------------------------------------------------------------------

void no_write_outside_the_workspace(const Cli& cli) {
  TempDir temp;
  const RealRun run = run_real(temp, cli, {cli.prefix + "_outside_write.json", {}, false, 1});
  EXPECT_GT(main_requests(run), 1) << "the story never got to its writes\n" << describe(run);
  EXPECT_FALSE(fs::exists(run.home / "escape.txt")) << describe(run);
  EXPECT_FALSE(fs::exists(run.work / "escape.txt")) << describe(run);
}

TEST(RealCli, ClaudeCodeWritesNothingOutsideItsWorkspace) {
  REQUIRE_REAL_CLI("claude");
  no_write_outside_the_workspace(k_claude);
}

TEST(RealCli, CodexWritesNothingOutsideItsWorkspace) {
  REQUIRE_REAL_CLI("codex");
  no_write_outside_the_workspace(k_codex);
}

void secret_stays_home(const Cli& cli) {
  TempDir temp;
  const RealRun run = run_real(temp, cli, {cli.prefix + "_secret.json", {}, false, 1});
  EXPECT_GT(main_requests(run), 1) << "the story never got past its read\n" << describe(run);
  EXPECT_TRUE(files_holding(run.requests, k_secret).empty())
      << "the model was sent the secret: " << join(files_holding(run.requests, k_secret), ", ");
  EXPECT_TRUE(files_holding(run.run_dir, k_secret).empty())
      << "the run holds the secret: " << join(files_holding(run.run_dir, k_secret), ", ");
}

TEST(RealCli, ClaudeCodeASecretInTheRealHomeNeverReachesTheModel) {
  REQUIRE_REAL_CLI("claude");
  secret_stays_home(k_claude);
}

TEST(RealCli, CodexASecretInTheRealHomeNeverReachesTheModel) {
  REQUIRE_REAL_CLI("codex");
  secret_stays_home(k_codex);
}

}  // namespace real_cli_test
}  // namespace evoteam
