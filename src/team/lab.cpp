#include <evoteam/team/lab.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>

#include <evoteam/core/clock.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/text.hpp>
#include <evoteam/history/journal_records.hpp>
#include <evoteam/store/store.hpp>

#include "team/source_diff.hpp"

namespace evoteam {

int count_param_changes(const ParamValues& before, const ParamValues& after) {
  int changes = 0;
  for (const auto& [name, value] : after) {
    auto it = before.find(name);
    if (it == before.end() || it->second != value) ++changes;
  }
  return changes;
}

namespace {

// Where an evaluation was measured, from its eval.json: the device, and the Slurm worker that ran it, if one did.
std::string measured_on(const nlohmann::json& eval_json) {
  if (!eval_json.is_object() || !eval_json.contains("device") || !eval_json["device"].is_string()) return "";
  std::string device = eval_json["device"].get<std::string>();
  const nlohmann::json worker = eval_json.value("worker", nlohmann::json());
  if (worker.is_object() && worker.contains("host") && worker["host"].is_string() && worker.contains("name") &&
      worker["name"].is_string())
    device += "@" + worker["host"].get<std::string>() + "/" + worker["name"].get<std::string>();
  return device;
}

// 12 for "c0012"; 0 for a name that is not a candidate id.
std::size_t candidate_number(const std::string& id) {
  if (id.size() < 2 || id[0] != 'c' || id.find_first_not_of("0123456789", 1) != std::string::npos) return 0;
  return static_cast<std::size_t>(std::stoull(id.substr(1)));
}

}  // namespace

Lab::Lab(RunDir& run, CandidateEvaluator& evaluator, KnowledgeBase& knowledge, const RunHistory& recorded)
    : m_run(run), m_evaluator(evaluator), m_knowledge(knowledge) {
  m_history.evaluations = recorded.evaluations;
  m_history.trials = recorded.trials;
  m_history.trial_device_s = recorded.trial_device_s;
  m_history.unrecorded_failures = recorded.unrecorded_failures;
  // New ids start past every recorded candidate and every candidate directory on disk: a directory the journal
  // does not know (an evaluation a kill interrupted, or records lost from a damaged journal) is never reused.
  std::size_t highest = 0;
  for (const EvaluationRecord& record : m_history.evaluations)
    highest = std::max(highest, candidate_number(record.candidate_id));
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(m_run.path() / "candidates", error))
    highest = std::max(highest, candidate_number(entry.path().filename().string()));
  m_next_number = highest + 1;
}

std::string Lab::next_candidate_id() {
  char id[16];
  std::snprintf(id, sizeof id, "c%04zu", m_next_number++);
  return id;
}

std::string Lab::sources_hash(const std::filesystem::path& sources_dir) const {
  std::string text;
  for (const std::filesystem::path& file : files_under(sources_dir))
    text += std::filesystem::relative(file, sources_dir).string() + "\n" + sha256_hex(read_file(file)) + "\n";
  return sha256_hex(text).substr(0, 16);
}

ParamValues Lab::default_params() const {
  ParamValues params;
  for (const ParamSpec& spec : m_evaluator.param_space()) params[spec.name] = spec.default_value;
  return params;
}

std::optional<std::string> Lab::apply_param_text(const std::string& text, ParamValues& params) const {
  if (const Task* task = m_evaluator.task()) return evoteam::apply_param_text(*task, text, params);
  // An evaluator without a task (a test's) declares its params only: the same check without param constraints.
  Task declared;
  declared.params = m_evaluator.param_space();
  return evoteam::apply_param_text(declared, text, params);
}

std::optional<std::string> Lab::blocking_constraint(const ParamValues& params) const {
  // A constraint's "when" field lists name=value terms that together make a candidate fail; the knowledge base
  // answers with this task's constraints only.
  if (std::optional<KnowledgeEntry> entry = m_knowledge.blocking_constraint(params)) return entry->title;
  return std::nullopt;
}

