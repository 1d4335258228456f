// `evoteam campaign SUITE`: one run per task of a suite under one campaign directory, with the --budget-* flags
// split across the tasks. `status`, `wait`, `stop` and `resume` take a campaign where they take a run (cmd_watch,
// cmd_optimize); `runs` lists campaigns with their runs under them (cmd_inspect).
#include <cmath>
#include <iostream>
#include <memory>

#include <spdlog/spdlog.h>

#include <evoteam/agent/agent_cli.hpp>
#include <evoteam/campaign/campaign.hpp>
#include <evoteam/cluster/cluster.hpp>
#include <evoteam/core/detach.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/core/text.hpp>
#include <evoteam/llm/llm.hpp>
#include <evoteam/report/campaign_report.hpp>
#include <evoteam/supervisor/supervisor_settings.hpp>
#include <evoteam/team/cli_team.hpp>

#include "cli/command.hpp"

namespace evoteam::cli {

namespace {

struct CampaignFlags {
  std::string suite;
  std::string out;
  std::string runs_dir;
  std::optional<long long> tokens;
  std::optional<double> usd;
  std::optional<double> hours;
  std::optional<double> gpu_seconds;
  std::optional<long long> evaluations;
  // Passed to every run as given.
  std::vector<std::pair<std::string, std::string>> passed;
  std::string team, agent, devices, executor;
  bool json = false;
  bool detach = false;
};

constexpr const char* k_campaign_daemon_log_name = "daemon.log";

// Budgets of the whole campaign: a finite number, 0 or more (as optimize checks its own).
const CLI::Validator k_campaign_budget(
    [](std::string& text) -> std::string {
      double value = 0;
      if (!CLI::detail::lexical_cast(text, value) || !std::isfinite(value) || value < 0)
        return "must be a finite number, 0 or more (got '" + text + "')";
      return "";
    },
    "NUMBER>=0");

std::string policy_name(PolicyChoice policy) {
  switch (policy) {
    case PolicyChoice::automatic: return "auto";
    case PolicyChoice::rules: return "rules";
    case PolicyChoice::llm: return "llm";
  }
  return "auto";
}

// --config and --set reach every run as they reached the campaign; a relative --config keeps its meaning.
std::vector<std::string> global_arguments(const GlobalOptions& globals) {
  std::vector<std::string> args;
  if (!globals.config_file.empty())
    args.insert(args.end(), {"--config", std::filesystem::absolute(globals.config_file).string()});
  for (const std::string& assignment : globals.assignments) args.insert(args.end(), {"--set", assignment});
  if (globals.quiet) args.push_back("-q");
  for (int i = 0; i < globals.verbose; ++i) args.push_back("-v");
  return args;
}

// A budget of 0 is no limit, as for a run.
template <typename T>
std::optional<T> limit(const std::optional<T>& flag) {
  if (!flag || *flag <= 0) return std::nullopt;
  return flag;
}

nlohmann::json campaign_settings(const Config& config, const CampaignFlags& flags, const GlobalOptions& globals) {
  const TeamSettings team = team_settings(config);
  const ClusterSettings cluster = cluster_settings(config);
  std::vector<std::string> optimize_args;
  for (const auto& [flag, value] : flags.passed)
    if (!value.empty()) optimize_args.insert(optimize_args.end(), {flag, value});
  return {{"team", flags.team.empty() ? to_string(team.mode) : flags.team},
          {"policy", policy_name(supervisor_settings(config).policy)},
          {"agent", flags.agent.empty() ? agent_member_settings_from_config(config).member : flags.agent},
          {"devices", flags.devices.empty() ? cluster.devices : flags.devices},
          {"executor", flags.executor.empty() ? to_string(cluster.executor) : flags.executor},
          {"global_args", global_arguments(globals)},
          {"optimize_args", optimize_args}};
}

int print_outcome(const CampaignOutcome& outcome, bool json) {
  if (json) {
    print_json(outcome.to_json());
  } else {
    std::cout << format_campaign_status(outcome.dir);
  }
  return outcome.campaign.exit_code.value_or(static_cast<int>(ExitCode::internal));
}

// The report of the campaign, rewritten after every change of a task's state and at every cycle end of its runs.
CampaignHooks campaign_hooks() {
  CampaignHooks hooks;
  hooks.on_created = [](const std::filesystem::path& dir) {
    // As for a detached run: once the caller has the directory it may `evoteam stop` it at once.
    install_interrupt_forwarding();
    announce_detached_run(dir, dir / k_campaign_daemon_log_name);
  };
  // The campaign's pages follow it: rewritten at every state change and every cycle end of its runs. A page that
  // cannot be written is a warning; the campaign goes on.
  hooks.on_progress = [](const std::filesystem::path& dir) {
    try {
      write_campaign_report(dir);
    } catch (const std::exception& error) {
      spdlog::warn("the campaign report of {} was not written: {}", dir.string(), error.what());
    }
  };
  return hooks;
}

}  // namespace

int resume_campaign_command(CommandContext& context, const std::filesystem::path& dir, bool detach, bool json) {
  if (detach) return start_detached_daemon(context.arguments, json, "campaign_dir");
  return print_outcome(resume_campaign(context.config, dir, campaign_hooks()), json);
}

void add_campaign(CLI::App& sub, CommandContext& context) {
  auto flags = std::make_shared<CampaignFlags>();
  // The optimize flags every run gets as given, in the order they are listed here.
  static const std::vector<std::pair<const char*, const char*>> k_passed = {
      {"--provider", "builtin, anthropic, openai or scripted (as optimize)"},
      {"--model", "Model name for LLM providers"},
      {"--base-url", "The provider's server (llm.base_url)"},
      {"--max-cycles", "Stop each run after this many cycles"},
      {"--target-speedup", "Stop each run as soon as its best verified speedup reaches this"},
      {"--knowledge", "A knowledge directory shared by every run of the campaign"},
      {"--seed", "Seed of the teams' random choices"},
      {"--workloads", "published, ours or all (as optimize)"},
  };
  flags->passed.resize(k_passed.size());
  sub.add_option("SUITE", flags->suite,
                 "A directory of tasks, a glob, or a file listing task directories with optional weights")
      ->required();
  sub.add_option("--out", flags->out, "The campaign directory (default: <runs-dir>/campaigns/<id>)");
  sub.add_option("--runs-dir", flags->runs_dir, "Where campaigns/ lives (default: store.runs_dir)");
  sub.add_option("--budget-tokens", flags->tokens, "Tokens for the whole campaign, split across its tasks")
      ->check(k_campaign_budget);
  sub.add_option("--budget-usd", flags->usd, "Dollars for the whole campaign")->check(k_campaign_budget);
  sub.add_option("--budget-hours", flags->hours, "Wall time for the whole campaign")->check(k_campaign_budget);
  sub.add_option("--budget-gpu-seconds", flags->gpu_seconds, "GPU time for the whole campaign")
      ->check(k_campaign_budget);
  sub.add_option("--budget-evaluations", flags->evaluations, "Evaluations for the whole campaign")
      ->check(k_campaign_budget);
  for (std::size_t i = 0; i < k_passed.size(); ++i) {
    flags->passed[i].first = k_passed[i].first;
    sub.add_option(k_passed[i].first, flags->passed[i].second, k_passed[i].second);
  }
  sub.add_option("--team", flags->team, "evolving (default), fixed or single");
  sub.add_option("--agent", flags->agent, "Who acts for every role (as optimize: agent.member)");
  CLI::Option* devices =
      sub.add_option("--devices", flags->devices,
                     "GPUs the campaign may use: with several, tasks run side by side, one GPU each (cluster.devices)");
  sub.add_option("--executor", flags->executor, "Where each run's evaluations run (as optimize)")
      ->check(CLI::IsMember(executor_names()));
  sub.add_flag("--json", flags->json, "Print campaign.json with the campaign's directory at the end");
  sub.add_flag("--detach", flags->detach,
               "Run as a daemon: print the campaign directory and return at once (`evoteam wait` gives its exit "
               "code)");
  sub.callback([&context, flags, devices] {
    context.action = [&context, flags, devices] {
      if (flags->detach) return start_detached_daemon(context.arguments, flags->json, "campaign_dir");
      if (!flags->team.empty()) flags->passed.emplace_back("--team", flags->team);
      if (!flags->agent.empty()) flags->passed.emplace_back("--agent", flags->agent);
      if (!flags->executor.empty()) flags->passed.emplace_back("--executor", flags->executor);
      CampaignOptions options;
      options.suite = flags->suite;
      options.out_dir = flags->out;
      options.runs_dir = context.runs_dir(flags->runs_dir);
      options.budgets.evaluations = limit(flags->evaluations);
      options.budgets.tokens = limit(flags->tokens);
      options.budgets.usd = limit(flags->usd);
      options.budgets.gpu_seconds = limit(flags->gpu_seconds);
      if (const std::optional<double> hours = limit(flags->hours)) options.budgets.wall_s = *hours * 3600.0;
      Config config = context.config;
      if (!flags->executor.empty()) config.overlay({{"cluster", {{"executor", flags->executor}}}}, "--executor");
      if (devices->count() > 0) config.overlay({{"cluster", {{"devices", flags->devices}}}}, "--devices");
      if (!flags->agent.empty()) config.overlay({{"agent", {{"member", flags->agent}}}}, "--agent");
      options.settings = campaign_settings(config, *flags, context.globals);
      // What every run would refuse (exit 3) is refused before the campaign exists, as optimize refuses it before
      // its run: an unknown team, a coding-agent CLI that is not installed.
      if (!flags->team.empty()) (void)team_mode_from_string(flags->team);
      if (const AgentMemberSettings members = agent_member_settings_from_config(config); members.any_cli())
        check_cli_members(members, PriceTable::from_config(config), options.budgets.usd.value_or(0));
      return print_outcome(run_campaign(config, options, campaign_hooks()), flags->json);
    };
  });
}

}  // namespace evoteam::cli
