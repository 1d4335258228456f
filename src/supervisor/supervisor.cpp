// The supervisor loop. One cycle reads as: check budgets → decide the team (signals → policy) → record the
// decision → run the team → record the cycle. Everything that matters is journaled before it is relied on.
#include <evoteam/supervisor.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include <unistd.h>

#include <spdlog/spdlog.h>

#include <evoteam/evaluator.hpp>
#include <evoteam/fs.hpp>
#include <evoteam/lab.hpp>
#include <evoteam/llm_team.hpp>
#include <evoteam/meter.hpp>
#include <evoteam/supervisor_llm.hpp>
#include <evoteam/log.hpp>
#include <evoteam/process.hpp>
#include <evoteam/role.hpp>
#include <evoteam/store.hpp>
#include <evoteam/team.hpp>

#include "supervisor/run_state.hpp"

namespace evoteam {

namespace {

std::set<std::string> known_role_names() {
  std::set<std::string> names;
  for (const auto& [name, role] : load_roles(default_roles_dir())) names.insert(name);
  return names;
}

// The stop reason if a budget or the target ends the run before `next_cycle`.
std::optional<std::string> budget_stop(const Budgets& budgets, const RunState& state, int next_cycle,
                                       double elapsed_s) {
  std::optional<EvaluationRecord> best = state.history.best();
  if (budgets.target_speedup > 0 && best && best->speedup && *best->speedup >= budgets.target_speedup)
    return "target_reached";
  if (budgets.max_cycles > 0 && next_cycle > budgets.max_cycles) return "max_cycles";
  if (budgets.evaluations > 0 && state.history.evaluation_count() >= budgets.evaluations) return "budget_evaluations";
  if (budgets.hours > 0 && elapsed_s >= budgets.hours * 3600) return "budget_hours";
  MeterTotals spent = process_meter().totals();
  if (budgets.tokens > 0 && spent.tokens.total() >= static_cast<std::uint64_t>(budgets.tokens)) return "budget_tokens";
  if (budgets.usd > 0 && spent.cost_usd >= budgets.usd) return "budget_usd";
  if (budgets.gpu_seconds > 0 && state.gpu_seconds >= budgets.gpu_seconds) return "budget_gpu_seconds";
  return std::nullopt;
}

void publish_best(RunDir& run, const RunHistory& history) {
  std::optional<EvaluationRecord> best = history.best();
  if (!best) return;
  std::filesystem::path staging = run.path() / "best.new";
  std::error_code ignored;
  std::filesystem::remove_all(staging, ignored);
  copy_tree(run.candidate_dir(best->candidate_id), staging);
  const EvaluationRecord& start = history.evaluations.front();
  std::string changes = "# " + best->candidate_id + " against the starting kernel " + start.candidate_id + "\n\n";
  changes += "speedup: " + std::to_string(best->speedup.value_or(0)) + "x\n\nparams:\n";
  for (const auto& [name, value] : best->params) {
    auto it = start.params.find(name);
    std::string before = it == start.params.end() ? "?" : it->second;
    changes += "  " + name + ": " + before + (before == value ? "" : " -> " + value) + "\n";
  }
  Command diff;
  diff.argv = {"diff", "-ru", (run.candidate_dir(start.candidate_id) / "src").string(),
               (run.candidate_dir(best->candidate_id) / "src").string()};
  diff.env = scrubbed_env();
  diff.timeout = std::chrono::seconds(30);
  ProcessResult result = system_runner().run(diff);
  changes += "\nsource diff:\n" + (result.out.text.empty() ? std::string("(sources unchanged)\n") : result.out.text);
  write_file_atomic(staging / "changes.md", changes);
  std::filesystem::remove_all(run.path() / "best", ignored);
  std::filesystem::rename(staging, run.path() / "best");
  fsync_directory(run.path());
}

nlohmann::json summary_json(const RunState& state, int cycles) {
  std::optional<EvaluationRecord> best = state.history.best();
  // Tokens and cost exactly as the providers reported them (the meter is restored from the journal on resume).
  MeterTotals spent = process_meter().totals();
  nlohmann::json summary = {{"cycles", cycles},
                            {"evaluations", state.history.evaluation_count()},
                            {"best_candidate", best ? best->candidate_id : ""},
                            {"best_speedup", nullptr},
                            {"tokens", to_json(spent.tokens)},
                            {"cost_usd", spent.cost_usd},
                            {"elapsed_s", state.elapsed_s}};
  if (best && best->speedup) summary["best_speedup"] = *best->speedup;
  return summary;
}

// Providers serve one thread at a time; parallel agents share one through this lock.
class SerialProvider : public LlmProvider {
 public:
  explicit SerialProvider(std::unique_ptr<LlmProvider> inner) : m_inner(std::move(inner)) {}
  LlmResult complete(const LlmRequest& request) override {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_inner->complete(request);
  }
  std::string name() const override { return m_inner->name(); }

