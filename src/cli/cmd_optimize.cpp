// `evoteam optimize`, `evoteam resume` and `evoteam stop`: start, continue and stop supervisor runs; and
// `evoteam worker`, which serves a run's evaluations on a Slurm node.
#include <cmath>
#include <csignal>
#include <iostream>
#include <memory>

#include <spdlog/spdlog.h>

#include <evoteam/campaign/campaign.hpp>
#include <evoteam/cluster/cluster.hpp>
#include <evoteam/core/detach.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/log.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/core/text.hpp>
#include <evoteam/history/stop_reason.hpp>
#include <evoteam/llm/meter.hpp>
#include <evoteam/report/report.hpp>
#include <evoteam/report/run_report.hpp>
#include <evoteam/store/store.hpp>
#include <evoteam/supervisor/supervisor.hpp>

#include "cli/command.hpp"

namespace evoteam::cli {

namespace {

struct OptimizeFlags {
  std::string task_dir;
  std::string provider;
  std::string model;
  std::string base_url;
  std::string team;
  std::optional<int> max_cycles;
  std::optional<long long> tokens;
  std::optional<double> usd;
  std::optional<double> hours;
  std::optional<double> gpu_seconds;
  std::optional<int> evaluations;
  std::optional<double> target_speedup;
  std::string runs_dir;
  std::string knowledge_dir;
  std::string from;
  std::optional<std::uint64_t> seed;
  std::string workloads = "all";
  std::string executor;
  std::string devices;
  std::string agent;
  bool json = false;
  bool detach = false;
  bool no_cache = false;
};

// The run's report.html and report.md, written into its directory as the run starts, at the end of every cycle
// (a page left open reloads itself while the run is live) and as the run ends (the page stops reloading). A report
// that cannot be written (a full disk) costs the user a warning, never the run or its exit code.
void write_report_of(const std::filesystem::path& run_dir, bool at_end) {
  try {
    const std::vector<std::filesystem::path> written =
        write_run_report(load_run_report(run_dir), run_dir, {ReportFormat::html, ReportFormat::markdown});
    if (at_end) spdlog::info("report: {}", written.front().string());
  } catch (const std::exception& error) {
    spdlog::warn("the run's report was not written ({}); `evoteam report {}` writes it later", error.what(),
                 run_dir.string());
  }
}

int finish_run(const RunOutcome& outcome, bool json) {
  write_report_of(outcome.run_dir, true);
  if (json) {
    print_json(outcome.to_json());
  } else {
    std::cout << "run " << outcome.run_dir.string() << ": " << to_string(outcome.status) << " ("
              << to_string(outcome.stop_reason) << ") after " << outcome.cycles << " cycles and " << outcome.evaluations
              << " evaluations; best ";
    if (outcome.best_speedup)
      std::cout << outcome.best_candidate << " at " << *outcome.best_speedup << "x";
    else
      std::cout << "none";
    std::cout << "\n";
  }
  // A stopped run is meant to be continued: say how (on stderr, so --json's stdout stays one object).
  if (outcome.stop_reason == StopReason::interrupted)
    std::cerr << "stopped at a safe point; continue it with: evoteam resume " << outcome.run_dir.string() << "\n";
  return static_cast<int>(outcome.exit_code);
}

// Budgets, targets and counts: a finite number, 0 or more. "nan", "inf" and negatives are usage errors here
// rather than values that would be stored as null, or wrap around as unsigned, and break the run later.
const CLI::Validator k_finite_non_negative(
    [](std::string& text) -> std::string {
      double value = 0;
      if (!CLI::detail::lexical_cast(text, value) || !std::isfinite(value) || value < 0)
        return "must be a finite number, 0 or more (got '" + text + "')";
      return "";
    },
    "NUMBER>=0");

// A seed is a whole number of 0 or more, written in digits: "-1" must not become 2^64-1.
const CLI::Validator k_digits(
    [](std::string& text) -> std::string {
      if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
        return "must be a whole number, 0 or more (got '" + text + "')";
      return "";
    },
    "UINT");

// Where a detached daemon's stdout and stderr go, inside its run directory.
constexpr const char* k_daemon_log_name = "daemon.log";

// A run of this process: its children, its one meter, the real clock, the evaluator on the run's task, and its
// report rewritten at every cycle's end.
RunContext process_run_context() {
  RunContext context(system_runner(), process_meter());
  context.on_cycle_end = [](const std::filesystem::path& run_dir) { write_report_of(run_dir, false); };
  return context;
}

}  // namespace

int start_detached_daemon(const std::vector<std::string>& arguments, bool json, const char* dir_key) {
  std::vector<std::string> daemon_arguments;
  for (const std::string& argument : arguments)
    if (argument != "--detach") daemon_arguments.push_back(argument);
  const DetachedStart start = start_detached(daemon_arguments);
  if (!start.announced) return start.exit_code;
  if (json)
    print_json({{dir_key, *start.announced}, {"pid", start.pid}});
  else
    std::cout << *start.announced << std::endl;
  return 0;
}

void add_optimize(CLI::App& sub, CommandContext& context) {
  auto flags = std::make_shared<OptimizeFlags>();
  sub.add_option("TASK_DIR", flags->task_dir, "Task directory (holding task.json)")->required();
  sub.add_option("--provider", flags->provider,
                 "builtin (offline team), anthropic, openai or scripted (default: builtin unless a key is set)");
  sub.add_option("--model", flags->model, "Model name for LLM providers");
  sub.add_option("--base-url", flags->base_url,
                 "The provider's server, e.g. http://127.0.0.1:8080/v1 for a local OpenAI-compatible one "
                 "(llm.base_url); it must answer and serve the model before the run starts");
  sub.add_option("--team", flags->team, "evolving (default), fixed or single");
  sub.add_option("--max-cycles", flags->max_cycles, "Stop after this many cycles (0: no limit)")
      ->check(k_finite_non_negative);
  sub.add_option("--budget-tokens", flags->tokens, "Stop when this many tokens were spent")
      ->check(k_finite_non_negative);
  sub.add_option("--budget-usd", flags->usd, "Stop when this many dollars were spent")->check(k_finite_non_negative);
  sub.add_option("--budget-hours", flags->hours, "Stop after this much wall time")->check(k_finite_non_negative);
  sub.add_option("--budget-gpu-seconds", flags->gpu_seconds, "Stop after this much GPU time")
      ->check(k_finite_non_negative);
  sub.add_option("--budget-evaluations", flags->evaluations, "Stop after this many evaluations")
      ->check(k_finite_non_negative);
  sub.add_option("--target-speedup", flags->target_speedup, "Stop as soon as the best verified speedup reaches this")
      ->check(k_finite_non_negative);
  sub.add_option("--runs-dir", flags->runs_dir, "Where to create the run directory (default: store.runs_dir)");
  sub.add_option("--knowledge", flags->knowledge_dir, "A knowledge directory shared across runs and tasks");
  sub.add_option("--from", flags->from,
                 "Start from the best kernel (files and params) of an earlier run of the same task: its directory, "
                 "or its id under --runs-dir");
  sub.add_option("--seed", flags->seed, "Seed of the team's random choices")->check(k_digits);
  sub.add_option("--workloads", flags->workloads,
                 "The task's workloads to evaluate: published (those published with the definition the task follows), "
                 "ours, or all (default)")
      ->check(CLI::IsMember({"published", "ours", "all"}));
  sub.add_option("--executor", flags->executor,
                 "Where evaluations run: " +
                     join(executors(), " or ",
                          [](const ExecutorKind& kind) {
                            return std::string(kind.name) + " (" + std::string(kind.description) + ")";
                          }) +
                     ". Default: cluster.executor")
      ->check(CLI::IsMember(executor_names()));
  // Given, even empty, it is cluster.devices: `--devices ""` is refused by that key's rule as `--set` is.
  CLI::Option* devices = sub.add_option("--devices", flags->devices,
                                        "Devices that evaluate at once: all (default: every visible GPU) or a list "
                                        "such as 0,2 (cluster.devices)");
  sub.add_option("--agent", flags->agent,
                 "Who acts for every role: builtin-loop (default), claude-code, codex, or a command template for "
                 "another coding-agent CLI (agent.member; docs/agents.md)");
  sub.add_flag("--json", flags->json, "Print a final JSON summary on stdout");
  sub.add_flag("--no-cache", flags->no_cache,
               "Measure every candidate afresh instead of reusing earlier runs' cached results; builds stay cached "
               "(eval.reuse_results=false)");
  sub.add_flag("--detach", flags->detach,
               "Run as a daemon in the background: print the run directory and return at once (output goes to "
               "daemon.log in the run directory; `evoteam wait` gives its exit code)");
  sub.callback([&context, flags, devices] {
    context.action = [&context, flags, devices] {
      if (flags->detach) return start_detached_daemon(context.arguments, flags->json, "run_dir");
      // --executor and --devices are configuration values, so the run freezes it with the rest and a resume keeps it.
      Config config = context.config;
      if (!flags->executor.empty()) config.overlay({{"cluster", {{"executor", flags->executor}}}}, "--executor");
      if (devices->count() > 0) config.overlay({{"cluster", {{"devices", flags->devices}}}}, "--devices");
      if (!flags->base_url.empty()) config.overlay({{"llm", {{"base_url", flags->base_url}}}}, "--base-url");
      if (!flags->agent.empty()) config.overlay({{"agent", {{"member", flags->agent}}}}, "--agent");
      if (flags->no_cache) config.overlay({{"eval", {{"reuse_results", false}}}}, "--no-cache");
      const TeamSettings team = team_settings(config);
      OptimizeOptions options;
      options.task_dir = flags->task_dir;
      options.provider = flags->provider.empty() ? configured_provider(config, current_environment()) : flags->provider;
      options.model = flags->model;
      options.mode = flags->team.empty() ? team.mode : team_mode_from_string(flags->team);
      options.budgets = budgets_from_config(config);
      if (flags->max_cycles) options.budgets.max_cycles = *flags->max_cycles;
      if (flags->tokens) options.budgets.tokens = *flags->tokens;
      if (flags->usd) options.budgets.usd = *flags->usd;
      if (flags->hours) options.budgets.hours = *flags->hours;
      if (flags->gpu_seconds) options.budgets.gpu_seconds = *flags->gpu_seconds;
      if (flags->evaluations) options.budgets.evaluations = *flags->evaluations;
      if (flags->target_speedup) options.budgets.target_speedup = *flags->target_speedup;
      options.runs_dir = context.runs_dir(flags->runs_dir);
      options.knowledge_dir = flags->knowledge_dir;
      if (!flags->from.empty()) options.from_run = resolve_run(flags->from, options.runs_dir);
      options.seed = flags->seed.value_or(team.seed);
      options.workloads = parse_workload_selection(flags->workloads).value_or(WorkloadSelection::all);
      // A daemon started by --detach hands its run directory to the caller here; otherwise nothing happens.
      options.on_run_created = [](const std::filesystem::path& run_dir) {
        // Once the caller has the directory it may `evoteam stop` the run at once: SIGTERM must already be
        // a request to stop at the next safe point (as inside the loop), not death without a record.
        install_interrupt_forwarding();
        announce_detached_run(run_dir, run_dir / k_daemon_log_name);
        // The page exists from the start, so a tab can be opened on it before the first cycle ends.
        write_report_of(run_dir, false);
      };
      RunContext run_context = process_run_context();
      return finish_run(optimize(config, options, run_context), flags->json);
    };
  });
}

void add_resume(CLI::App& sub, CommandContext& context) {
  auto run = std::make_shared<std::string>();
  auto runs_dir = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto detach = std::make_shared<bool>(false);
  sub.add_option("RUN", *run, "Run or campaign directory, or an id under --runs-dir")->required();
  sub.add_option("--runs-dir", *runs_dir, "Directory holding run directories (default: store.runs_dir)");
  sub.add_flag("--json", *json, "Print a final JSON summary on stdout");
  sub.add_flag("--detach", *detach,
               "Run as a daemon in the background: print the directory and return at once (as optimize --detach)");
  sub.callback([&context, run, runs_dir, json, detach] {
    context.action = [&context, run, runs_dir, json, detach] {
      if (const std::optional<std::filesystem::path> campaign = find_campaign(*run, context.runs_dir(*runs_dir)))
        return resume_campaign_command(context, *campaign, *detach, *json);
      const std::filesystem::path run_dir = resolve_run(*run, context.runs_dir(*runs_dir));
      if (*detach) return start_detached_daemon(context.arguments, *json, "run_dir");
      // A daemon started by --detach hands the run's directory to its caller before it resumes the run.
      install_interrupt_forwarding();
      announce_detached_run(run_dir, run_dir / k_daemon_log_name);
      RunContext run_context = process_run_context();
      return finish_run(resume(context.config, run_dir, run_context), *json);
    };
  });
}

void add_worker(CLI::App& sub, CommandContext& context) {
  auto run = std::make_shared<std::string>();
  auto options = std::make_shared<WorkerOptions>();
  sub.add_option("RUN_DIR", *run, "The run directory whose evaluation requests to serve")->required();
  sub.add_option("--name", options->name, "Whose claims these are: the Slurm job id (default: local-<pid>)");
  sub.add_option("--request", options->request_id, "Serve this one request and exit (srun mode)");
  sub.callback([&context, run, options] {
    context.action = [&context, run, options] {
      // Stops at the next request when the job is cancelled: Slurm sends SIGTERM before SIGKILL.
      install_interrupt_forwarding();
      const int served = run_worker(context.config, *run, *options, system_runner());
      spdlog::info("worker served {} request(s)", served);
      return 0;
    };
  });
}

void add_stop(CLI::App& sub, CommandContext& context) {
  auto run = std::make_shared<std::string>();
  auto runs_dir = std::make_shared<std::string>();
  sub.add_option("RUN", *run, "Run or campaign directory, or an id under --runs-dir")->required();
  sub.add_option("--runs-dir", *runs_dir, "Directory holding run directories (default: store.runs_dir)");
  sub.callback([&context, run, runs_dir] {
    context.action = [&context, run, runs_dir] {
      const std::optional<std::filesystem::path> campaign = find_campaign(*run, context.runs_dir(*runs_dir));
      // A campaign's daemon asks each of its live runs to stop, records them and exits 130.
      std::filesystem::path path = campaign ? *campaign : resolve_run(*run, context.runs_dir(*runs_dir));
      std::optional<int> pid = campaign ? lock_holder(path, k_campaign_lock_name) : lock_holder(path);
      if (!pid) throw Error(path.string() + " is not running (no live daemon holds it)");
      // SIGTERM makes the daemon stop at its next safe point, journal, and exit 130.
      if (::kill(*pid, SIGTERM) != 0) throw Error("cannot signal pid " + std::to_string(*pid));
      std::cout << "asked pid " << *pid << " to stop " << (campaign ? "campaign " : "run ") << path.string() << "\n";
      return 0;
    };
  });
}

}  // namespace evoteam::cli
