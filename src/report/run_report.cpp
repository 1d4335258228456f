// Reads one run directory into a RunReport. The journal is the source of truth for the run's history
// (candidates in order, teams per cycle, the meter's ticks, sessions); best/ and the knowledge files add what
// the journal does not hold. Anything unreadable beyond run.json becomes a warning, never a failure: a report
// of a damaged or live run is still worth having.
#include <evoteam/report/run_report.hpp>

#include <algorithm>
#include <set>
#include <sstream>

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/text.hpp>
#include <evoteam/history/journal_records.hpp>
#include <evoteam/store/store.hpp>

#include "report/report_sections.hpp"
#include "report/run_files.hpp"

namespace evoteam {

namespace {

// Enough of each knowledge file to show what the team learned without turning the report into the file.
constexpr std::size_t k_knowledge_excerpt_chars = 2400;

std::vector<std::string> text_list(const nlohmann::json& value) {
  std::vector<std::string> items;
  if (!value.is_array()) return items;
  for (const nlohmann::json& item : value)
    if (item.is_string()) items.push_back(item.get<std::string>());
  return items;
}

// The run's totals as the journal goes: tokens and dollars from the meter's ticks, wall time summed over the
// daemon's sessions (a kill and the resume after it leave a gap that no one worked in).
struct Totals {
  double tokens = 0;
  double cost_usd = 0;
  double wall_s = 0;
  double estimated_calls = 0;  // replies whose server sent no usage: their tokens are estimates
  std::optional<double> session_start;
  double session_base = 0;