 private:
  std::unique_ptr<LlmProvider> m_inner;
  std::mutex m_mutex;
};

std::unique_ptr<LlmTeam> make_llm_team(const Config& config, const OptimizeOptions& options, RunDir& run) {
  auto team = std::make_unique<LlmTeam>();
  team->config = &config;
  team->run_dir = run.path();
  ProviderSettings settings = provider_settings_from_config(config, current_environment());
  settings.provider = options.provider;
  team->prices = std::make_unique<PriceTable>(PriceTable::from_config(config));
  if (!options.model.empty()) settings.model = options.model;
  if (settings.model.empty()) settings.model = team->prices->default_model(options.provider);
  team->model = settings.model;
  team->provider = std::make_unique<SerialProvider>(make_provider(settings, *team->prices));
  team->meter = &process_meter();
  team->roles = load_roles(default_roles_dir());
  team->workspace_limits = workspace_limits_from_config(config);
  team->digest_chars = static_cast<std::size_t>(config.get<int>("team.digest_chars"));
  return team;
}

std::string best_summary_text(const RunHistory& history) {
  std::optional<EvaluationRecord> best = history.best();
  if (!best) return "none yet";
  return best->candidate_id + " " + best->verdict_text() + " " + std::to_string(best->speedup.value_or(0)) + "x" +
         (best->profiled ? ", " + best->profile_bound + "-bound" : "");
}

RunOutcome run_loop(const Config& config, RunDir& run, RunState& state) {
  const OptimizeOptions& options = state.options;
  install_interrupt_forwarding();
  std::filesystem::path knowledge_dir = options.knowledge_dir.empty() ? run.knowledge_dir() : options.knowledge_dir;
  KnowledgeBase knowledge(knowledge_dir);
  std::unique_ptr<CandidateEvaluator> evaluator = make_task_evaluator(config, run.path() / "task");
  Lab lab(run, *evaluator, knowledge, state.history);
  lab.set_evaluation_limit(options.budgets.evaluations);
  const bool task_on_gpu = lab.task() != nullptr && lab.task()->target != Target::host;
  CycleBudget cycle_budget{config.get<int>("team.evaluations_per_cycle")};
  std::set<std::string> roles = known_role_names();
  Meter& meter = process_meter();
  meter.set_limits(MeterLimits{static_cast<std::uint64_t>(options.budgets.tokens), options.budgets.usd, 0});
  meter.set_journal_sink([&run](const nlohmann::json& record) { run.journal().append(record); });
  std::unique_ptr<LlmTeam> llm = options.provider == "builtin" ? nullptr : make_llm_team(config, options, run);
  const std::string policy = config.get<std::string>("supervisor.policy");
  const bool llm_supervisor = llm && policy != "rules";
  if (policy == "llm" && !llm) spdlog::warn("supervisor.policy is llm but the provider is builtin: the rules decide");
  auto make_member = [&](const RoleAssignment& role) -> std::unique_ptr<TeamMember> {
    if (llm) return llm->make_member(role);
    return make_builtin_member(role.name, config.get<double>("team.reverify_ratio"));
  };

  RunOutcome outcome;
  outcome.run_dir = run.path();
  auto session_start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return state.elapsed_s + std::chrono::duration<double>(std::chrono::steady_clock::now() - session_start).count();
  };
  int cycle = state.last_finished_cycle;
  std::string stop_reason;
  std::map<std::string, int> streak = state.clear_streak;
  TeamSpec previous = state.history.cycles.empty() ? initial_team(options.mode, config) : state.history.cycles.back().team;