LabOutcome Lab::evaluate(const LabRequest& request, int cycle, Screening screening) {
  return evaluate_within(request, cycle, screening, true);
}

// The nine jobs of recording a candidate, one step each: the record the request describes; an identical candidate
// reused; its changes against its parent; screening against the recorded constraints; the budget; the id reserved;
// its files stored; the evaluation measured and noted; the record committed with the lab's own ruling.
LabOutcome Lab::evaluate_within(const LabRequest& request, int cycle, Screening screening, bool budgeted) {
  LabOutcome outcome;
  outcome.record = record_for(request, cycle);
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (const EvaluationRecord* earlier = m_history.find_key(outcome.record.key()))
      return reuse_locked(*earlier, outcome.record);
    count_changes_locked(outcome.record, request.sources_dir);
    if (screening == Screening::against_knowledge)
      if (std::optional<LabOutcome> blocked = block_locked(outcome.record)) return *blocked;
    if (std::optional<std::string> spent = budgeted ? budget_spent_locked() : std::nullopt) {
      outcome.record.state = RecordState::over_budget;
      outcome.reused = true;
      outcome.summary = *spent + ": not evaluated";
      return outcome;
    }
    // Reserve the id now so parallel members never share one; the record is completed below.
    outcome.record.candidate_id = next_candidate_id();
    m_history.evaluations.push_back(outcome.record);  // state pending until the verdict is in
  }
  const std::filesystem::path dir = store_candidate(request.sources_dir, outcome.record);
  outcome.summary = measure(dir, outcome.record);
  note_failure(outcome.record);
  commit_evaluation(outcome.record);
  return outcome;
}

EvaluationRecord Lab::record_for(const LabRequest& request, int cycle) const {
  EvaluationRecord record;
  record.parent_id = request.parent_id;
  record.author_role = request.author_role;
  record.lineage = request.lineage;
  record.cycle = cycle;
  record.hypothesis = request.hypothesis;
  record.params = request.params;
  record.sources_hash = sources_hash(request.sources_dir);
  return record;
}

LabOutcome Lab::reuse_locked(const EvaluationRecord& earlier, const EvaluationRecord& requested) {
  const EvaluationRecord* parent = m_history.find(requested.parent_id);
  // A candidate rejected only for bundling several changes is accepted when one change reaches it.
  if (earlier.rejected && earlier.ruled(RulingKind::several_changes) && parent != nullptr &&
      count_param_changes(parent->params, requested.params) == 1 && parent->sources_hash == requested.sources_hash) {
    const std::string reached = "reached by one change from " + parent->candidate_id;
    for (EvaluationRecord& stored : m_history.evaluations)
      if (stored.candidate_id == earlier.candidate_id)
        stored.set_ruling(true, Ruling{RulingKind::reached_by_one_change, "accepted: " + reached});
    append_entry(m_run.journal(), RulingEntry{earlier.candidate_id, true, requested.author_role,
                                              Ruling{RulingKind::reached_by_one_change, reached}});
  }
  LabOutcome outcome;
  outcome.record = *m_history.find(earlier.candidate_id);
  outcome.reused = true;
  // Resubmitting a failure costs nothing, but the cycle failed as surely as if it had been measured again.
  if (outcome.record.failed())
    add_unrecorded_failure_locked(UnrecordedFailure{requested.cycle, requested.author_role, outcome.record.candidate_id,
                                                    std::nullopt, outcome.record.verdict,
                                                    outcome.record.failure_signature, requested.lineage});
  outcome.summary =
      "identical to " + outcome.record.candidate_id + " (" + outcome.record.verdict_text() + "), not re-evaluated";
  return outcome;
}

void Lab::count_changes_locked(EvaluationRecord& record, const std::filesystem::path& sources_dir) const {
  const EvaluationRecord* parent = m_history.find(record.parent_id);
  if (parent == nullptr) return;
  record.structural_change = parent->sources_hash != record.sources_hash;
  record.changes =
      count_param_changes(parent->params, record.params) +
      (record.structural_change ? changed_regions_between(sources_of(parent->candidate_id), sources_dir) : 0);
}