  void advance(const JournalLine& line) {
    const std::optional<double> at = epoch_seconds(line.at);
    const JournalEntry* entry = line.entry ? &*line.entry : nullptr;
    if (entry != nullptr &&
        (std::holds_alternative<RunStartEntry>(*entry) || std::holds_alternative<ResumeEntry>(*entry))) {
      session_start = at;
      session_base = wall_s;
    } else if (at && session_start) {
      wall_s = std::max(wall_s, session_base + (*at - *session_start));
    }
    if (const auto* tick = entry != nullptr ? std::get_if<BudgetTickEntry>(entry) : nullptr) {
      tokens = static_cast<double>(tick->totals.tokens.total());
      cost_usd = tick->totals.cost_usd;
      estimated_calls = static_cast<double>(tick->totals.estimated_calls);
    }
  }
};

// One signal behind a team change: the decider's words and, for an LLM's decision, the measured evidence kept
// beside them ("measured"), so a reply that named a signal without evidence still shows what was measured.
std::string signal_text(const nlohmann::json& evidence) {
  const std::string words = text_or(evidence, "evidence");
  const std::string measured = text_or(evidence, "measured");
  std::string text = text_or(evidence, "signal") + ": ";
  if (words.empty() && measured.empty()) return text + "(no evidence given)";
  if (words.empty()) return text + "measured: " + measured;
  text += words;
  if (!measured.empty() && measured != words) text += " (measured: " + measured + ")";
  return text;
}

ReportCycle cycle_from_entry(const CycleStartEntry& entry, const Totals& totals, int evaluations) {
  const nlohmann::json team = entry.team.is_object() ? entry.team : nlohmann::json::object();
  ReportCycle cycle;
  cycle.cycle = entry.cycle;
  for (const nlohmann::json& role : team.value("roles", nlohmann::json::array()))
    if (role.is_object()) cycle.roles.push_back(text_or(role, "name"));
  cycle.pattern = text_or(team, "pattern");
  cycle.decided_by = text_or(team, "decided_by");
  cycle.change = entry.change;
  cycle.rationale = text_or(team, "rationale");
  cycle.directives = text_list(team.value("directives", nlohmann::json::array()));
  for (const nlohmann::json& evidence : entry.evidence.is_array() ? entry.evidence : nlohmann::json::array())
    if (evidence.is_object()) cycle.signals.push_back(signal_text(evidence));
  cycle.evaluations_before = evaluations;
  cycle.tokens_before = totals.tokens;
  cycle.cost_before = totals.cost_usd;
  cycle.wall_before = totals.wall_s;
  return cycle;
}

ReportCandidate candidate_from_record(const EvaluationRecord& record, const Totals& totals, int ordinal) {
  ReportCandidate candidate;
  candidate.ordinal = ordinal;
  candidate.id = record.candidate_id;
  candidate.parent = record.parent_id;
  candidate.role = record.author_role;
  candidate.cycle = record.cycle;
  candidate.verdict = record.verdict_text();
  candidate.rejected = record.rejected;
  candidate.ruling = record.ruling;
  if (record.passed()) candidate.speedup = record.speedup;
  candidate.tokens = totals.tokens;
  candidate.cost_usd = totals.cost_usd;
  candidate.wall_s = totals.wall_s;
  return candidate;
}

// Roles added and removed against the cycle before, in the order the teams list them.
void mark_team_changes(std::vector<ReportCycle>& cycles) {
  for (std::size_t i = 1; i < cycles.size(); ++i) {
    const std::vector<std::string>& before = cycles[i - 1].roles;
    ReportCycle& cycle = cycles[i];
    for (const std::string& role : cycle.roles)
      if (std::find(before.begin(), before.end(), role) == before.end()) cycle.added.push_back(role);
    for (const std::string& role : before)
      if (std::find(cycle.roles.begin(), cycle.roles.end(), role) == cycle.roles.end()) cycle.removed.push_back(role);
  }
}

void read_journal(RunReport& report) {
  const JournalReplay replay = read_run_journal(report.dir, report.journal_skipped);
  Totals totals;
  for (const nlohmann::json& record : replay.records) {
    if (!record.is_object()) continue;
    std::string damaged;
    const JournalLine line = read_journal_line(record, &damaged);
    if (!damaged.empty()) report.journal_skipped.push_back("a damaged journal record left out: " + damaged);
    totals.advance(line);
    if (!line.entry) continue;
    if (const auto* start = std::get_if<CycleStartEntry>(&*line.entry)) {
      ReportCycle cycle = cycle_from_entry(*start, totals, static_cast<int>(report.candidates.size()));
      // A cycle started again after a resume replaces the start its killed session left; what the killed session
      // spent in it stays the cycle's.
      if (!report.cycles.empty() && report.cycles.back().cycle == cycle.cycle) {
        cycle.tokens_before = report.cycles.back().tokens_before;
        cycle.cost_before = report.cycles.back().cost_before;
        cycle.wall_before = report.cycles.back().wall_before;
        report.cycles.back() = cycle;
      } else
        report.cycles.push_back(cycle);
    } else if (const auto* evaluation = std::get_if<EvaluationEntry>(&*line.entry)) {
      const int ordinal = static_cast<int>(report.candidates.size()) + 1;
      report.candidates.push_back(candidate_from_record(evaluation->record, totals, ordinal));
    } else if (const auto* turn = std::get_if<TurnEntry>(&*line.entry); turn != nullptr && !turn->agent.empty()) {
      report.agents[turn->role] = turn->agent;  // the latest turn's
    }
  }
  mark_team_changes(report.cycles);
  // Each cycle's spend from the meter's ticks: from its start to the next cycle's start, the last to the run's
  // end, so the rows add up to the run's totals (a cycle's last candidate is not where its spending stopped).
  for (std::size_t i = 0; i < report.cycles.size(); ++i) {
    ReportCycle& cycle = report.cycles[i];
    const bool last = i + 1 == report.cycles.size();
    cycle.tokens_spent = (last ? totals.tokens : report.cycles[i + 1].tokens_before) - cycle.tokens_before;
    cycle.cost_spent = (last ? totals.cost_usd : report.cycles[i + 1].cost_before) - cycle.cost_before;
    cycle.wall_spent = (last ? totals.wall_s : report.cycles[i + 1].wall_before) - cycle.wall_before;
  }
  report.total_tokens = totals.tokens;
  report.total_cost_usd = totals.cost_usd;
  report.total_wall_s = totals.wall_s;
  if (totals.estimated_calls > 0)
    report.warnings.push_back("tokens are estimated from the text for " + fixed(totals.estimated_calls, 0) +
                              " replies: the server sent no usage");
  for (const ReportCandidate& candidate : report.candidates) {
    if (candidate.rejected)
      ++report.failures["REJECTED"];
    else if (!candidate.speedup)
      ++report.failures[candidate.verdict.empty() ? "?" : candidate.verdict];
  }
}

void read_task(RunReport& report) {
  try {
    const nlohmann::json task = read_json_file(report.dir / "task" / "task.json");
    report.target = text_or(task, "target");
    report.archs = join(text_list(task.value("archs", nlohmann::json::array())), ", ");
    for (const nlohmann::json& workload : task.value("workloads", nlohmann::json::array()))
      if (workload.is_object()) report.task_workloads.push_back(text_or(workload, "name"));
  } catch (const Error& error) {
    report.warnings.push_back(std::string("the frozen task not read: ") + error.what());
  }
}

void read_best(RunReport& report) {
  const std::filesystem::path best = report.dir / "best";
  if (!std::filesystem::exists(best / "eval.json")) return;
  try {
    const nlohmann::json eval = read_json_file(best / "eval.json");
    const nlohmann::json interval = eval.value("speedup_interval", nlohmann::json::array());
    if (interval.is_array() && interval.size() == 2 && interval[0].is_number() && interval[1].is_number()) {
      report.best_low = interval[0].get<double>();
      report.best_high = interval[1].get<double>();
    }
    for (const nlohmann::json& workload : eval.value("workloads", nlohmann::json::array())) {
      ReportWorkload row;
      row.name = text_or(workload, "name");
      row.speedup = optional_number(workload, "speedup");
      const nlohmann::json bounds = workload.value("speedup_interval", nlohmann::json::array());
      if (bounds.is_array() && bounds.size() == 2 && bounds[0].is_number() && bounds[1].is_number()) {
        row.low = bounds[0].get<double>();
        row.high = bounds[1].get<double>();
      }
      row.roofline_fraction = optional_number(workload, "roofline_fraction");
      row.start_s = optional_number(workload.value("baseline", nlohmann::json::object()), "median_s");
      row.best_s = optional_number(workload.value("candidate", nlohmann::json::object()), "median_s");
      if (workload.contains("vendor") && workload["vendor"].is_object()) {
        row.vendor_fraction = optional_number(workload["vendor"], "fraction");
        row.vendor_s = optional_number(workload["vendor"], "median_s");
      }
      report.best_workloads.push_back(row);
    }
    report.best_roofline_fraction = optional_number(eval, "roofline_fraction");
    report.best_device = text_or(eval, "device");
    if (eval.contains("vendor") && eval["vendor"].is_object()) {
      const nlohmann::json& vendor = eval["vendor"];
      report.vendor_name = text_or(vendor, "name");
      report.vendor_fraction = optional_number(vendor, "fraction");
      if (!report.vendor_fraction) report.vendor_note = text_or(vendor, "status") + ": " + text_or(vendor, "detail");
    }
  } catch (const Error& error) {
    report.warnings.push_back(std::string("best/eval.json not read: ") + error.what());
  }
  if (!std::filesystem::exists(best / "profile.json")) return;
  try {
    const nlohmann::json profile = read_json_file(best / "profile.json");
    report.best_bound = text_or(profile, "bound");
    const nlohmann::json metrics = profile.value("metrics", nlohmann::json::object());
    if (std::optional<double> fraction = optional_number(metrics, "roofline_fraction"))
      report.best_roofline_fraction = fraction;
  } catch (const Error& error) {
    report.warnings.push_back(std::string("best/profile.json not read: ") + error.what());
  }
}

// The knowledge files this run wrote or read: its own folder, or the shared one it was given.
void read_knowledge(RunReport& report, const nlohmann::json& run) {
  std::filesystem::path dir = report.dir / "knowledge";
  const std::string recorded = text_or(run.value("knowledge", nlohmann::json::object()), "dir");
  if (!recorded.empty() && std::filesystem::is_directory(recorded)) dir = recorded;
  for (const char* name : {"strategies.md", "failed_attempts.md", "action_plan.md"}) {
    if (!std::filesystem::exists(dir / name)) continue;
    try {
      std::string text = read_file(dir / name);
      ReportKnowledge item{name, text, false};
      if (text.size() > k_knowledge_excerpt_chars) {
        const std::size_t cut = text.rfind('\n', k_knowledge_excerpt_chars);
        item.excerpt = text.substr(0, cut == std::string::npos ? k_knowledge_excerpt_chars : cut);
        item.truncated = true;
      }
      report.knowledge.push_back(item);
    } catch (const Error& error) {
      report.warnings.push_back(std::string(name) + " not read: " + error.what());
    }
  }
}

}  // namespace

bool ReportCycle::changed() const {
  return !added.empty() || !removed.empty() || (!change.empty() && change != "no change" && change != "initial team");
}

std::vector<std::optional<double>> RunReport::best_so_far() const {
  std::vector<std::optional<double>> curve;
  curve.reserve(candidates.size());
  std::optional<double> best;
  for (const ReportCandidate& candidate : candidates) {
    if (candidate.counts() && (!best || *candidate.speedup > *best)) best = candidate.speedup;
    curve.push_back(best);
  }
  return curve;
}

std::vector<std::string> RunReport::best_path() const {
  std::map<std::string, std::string> parent_of;
  for (const ReportCandidate& candidate : candidates) parent_of.emplace(candidate.id, candidate.parent);
  std::vector<std::string> path;
  std::set<std::string> seen;  // a damaged journal must not loop us forever
  for (std::string at = best_candidate; !at.empty() && parent_of.count(at) && seen.insert(at).second;
       at = parent_of[at])
    path.push_back(at);
  std::reverse(path.begin(), path.end());
  return path;
}

RunReport load_run_report(const std::filesystem::path& run_dir) {
  const nlohmann::json run = read_run_json(run_dir);
  RunReport report;
  report.dir = run_dir;
  report.id = text_or(run, "id");
  report.task = text_or(run, "task");
  report.status = text_or(run, "status");
  report.stop_reason = text_or(run, "stop_reason");
  report.started = text_or(run, "started");
  const nlohmann::json provider = run.value("provider", nlohmann::json::object());
  report.provider = text_or(provider, "name");
  report.model = text_or(provider, "model");
  report.endpoint = text_or(provider, "base_url");
  if (provider.contains("pricing")) report.endpoint += "; priced at zero (local endpoint)";
  report.team_mode = text_or(run.value("options", nlohmann::json::object()), "team_mode");
  const nlohmann::json summary = run.value("summary", nlohmann::json::object());
  report.cycles_finished = static_cast<int>(number_or(summary, "cycles", 0));
  report.best_candidate = text_or(summary, "best_candidate");
  report.best_speedup = optional_number(summary, "best_speedup");
  const RunStatusView status = run_status(run_dir);
  report.budgets = status.budgets;
  report.live = parse_run_status(report.status) == RunStatus::running && status.daemon_alive;

  read_task(report);
  read_journal(report);
  for (const std::string& skipped : report.journal_skipped) report.warnings.push_back(skipped);
  read_best(report);
  read_knowledge(report, run);
  return report;
}

std::vector<std::filesystem::path> write_report_pages(const std::filesystem::path& out_dir,
                                                      const std::vector<ReportFormat>& formats,
                                                      const std::function<std::string()>& render_html,
                                                      const std::function<std::string()>& render_markdown) {
  evoteam::create_directories(out_dir);
  std::vector<std::filesystem::path> written;
  for (ReportFormat format : formats) {
    const bool html = format == ReportFormat::html;
    const std::filesystem::path path = out_dir / (html ? "report.html" : "report.md");
    write_file_atomic(path, html ? render_html() : render_markdown());
    written.push_back(path);
  }
  return written;
}

std::vector<std::filesystem::path> write_run_report(const RunReport& report, const std::filesystem::path& out_dir,
                                                    const std::vector<ReportFormat>& formats) {
  return write_report_pages(
      out_dir, formats, [&] { return render_report_html(report); }, [&] { return render_report_markdown(report); });
}

}  // namespace evoteam