  while (true) {
    if (interrupted()) { stop_reason = "interrupted"; break; }
    if (std::optional<std::string> stop = budget_stop(options.budgets, state, cycle + 1, elapsed())) {
      stop_reason = *stop;
      break;
    }
    ++cycle;
    auto cycle_start = std::chrono::steady_clock::now();
    std::filesystem::path cycle_dir = run.cycle_dir(cycle);
    evoteam::create_directories(cycle_dir);

    TeamSpec team;
    nlohmann::json signals_json;
    if (state.unfinished_team && state.unfinished_cycle == cycle) {
      team = *state.unfinished_team;  // resume a cycle that was killed: same team, known work is reused
      spdlog::info("cycle {}: resuming with the recorded team", cycle);
    } else if (cycle == 1) {
      team = initial_team(options.mode, config);
    } else {
      Signals signals = compute_signals(state.history, knowledge, config, cycle - 1);
      signals_json = signals.to_json();
      if (options.mode == TeamMode::evolving) {
        Decision decision;
        if (llm_supervisor) {
          const Task* task = lab.task();
          LlmSupervisorInputs inputs{&signals, &previous, &state.history, &config, &llm->roles, llm->model,
                                     task ? task->name : "", task ? to_string(task->target) : "", "", "",
                                     knowledge.digest(llm->digest_chars), best_summary_text(state.history),
                                     options.budgets.to_json().dump()};
          decision = decide_by_llm(inputs, *llm->provider, meter, streak);
        } else {
          decision = decide_by_rules(signals, previous, config, streak);
        }
        if (decision.stop) { stop_reason = decision.stop_reason; --cycle; break; }
        team = decision.team;
      } else {
        team = initial_team(options.mode, config);
      }
    }
    nlohmann::json team_json = team.to_json();
    team_json["cycle"] = cycle;
    team_json["change"] = cycle == 1 ? "initial team" : describe_change(previous, team);
    team_json["signals"] = signals_json;
    write_json_atomic(cycle_dir / "team.json", team_json);
    run.journal().append({{"type", "cycle_start"}, {"cycle", cycle}, {"team", team.to_json()},
                          {"change", team_json["change"]}, {"evidence", team.evidence}});
    if (state.history.cycles.empty() || state.history.cycles.back().cycle != cycle)
      state.history.cycles.push_back(CycleRecord{cycle, team, {}, std::nullopt, false});
    spdlog::info("cycle {}: {} [{}] — {}", cycle, to_string(team.pattern),
                 [&] { std::string t; for (auto& r : team.role_names()) t += (t.empty() ? "" : ", ") + r; return t; }(),
                 team.rationale);

    lab.ensure_start(cycle);
    // The last cycle before an evaluation budget runs out gets only what is left of it.
    CycleBudget this_cycle = cycle_budget;
    if (options.budgets.evaluations > 0)
      this_cycle.evaluations = std::max(1, std::min(cycle_budget.evaluations,
                                                    options.budgets.evaluations - state.history.evaluation_count()));
    std::map<std::string, TurnOutcome> turns =
        run_team(team, cycle, this_cycle, make_member, lab, knowledge, options.seed);
    if (interrupted()) { stop_reason = "interrupted"; break; }

    CycleRecord& record = state.history.cycles.back();
    nlohmann::json usage_json = nlohmann::json::object();
    nlohmann::json turns_json = nlohmann::json::object();
    for (auto& [role, turn] : turns) {
      record.usage[role] = turn.usage;
      usage_json[role] = turn.usage.to_json();
      turns_json[role] = {{"summary", turn.summary}, {"handoff_note", turn.handoff_note}};
      run.journal().append({{"type", "turn"}, {"cycle", cycle}, {"role", role}, {"summary", turn.summary},
                            {"usage", turn.usage.to_json()}});
    }
    record.finished = true;
    if (task_on_gpu) for (const auto& [role, turn] : turns) state.gpu_seconds += turn.usage.seconds;
    std::optional<EvaluationRecord> best = state.history.best();
    record.best_speedup_after = best ? best->speedup : std::nullopt;
    double cycle_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - cycle_start).count();
    state.elapsed_s += cycle_s;
    session_start = std::chrono::steady_clock::now();
    write_json_atomic(cycle_dir / "summary.json", {{"cycle", cycle}, {"turns", turns_json}, {"usage", usage_json},
                                                   {"best_candidate", best ? best->candidate_id : ""},
                                                   {"best_speedup", best && best->speedup ? nlohmann::json(*best->speedup) : nlohmann::json()},
                                                   {"seconds", cycle_s}});
    run.journal().append({{"type", "cycle_end"}, {"cycle", cycle}, {"usage", usage_json}, {"elapsed_s", state.elapsed_s},
                          {"gpu_seconds", state.gpu_seconds}, {"clear_streak", streak}, {"best_candidate", best ? best->candidate_id : ""}});
    publish_best(run, state.history);
    run.update_run_json({{"summary", summary_json(state, cycle)}});
    spdlog::info("cycle {} done: best {} {}, {} evaluations so far", cycle, best ? best->candidate_id : "none",
                 best && best->speedup ? std::to_string(*best->speedup).substr(0, 5) + "x" : "", state.history.evaluation_count());
    previous = team;
    state.last_finished_cycle = cycle;
    state.unfinished_team.reset();
  }

