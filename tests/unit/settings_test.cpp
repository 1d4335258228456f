// The settings readers together: every configuration key is read by one of them (a key nobody reads is a promise
// the daemon does not keep), and every name a closed set allows converts in the module that owns the key.
#include <gtest/gtest.h>

#include "support/config_keys.hpp"

#include <evoteam/agent/agent.hpp>
#include <evoteam/agent/agent_cli.hpp>
#include <evoteam/agent/tools.hpp>
#include <evoteam/agent/workspace.hpp>
#include <evoteam/cluster/cluster.hpp>
#include <evoteam/core/config.hpp>
#include <evoteam/core/config_rules.hpp>
#include <evoteam/core/log.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/eval/eval_settings.hpp>
#include <evoteam/llm/llm.hpp>
#include <evoteam/store/store.hpp>
#include <evoteam/supervisor/supervisor.hpp>
#include <evoteam/supervisor/supervisor_settings.hpp>

namespace evoteam {
namespace {

void read_every_section(const Config& config) {
  (void)process_settings(config);
  (void)eval_settings(config);
  (void)configured_verbosity(config);
  (void)configured_runs_dir(config);
  (void)configured_provider(config, {});
  (void)provider_settings_for("builtin", config, {});
  (void)PriceTable::from_config(config);
  (void)agent_settings_from_config(config);
  (void)agent_member_settings_from_config(config);
  (void)workspace_limits_from_config(config);
  (void)tool_settings_from_config(config);
  (void)supervisor_settings(config);
  (void)team_settings(config);
  (void)budgets_from_config(config);
  (void)cluster_settings(config);
}

TEST(Settings, EveryKeyIsReadByASettingsReader) {
  Config config;
  std::set<std::string> reads;
  config.record_reads_into(&reads);
  read_every_section(config);
  const std::vector<std::string> leaves = testing::config_key_paths();
  // A reader that converts a whole section (eval's) reads every key under it: its struct's round trip
  // (EvalSettings.TheJsonFormIsTheConfiguredSection) holds it to every key.
  auto read = [&](std::string path) {
    for (;; path = path.substr(0, path.rfind('.'))) {
      if (reads.count(path)) return true;
      if (path.find('.') == std::string::npos) return false;
    }
  };
  for (const std::string& path : leaves) EXPECT_TRUE(read(path)) << path << " is read by no settings reader";
}

// Each name of a closed set, set on its own, converts without error in its reader.
TEST(Settings, EveryAllowedNameConvertsInItsModule) {
  int sets = 0;
  for (const ConfigRule& rule : config_rules()) {
    if (rule.choices.empty() || rule.path == "llm.provider") continue;  // a provider needs its key: below
    ++sets;
    const bool list = Config().at(rule.path).is_array();
    for (const std::string& choice : rule.choices) {
      const std::string path = rule.path;
      Config config;
      config.overlay_assignment(path + "=" + (list ? "[\"" + choice + "\"]" : choice), "--set");
      EXPECT_NO_THROW(read_every_section(config)) << path << "=" << choice;
    }
  }
  EXPECT_GE(sets, 12);
  Config config;
  config.overlay_assignment("team.mode=single", "--set");
  config.overlay_assignment("supervisor.policy=rules", "--set");
  config.overlay_assignment("log.verbosity=debug", "--set");
  EXPECT_EQ(team_settings(config).mode, TeamMode::single);
  EXPECT_EQ(supervisor_settings(config).policy, PolicyChoice::rules);
  EXPECT_EQ(configured_verbosity(config), Verbosity::debug);
  config.overlay_assignment("cluster.executor=slurm", "--set");
  config.overlay_assignment("cluster.slurm.mode=srun", "--set");
  config.overlay_assignment("cluster.slurm.build_on=login", "--set");
  config.overlay_assignment("cluster.slurm.extra_args=[\"--exclusive\"]", "--set");
  const ClusterSettings cluster = cluster_settings(config);
  EXPECT_EQ(cluster.executor, Executor::slurm);
  EXPECT_EQ(cluster.slurm.mode, SlurmMode::srun);
  EXPECT_TRUE(cluster.slurm.build_on_login);
  EXPECT_EQ(cluster.slurm.extra_args, std::vector<std::string>{"--exclusive"});
  EXPECT_EQ(cluster_settings(Config()).executor, Executor::local);
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