std::optional<LabOutcome> Lab::block_locked(EvaluationRecord& record) {
  const std::optional<std::string> constraint = blocking_constraint(record.params);
  if (!constraint) return std::nullopt;
  record.candidate_id = next_candidate_id();
  record.state = RecordState::blocked;
  record.failure_signature = "recorded constraint: " + *constraint;
  m_history.evaluations.push_back(record);
  append_entry(m_run.journal(), EvaluationEntry{record});
  LabOutcome outcome;
  outcome.record = record;
  outcome.summary = "blocked before evaluation: matches the recorded constraint '" + *constraint + "'";
  return outcome;
}

std::filesystem::path Lab::store_candidate(const std::filesystem::path& sources_dir,
                                           const EvaluationRecord& record) const {
  std::filesystem::path dir = m_run.candidate_dir(record.candidate_id);
  EVOTEAM_CHECK(!std::filesystem::exists(dir), "candidate directory " + dir.string() + " exists already");
  copy_tree(sources_dir, dir / "src");
  write_json_atomic(dir / "params.json", record.params);
  write_json_atomic(dir / "meta.json", {{"parent", record.parent_id},
                                        {"author_role", record.author_role},
                                        {"cycle", record.cycle},
                                        {"lineage", record.lineage},
                                        {"hypothesis", record.hypothesis},
                                        {"changes", record.changes}});
  return dir;
}

std::string Lab::measure(const std::filesystem::path& dir, EvaluationRecord& record) {
  const auto start = std::chrono::steady_clock::now();
  const CandidateEvaluator::Result result = m_evaluator.evaluate(dir / "src", record.params, Stage::timing, 0);
  record.eval_seconds = seconds_since(start);
  // NOISY counts as a pass (outputs verified, timing usable but not converged); its verdict stays on record
  // so a person sees it.
  record.take_measurement(result, measured_on(result.eval_json));
  write_json_atomic(dir / "eval.json", result.eval_json);
  if (!result.build_log.empty()) write_file_atomic(dir / "build.log", result.build_log);
  return result.summary;
}

void Lab::note_failure(EvaluationRecord& record) {
  if (record.passed() || record.failure_signature.empty()) return;
  // Every new failure signature goes into the experiment record; a second occurrence is a repeat.
  record.repeated_recorded_failure = m_knowledge.has_failure(record.failure_signature);
  if (!record.repeated_recorded_failure)
    m_knowledge.add(KnowledgeKind::failed_attempt, KnowledgeEntry{record.verdict_text() + " in " + record.candidate_id,
                                                                  {{"signature", record.failure_signature},
                                                                   {"candidate", record.candidate_id},
                                                                   {"params", describe_params(record.params)}},
                                                                  record.hypothesis});
}

void Lab::commit_evaluation(EvaluationRecord& record) {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    // Judged against the best at the moment of recording, so parallel members are held to the same best.
    if (std::optional<std::string> reason = slid_back(record))
      record.set_ruling(false, Ruling{RulingKind::slid_back, *reason});
    for (EvaluationRecord& stored : m_history.evaluations)
      if (stored.candidate_id == record.candidate_id) stored = record;
    // The ruling travels in the evaluation record itself: replaying the journal restores it with the candidate.
    append_entry(m_run.journal(), EvaluationEntry{record});
  }
  if (record.rejected)
    m_knowledge.add(
        KnowledgeKind::failed_attempt,
        KnowledgeEntry{
            "rejected " + record.candidate_id, {{"candidate", record.candidate_id}, {"author", "lab"}}, record.ruling});
}