  std::optional<EvaluationRecord> best = state.history.best();
  outcome.stop_reason = stop_reason;
  outcome.cycles = state.last_finished_cycle;
  outcome.evaluations = state.history.evaluation_count();
  outcome.best_candidate = best ? best->candidate_id : "";
  outcome.best_speedup = best ? best->speedup : std::nullopt;
  nlohmann::json summary = summary_json(state, outcome.cycles);
  outcome.tokens = summary["tokens"];
  outcome.cost_usd = summary["cost_usd"];
  if (stop_reason == "interrupted") {
    outcome.status = "stopped";
    outcome.exit_code = ExitCode::interrupted;
  } else {
    outcome.status = "finished";
    bool target_missed = options.budgets.target_speedup > 0 && stop_reason != "target_reached";
    outcome.exit_code = target_missed ? ExitCode::budget_exhausted : ExitCode::success;
  }
  meter.set_journal_sink(nullptr);
  run.journal().append({{"type", "stop"}, {"status", outcome.status}, {"reason", stop_reason}});
  run.update_run_json({{"status", outcome.status}, {"stop_reason", stop_reason}, {"summary", summary}});
  return outcome;
}

// Runs the loop; an error that escapes it marks the run failed (journal and run.json) before it propagates.
RunOutcome run_recording_failure(const Config& config, RunDir& run, RunState& state) {
  try {
    RunOutcome outcome = run_loop(config, run, state);
    remove_log_file();
    return outcome;
  } catch (const std::exception& error) {
    run.journal().append({{"type", "stop"}, {"status", "failed"}, {"reason", error.what()}});
    run.update_run_json({{"status", "failed"}, {"stop_reason", error.what()}});
    remove_log_file();
    throw;
  }
}

}  // namespace

nlohmann::json RunOutcome::to_json() const {
  nlohmann::json value = {{"run_dir", run_dir.string()}, {"status", status},       {"stop_reason", stop_reason},
                          {"best_candidate", best_candidate}, {"best_speedup", nullptr}, {"cycles", cycles},
                          {"evaluations", evaluations}, {"tokens", tokens}, {"cost_usd", cost_usd},
                          {"exit_code", static_cast<int>(exit_code)}};
  if (best_speedup) value["best_speedup"] = *best_speedup;
  return value;
}

RunOutcome optimize(const Config& config, const OptimizeOptions& options) {
  Task task = load_task(options.task_dir);  // validate before creating anything
  // A search whose every evaluation must stop after the build would only burn its budget.
  if (std::optional<std::string> why = run_stages_unavailable(task, config))
    throw Error("cannot optimize " + task.name + " here: " + *why + ". Candidates need correctness and timing on a GPU; " +
                "`evoteam eval " + options.task_dir.string() + " --stages static,build` checks builds on this machine");
  RunState state;
  state.options = options;
  state.options.task_dir = std::filesystem::absolute(options.task_dir);
  if (!options.knowledge_dir.empty()) state.options.knowledge_dir = std::filesystem::absolute(options.knowledge_dir);
  nlohmann::json info = {{"task", task.name}, {"options", options_to_json(state.options)},
                         {"provider", {{"name", options.provider}, {"model", options.model}}},
                         {"budgets", options.budgets.to_json()}, {"config", config.json()},
                         {"host", {{"target", to_string(task.target)}}}};
  RunDir run = RunDir::create(options.runs_dir, task.name, info);
  add_log_file(run.path() / "evoteam.log");
  copy_tree(task.dir, run.path() / "task");
  run.journal().append({{"type", "run_start"}, {"task", task.name}, {"options", options_to_json(state.options)}});
  spdlog::info("run {} on {} with the {} team ({} provider)", run.id(), task.name, to_string(options.mode), options.provider);
  return run_recording_failure(config, run, state);
}

RunOutcome resume(const Config& config, const std::filesystem::path& run_dir) {
  RunDir run = RunDir::open(run_dir);
  nlohmann::json run_json = run.read_run_json();
  // A run continues with the configuration it was started with (frozen in run.json), so its budgets, team
  // sizes and evaluator settings do not change under it.
  Config frozen = config;
  if (run_json.contains("config") && run_json["config"].is_object())
    frozen.overlay(run_json["config"], (run.path() / "run.json").string() + " (frozen config)");
  JournalReplay replay = replay_journal(run.path() / "journal.jsonl");
  RunState state = replay_run_state(run_json, replay, known_role_names());
  process_meter().restore(replay.records);  // a resumed run continues from the journaled totals
  add_log_file(run.path() / "evoteam.log");
  run.update_run_json({{"status", "running"}, {"stop_reason", nullptr}, {"pid", ::getpid()}});
  run.journal().append({{"type", "resume"}, {"after_cycle", state.last_finished_cycle},
                        {"evaluations", state.history.evaluation_count()}});
  spdlog::info("resuming run {} after cycle {} ({} evaluations kept)", run.id(), state.last_finished_cycle,
               state.history.evaluation_count());
  return run_recording_failure(frozen, run, state);
}

}  // namespace evoteam
