// The settings readers together: every configuration key is read by one of them (a key nobody reads is a promise
// the daemon does not keep), and every name a closed set allows converts in the module that owns the key.
#include <gtest/gtest.h>

#include <evoteam/agent/agent.hpp>
#include <evoteam/agent/tools.hpp>
#include <evoteam/agent/workspace.hpp>
#include <evoteam/core/config.hpp>
#include <evoteam/core/config_rules.hpp>
#include <evoteam/core/log.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/llm/llm.hpp>
#include <evoteam/store/store.hpp>
#include <evoteam/supervisor/supervisor.hpp>
#include <evoteam/supervisor/supervisor_settings.hpp>

namespace evoteam {
namespace {

void read_every_section(const Config& config) {
  (void)process_settings(config);
  (void)configured_verbosity(config);
  (void)configured_runs_dir(config);
  (void)configured_provider(config, {});
  (void)provider_settings_for("builtin", config, {});
  (void)PriceTable::from_config(config);
  (void)agent_settings_from_config(config);
  (void)workspace_limits_from_config(config);
  (void)tool_settings_from_config(config);
  (void)supervisor_settings(config);
  (void)team_settings(config);
  (void)budgets_from_config(config);
}

void collect_leaves(const nlohmann::json& node, const std::string& prefix, std::vector<std::string>& leaves) {
  for (const auto& [key, value] : node.items()) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    if (value.is_object())
      collect_leaves(value, path, leaves);
    else
      leaves.push_back(path);
  }
}

TEST(Settings, EveryKeyIsReadByASettingsReader) {
  Config config;
  std::set<std::string> reads;
  config.record_reads_into(&reads);
  read_every_section(config);
  std::vector<std::string> leaves;
  collect_leaves(Config::defaults(), "", leaves);
  for (const std::string& path : leaves) {
    if (path.rfind("eval.", 0) == 0) continue;
    EXPECT_TRUE(reads.count(path)) << path << " is read by no settings reader";
  }
}

// Each name of a closed set, set on its own, converts without error in its reader.
TEST(Settings, EveryAllowedNameConvertsInItsModule) {
  for (const char* path : {"log.verbosity", "supervisor.policy", "team.mode"}) {
    const ConfigRule* rule = find_config_rule(path);
    ASSERT_NE(rule, nullptr) << path;
    ASSERT_FALSE(rule->choices.empty()) << path;
    for (const std::string& choice : rule->choices) {
      Config config;
      config.overlay_assignment(std::string(path) + "=" + choice, "--set");
      EXPECT_NO_THROW(read_every_section(config)) << path << "=" << choice;
    }
  }
  Config config;
  config.overlay_assignment("team.mode=single", "--set");
  config.overlay_assignment("supervisor.policy=rules", "--set");
  config.overlay_assignment("log.verbosity=debug", "--set");
  EXPECT_EQ(team_settings(config).mode, TeamMode::single);
  EXPECT_EQ(supervisor_settings(config).policy, PolicyChoice::rules);
  EXPECT_EQ(configured_verbosity(config), Verbosity::debug);
}

TEST(Settings, TheConfiguredProviderResolvesAutoFromTheEnvironment) {
  Config config;
  EXPECT_EQ(configured_provider(config, {}), "builtin");
  EXPECT_EQ(configured_provider(config, {{"OPENAI_API_KEY", "k"}}), "openai");
  config.overlay_assignment("llm.provider=scripted", "--set");
  EXPECT_EQ(configured_provider(config, {{"OPENAI_API_KEY", "k"}}), "scripted");
}

}  // namespace
}  // namespace evoteam