std::optional<std::string> Lab::slid_back(const EvaluationRecord& record) const {
  // A build that never reached the static stage tells nothing about what the candidate uses.
  if (!record.evaluated() || !record.adopted_constraints) return std::nullopt;
  const std::optional<EvaluationRecord> best = m_history.best();
  if (!best || !best->adopted_constraints) return std::nullopt;
  const std::vector<std::string>& kept = *record.adopted_constraints;
  for (const std::string& name : *best->adopted_constraints) {
    if (std::find(kept.begin(), kept.end(), name) != kept.end()) continue;
    std::string message = "the candidate no longer meets it";
    if (const Task* task = m_evaluator.task())
      for (const StaticConstraint& constraint : task->static_constraints)
        if (constraint.name == name && !constraint.message.empty()) message = constraint.message;
    return "slid back from " + name + ": " + message + " (the run's best, " + best->candidate_id + ", meets it)";
  }
  return std::nullopt;
}

std::optional<CandidateEvaluator::Profile> Lab::profile(const std::string& candidate_id) {
  ParamValues params;
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    const EvaluationRecord* record = m_history.find(candidate_id);
    EVOTEAM_CHECK(record != nullptr, "profile of unknown candidate " + candidate_id);
    params = record->params;
  }
  if (!spend_trial(Stage::profile)) return std::nullopt;
  std::filesystem::path dir = m_run.candidate_dir(candidate_id);
  CandidateEvaluator::Profile profile = m_evaluator.profile(dir / "src", params);
  add_trial_device_time(profile.device_s, profile.device);
  write_json_atomic(dir / "profile.json",
                    {{"bound", profile.bound}, {"summary", profile.summary}, {"metrics", profile.metrics}});
  std::lock_guard<std::mutex> lock(m_mutex);
  for (EvaluationRecord& stored : m_history.evaluations)
    if (stored.candidate_id == candidate_id) stored.profiled = true, stored.profile_bound = profile.bound;
  append_entry(m_run.journal(), ProfileEntry{candidate_id, profile.bound, profile.summary});
  return profile;
}

LabOutcome Lab::reverify(const std::string& candidate_id, int cycle, const std::string& role) {
  ParamValues params;
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    const EvaluationRecord* record = m_history.find(candidate_id);
    EVOTEAM_CHECK(record != nullptr, "re-verification of unknown candidate " + candidate_id);
    params = record->params;
  }
  std::filesystem::path dir = m_run.candidate_dir(candidate_id);
  // A fresh salt gives fresh correctness seeds and input data: a lucky pass cannot repeat.
  std::uint64_t salt = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) | 1u;
  CandidateEvaluator::Result result = m_evaluator.evaluate(dir / "src", params, Stage::timing, salt);
  write_json_atomic(dir / "reverify.json", result.eval_json);
  const bool ok = counts_as_pass(result.verdict);
  rule(
      candidate_id, ok, role,
      Ruling{RulingKind::reverification, ok ? "re-verified with fresh seeds: PASS"
                                            : "re-verification with fresh seeds failed: " + to_string(result.verdict)});
  LabOutcome outcome;
  std::lock_guard<std::mutex> lock(m_mutex);
  outcome.record = *m_history.find(candidate_id);
  outcome.summary = result.summary;
  (void)cycle;
  return outcome;
}

bool Lab::rule(const std::string& candidate_id, bool accepted, const std::string& role, const Ruling& ruling) {
  std::lock_guard<std::mutex> lock(m_mutex);
  // The lab's own ruling binds reviewers too: accepting a candidate that slid back would let it become the best.
  const EvaluationRecord* ruled = m_history.find(candidate_id);
  if (accepted && ruled != nullptr && ruled->rejected && ruled->ruled(RulingKind::slid_back)) return false;
  for (EvaluationRecord& stored : m_history.evaluations)
    if (stored.candidate_id == candidate_id) stored.set_ruling(accepted, ruling);
  append_entry(m_run.journal(), RulingEntry{candidate_id, accepted, role, ruling});
  return true;
}

void Lab::set_budget(Budget budget) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_budget = std::move(budget);
}

std::optional<std::string> Lab::budget_spent() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return budget_spent_locked();
}

