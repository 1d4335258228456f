#include <evoteam/history/history.hpp>

#include <utility>

#include <evoteam/core/error.hpp>

namespace evoteam {

namespace {

// The journal's spellings of the records that carry no verdict.
const std::pair<RecordState, const char*> k_state_names[] = {
    {RecordState::pending, "PENDING"}, {RecordState::blocked, "BLOCKED"}, {RecordState::over_budget, "BUDGET"}};

}  // namespace

std::string EvaluationRecord::verdict_text() const {
  for (const auto& [known, name] : k_state_names)
    if (known == state) return name;
  return to_string(verdict);
}

nlohmann::json EvaluationRecord::to_json() const {
  nlohmann::json value = {{"candidate_id", candidate_id},
                          {"parent_id", parent_id},
                          {"author_role", author_role},
                          {"lineage", lineage},
                          {"cycle", cycle},
                          {"hypothesis", hypothesis},
                          {"params", params},
                          {"sources_hash", sources_hash},
                          {"changes", changes},
                          {"structural_change", structural_change},
                          {"verdict", verdict_text()},
                          {"passed", passed()},
                          {"speedup", nullptr},
                          {"roofline", nullptr},
                          {"failure_signature", failure_signature},
                          {"profiled", profiled},
                          {"profile_bound", profile_bound},
                          {"repeated_recorded_failure", repeated_recorded_failure},
                          {"blocked_by_knowledge", blocked()},
                          {"eval_seconds", eval_seconds},
                          {"device_s", device_s},
                          {"device", device},
                          {"rejected", rejected},
                          {"ruling", ruling}};
  if (speedup) value["speedup"] = *speedup;
  if (roofline) value["roofline"] = *roofline;
  if (adopted_constraints) value["adopted_constraints"] = *adopted_constraints;
  if (!ruling.empty()) value["ruling_kind"] = evoteam::to_string(ruling_kind);
  return value;
}

EvaluationRecord EvaluationRecord::from_json(const nlohmann::json& value) {
  EvaluationRecord record;
  record.candidate_id = value.value("candidate_id", "");
  record.parent_id = value.value("parent_id", "");
  record.author_role = value.value("author_role", "");
  record.lineage = value.value("lineage", "best");
  record.cycle = value.value("cycle", 0);
  record.hypothesis = value.value("hypothesis", "");
  record.params = value.value("params", ParamValues{});
  record.sources_hash = value.value("sources_hash", "");
  record.changes = value.value("changes", 0);
  record.structural_change = value.value("structural_change", false);
  const std::string verdict = value.value("verdict", "");
  record.state = RecordState::evaluated;
  for (const auto& [known, name] : k_state_names)
    if (verdict == name) record.state = known;
  if (record.evaluated()) {
    std::optional<Verdict> parsed = parse_verdict(verdict);
    if (!parsed)
      throw InvalidInput("evaluation record " + record.candidate_id + ": field 'verdict': unknown verdict '" + verdict +
                         "'");
    record.verdict = *parsed;
  }
  if (value.contains("speedup") && value["speedup"].is_number()) record.speedup = value["speedup"].get<double>();
  if (value.contains("roofline") && value["roofline"].is_number()) record.roofline = value["roofline"].get<double>();
  record.failure_signature = value.value("failure_signature", "");
  record.profiled = value.value("profiled", false);
  record.profile_bound = value.value("profile_bound", "");
  record.repeated_recorded_failure = value.value("repeated_recorded_failure", false);
  record.eval_seconds = value.value("eval_seconds", 0.0);
  record.device_s = value.value("device_s", 0.0);
  record.device = value.contains("device") && value["device"].is_string() ? value["device"].get<std::string>() : "";
  record.rejected = value.value("rejected", false);
  record.ruling = value.value("ruling", "");
  // Records journaled before rulings carried their kind: the kind is read once, here, from the words.
  const std::optional<RulingKind> kind = parse_ruling_kind(value.value("ruling_kind", ""));
  record.ruling_kind = kind ? *kind : ruling_kind_of_text(record.ruling);
  if (value.contains("adopted_constraints") && value["adopted_constraints"].is_array())
    record.adopted_constraints = value["adopted_constraints"].get<std::vector<std::string>>();
  return record;
}

void EvaluationRecord::take_measurement(const Measurement& measured, std::string measured_on) {
  static_cast<Measurement&>(*this) = measured;
  device = std::move(measured_on);
  state = RecordState::evaluated;
  if (passed()) failure_signature.clear();
}

void EvaluationRecord::set_ruling(bool accepted, const Ruling& given) {
  rejected = !accepted;
  ruling = given.text;
  ruling_kind = given.kind;
}

std::string EvaluationRecord::key() const {
  std::string text = sources_hash;
  for (const auto& [name, value] : params) text += ";" + name + "=" + value;
  return text;
}

nlohmann::json RoleUsage::to_json() const {
  return {{"evaluations", evaluations}, {"tokens", tokens}, {"cost_usd", cost_usd}, {"seconds", seconds}};
}

RoleUsage RoleUsage::from_json(const nlohmann::json& value) {
  RoleUsage usage;
  usage.evaluations = value.value("evaluations", 0);
  usage.tokens = value.value("tokens", 0LL);
  usage.cost_usd = value.value("cost_usd", 0.0);
  usage.seconds = value.value("seconds", 0.0);
  return usage;
}

std::optional<EvaluationRecord> RunHistory::best() const {
  std::optional<EvaluationRecord> best;
  for (const EvaluationRecord& record : evaluations)
    if (record.passed() && !record.rejected && (!best || *record.speedup > *best->speedup)) best = record;
  return best;
}

std::optional<double> RunHistory::best_speedup_through(int cycle) const {
  std::optional<double> best;
  for (const EvaluationRecord& record : evaluations)
    if (record.cycle <= cycle && record.passed() && !record.rejected && (!best || *record.speedup > *best))
      best = record.speedup;
  return best;
}

const EvaluationRecord* RunHistory::find(const std::string& candidate_id) const {
  for (const EvaluationRecord& record : evaluations)
    if (record.candidate_id == candidate_id) return &record;
  return nullptr;
}

const EvaluationRecord* RunHistory::find_key(const std::string& key) const {
  for (const EvaluationRecord& record : evaluations)
    if (!record.blocked() && record.key() == key) return &record;
  return nullptr;
}

std::vector<const EvaluationRecord*> RunHistory::in_cycle(int cycle) const {
  std::vector<const EvaluationRecord*> result;
  for (const EvaluationRecord& record : evaluations)
    if (record.cycle == cycle) result.push_back(&record);
  return result;
}

std::vector<const UnrecordedFailure*> RunHistory::unrecorded_in_cycle(int cycle) const {
  std::vector<const UnrecordedFailure*> result;
  for (const UnrecordedFailure& failure : unrecorded_failures)
    if (failure.cycle == cycle) result.push_back(&failure);
  return result;
}

std::string UnrecordedFailure::describe() const {
  if (!candidate_id.empty()) return candidate_id + " resubmitted by " + author_role + " " + to_string(verdict);
  return author_role + "'s " + (stage ? to_string(*stage) : std::string("unknown")) + " trial " + to_string(verdict);
}

int RunHistory::evaluation_count() const {
  int count = 0;
  for (const EvaluationRecord& record : evaluations) count += record.blocked() ? 0 : 1;
  return count;
}

double RunHistory::device_seconds() const {
  double seconds = trial_device_s;
  for (const EvaluationRecord& record : evaluations) seconds += record.device_s;
  return seconds;
}

}  // namespace evoteam
