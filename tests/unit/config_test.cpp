#include <evoteam/core/config.hpp>

#include <fstream>
#include <set>

#include <gtest/gtest.h>

#include <evoteam/core/config_rules.hpp>
#include <evoteam/core/error.hpp>

#include "support/config_keys.hpp"
#include "support/temp_dir.hpp"

namespace evoteam {
namespace {

using testing::TempDir;

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const InvalidInput& error) {
    return error.what();
  }
  return "";
}

TEST(Config, DefaultsHoldEveryShippedKey) {
  Config config;
  EXPECT_EQ(config.get<std::string>("store.runs_dir"), "runs");
  EXPECT_GT(config.get<double>("process.kill_grace_s"), 0.0);
}

TEST(Config, LaterLayersWin) {
  Config config;
  config.overlay({{"store", {{"runs_dir", "from-file"}}}}, "file.json");
  EXPECT_EQ(config.get<std::string>("store.runs_dir"), "from-file");
  config.overlay_env({{"EVOTEAM_STORE__RUNS_DIR", "from-env"}});
  EXPECT_EQ(config.get<std::string>("store.runs_dir"), "from-env");
  config.overlay_assignment("store.runs_dir=from-flag", "--set");
  EXPECT_EQ(config.get<std::string>("store.runs_dir"), "from-flag");
  // Keys not mentioned by a layer keep their earlier value.
  EXPECT_EQ(config.get<std::string>("log.verbosity"), "normal");
}

TEST(Config, UnknownKeyNamesSourceAndPath) {
  Config config;
  std::string message = error_of([&] { config.overlay({{"store", {{"runs_dri", "x"}}}}, "my.json"); });
  EXPECT_NE(message.find("my.json"), std::string::npos) << message;
  EXPECT_NE(message.find("store.runs_dri"), std::string::npos) << message;
}

TEST(Config, WrongTypeNamesSourceAndPath) {
  Config config;
  std::string message = error_of([&] { config.overlay({{"process", {{"output_cap_bytes", "big"}}}}, "my.json"); });
  EXPECT_NE(message.find("process.output_cap_bytes"), std::string::npos) << message;
  EXPECT_NE(message.find("integer"), std::string::npos) << message;
}

TEST(Config, IntegerAcceptedWhereNumberExpected) {
  Config config;
  config.overlay({{"process", {{"kill_grace_s", 3}}}}, "x");
  EXPECT_DOUBLE_EQ(config.get<double>("process.kill_grace_s"), 3.0);
}

TEST(Config, EnvironmentValuesAreTypedBySchema) {
  Config config;
  config.overlay_env({{"EVOTEAM_PROCESS__OUTPUT_CAP_BYTES", "1234"}, {"EVOTEAM_HOME", "/ignored"}});
  EXPECT_EQ(config.get<int>("process.output_cap_bytes"), 1234);
  std::string message = error_of([&] { config.overlay_env({{"EVOTEAM_PROCESS__OUTPUT_CAP_BYTES", "lots"}}); });
  EXPECT_NE(message.find("EVOTEAM_PROCESS__OUTPUT_CAP_BYTES"), std::string::npos) << message;
}

TEST(Config, MalformedAssignmentIsAnError) {
  Config config;
  EXPECT_FALSE(error_of([&] { config.overlay_assignment("no-equals-sign", "--set"); }).empty());
  EXPECT_FALSE(error_of([&] { config.overlay_assignment("nosuch.key=1", "--set"); }).empty());
}

TEST(Config, BrokenFileNamesTheFile) {
  TempDir dir;
  std::ofstream(dir / "broken.json") << "{ \"store\": { \"runs_dir\": ";
  Config config;
  std::string message = error_of([&] { config.overlay_file(dir / "broken.json"); });
  EXPECT_NE(message.find("broken.json"), std::string::npos) << message;
}

// Every shipped configuration file must load over the defaults (a test that walks configs/).
TEST(Config, EveryShippedConfigLoads) {
  std::filesystem::path configs = std::filesystem::path(EVOTEAM_SOURCE_DIR) / "configs";
  int loaded = 0;
  for (const auto& entry : std::filesystem::directory_iterator(configs)) {
    if (entry.path().extension() != ".json" || entry.path().filename() == "models.json") continue;
    Config config;
    EXPECT_NO_THROW(config.overlay_file(entry.path())) << entry.path();
    ++loaded;
  }
  EXPECT_GE(loaded, 1);
}

