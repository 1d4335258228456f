// The supervisor loop. One cycle reads as: check the stops → decide the team (signals → policy) → record the
// decision → run the team → record the cycle. Everything that matters is journaled before it is relied on.
#include "supervisor/run_loop.hpp"

#include <algorithm>
#include <chrono>

#include <spdlog/spdlog.h>

#include <evoteam/cluster/cluster.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/core/text.hpp>
#include <evoteam/history/journal_records.hpp>
#include <evoteam/llm/endpoint.hpp>
#include <evoteam/llm/provider_table.hpp>
#include <evoteam/supervisor/supervisor_llm.hpp>
#include <evoteam/team/cli_team.hpp>
#include <evoteam/team/lab.hpp>
#include <evoteam/team/llm_team.hpp>
#include <evoteam/team/role.hpp>
#include <evoteam/team/team.hpp>

#include "supervisor/cycle_records.hpp"
#include "supervisor/start_from.hpp"

namespace evoteam {

std::optional<StopReason> budget_stop(const Budgets& budgets, const RunState& state, int next_cycle, double elapsed_s,
                                      const MeterTotals& spent) {
  std::optional<EvaluationRecord> best = state.history.best();
  if (budgets.target_speedup > 0 && best && best->speedup && *best->speedup >= budgets.target_speedup)
    return StopReason::target_reached;
  if (budgets.max_cycles > 0 && next_cycle > budgets.max_cycles) return StopReason::max_cycles;
  if (budgets.evaluations > 0 && state.history.evaluations_spent() >= budgets.evaluations)
    return StopReason::budget_evaluations;
  if (budgets.hours > 0 && elapsed_s >= budgets.hours * 3600) return StopReason::budget_hours;
  // A call refused because its prompt alone would cross the budget spends the budget as surely as a served one.
  if (budgets.tokens > 0 &&
      (spent.tokens.total() >= static_cast<std::uint64_t>(budgets.tokens) || spent.refused_calls > 0))
    return StopReason::budget_tokens;
  if (budgets.usd > 0 && spent.cost_usd >= budgets.usd) return StopReason::budget_usd;
  if (budgets.gpu_seconds > 0 && state.history.device_seconds() >= budgets.gpu_seconds)
    return StopReason::budget_gpu_seconds;
  return std::nullopt;
}

namespace {

using Clock = RunContext::Clock;

}  // namespace

ProviderSettings run_provider_settings(const Config& config, const OptimizeOptions& options, const PriceTable& prices,
                                       const std::map<std::string, std::string>& environment) {
  ProviderSettings settings = provider_settings_for(options.provider, config, environment);
  if (!options.model.empty()) settings.model = options.model;
  if (settings.model.empty()) settings.model = prices.default_model(options.provider);
  return settings;
}

nlohmann::json check_llm_setup(const Config& config, const OptimizeOptions& options) {
  const AgentMemberSettings members = agent_member_settings_from_config(config);
  if (members.any_cli()) {
    check_cli_members(members, PriceTable::from_config(config), options.budgets.usd);
    cli_members_sandboxed(members, system_runner());  // refuses before the run exists when it cannot sandbox them
  }
  if (member_kind_of_provider(options.provider) != MemberKind::llm) return nlohmann::json::object();
  const PriceTable prices = PriceTable::from_config(config);
  const ProviderSettings settings = run_provider_settings(config, options, prices, current_environment());
  make_provider(settings, prices);
  load_roles(default_roles_dir());
  const ProviderInfo* provider = find_provider(settings.provider);
  if (provider == nullptr || provider->default_base_url.empty()) return nlohmann::json::object();  // not a server
  // A server of one's own is asked what it serves (it may need no key); a provider is asked about the model with
  // the key, which every key may do for free: a wrong key or model leaves no run behind.
  if (provider->protocol == ProviderProtocol::openai_chat_completions &&
      settings.base_url != provider->default_base_url)
    check_endpoint_serves_model(settings);
  else
    check_provider_accepts(settings);
  nlohmann::json endpoint = {
      {"model", settings.model}, {"base_url", displayed_url(settings.base_url)}, {"local", settings.local_endpoint}};
  if (settings.local_endpoint && prices.find(settings.model) == nullptr && !prices.unpriced_models_allowed()) {
    endpoint["pricing"] = "zero: local endpoint, model not in the price table";
    spdlog::info("model {} at {} is priced at zero: a local endpoint, and the price table has no entry for it",
                 settings.model, displayed_url(settings.base_url));
  }
  return endpoint;
}

namespace {

std::unique_ptr<LlmTeam> make_llm_team(const Config& config, const OptimizeOptions& options, const RunDir& run,
                                       Meter& meter) {
  auto team = std::make_unique<LlmTeam>();
  team->run_dir = run.path();
  team->prices = std::make_unique<PriceTable>(PriceTable::from_config(config));
  ProviderSettings settings = run_provider_settings(config, options, *team->prices, current_environment());
  team->model = settings.model;
  team->provider = make_provider(settings, *team->prices);  // members call it at once (see LlmProvider)
  const ModelInfo* info = team->prices->find(settings.model);
  const ContextWindow window =
      resolve_context_window(settings, settings.context_window, info != nullptr ? info->max_input_tokens : 0);
  team->context_window = window.tokens;
  if (window.tokens > 0)
    spdlog::info("context window of {}: {} tokens ({})", settings.model, window.tokens, window.source);
  team->meter = &meter;
  team->roles = load_roles(default_roles_dir());
  team->agent_settings = agent_settings_from_config(config);
  team->tool_settings = tool_settings_from_config(config);
  team->workspace_limits = workspace_limits_from_config(config);
  team->digest_chars = team_settings(config).digest_chars;
  return team;
}

// The run's coding-agent CLI members, when agent.member or agent.members names a CLI; null otherwise.
std::unique_ptr<CliTeam> make_cli_team(const Config& config, const RunDir& run, RunContext& context) {
  AgentMemberSettings members = agent_member_settings_from_config(config);
  if (!members.any_cli()) return nullptr;
  auto team = std::make_unique<CliTeam>();
  team->run_dir = run.path();
  team->run_id = run.id();
  team->members = std::move(members);
  team->roles = load_roles(default_roles_dir());
  team->prices = std::make_unique<PriceTable>(PriceTable::from_config(config));
  team->meter = &context.meter;
  team->tool_settings = tool_settings_from_config(config);
  team->workspace_limits = workspace_limits_from_config(config);
  team->digest_chars = team_settings(config).digest_chars;
  std::error_code error;
  team->evoteam_program = std::filesystem::read_symlink("/proc/self/exe", error);
  team->runner = &context.runner;
  team->sandboxed = cli_members_sandboxed(team->members, context.runner);
  if (!team->sandboxed)
    spdlog::warn(
        "agent.cli.sandbox is none: CLI members run unconfined — they can read your home and write "
        "anywhere you can");
  return team;
}

}  // namespace

std::unique_ptr<CandidateEvaluator> make_evaluator(const Config& config, const RunDir& run,
                                                   const OptimizeOptions& options, RunContext& context) {
  const ExecutorSettings settings = executor_settings(config);
  if (context.make_evaluator) return context.make_evaluator(settings, run.path() / "task");
  return make_executor(settings, {run.path(), context.runner, options.workloads, context.interrupted});
}

std::filesystem::path knowledge_dir_of(const OptimizeOptions& options, const RunDir& run) {
  return options.knowledge_dir.empty() ? run.knowledge_dir() : options.knowledge_dir;
}

// What every entry the run records says about where it comes from. A fake evaluator in tests has no task: the
// name run.json gives is used then.
Provenance run_provenance(const RunDir& run, const Task* task) {
  if (task != nullptr) return provenance_of(*task, run.id());
  return Provenance{run.read_run_json().value("task", ""), "", run.id()};
}

namespace {

// The knowledge a run found when it began, recorded once in run.json ("knowledge"): a shared directory's
// entries, and how many of them apply to this task (the ones that screen and advise its team).
void record_knowledge_at_start(RunDir& run, const KnowledgeBase& knowledge) {
  if (run.read_run_json().contains("knowledge")) return;  // a resume keeps what the run started with
  std::size_t total = 0, of_this_task = 0;
  for (KnowledgeKind kind :
       {KnowledgeKind::strategy, KnowledgeKind::failed_attempt, KnowledgeKind::hardware, KnowledgeKind::constraint}) {
    total += knowledge.entries(kind).size();
    of_this_task += knowledge.entries_for_task(kind).size();
  }
  run.update_run_json({{"knowledge",
                        {{"dir", std::filesystem::absolute(knowledge.dir()).string()},
                         {"entries_at_start", total},
                         {"entries_of_this_task_at_start", of_this_task}}}});
}

std::string best_summary_text(const RunHistory& history) {
  std::optional<EvaluationRecord> best = history.best();
  if (!best) return "none yet";
  return best->candidate_id + " " + best->verdict_text() + " " + std::to_string(best->speedup.value_or(0)) + "x" +
         (best->profiled ? ", " + best->profile_bound + "-bound" : "");
}

std::string role_list(const TeamSpec& team) { return join(team.role_names(), ", "); }

// The team of one cycle, or why the run stops instead of running it.
struct TeamChoice {
  TeamSpec team;
  nlohmann::json signals;  // what the policy read; null when no decision was made
  std::optional<StopReason> stop;
  nlohmann::json exchange;  // the LLM policy's prompt and reply (Decision::exchange)
};

// Evaluations in a row that the evaluator itself failed (INFRA_ERROR) before the run stops as infra_errors: the
// machine or the configuration is broken, and every further evaluation would be spent for nothing.
constexpr int k_infra_errors_to_stop = 5;

// Evaluated records at the end of the history whose verdict is the evaluator's own failure.
int trailing_infra_errors(const RunHistory& history) {
  int count = 0;
  for (auto it = history.evaluations.rbegin(); it != history.evaluations.rend(); ++it) {
    if (!it->evaluated()) continue;
    if (!it->has(Verdict::infra_error)) break;
    ++count;
  }
  return count;
}

// True when evaluations ran and every one was the evaluator's own failure: the run measured nothing.
bool measured_nothing(const RunHistory& history) {
  bool any = false;
  for (const EvaluationRecord& record : history.evaluations) {
    if (!record.evaluated()) continue;
    if (!record.has(Verdict::infra_error)) return false;
    any = true;
  }
  return any;
}

// A refused key, an unknown model or an endpoint nobody can reach fails every later turn alike, so the run stops
// instead of spending cycles (and budgets) that cannot work. Why no member of a cycle could work with its model, when
// none could: every turn refused for good, or unable to reach its model at all (a refusal among unreachable turns names
// the cycle a refusal).
std::optional<StopReason> models_failed_everyone(const std::map<std::string, TurnOutcome>& turns) {
  if (turns.empty()) return std::nullopt;
  const bool none_worked = std::all_of(turns.begin(), turns.end(), [](const auto& turn) {
    return turn.second.provider_refused || turn.second.model_unreachable;
  });
  if (!none_worked) return std::nullopt;
  const bool any_refused =
      std::any_of(turns.begin(), turns.end(), [](const auto& turn) { return turn.second.provider_refused; });
  return any_refused ? StopReason::provider_refused : StopReason::model_unreachable;
}

// Idle cycles in a row that end a run with search_exhausted: enough for a policy change to give the team
// something new to try, few enough that an unbounded run stops promptly.
constexpr int k_idle_cycles_to_stop = 3;

class SupervisorLoop {
 public:
  SupervisorLoop(const Config& config, RunDir& run, RunState& state, RunContext& context);
  ~SupervisorLoop();
  SupervisorLoop(const SupervisorLoop&) = delete;
  SupervisorLoop& operator=(const SupervisorLoop&) = delete;

