// The journal's records, each with one JSON form each way. Readers are lenient where the records grew over time (a
// field missing from an older journal takes its default) and strict where a value is wrong (InvalidInput naming the
// record type and field), so a damaged record is never read as a different one.
#include <evoteam/history/journal_records.hpp>

#include <utility>

#include <evoteam/core/error.hpp>

namespace evoteam {

namespace {

constexpr std::pair<RecordType, const char*> k_record_type_names[] = {
    {RecordType::run_start, "run_start"},
    {RecordType::resume, "resume"},
    {RecordType::cycle_start, "cycle_start"},
    {RecordType::turn, "turn"},
    {RecordType::cycle_end, "cycle_end"},
    {RecordType::stop, "stop"},
    {RecordType::evaluation, "evaluation"},
    {RecordType::ruling, "ruling"},
    {RecordType::profile, "profile"},
    {RecordType::device_time, "device_time"},
    {RecordType::trial, "trial"},
    {RecordType::budget_tick, "budget_tick"},
    {RecordType::unrecorded_failure, "unrecorded_failure"},
};

// A field of a record: `fallback` when absent or null (older journals), the value otherwise; a value of the wrong
// type throws (nlohmann's type_error, turned into InvalidInput by read_journal_line).
template <typename T>
T record_field_or(const nlohmann::json& record, const char* key, T fallback) {
  const auto it = record.find(key);
  if (it == record.end() || it->is_null()) return fallback;
  return it->get<T>();
}

nlohmann::json record_json_field(const nlohmann::json& record, const char* key, const nlohmann::json& fallback) {
  const auto it = record.find(key);
  return it == record.end() || it->is_null() ? fallback : *it;
}

// --- each record's two forms ---------------------------------------------------------------------------------

nlohmann::json fields_of(const RunStartEntry& entry) {
  nlohmann::json value = {{"task", entry.task}, {"options", entry.options}};
  if (!entry.from.empty()) value["from"] = entry.from;
  return value;
}
void read_fields(const nlohmann::json& value, RunStartEntry& entry) {
  entry.task = record_field_or<std::string>(value, "task", "");
  entry.options = record_json_field(value, "options", nlohmann::json::object());
  entry.from = record_field_or<std::string>(value, "from", "");
}

nlohmann::json fields_of(const ResumeEntry& entry) {
  return {{"after_cycle", entry.after_cycle}, {"evaluations", entry.evaluations}};
}
void read_fields(const nlohmann::json& value, ResumeEntry& entry) {
  entry.after_cycle = record_field_or(value, "after_cycle", 0);
  entry.evaluations = record_field_or(value, "evaluations", 0);
}

nlohmann::json fields_of(const CycleStartEntry& entry) {
  return {{"cycle", entry.cycle}, {"team", entry.team}, {"change", entry.change}, {"evidence", entry.evidence}};
}
void read_fields(const nlohmann::json& value, CycleStartEntry& entry) {
  entry.cycle = record_field_or(value, "cycle", 0);
  if (!value.contains("team")) throw InvalidInput("field 'team' is missing");
  entry.team = value.at("team");
  entry.change = record_field_or<std::string>(value, "change", "");
  entry.evidence = record_json_field(value, "evidence", nlohmann::json::array());
}

nlohmann::json fields_of(const TurnEntry& entry) {
  nlohmann::json fields = {
      {"cycle", entry.cycle}, {"role", entry.role}, {"summary", entry.summary}, {"usage", entry.usage.to_json()}};
  if (!entry.agent.empty()) fields["agent"] = entry.agent;
  return fields;
}
void read_fields(const nlohmann::json& value, TurnEntry& entry) {
  entry.cycle = record_field_or(value, "cycle", 0);
  entry.role = record_field_or<std::string>(value, "role", "");
  entry.summary = record_field_or<std::string>(value, "summary", "");
  entry.usage = RoleUsage::from_json(record_json_field(value, "usage", nlohmann::json::object()));
  entry.agent = record_field_or<std::string>(value, "agent", "");
}

nlohmann::json fields_of(const CycleEndEntry& entry) {
  nlohmann::json usage = nlohmann::json::object();
  for (const auto& [role, spent] : entry.usage) usage[role] = spent.to_json();
  return {{"cycle", entry.cycle},
          {"usage", usage},
          {"elapsed_s", entry.elapsed_s},
          {"gpu_seconds", entry.gpu_seconds},
          {"clear_streak", entry.clear_streak},
          {"best_candidate", entry.best_candidate}};
}
void read_fields(const nlohmann::json& value, CycleEndEntry& entry) {
  entry.cycle = record_field_or(value, "cycle", 0);
  // Held in a local: iterating items() of a temporary would read freed memory.
  const nlohmann::json usage = record_json_field(value, "usage", nlohmann::json::object());
  for (const auto& [role, spent] : usage.items()) entry.usage[role] = RoleUsage::from_json(spent);
  entry.elapsed_s = record_field_or(value, "elapsed_s", 0.0);
  entry.gpu_seconds = record_field_or(value, "gpu_seconds", 0.0);
  entry.clear_streak = record_field_or(value, "clear_streak", std::map<std::string, int>{});
  entry.best_candidate = record_field_or<std::string>(value, "best_candidate", "");
}

nlohmann::json fields_of(const StopEntry& entry) {
  return {{"status", to_string(entry.status)}, {"reason", entry.reason}};
}
void read_fields(const nlohmann::json& value, StopEntry& entry) {
  entry.status = run_status_from_string(record_field_or<std::string>(value, "status", ""));
  entry.reason = record_field_or<std::string>(value, "reason", "");
}

nlohmann::json fields_of(const EvaluationEntry& entry) { return {{"record", entry.record.to_json()}}; }
void read_fields(const nlohmann::json& value, EvaluationEntry& entry) {
  if (!value.contains("record") || !value.at("record").is_object())
    throw InvalidInput("field 'record' must be an object");
  entry.record = EvaluationRecord::from_json(value.at("record"));
}

nlohmann::json fields_of(const RulingEntry& entry) {
  return {{"candidate_id", entry.candidate_id},
          {"accepted", entry.accepted},
          {"role", entry.role},
          {"kind", to_string(entry.ruling.kind)},
          {"reason", entry.ruling.text}};
}
void read_fields(const nlohmann::json& value, RulingEntry& entry) {
  entry.candidate_id = record_field_or<std::string>(value, "candidate_id", "");
  entry.accepted = record_field_or(value, "accepted", true);
  entry.role = record_field_or<std::string>(value, "role", "");
  entry.ruling.text = record_field_or<std::string>(value, "reason", "");
  // Rulings journaled before they carried their kind: read once, here, from their words.
  const std::optional<RulingKind> kind = parse_ruling_kind(record_field_or<std::string>(value, "kind", ""));
  entry.ruling.kind = kind ? *kind : ruling_kind_of_text(entry.ruling.text);
}

nlohmann::json fields_of(const ProfileEntry& entry) {
  return {{"candidate_id", entry.candidate_id}, {"bound", entry.bound}, {"summary", entry.summary}};
}
void read_fields(const nlohmann::json& value, ProfileEntry& entry) {
  entry.candidate_id = record_field_or<std::string>(value, "candidate_id", "");
  entry.bound = record_field_or<std::string>(value, "bound", "");
  entry.summary = record_field_or<std::string>(value, "summary", "");
}

nlohmann::json fields_of(const DeviceTimeEntry& entry) {
  nlohmann::json value = {{"seconds", entry.seconds}};
  if (!entry.device.empty()) value["device"] = entry.device;
  return value;
}
void read_fields(const nlohmann::json& value, DeviceTimeEntry& entry) {
  entry.seconds = record_field_or(value, "seconds", 0.0);
  entry.device = record_field_or<std::string>(value, "device", "");
}

nlohmann::json fields_of(const TrialEntry& entry) {
  return {{"stage", entry.stage ? to_string(*entry.stage) : std::string()}};
}
void read_fields(const nlohmann::json& value, TrialEntry& entry) {
  entry.stage = parse_stage(record_field_or<std::string>(value, "stage", ""));
}

nlohmann::json fields_of(const BudgetTickEntry& entry) {
  const MeterTotals& totals = entry.totals;
  return {{"tokens", to_json(totals.tokens)},
          {"cost_usd", totals.cost_usd},
          {"calls", totals.calls},
          {"unknown_cost_attempts", totals.unknown_cost_attempts},
          {"estimated_calls", totals.estimated_calls},
          {"wall_s", totals.wall_s}};
}
void read_fields(const nlohmann::json& value, BudgetTickEntry& entry) {
  // The totals a resume continues from: what is spent is required, the counts default to none.
  MeterTotals& totals = entry.totals;
  totals.tokens = usage_from_json(value.at("tokens"));
  totals.cost_usd = value.at("cost_usd").get<double>();
  totals.calls = record_field_or(value, "calls", std::uint64_t{0});
  totals.unknown_cost_attempts = record_field_or(value, "unknown_cost_attempts", std::uint64_t{0});
  totals.estimated_calls = record_field_or(value, "estimated_calls", std::uint64_t{0});
  totals.wall_s = record_field_or(value, "wall_s", 0.0);
}

nlohmann::json fields_of(const UnrecordedFailureEntry& entry) {
  const UnrecordedFailure& failure = entry.failure;
  nlohmann::json value = {{"cycle", failure.cycle},
                          {"author_role", failure.author_role},
                          {"verdict", to_string(failure.verdict)},
                          {"failure_signature", failure.failure_signature},
                          {"lineage", failure.lineage}};
  if (!failure.candidate_id.empty()) value["candidate_id"] = failure.candidate_id;
  if (failure.stage) value["stage"] = to_string(*failure.stage);
  return value;
}
void read_fields(const nlohmann::json& value, UnrecordedFailureEntry& entry) {
  UnrecordedFailure& failure = entry.failure;
  failure.cycle = value.at("cycle").get<int>();
  failure.author_role = record_field_or<std::string>(value, "author_role", "");
  const std::string verdict = value.at("verdict").get<std::string>();
  const std::optional<Verdict> parsed = parse_verdict(verdict);
  if (!parsed) throw InvalidInput("unknown verdict '" + verdict + "'");
  failure.verdict = *parsed;
  failure.failure_signature = record_field_or<std::string>(value, "failure_signature", "");
  failure.candidate_id = record_field_or<std::string>(value, "candidate_id", "");
  failure.stage = parse_stage(record_field_or<std::string>(value, "stage", ""));
  failure.lineage = record_field_or<std::string>(value, "lineage", "best");
}

// The entry of one type read from its record.
template <typename Entry>
JournalEntry read_entry_as(const nlohmann::json& record) {
  Entry entry;
  read_fields(record, entry);
  return entry;
}

JournalEntry read_entry_of_type(RecordType type, const nlohmann::json& record) {
  switch (type) {
    case RecordType::run_start: return read_entry_as<RunStartEntry>(record);
    case RecordType::resume: return read_entry_as<ResumeEntry>(record);
    case RecordType::cycle_start: return read_entry_as<CycleStartEntry>(record);
    case RecordType::turn: return read_entry_as<TurnEntry>(record);
    case RecordType::cycle_end: return read_entry_as<CycleEndEntry>(record);
    case RecordType::stop: return read_entry_as<StopEntry>(record);
    case RecordType::evaluation: return read_entry_as<EvaluationEntry>(record);
    case RecordType::ruling: return read_entry_as<RulingEntry>(record);
    case RecordType::profile: return read_entry_as<ProfileEntry>(record);
    case RecordType::device_time: return read_entry_as<DeviceTimeEntry>(record);
    case RecordType::trial: return read_entry_as<TrialEntry>(record);
    case RecordType::budget_tick: return read_entry_as<BudgetTickEntry>(record);
    case RecordType::unrecorded_failure: return read_entry_as<UnrecordedFailureEntry>(record);
  }
  throw InvalidInput("journal record of an unknown type");
}

}  // namespace

std::string to_string(RecordType type) {
  for (const auto& [known, name] : k_record_type_names)
    if (known == type) return name;
  return "?";
}

std::optional<RecordType> parse_record_type(std::string_view text) {
  for (const auto& [type, name] : k_record_type_names)
    if (text == name) return type;
  return std::nullopt;
}

const std::vector<RecordType>& all_record_types() {
  static const std::vector<RecordType> types = [] {
    std::vector<RecordType> all;
    for (const auto& [type, name] : k_record_type_names) all.push_back(type);
    return all;
  }();
  return types;
}

RecordType type_of(const JournalEntry& entry) {
  return std::visit([](const auto& typed) { return std::decay_t<decltype(typed)>::k_type; }, entry);
}

nlohmann::json to_json(const JournalEntry& entry) {
  nlohmann::json value = std::visit([](const auto& typed) { return fields_of(typed); }, entry);
  value["type"] = to_string(type_of(entry));
  return value;
}

std::uint64_t append_entry(Journal& journal, const JournalEntry& entry) { return journal.append(to_json(entry)); }

JournalLine read_journal_line(const nlohmann::json& record, std::string* problem) {
  JournalLine line;
  if (!record.is_object()) return line;
  line.at = record.contains("t") && record.at("t").is_string() ? record.at("t").get<std::string>() : "";
  line.type = record.contains("type") && record.at("type").is_string() ? record.at("type").get<std::string>() : "";
  const std::optional<RecordType> type = parse_record_type(line.type);
  if (!type) return line;
  std::string why;
  try {
    line.entry = read_entry_of_type(*type, record);
    return line;
  } catch (const nlohmann::json::exception& error) {
    why = error.what();
  } catch (const InvalidInput& error) {
    why = error.what();
  }
  why = line.type + " record " + record.dump().substr(0, 200) + ": " + why;
  if (problem == nullptr) throw InvalidInput(why);
  *problem = why;
  return line;
}

std::optional<MeterTotals> last_budget_tick(const std::vector<nlohmann::json>& records) {
  const nlohmann::json* last = nullptr;
  for (const nlohmann::json& record : records)
    if (record.is_object() && record.contains("type") && record.at("type") == to_string(RecordType::budget_tick))
      last = &record;
  if (last == nullptr) return std::nullopt;
  const JournalLine line = read_journal_line(*last);
  return std::get<BudgetTickEntry>(*line.entry).totals;
}

}  // namespace evoteam