// A key added to configs/default.json needs its row in the rule table, and the table names no key that is gone.
TEST(ConfigRules, EveryKeyHasARuleAndEveryRuleAKey) {
  const std::vector<std::string> leaves = testing::config_key_paths();
  ASSERT_GT(leaves.size(), 100u);
  for (const std::string& path : leaves) EXPECT_NE(find_config_rule(path), nullptr) << path << " has no rule";
  const std::set<std::string> keys(leaves.begin(), leaves.end());
  for (const ConfigRule& rule : config_rules()) EXPECT_TRUE(keys.count(rule.path)) << rule.path << " is not a key";
  for (const ConfigRelation& relation : config_relations()) {
    EXPECT_TRUE(keys.count(relation.lower)) << relation.lower;
    EXPECT_TRUE(keys.count(relation.upper)) << relation.upper;
  }
}

TEST(ConfigRules, TheDefaultsKeepEveryRule) {
  Config config;
  EXPECT_NO_THROW(config.overlay(Config::defaults(), "defaults"));
  EXPECT_NO_THROW(config.check_relations());
}

// Each row: a --set assignment and the words of its refusal. Every refusal also names the flag, so the user knows
// which layer to fix; none of these values reaches a module.
TEST(ConfigRules, OutOfRangeAndUnknownValuesAreRefusedNamingKeyAndSource) {
  const std::pair<const char*, const char*> rows[] = {
      {"eval.timing.min_samples=-5", "'eval.timing.min_samples' must be at least 2, got -5"},
      {"eval.correctness.seeds=0", "'eval.correctness.seeds' must be at least 1, got 0"},
      {"team.evaluations_per_cycle=0", "'team.evaluations_per_cycle' must be at least 1, got 0"},
      {"log.verbosity=loud", "'log.verbosity' must be one of quiet, normal, verbose, debug, got \"loud\""},
      {"eval.pipeline=[\"nope\"]",
       "'eval.pipeline' entry 0 must be one of static, build, correctness, timing, profile"},
      {"eval.pipeline=[]", "'eval.pipeline' must not be empty"},
      {"eval.timing.max_noise=0", "'eval.timing.max_noise' must be above 0, got 0"},
      {"supervisor.optimizer_share=1.5", "'supervisor.optimizer_share' must be at most 1, got 1.5"},
      {"eval.correctness.edge_values=[1,0]", "'eval.correctness.edge_values' entry 1 must be at least 1, got 0"},
      {"eval.host.flags=[\"-O2\",3]", "'eval.host.flags' entry 1 must be string, got integer"},
      {"agent.max_steps=4294967297", "'agent.max_steps' must fit in 32 bits, got 4294967297"},
      {"budgets.tokens=18446744073709551615", "'budgets.tokens' is too large"},
      {"eval.sandbox=chroot", "'eval.sandbox' must be one of auto, bwrap, none"},
      {"llm.temperature=3", "'llm.temperature' must be at most 2, got 3"},
      {"store.runs_dir=", "'store.runs_dir' must not be empty"},
      {"eval.libraries=[{\"name\":\"x\",\"link\":\"-lx\"}]",
       "'eval.libraries' entry 0's \"link\" must be a list of strings"},
      {"eval.libraries=[{\"symbols\":[]}]", "'eval.libraries' entry 0 needs a non-empty string \"name\""},
      // A duration of 1e308 s turned every deadline built from it into "never" (a timing stage that never ended).
      {"eval.timing.warmup_s=1e308", "'eval.timing.warmup_s' must be at most 3600, got 1e+308"},
      {"eval.stages.timing.timeout_s=1000000", "'eval.stages.timing.timeout_s' must be at most 86400, got 1000000"},
      {"llm.request_timeout_s=1e308", "'llm.request_timeout_s' must be at most 86400"},
      {"eval.timing.max_time_s=0", "'eval.timing.max_time_s' must be above 0, got 0"},
      {"cluster.devices=0,0", "'cluster.devices' names device 0 twice"},
      {"cluster.devices=x", "'cluster.devices' entry \"x\" is no device"},
      {"cluster.devices=-1", "'cluster.devices' entry \"-1\" is no device"},
      {"cluster.devices=999", "'cluster.devices' entry \"999\" is no device"},
      {"cluster.devices=0,,1", "'cluster.devices' has an empty entry"},
      {"cluster.devices=all,0", "'cluster.devices' entry \"all\" is no device"},
      {"cluster.devices=12345678901234567890", "is no device"},
      {"cluster.slurm.extra_args=[1]", "'cluster.slurm.extra_args' entry 0 must be a string, got 1"},
  };
  for (const auto& row : rows) {
    const auto& [assignment, expected] = row;
    const std::string& text = assignment;  // lambdas capture variables, not bindings
    Config config;
    const std::string message = error_of([&] { config.overlay_assignment(text, std::string("--set ") + text); });
    EXPECT_NE(message.find(expected), std::string::npos) << assignment << " -> " << message;
    EXPECT_EQ(message.rfind(std::string("--set ") + assignment + ": ", 0), 0u) << message;
  }
}