std::optional<std::string> Lab::budget_spent_locked() const {
  if (m_budget.evaluations > 0 && m_history.evaluations_spent() >= m_budget.evaluations)
    return "the run's evaluation budget is spent";
  if (m_budget.device_s > 0 && m_history.device_seconds() >= m_budget.device_s)
    return "the run's GPU-seconds budget is spent";
  if (m_budget.past_deadline) return m_budget.past_deadline();
  return std::nullopt;
}

void Lab::add_trial_device_time(double seconds, const std::string& device) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_history.trial_device_s += seconds;
  append_entry(m_run.journal(), DeviceTimeEntry{seconds, device});
}

void Lab::add_unrecorded_failure_locked(const UnrecordedFailure& failure) {
  m_history.unrecorded_failures.push_back(failure);
  append_entry(m_run.journal(), UnrecordedFailureEntry{failure});
}

bool Lab::spend_trial(Stage stage) {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (budget_spent_locked()) return false;
  ++m_history.trials;
  // Journaled before it runs: a kill during the trial must not give the budget back on resume.
  append_entry(m_run.journal(), TrialEntry{stage});
  return true;
}

std::optional<CandidateEvaluator::Result> Lab::trial(const std::filesystem::path& sources_dir,
                                                     const ParamValues& params, Stage through, int cycle,
                                                     const std::string& role, const std::string& lineage) {
  if (!spend_trial(through)) return std::nullopt;
  CandidateEvaluator::Result result = m_evaluator.evaluate(sources_dir, params, through, 0);
  add_trial_device_time(result.device_s, measured_on(result.eval_json));
  if (!counts_as_pass(result.verdict) && !is_infra(result.verdict)) {
    std::lock_guard<std::mutex> lock(m_mutex);
    add_unrecorded_failure_locked(
        UnrecordedFailure{cycle, role, "", through, result.verdict, result.failure_signature, lineage});
  }
  return result;
}

std::optional<CandidateEvaluator::Profile> Lab::trial_profile(const std::filesystem::path& sources_dir,
                                                              const ParamValues& params) {
  if (!spend_trial(Stage::profile)) return std::nullopt;
  CandidateEvaluator::Profile profile = m_evaluator.profile(sources_dir, params);
  add_trial_device_time(profile.device_s, profile.device);
  return profile;
}

RunHistory Lab::snapshot() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_history;
}

std::optional<EvaluationRecord> Lab::best() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_history.best();
}

std::filesystem::path Lab::sources_of(const std::string& candidate_id) const {
  return m_run.candidate_dir(candidate_id) / "src";
}

std::filesystem::path Lab::build_log_of(const std::string& candidate_id) const {
  return m_run.candidate_dir(candidate_id) / "build.log";
}

RoleUsage Lab::usage_of(int cycle, const std::string& role) const {
  std::lock_guard<std::mutex> lock(m_mutex);
  auto it = m_usage.find({cycle, role});
  return it == m_usage.end() ? RoleUsage{} : it->second;
}

void Lab::add_usage(int cycle, const std::string& role, const RoleUsage& usage) {
  std::lock_guard<std::mutex> lock(m_mutex);
  RoleUsage& total = m_usage[{cycle, role}];
  total.evaluations += usage.evaluations;
  total.tokens += usage.tokens;
  total.cost_usd += usage.cost_usd;
  total.seconds += usage.seconds;
}

LabOutcome Lab::ensure_start(int cycle) {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (!m_history.evaluations.empty()) {
      LabOutcome outcome;
      outcome.record = m_history.evaluations.front();
      outcome.reused = true;
      return outcome;
    }
  }
  LabRequest request;
  request.author_role = "start";
  request.hypothesis = m_start ? m_start->hypothesis : "the starting kernel at its default params";
  request.params = m_start ? m_start->params : default_params();
  request.sources_dir = m_start ? m_start->sources_dir : m_evaluator.starting_sources();
  // The starting kernel is what every speedup of the run is read against: it is measured whatever the budgets,
  // the one evaluation a budget may be overshot by.
  return evaluate_within(request, cycle, Screening::off, false);
}

}  // namespace evoteam
