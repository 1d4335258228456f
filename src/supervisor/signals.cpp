// Signals: what the supervisor measures about the last cycle, each with the evidence a person can check.
#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <span>
#include <sstream>

#include <evoteam/core/error.hpp>
#include <evoteam/core/text.hpp>
#include <evoteam/supervisor/supervisor_policy.hpp>

namespace evoteam {

namespace {

// The verdict class of an evaluated record, nullopt for records that carry no verdict.
std::optional<VerdictClass> class_of(const EvaluationRecord& record) {
  if (!record.evaluated()) return std::nullopt;
  return verdict_class(record.verdict);
}

// At most `limit` ids, then how many there were in all: evidence stays short however large the cycle.
std::string join_ids(const std::vector<std::string>& ids, std::size_t limit = 6) {
  std::string text = join(std::span(ids).first(std::min(limit, ids.size())), ", ");
  if (ids.size() > limit) text += ", ... (" + std::to_string(ids.size()) + " in all)";
  return text;
}

}  // namespace

const Signal& Signals::get(const std::string& name) const {
  auto it = by_name.find(name);
  EVOTEAM_CHECK(it != by_name.end(), "no signal '" + name + "'");
  return it->second;
}

nlohmann::json Signals::to_json() const {
  nlohmann::json items = nlohmann::json::array();
  for (const auto& [name, signal] : by_name)
    items.push_back({{"signal", name},
                     {"value", signal.value},
                     {"threshold", signal.threshold},
                     {"triggered", signal.triggered},
                     {"evidence", signal.evidence}});
  return {{"cycle", cycle}, {"signals", items}, {"budget_burn", budget_burn}};
}

std::string Signals::to_text() const {
  std::string text;
  for (const auto& [name, signal] : by_name)
    text += "- " + name + " = " + fixed(signal.value, 2) + " (threshold " + fixed(signal.threshold, 2) + ")" +
            (signal.triggered ? " TRIGGERED" : "") + ": " + signal.evidence + "\n";
  text += "- budget burn last cycle: " + budget_burn.dump() + "\n";
  return text;
}

namespace {

// What every signal of one cycle reads: the history, the knowledge, the thresholds, and the cycle's attempts
// that spent an evaluation (not blocked, not the evaluator's own failure, not the starting kernel).
struct CycleReading {
  const RunHistory& history;
  const KnowledgeBase& knowledge;
  const SupervisorSettings& settings;
  int cycle = 0;
  std::vector<const EvaluationRecord*> spent;
  std::optional<EvaluationRecord> best;
  Signals& signals;