// Every duration key (a name ending in _s that is not a rate) has an upper bound, so no deadline can be made endless.
TEST(ConfigRules, EveryDurationHasAnUpperBound) {
  for (const ConfigRule& rule : config_rules()) {
    const std::string& path = rule.path;
    const bool duration =
        path.size() > 2 && path.compare(path.size() - 2, 2, "_s") == 0 && path.find("_per_s") == std::string::npos;
    if (duration) {
      EXPECT_TRUE(rule.max.has_value()) << path << " has no upper bound";
    }
  }
}

TEST(ConfigRules, ValuesInsideTheirRangeAreKept) {
  Config config;
  config.overlay_assignment("eval.timing.min_samples=2", "--set");
  config.overlay_assignment("supervisor.optimizer_share=1", "--set");
  config.overlay_assignment("llm.temperature=-1", "--set");
  config.overlay_assignment("budgets.tokens=5000000000", "--set");
  config.overlay_assignment("cluster.devices=0, 1,GPU-5d2f-00ab", "--set");
  config.overlay_assignment("cluster.slurm.extra_args=[\"--exclusive\"]", "--set");
  EXPECT_EQ(config.get<int>("eval.timing.min_samples"), 2);
  EXPECT_EQ(config.get<long long>("budgets.tokens"), 5000000000LL);
}

TEST(ConfigRules, AFileNamesItselfAndTheKey) {
  TempDir dir;
  std::ofstream(dir / "night.json") << R"({"team": {"evaluations_per_cycle": 0}})";
  Config config;
  const std::string message = error_of([&] { config.overlay_file(dir / "night.json"); });
  EXPECT_NE(message.find("night.json: 'team.evaluations_per_cycle' must be at least 1, got 0"), std::string::npos)
      << message;
  // The refused layer changed nothing.
  EXPECT_EQ(config.get<int>("team.evaluations_per_cycle"), 8);
}

TEST(ConfigRules, AnEnvironmentVariableNamesItself) {
  Config config;
  const std::string message = error_of([&] { config.overlay_env({{"EVOTEAM_EVAL__CORRECTNESS__SEEDS", "0"}}); });
  EXPECT_NE(message.find("EVOTEAM_EVAL__CORRECTNESS__SEEDS: 'eval.correctness.seeds' must be at least 1"),
            std::string::npos)
      << message;
}

// A minimum above its maximum is refused once every layer is in, naming both keys and where each value came from.
TEST(ConfigRules, RelatedKeysAreCheckedOnTheMergedLayers) {
  Config config;
  config.overlay_assignment("llm.backoff_initial_s=40", "--set llm.backoff_initial_s=40");
  const std::string message = error_of([&] { config.check_relations(); });
  EXPECT_NE(message.find("'llm.backoff_initial_s' (40, from --set llm.backoff_initial_s=40) must not exceed "
                         "'llm.backoff_max_s' (30.0, from the built-in defaults)"),
            std::string::npos)
      << message;
  config.overlay_assignment("llm.backoff_max_s=60", "--set");
  EXPECT_NO_THROW(config.check_relations());
  EXPECT_EQ(config.source_of("llm.backoff_max_s"), "--set");
}

}  // namespace
}  // namespace evoteam
