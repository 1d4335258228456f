// The supervisor's entry points: `optimize` creates a run directory and `resume` reopens one, then both run the
// loop (run_loop.cpp) and mark the run failed if an error escapes it; `serve_run_tools` opens a run for a person's
// own agent session over MCP.
#include <evoteam/supervisor/supervisor.hpp>

#include <set>

#include <unistd.h>

#include <spdlog/spdlog.h>

#include <evoteam/agent/agent_cli.hpp>
#include <evoteam/cluster/cluster.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/log.hpp>
#include <evoteam/eval/evaluator.hpp>
#include <evoteam/history/journal_records.hpp>
#include <evoteam/llm/llm.hpp>
#include <evoteam/llm/meter.hpp>
#include <evoteam/mcp/mcp_server.hpp>
#include <evoteam/store/store.hpp>
#include <evoteam/team/role.hpp>
#include <evoteam/team/run_tools.hpp>

#include "supervisor/run_loop.hpp"
#include "supervisor/run_state.hpp"
#include "supervisor/start_from.hpp"

namespace evoteam {

namespace {

// What run.json keeps of the CLI members' settings: a secret given as agent.cli.env's NAME=VALUE is kept as its
// NAME, and a key among a template member's words is redacted (a template gets its key by name, through the env).
void keep_cli_secrets_out(nlohmann::json& config) {
  const nlohmann::json::json_pointer env("/agent/cli/env");
  if (config.contains(env)) config[env] = recorded_cli_env(config[env]);
  if (const nlohmann::json::json_pointer member("/agent/member"); config.contains(member) && config[member].is_string())
    config[member] = redact(config[member].get<std::string>());
  const nlohmann::json::json_pointer members("/agent/members");
  if (config.contains(members) && config[members].is_object())
    for (auto& role : config[members])
      if (role.is_string()) role = redact(role.get<std::string>());
}

std::set<std::string> known_role_names() {
  std::set<std::string> names;
  for (const auto& [name, role] : load_roles(default_roles_dir())) names.insert(name);
  return names;
}

// Runs the loop; an error that escapes it marks the run failed (journal and run.json) before it propagates.
// A failed run's stop_reason is the error message, outside the StopReason set (see stop_reason.hpp).
RunOutcome run_recording_failure(const Config& config, RunDir& run, RunState& state, RunContext& context) {
  try {
    RunOutcome outcome = run_loop(config, run, state, context);
    remove_log_file();
    return outcome;
  } catch (const std::exception& error) {
    append_entry(run.journal(), StopEntry{RunStatus::failed, error.what()});
    const auto* known = dynamic_cast<const Error*>(&error);
    const int exit_code = static_cast<int>(known ? known->code() : ExitCode::internal);
    run.update_run_json(
        {{"status", to_string(RunStatus::failed)}, {"stop_reason", error.what()}, {"exit_code", exit_code}});
    remove_log_file();
    throw;
  }
}

}  // namespace

nlohmann::json RunOutcome::to_json() const {
  nlohmann::json value = {{"run_dir", run_dir.string()},
                          {"status", evoteam::to_string(status)},
                          {"stop_reason", to_string(stop_reason)},  // one of today's strings, never the enum's value
                          {"best_candidate", best_candidate},
                          {"best_speedup", nullptr},
                          {"cycles", cycles},
                          {"evaluations", evaluations},
                          {"trials", trials},
                          {"tokens", tokens},
                          {"cost_usd", cost_usd},
                          {"gpu_seconds", gpu_seconds},
                          {"exit_code", static_cast<int>(exit_code)}};
  if (best_speedup) value["best_speedup"] = *best_speedup;
  return value;
}

RunOutcome optimize(const Config& config, const OptimizeOptions& options, RunContext& context) {
  validate_budgets(options.budgets);
  Task task = load_task(options.task_dir);    // validate before creating anything
  select_workloads(task, options.workloads);  // --workloads published on a task without any: refused here
  const nlohmann::json endpoint = check_llm_setup(config, options);
  // A search whose every evaluation must stop after the build would only burn its budget. Slurm workers run on
  // other machines: what this one lacks says nothing about them.
  const ExecutorSettings executor = executor_settings(config);
  const bool evaluates_here = executor_kind(executor.cluster.executor).evaluates_here;
  // A bad --devices leaves no run behind.
  if (evaluates_here) (void)local_devices(executor.cluster, task, context.runner);
  if (std::optional<std::string> why = evaluates_here ? run_stages_unavailable(task, executor.eval) : std::nullopt)
    throw Error("cannot optimize " + task.name + " here: " + *why +
                ". Candidates need correctness and timing on a GPU; " + "`evoteam eval " + options.task_dir.string() +
                " --stages static,build` checks builds on this machine");
  // An earlier run to start from is checked before anything is created: a wrong one leaves no run behind.
  std::optional<EarlierBest> earlier;
  if (!options.from_run.empty()) earlier = read_earlier_best(options.from_run, task);
  RunState state;
  state.options = options;
  state.options.task_dir = std::filesystem::absolute(options.task_dir);
  if (!options.knowledge_dir.empty()) state.options.knowledge_dir = std::filesystem::absolute(options.knowledge_dir);
  nlohmann::json info = {{"task", task.name},
                         {"options", options_to_json(state.options)},
                         {"provider", {{"name", options.provider}, {"model", options.model}}},
                         {"budgets", options.budgets.to_json()},
                         {"config", without_url_credentials(config).json()},
                         {"host", {{"target", to_string(task.target)}}}};
  if (earlier) info["from"] = earlier->run_id;
  info["provider"].update(endpoint);
  keep_cli_secrets_out(info["config"]);
  // The frozen task and the earlier best are written before run.json: a full disk or a kill -9 while they are
  // copied must not leave a run that resume cannot load.
  RunDir run = RunDir::create(options.runs_dir, task.name, info, [&](const std::filesystem::path& run_path) {
    copy_tree(task.dir, run_path / "task");
    if (earlier) import_start(run_path / "start", *earlier);
  });
  add_log_file(run.path() / "evoteam.log");
  if (options.on_run_created) options.on_run_created(run.path());
  append_entry(run.journal(),
               RunStartEntry{task.name, options_to_json(state.options), earlier ? earlier->run_id : std::string()});
  spdlog::info("run {} on {} with the {} team ({} provider{})", run.id(), task.name, to_string(options.mode),
               options.provider, endpoint.contains("pricing") ? "; the model is priced at zero: a local endpoint" : "");
  return run_recording_failure(config, run, state, context);
}

RunOutcome resume(const Config& config, const std::filesystem::path& run_dir, RunContext& context) {
  // A run that cannot continue is refused before anything in it is written: it keeps saying what it said.
  if (std::filesystem::is_regular_file(run_dir / "run.json")) {
    const nlohmann::json run_json = read_run_json(run_dir);
    validate_run_json(run_json, run_dir / "run.json");
    Task frozen_task =
        load_task(run_dir / "task");  // the frozen task: InvalidInput naming its file when it is gone or broken
    // The run's --workloads choice must still leave it something to evaluate.
    select_workloads(frozen_task, options_from_json(run_json["options"]).workloads);
    if (std::filesystem::is_regular_file(run_dir / "journal.jsonl"))
      check_files_agree_with_journal(run_dir, replay_journal(run_dir / "journal.jsonl"));
  }
  RunDir run = RunDir::open(run_dir);
  nlohmann::json run_json = run.read_run_json();
  // A run continues with the configuration it was started with (frozen in run.json), so its budgets, team
  // sizes and evaluator settings do not change under it.
  Config frozen = config;
  if (run_json.contains("config") && run_json["config"].is_object())
    frozen.overlay(run_json["config"], (run.path() / "run.json").string() + " (frozen config)");
  JournalReplay replay = replay_journal(run.path() / "journal.jsonl");
  RunState state = replay_run_state(run_json, replay, known_role_names());
  // A resumed run continues from the journaled totals.
  if (std::optional<MeterTotals> spent = last_budget_tick(replay.records)) context.meter.restore(*spent);
  add_log_file(run.path() / "evoteam.log");
  // A resumed run has no exit code until it ends again.
  run.update_run_json({{"status", to_string(RunStatus::running)},
                       {"stop_reason", nullptr},
                       {"exit_code", nullptr},
                       {"pid", ::getpid()}});
  append_entry(run.journal(), ResumeEntry{state.last_finished_cycle, state.history.evaluation_count()});
  spdlog::info("resuming run {} after cycle {} ({} evaluations kept)", run.id(), state.last_finished_cycle,
               state.history.evaluation_count());
  return run_recording_failure(frozen, run, state, context);
}

void serve_run_tools(const Config& config, const std::filesystem::path& run_dir, const std::filesystem::path& workspace,
                     RunContext& context, std::istream& in, std::ostream& out) {
  RunDir run = RunDir::open(run_dir);
  const nlohmann::json run_json = run.read_run_json();
  Config frozen = config;
  if (run_json.contains("config") && run_json["config"].is_object())
    frozen.overlay(run_json["config"], (run.path() / "run.json").string() + " (frozen config)");
  RunState state = replay_run_state(run_json, replay_journal(run.path() / "journal.jsonl"), known_role_names());
  std::unique_ptr<CandidateEvaluator> evaluator = make_evaluator(frozen, run, state.options, context);
  KnowledgeBase knowledge(knowledge_dir_of(state.options, run), run_provenance(run, evaluator->task()));
  Lab lab(run, *evaluator, knowledge, state.history);
  lab.set_budget(Lab::Budget{state.options.budgets.evaluations, state.options.budgets.gpu_seconds, nullptr});
  if (std::optional<StartingPoint> start = imported_start(run)) lab.set_starting_point(*start);
  const int cycle = state.history.cycles.empty() ? 1 : state.history.cycles.back().cycle;
  lab.ensure_start(cycle);
  const std::string task_name = evaluator->task() != nullptr ? evaluator->task()->name : run_json.value("task", "");
  RunToolsSettings settings{"run " + run.id() + " (" + task_name + ")", std::filesystem::absolute(workspace),
                            run.path() / "mcp" / "submitted",           cycle,
                            tool_settings_from_config(frozen),          workspace_limits_from_config(frozen)};
  std::unique_ptr<McpToolService> tools = make_run_tools(lab, knowledge, settings);
  spdlog::info("serving evoteam's tools over MCP for {} (candidates recorded in cycle {})", settings.scope, cycle);
  serve_mcp(in, out, *tools, EVOTEAM_VERSION);
}

}  // namespace evoteam