  // Divides counts into rates; at least 1 so an empty cycle gives rates of 0.
  double spent_count() const { return std::max<double>(1.0, static_cast<double>(spent.size())); }
  void set(const char* name, double value, double threshold, bool triggered, std::string evidence) {
    signals.by_name[name] = Signal{name, value, threshold, triggered, std::move(evidence)};
  }
};

// The failure signature seen most often over the last two cycles.
struct Recurrence {
  std::string signature;
  std::size_t count = 0;
  std::vector<std::string> candidates;
};

void add_failure_rates(CycleReading& reading) {
  std::vector<std::string> build_failed, test_failed;
  for (const EvaluationRecord* record : reading.spent) {
    const std::string named = record->candidate_id + " " + record->verdict_text();
    if (class_of(*record) == VerdictClass::build_failure) build_failed.push_back(named);
    if (class_of(*record) == VerdictClass::test_failure) test_failed.push_back(named);
  }
  // A resubmitted failure or a failed trial spent no new candidate, but it is a failure of the cycle all the same.
  // Not a member's own trials on the failing lineage: a Debugger reproducing the failure it was sent to fix is doing
  // its work, and counting it would keep it on the team for good.
  std::vector<const UnrecordedFailure*> unrecorded = reading.history.unrecorded_in_cycle(reading.cycle);
  std::erase_if(unrecorded,
                [](const UnrecordedFailure* failure) { return failure->stage && failure->lineage == "failing"; });
  for (const UnrecordedFailure* failure : unrecorded) {
    if (verdict_class(failure->verdict) == VerdictClass::build_failure) build_failed.push_back(failure->describe());
    if (verdict_class(failure->verdict) == VerdictClass::test_failure) test_failed.push_back(failure->describe());
  }
  const std::size_t attempts = reading.spent.size() + unrecorded.size();
  const double stuck = reading.settings.stuck_failure_rate;
  const double count = std::max<double>(1.0, static_cast<double>(attempts));
  const std::string of = " of " + std::to_string(attempts);
  reading.set(k_signal_build_failure_rate, build_failed.size() / count, stuck,
              attempts > 0 && build_failed.size() / count >= stuck,
              std::to_string(build_failed.size()) + of + " failed to build" +
                  (build_failed.empty() ? "" : ": " + join_ids(build_failed)));
  reading.set(k_signal_test_failure_rate, test_failed.size() / count, stuck,
              attempts > 0 && test_failed.size() / count >= stuck,
              std::to_string(test_failed.size()) + of + " failed correctness" +
                  (test_failed.empty() ? "" : ": " + join_ids(test_failed)));
}

Recurrence add_recurring_error(CycleReading& reading) {
  std::map<std::string, std::vector<std::string>> by_signature;
  for (const EvaluationRecord& record : reading.history.evaluations)
    if (record.cycle >= reading.cycle - 1 && record.cycle <= reading.cycle && !record.passed() &&
        !record.failure_signature.empty() && !record.blocked())
      by_signature[record.failure_signature].push_back(record.candidate_id);
  for (const UnrecordedFailure& failure : reading.history.unrecorded_failures)
    if (failure.cycle >= reading.cycle - 1 && failure.cycle <= reading.cycle && !failure.failure_signature.empty() &&
        !(failure.stage && failure.lineage == "failing"))
      by_signature[failure.failure_signature].push_back(failure.describe());
  Recurrence worst;
  for (const auto& [signature, ids] : by_signature)
    if (ids.size() > worst.count) worst = {signature, ids.size(), ids};
  const double recurring = reading.settings.recurring_error_count;
  reading.set(k_signal_recurring_error, static_cast<double>(worst.count), recurring, worst.count >= recurring,
              worst.count == 0
                  ? "no failure signature recurred"
                  : "'" + worst.signature + "' x" + std::to_string(worst.count) + " in " + join_ids(worst.candidates));
  return worst;
}

// Was the current best profiled since its last change?
void add_unprofiled_best(CycleReading& reading) {
  const std::optional<EvaluationRecord>& best = reading.best;
  const bool profiled = best && best->profiled;
  reading.set(k_signal_unprofiled_best, best && !profiled ? 1.0 : 0.0, 1.0, best && !profiled,
              !best
                  ? "no passing candidate yet"
                  : best->candidate_id + (profiled ? " profiled (bound: " + best->profile_bound + ")"
                                                   : " has no profile since its last change (" +
                                                         std::to_string(best->changes) + " change(s) from " +
                                                         (best->parent_id.empty() ? "start" : best->parent_id) + ")"));
}

// Attempts that repeated a recorded failure, and attempts that reverted a validated strategy.
void add_knowledge_use(CycleReading& reading) {
  std::vector<std::string> repeats;
  for (const EvaluationRecord* record : reading.history.in_cycle(reading.cycle))
    if (record->repeated_recorded_failure) repeats.push_back(record->candidate_id);
  const double threshold = reading.settings.repeated_failure_count;
  reading.set(
      k_signal_repeated_failures, static_cast<double>(repeats.size()), threshold, repeats.size() >= threshold,
      repeats.empty() ? "no attempt repeated a recorded failure" : "repeated recorded failures: " + join_ids(repeats));

  std::vector<std::string> ignored;
  const std::vector<KnowledgeEntry> strategies = reading.knowledge.entries_for_task(KnowledgeKind::strategy);
  for (const EvaluationRecord* record : reading.spent) {
    const EvaluationRecord* parent = reading.history.find(record->parent_id);
    if (parent == nullptr) continue;
    for (const KnowledgeEntry& strategy : strategies) {
      auto param = strategy.fields.find("param");
      auto to = strategy.fields.find("to");
      if (param == strategy.fields.end() || to == strategy.fields.end()) continue;
      auto in_parent = parent->params.find(param->second);
      auto in_child = record->params.find(param->second);
      if (in_parent != parent->params.end() && in_child != record->params.end() && in_parent->second == to->second &&
          in_child->second != to->second)
        ignored.push_back(record->candidate_id + " reverted " + param->second + "=" + to->second);
    }
  }
  reading.set(k_signal_ignored_strategies, static_cast<double>(ignored.size()), threshold, ignored.size() >= threshold,
              ignored.empty() ? "no validated strategy was reverted" : join_ids(ignored));
}

// Constraint violations (static rejections) and changes per candidate: the discipline of the cycle's attempts.
void add_discipline(CycleReading& reading) {
  std::vector<std::string> violations;
  for (const EvaluationRecord* record : reading.spent)
    if (record->has(Verdict::static_reject)) violations.push_back(record->candidate_id);
  reading.set(k_signal_constraint_violations, static_cast<double>(violations.size()), 1.0, !violations.empty(),
              violations.empty() ? "no constraint violation" : "statically rejected: " + join_ids(violations));

  double changes = 0;
  std::vector<std::string> multi;
  for (const EvaluationRecord* record : reading.spent) {
    changes += record->changes;
    if (record->changes > 1) multi.push_back(record->candidate_id + " (" + std::to_string(record->changes) + ")");
  }
  const double mean_changes = reading.spent.empty() ? 0.0 : changes / reading.spent_count();
  const double max_changes = reading.settings.max_changes_per_candidate;
  reading.set(k_signal_changes_per_candidate, mean_changes, max_changes, mean_changes > max_changes,
              "mean " + fixed(mean_changes, 2) + " changes per candidate" +
                  (multi.empty() ? "" : "; several at once: " + join_ids(multi)));
}

// Stagnation (cycles since the best improved by at least min_gain) and the best's distance to the roofline.
void add_progress(CycleReading& reading) {
  const RunHistory& history = reading.history;
  const double min_gain = reading.settings.min_gain;
  int stagnant = 0;
  for (int c = reading.cycle; c >= 1; --c) {
    std::optional<double> now = history.best_speedup_through(c);
    std::optional<double> before = history.best_speedup_through(c - 1);
    if (now && (!before || *now > *before * (1.0 + min_gain))) break;
    ++stagnant;
  }
  std::optional<double> best_now = history.best_speedup_through(reading.cycle);
  const int stagnation_cycles = reading.settings.stagnation_cycles;
  reading.set(k_signal_stagnation, stagnant, stagnation_cycles, stagnant >= stagnation_cycles,
              std::to_string(stagnant) + " cycle(s) without a " + fixed(min_gain * 100, 0) + "% gain; best " +
                  (best_now ? fixed(*best_now, 2) + "x" : std::string("none")));

  const std::optional<EvaluationRecord>& best = reading.best;
  const double roofline = best && best->roofline ? *best->roofline : 0.0;
  const double roofline_stop = reading.settings.roofline_stop;
  reading.set(
      k_signal_roofline, roofline, roofline_stop, roofline >= roofline_stop,
      best ? best->candidate_id + " at " + fixed(roofline * 100, 1) + "% of the roofline" : "no passing candidate");
}

// A hard path is blocked: one failure keeps recurring on a lineage while the best lineage still passes.
void add_hard_path_blocked(CycleReading& reading, const Recurrence& worst) {
  const double recurring = reading.settings.recurring_error_count;
  const bool blocked = static_cast<double>(worst.count) >= recurring && reading.best.has_value();
  reading.set(k_signal_hard_path_blocked, blocked ? 1.0 : 0.0, 1.0, blocked,
              blocked
                  ? "'" + worst.signature + "' blocks one line of work while " + reading.best->candidate_id + " passes"
                  : "no blocked path");
}

}  // namespace

Signals compute_signals(const RunHistory& history, const KnowledgeBase& knowledge, const SupervisorSettings& settings,
                        int cycle) {
  Signals signals;
  signals.cycle = cycle;
  CycleReading reading{history, knowledge, settings, cycle, {}, history.best(), signals};
  // The starting kernel is recorded in cycle 1 but nobody on the team wrote it: counted, it would halve the
  // first cycle's rates and means (one two-change candidate would average 1.0 change and call no reviewer).
  for (const EvaluationRecord* record : history.in_cycle(cycle))
    if (!record->blocked() && !record->has(Verdict::infra_error) && record->author_role != "start")
      reading.spent.push_back(record);

  add_failure_rates(reading);
  const Recurrence worst = add_recurring_error(reading);
  add_unprofiled_best(reading);
  add_knowledge_use(reading);
  add_discipline(reading);
  add_progress(reading);
  add_hard_path_blocked(reading, worst);

  for (const CycleRecord& record : history.cycles)
    if (record.cycle == cycle)
      for (const auto& [role, usage] : record.usage) signals.budget_burn[role] = usage.to_json();
  return signals;
}

}  // namespace evoteam