  StopReason run();

 private:
  std::optional<StopReason> stop_before(int next_cycle) const;
  std::optional<StopReason> run_cycle(int cycle);
  TeamChoice choose_team(int cycle);
  Decision decide(const Signals& signals);
  void start_cycle(int cycle, const TeamChoice& choice);
  std::map<std::string, TurnOutcome> run_members(int cycle, const TeamSpec& team);
  CycleBudget budget_of_this_cycle(int cycle) const;
  void read_lab_records();
  void finish_cycle(int cycle, const std::map<std::string, TurnOutcome>& turns, Clock::time_point cycle_start);
  bool did_work(int cycle, const std::map<std::string, TurnOutcome>& turns) const;
  double elapsed_s() const;

  const SupervisorSettings m_supervisor;
  const TeamSettings m_team;
  RunDir& m_run;
  RunState& m_state;
  RunContext& m_context;
  const OptimizeOptions& m_options;
  std::unique_ptr<CandidateEvaluator> m_evaluator;  // before the knowledge base: its task is the provenance
  KnowledgeBase m_knowledge;
  Lab m_lab;
  CycleBudget m_cycle_budget;
  const MemberKind m_member_kind;
  std::unique_ptr<LlmTeam> m_llm;  // the LLM members' provider and role files; the LLM policy's too
  std::unique_ptr<CliTeam> m_cli;  // the roles coding-agent CLIs act for
  bool m_llm_supervisor = false;
  std::map<std::string, int> m_clear_streak;
  TeamSpec m_previous;                // the team of the last cycle (or the initial one)
  Clock::time_point m_session_start;  // where the wall time not yet counted in m_state.elapsed_s begins
  int m_idle_cycles = 0;              // finished cycles in a row without work (see did_work)
};

SupervisorLoop::SupervisorLoop(const Config& config, RunDir& run, RunState& state, RunContext& context)
    : m_supervisor(supervisor_settings(config)),
      m_team(team_settings(config)),
      m_run(run),
      m_state(state),
      m_context(context),
      m_options(state.options),
      m_evaluator(make_evaluator(config, run, state.options, context)),
      m_knowledge(knowledge_dir_of(state.options, run), run_provenance(run, m_evaluator->task())),
      m_lab(run, *m_evaluator, m_knowledge, state.history),
      m_cycle_budget{m_team.evaluations_per_cycle},
      m_member_kind(member_kind_of_provider(state.options.provider)),
      m_llm(m_member_kind == MemberKind::llm ? make_llm_team(config, state.options, run, context.meter) : nullptr),
      m_cli(make_cli_team(config, run, context)),
      m_clear_streak(state.clear_streak),
      m_previous(state.history.cycles.empty() ? initial_team(state.options.mode, m_supervisor)
                                              : state.history.cycles.back().team) {
  // The lab refuses evaluations past the run's budgets, so a cycle cannot overshoot them: a turn past the deadline
  // gets no more evaluations, and an LLM member's turn ends at its next tool call.
  m_lab.set_budget(
      Lab::Budget{m_options.budgets.evaluations, m_options.budgets.gpu_seconds, [this]() -> std::optional<std::string> {
                    const double hours = m_options.budgets.hours;
                    if (hours > 0 && elapsed_s() >= hours * 3600) return "the run's time budget is spent";
                    return std::nullopt;
                  }});
  if (std::optional<StartingPoint> start = imported_start(run)) m_lab.set_starting_point(*start);
  record_knowledge_at_start(run, m_knowledge);
  // A broken role file fails the run before its first cycle, not when a resume or an LLM member reads it.
  load_roles(default_roles_dir());
  m_llm_supervisor = m_llm && m_supervisor.policy != PolicyChoice::rules;
  if (m_supervisor.policy == PolicyChoice::llm && !m_llm)
    spdlog::warn("supervisor.policy is llm but the provider is builtin: the rules decide");
  // Set last, so that the destructor, which detaches the sink, runs whenever it was set.
  m_context.meter.set_limits(
      MeterLimits{static_cast<std::uint64_t>(m_options.budgets.tokens), m_options.budgets.usd, 0});
  m_context.meter.set_journal_sink(
      [&run](const MeterTotals& totals) { append_entry(run.journal(), BudgetTickEntry{totals}); });
  m_session_start = m_context.now();
}

// The sink writes into this run's journal: it must not outlive the loop, even when an error ends it.
SupervisorLoop::~SupervisorLoop() { m_context.meter.set_journal_sink(nullptr); }

StopReason SupervisorLoop::run() {
  for (int cycle = m_state.last_finished_cycle + 1;; ++cycle) {
    if (std::optional<StopReason> stop = stop_before(cycle)) return *stop;
    if (std::optional<StopReason> stop = run_cycle(cycle)) return *stop;
  }
}

std::optional<StopReason> SupervisorLoop::stop_before(int next_cycle) const {
  if (m_context.interrupted()) return StopReason::interrupted;
  return budget_stop(m_options.budgets, m_state, next_cycle, elapsed_s(), m_context.meter.totals());
}

double SupervisorLoop::elapsed_s() const {
  return m_state.elapsed_s + std::chrono::duration<double>(m_context.now() - m_session_start).count();
}

// One cycle: decide, record the decision, run the team, record the cycle. Returns why the run stops instead of
// continuing, if it does: the policy's stop (before anything is recorded) or an interrupt during the team's work
// (the cycle then stays unfinished in the journal and a resume runs it again).
std::optional<StopReason> SupervisorLoop::run_cycle(int cycle) {
  const Clock::time_point cycle_start = m_context.now();
  TeamChoice choice = choose_team(cycle);
  if (choice.stop) return choice.stop;
  start_cycle(cycle, choice);
  std::map<std::string, TurnOutcome> turns = run_members(cycle, choice.team);
  if (m_context.interrupted()) return StopReason::interrupted;
  finish_cycle(cycle, turns, cycle_start);
  m_previous = choice.team;
  m_state.last_finished_cycle = cycle;
  m_state.unfinished_team.reset();
  if (trailing_infra_errors(m_state.history) >= k_infra_errors_to_stop) return StopReason::infra_errors;
  if (std::optional<StopReason> failed = models_failed_everyone(turns)) {
    spdlog::error("cycle {}: {} (see the transcripts); the run stops", cycle,
                  *failed == StopReason::provider_refused ? "the provider refused every member's calls for good"
                                                          : "no member could reach its model");
    return failed;
  }
  // A team with nothing left to try (every attempt identical to an earlier one, or blocked) would cycle on
  // for ever when no budget bounds the run, filling the disk with empty cycles: a few idle cycles in a row end it.
  m_idle_cycles = did_work(cycle, turns) ? 0 : m_idle_cycles + 1;
  if (m_idle_cycles >= k_idle_cycles_to_stop) return StopReason::search_exhausted;
  return std::nullopt;
}

// Work is a new evaluation in the cycle, or tokens an agent spent (LLM agents may think without submitting).
bool SupervisorLoop::did_work(int cycle, const std::map<std::string, TurnOutcome>& turns) const {
  for (const EvaluationRecord* record : m_state.history.in_cycle(cycle))
    if (!record->blocked()) return true;
  for (const auto& [role, turn] : turns)
    if (turn.usage.tokens > 0) return true;
  return false;
}

namespace {

// The team as it will run (enforce_team_rules, where its members are made), its rationale saying what the rules
// changed, so the record shows the team that worked.
TeamSpec as_it_runs(TeamSpec team) {
  const std::vector<std::string> changes = enforce_team_rules(team);
  if (!changes.empty()) team.rationale += " (kept to the team's rules: " + join(changes, "; ") + ")";
  return team;
}

}  // namespace

TeamChoice SupervisorLoop::choose_team(int cycle) {
  if (m_state.unfinished_team && m_state.unfinished_cycle == cycle) {
    spdlog::info("cycle {}: resuming with the recorded team", cycle);
    return {*m_state.unfinished_team, nullptr, std::nullopt,
            nullptr};  // a killed cycle: same team, known work is reused
  }
  if (cycle == 1) return {as_it_runs(initial_team(m_options.mode, m_supervisor)), nullptr, std::nullopt, nullptr};
  Signals signals = compute_signals(m_state.history, m_knowledge, m_supervisor, cycle - 1);
  if (m_options.mode != TeamMode::evolving)
    return {as_it_runs(initial_team(m_options.mode, m_supervisor)), signals.to_json(), std::nullopt, nullptr};
  Decision decision = with_hard_stops(decide(signals), signals);
  std::optional<StopReason> stop = decision.stop ? std::optional<StopReason>(decision.stop_reason) : std::nullopt;
  return {as_it_runs(std::move(decision.team)), signals.to_json(), stop, std::move(decision.exchange)};
}

Decision SupervisorLoop::decide(const Signals& signals) {
  if (!m_llm_supervisor) return decide_by_rules(signals, m_previous, m_supervisor, m_clear_streak);
  const Task* task = m_lab.task();
  LlmSupervisorInputs inputs{&signals,
                             &m_previous,
                             &m_state.history,
                             &m_supervisor,
                             &m_llm->roles,
                             m_llm->model,
                             task ? task->name : "",
                             task ? to_string(task->target) : "",
                             task ? describe_param_space(*task) : "none",
                             task ? describe_static_constraints(*task) : "none",
                             m_knowledge.digest(m_llm->digest_chars),
                             best_summary_text(m_state.history),
                             m_options.budgets.to_json().dump()};
  return decide_by_llm(inputs, *m_llm->provider, m_context.meter, m_clear_streak);
}

void SupervisorLoop::start_cycle(int cycle, const TeamChoice& choice) {
  const TeamSpec& team = choice.team;
  record_cycle_start(m_run, cycle, team, cycle == 1 ? "initial team" : describe_change(m_previous, team),
                     choice.signals, choice.exchange);
  // A resumed cycle already has its record (replayed from its cycle_start).
  if (m_state.history.cycles.empty() || m_state.history.cycles.back().cycle != cycle)
    m_state.history.cycles.push_back(CycleRecord{cycle, team, {}, std::nullopt, false});
  spdlog::info("cycle {}: {} [{}] — {}", cycle, to_string(team.pattern), role_list(team), team.rationale);
}

std::map<std::string, TurnOutcome> SupervisorLoop::run_members(int cycle, const TeamSpec& team) {
  m_lab.ensure_start(cycle);
  read_lab_records();
  const MemberFactory make_member = member_factory(m_member_kind, {m_team.reverify_ratio, m_llm.get(), m_cli.get()});
  const CycleBudget budget = budget_of_this_cycle(cycle);
  if (budget.evaluations <= 0) {
    spdlog::info("cycle {}: its evaluations were spent before the run was interrupted; the cycle ends", cycle);
    return {};
  }
  std::map<std::string, TurnOutcome> turns =
      run_team(team, cycle, budget, make_member, m_lab, m_knowledge, m_options.seed, m_context.parallel_turns);
  read_lab_records();
  return turns;
}

// The lab appends evaluations; the supervisor's history takes them as a snapshot.
void SupervisorLoop::read_lab_records() {
  RunHistory lab = m_lab.snapshot();
  m_state.history.evaluations = std::move(lab.evaluations);
  m_state.history.trials = lab.trials;
  m_state.history.trial_device_s = lab.trial_device_s;
  m_state.history.unrecorded_failures = std::move(lab.unrecorded_failures);
}

// A cycle resumed after a kill continues with what is left of its allowance (what it recorded before counts,
// so kills cannot multiply a cycle's work); the last cycle before an evaluation budget runs out gets only what
// is left of that.
CycleBudget SupervisorLoop::budget_of_this_cycle(int cycle) const {
  int spent_before = 0;
  for (const EvaluationRecord* record : m_state.history.in_cycle(cycle))
    if (!record->blocked() && record->author_role != "start") ++spent_before;
  CycleBudget budget = m_cycle_budget;
  budget.evaluations = m_cycle_budget.evaluations - spent_before;
  const int limit = m_options.budgets.evaluations;
  if (limit > 0 && budget.evaluations > 0)
    budget.evaluations = std::max(1, std::min(budget.evaluations, limit - m_state.history.evaluations_spent()));
  return budget;
}

void SupervisorLoop::finish_cycle(int cycle, const std::map<std::string, TurnOutcome>& turns,
                                  Clock::time_point cycle_start) {
  CycleRecord& record = m_state.history.cycles.back();
  TurnsJson recorded = record_turns(m_run, cycle, turns);
  for (const auto& [role, turn] : turns) record.usage[role] = turn.usage;
  record.finished = true;
  std::optional<EvaluationRecord> best = m_state.history.best();
  record.best_speedup_after = best ? best->speedup : std::nullopt;
  const Clock::time_point now = m_context.now();
  const double cycle_s = std::chrono::duration<double>(now - cycle_start).count();
  m_state.elapsed_s += cycle_s;
  m_session_start = now;
  record_cycle_end(m_run, CycleEnd{cycle, recorded, cycle_s, best}, m_state, m_clear_streak);
  publish_best(m_run, m_state.history, m_context.runner);
  // The knowledge directory keeps every run's best kernel, so that it outlives the run directory.
  if (best)
    m_knowledge.keep_best_kernel(
        {m_lab.sources_of(best->candidate_id), best->params, best->candidate_id, best->speedup});
  m_run.update_run_json({{"summary", summary_json(m_state, cycle, m_context.meter.totals())}});
  spdlog::info("cycle {} done: best {} {}, {} evaluations so far", cycle, best ? best->candidate_id : "none",
               best && best->speedup ? fixed(*best->speedup, 3) + "x" : "", m_state.history.evaluation_count());
  if (m_context.on_cycle_end) m_context.on_cycle_end(m_run.path());
}

RunOutcome finish_run(RunDir& run, const RunState& state, StopReason reason, const MeterTotals& spent) {
  std::optional<EvaluationRecord> best = state.history.best();
  RunOutcome outcome;
  outcome.run_dir = run.path();
  outcome.stop_reason = reason;
  outcome.cycles = state.last_finished_cycle;
  outcome.evaluations = state.history.evaluation_count();
  outcome.trials = state.history.trials;
  outcome.gpu_seconds = state.history.device_seconds();
  outcome.best_candidate = best ? best->candidate_id : "";
  outcome.best_speedup = best ? best->speedup : std::nullopt;
  nlohmann::json summary = summary_json(state, outcome.cycles, spent);
  outcome.tokens = summary["tokens"];
  outcome.cost_usd = summary["cost_usd"];
  const RunEnd end = run_end(reason, state.options.budgets.target_speedup);
  outcome.status = end.status;
  outcome.exit_code = end.exit_code;
  record_stop(run, outcome, summary);
  return outcome;
}

}  // namespace

RunOutcome run_loop(const Config& config, RunDir& run, RunState& state, RunContext& context) {
  install_interrupt_forwarding();
  StopReason reason = SupervisorLoop(config, run, state, context).run();
  // Whatever ended it, a run whose every evaluation was the evaluator's failure has no result to report.
  if (reason != StopReason::interrupted && measured_nothing(state.history)) reason = StopReason::infra_errors;
  return finish_run(run, state, reason, context.meter.totals());
}

}  // namespace evoteam
