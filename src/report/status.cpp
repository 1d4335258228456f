#include <evoteam/report/status.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/text.hpp>
#include <evoteam/history/journal_records.hpp>
#include <evoteam/store/store.hpp>

#include "report/run_files.hpp"

namespace evoteam {

namespace {

double now_epoch_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The latest cycles/NNNN holding a team.json: the cycle under way, or the last one finished.
void read_latest_team(const std::filesystem::path& run_dir, RunStatusView& view) {
  const std::filesystem::path cycles = run_dir / "cycles";
  if (!std::filesystem::is_directory(cycles)) return;
  std::vector<std::filesystem::path> dirs;
  for (const auto& entry : std::filesystem::directory_iterator(cycles))
    if (entry.is_directory() && std::filesystem::exists(entry.path() / "team.json")) dirs.push_back(entry.path());
  if (dirs.empty()) return;
  const std::filesystem::path latest = *std::max_element(dirs.begin(), dirs.end());
  try {
    view.current_cycle = std::stoi(latest.filename().string());
    const nlohmann::json team = read_json_file(latest / "team.json");
    for (const nlohmann::json& role : team.value("roles", nlohmann::json::array()))
      if (role.is_object()) view.team.push_back(role.value("name", "?"));
    view.pattern = text_or(team, "pattern");
  } catch (const std::exception&) {
    // A team.json being rewritten right now: the view shows no team rather than failing.
  }
}

struct JournalFacts {
  std::optional<double> last_event_at;
  std::string last_event;
  std::optional<double> session_mark_at;  // the last cycle end, resume or start: where elapsed_s stops counting
  std::optional<double> ticked_tokens;    // the last budget_tick's totals, fresher than run.json's summary
  std::optional<double> ticked_usd;
  // Device time by the device that held it: each candidate's latest record (a candidate is journaled again when its
  // ruling changes), and the trials' and profiles' "device_time" records. Their sum is what the GPU-seconds budget
  // counts (RunHistory::device_seconds).
  std::map<std::string, double> device_seconds;
  std::map<std::string, std::pair<std::string, double>> candidate_device;  // candidate id -> (device, seconds)
  std::set<std::string> evaluated;   // candidates the evaluator measured (blocked ones never ran)
  int trials = 0;                    // the agents' trials ("trial" records)
  std::vector<std::string> skipped;  // what of the journal could not be counted
};

// Device time a record does not attribute (written before records named their device) is shown as such.
std::string device_name_of(const std::string& device) { return device.empty() ? "unattributed" : device; }

JournalFacts read_journal_facts(const std::filesystem::path& run_dir) {
  JournalFacts facts;
  const JournalReplay replay = read_run_journal(run_dir, facts.skipped);
  for (const nlohmann::json& record : replay.records) {
    if (!record.is_object()) continue;
    std::string damaged;  // a damaged record still marks the last event; its fields are left out
    const JournalLine line = read_journal_line(record, &damaged);
    if (!damaged.empty()) facts.skipped.push_back("a damaged journal record left out: " + damaged);
    const std::optional<double> at = epoch_seconds(line.at);
    facts.last_event_at = at;
    facts.last_event = line.type;
    if (!line.entry) continue;
    const JournalEntry& entry = *line.entry;
    if (std::holds_alternative<CycleEndEntry>(entry) || std::holds_alternative<ResumeEntry>(entry) ||
        std::holds_alternative<RunStartEntry>(entry))
      facts.session_mark_at = at;
    if (const auto* evaluation = std::get_if<EvaluationEntry>(&entry)) {
      const EvaluationRecord& measured = evaluation->record;
      facts.candidate_device[measured.candidate_id] = {measured.device, measured.device_s};
      if (measured.evaluated()) facts.evaluated.insert(measured.candidate_id);
    }
    if (const auto* device_time = std::get_if<DeviceTimeEntry>(&entry))
      facts.device_seconds[device_name_of(device_time->device)] += device_time->seconds;
    if (std::holds_alternative<TrialEntry>(entry)) ++facts.trials;
    if (const auto* tick = std::get_if<BudgetTickEntry>(&entry)) {
      facts.ticked_tokens = static_cast<double>(tick->totals.tokens.total());
      facts.ticked_usd = tick->totals.cost_usd;
    }
  }
  for (const auto& [id, held] : facts.candidate_device)
    if (held.second > 0 || !held.first.empty()) facts.device_seconds[device_name_of(held.first)] += held.second;
  return facts;
}

// What each budget counts, as the run loop and the lab enforce it: the one description status, the report and
// README give.
std::string budget_counts(const std::string& name) {
  if (name == "cycles") return "finished cycles";
  if (name == "evaluations")
    return "candidates evaluated plus the agents' trials (compile, run_tests, benchmark, profile); blocked and "
           "identical resubmissions are free";
  if (name == "tokens") return "every token the provider reported: input, output, cache reads and writes";
  if (name == "usd") return "the price of those tokens from the price table";
  if (name == "hours") return "the run's wall time across its sessions";
  if (name == "gpu_seconds")
    return "device time the evaluator measured per evaluation and trial (on the host target, CPU time)";
  return "";
}

// "2 candidates, 6 trials": the parts of the evaluations figure, said wherever the figure is.
std::string evaluation_parts(int candidates, int trials) {
  return std::to_string(candidates) + (candidates == 1 ? " candidate, " : " candidates, ") + std::to_string(trials) +
         (trials == 1 ? " trial" : " trials");
}

void add_budget(RunStatusView& view, const std::string& name, double spent, double limit, bool live) {
  BudgetBurn burn{name, spent, limit, std::nullopt, std::nullopt, budget_counts(name), ""};
  if (limit > 0) {
    burn.percent = 100.0 * spent / limit;
    // Linear extrapolation of the rate so far; wall time runs out on its own clock.
    if (live && name == "hours")
      burn.eta_s = std::max(0.0, limit * 3600 - view.elapsed_s);
    else if (live && spent > 0 && view.elapsed_s > 0)
      burn.eta_s = std::max(0.0, (limit - spent) * view.elapsed_s / spent);
  }
  if (burn.eta_s && (!view.eta_s || *burn.eta_s < *view.eta_s)) {
    view.eta_s = burn.eta_s;
    view.eta_budget = name;
  }
  view.budgets.push_back(burn);
}

std::string format_duration(double seconds) {
  const long long total = std::llround(seconds);
  std::ostringstream out;
  if (total >= 3600)
    out << total / 3600 << "h" << (total % 3600) / 60 << "m";
  else if (total >= 60)
    out << total / 60 << "m" << total % 60 << "s";
  else
    out << total << "s";
  return out.str();
}

// The Slurm jobs the daemon recorded; nothing for a run that evaluates locally, or when the file is unreadable
// (status is a view: it never fails for want of a detail).
void read_cluster_jobs(const std::filesystem::path& run_dir, RunStatusView& view) {
  const std::filesystem::path file = run_dir / "cluster" / "jobs.json";
  if (!std::filesystem::is_regular_file(file)) return;
  nlohmann::json jobs;
  try {
    jobs = read_json_file(file);
  } catch (const Error&) {
    return;
  }
  if (!jobs.is_object()) return;
  const nlohmann::json live = jobs.value("jobs", nlohmann::json::array());
  for (const nlohmann::json& job : live.is_array() ? live : nlohmann::json::array())
    view.jobs.push_back({text_or(job, "id"), text_or(job, "state"), text_or(job, "reason"), text_or(job, "node")});
  const nlohmann::json ended = jobs.value("ended", nlohmann::json::array());
  view.jobs_ended = ended.is_array() ? static_cast<int>(ended.size()) : 0;
}

}  // namespace

RunStatusView run_status(const std::filesystem::path& run_dir) {
  const nlohmann::json run = read_run_json(run_dir);
  RunStatusView view;
  view.dir = run_dir;
  view.id = text_or(run, "id");
  view.task = text_or(run, "task");
  view.status = text_or(run, "status");
  view.stop_reason = text_or(run, "stop_reason");
  if (std::optional<int> holder = lock_holder(run_dir)) {
    view.daemon_alive = true;
    view.daemon_pid = *holder;
  }
  const nlohmann::json summary = run.value("summary", nlohmann::json::object());
  view.cycles_finished = static_cast<int>(number_or(summary, "cycles", 0));
  view.best_candidate = text_or(summary, "best_candidate");
  if (summary.is_object() && summary.contains("best_speedup") && summary["best_speedup"].is_number())
    view.best_speedup = summary["best_speedup"].get<double>();
  read_latest_team(run_dir, view);
  read_cluster_jobs(run_dir, view);

  const JournalFacts facts = read_journal_facts(run_dir);
  const double now = now_epoch_seconds();
  if (facts.last_event_at) view.last_event_age_s = std::max(0.0, now - *facts.last_event_at);
  view.last_event = facts.last_event;
  view.device_seconds = facts.device_seconds;
  view.journal_skipped = facts.skipped;
  // run.json's elapsed time is written at cycle ends; a live run has also spent the time since the last one.
  view.elapsed_s = number_or(summary, "elapsed_s", 0);
  if (view.daemon_alive && facts.session_mark_at) view.elapsed_s += std::max(0.0, now - *facts.session_mark_at);

  const nlohmann::json budgets = run.value("budgets", nlohmann::json::object());
  const double tokens =
      std::max(token_total(summary.value("tokens", nlohmann::json::object())), facts.ticked_tokens.value_or(0));
  const double usd = std::max(number_or(summary, "cost_usd", 0), facts.ticked_usd.value_or(0));
  const bool live = view.daemon_alive;
  add_budget(view, "cycles", view.cycles_finished, number_or(budgets, "max_cycles", 0), live);
  // The evaluation budget counts trials too (RunHistory::evaluations_spent); the journal has both, fresher than the
  // summary a cycle end writes.
  const double candidates = std::max(number_or(summary, "evaluations", 0), static_cast<double>(facts.evaluated.size()));
  add_budget(view, "evaluations", candidates + facts.trials, number_or(budgets, "evaluations", 0), live);
  view.budgets.back().parts = evaluation_parts(static_cast<int>(candidates), facts.trials);
  add_budget(view, "tokens", tokens, number_or(budgets, "tokens", 0), live);
  add_budget(view, "usd", usd, number_or(budgets, "usd", 0), live);
  add_budget(view, "hours", view.elapsed_s / 3600, number_or(budgets, "hours", 0), live);
  // One figure: the GPU-seconds spent are the device seconds shown, both read from the journal (fresher than the
  // summary a cycle end writes).
  double device_total = 0;
  for (const auto& [device, seconds] : view.device_seconds) device_total += seconds;
  add_budget(view, "gpu_seconds", facts.device_seconds.empty() ? number_or(summary, "gpu_seconds", 0) : device_total,
             number_or(budgets, "gpu_seconds", 0), live);
  return view;
}

nlohmann::json to_json(const RunStatusView& view) {
  const auto optional_number = [](const std::optional<double>& value) {
    return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
  };
  nlohmann::json budgets = nlohmann::json::array();
  for (const BudgetBurn& burn : view.budgets) {
    budgets.push_back({{"name", burn.name},
                       {"spent", burn.spent},
                       {"limit", burn.limit},
                       {"percent", optional_number(burn.percent)},
                       {"eta_s", optional_number(burn.eta_s)},
                       {"counts", burn.counts}});
    if (!burn.parts.empty()) budgets.back()["parts"] = burn.parts;  // the figure's parts, where it has them
  }
  nlohmann::json jobs = nlohmann::json::array();
  for (const ClusterJobView& job : view.jobs)
    jobs.push_back({{"id", job.id}, {"state", job.state}, {"reason", job.reason}, {"node", job.node}});
  return {{"dir", view.dir.string()},
          {"id", view.id},
          {"task", view.task},
          {"status", view.status},
          {"stop_reason", view.stop_reason},
          {"daemon", {{"alive", view.daemon_alive}, {"pid", view.daemon_pid}}},
          {"cycles_finished", view.cycles_finished},
          {"current_cycle", view.current_cycle},
          {"team", view.team},
          {"pattern", view.pattern},
          {"best_candidate", view.best_candidate},
          {"best_speedup", optional_number(view.best_speedup)},
          {"elapsed_s", view.elapsed_s},
          {"budgets", budgets},
          {"eta_s", optional_number(view.eta_s)},
          {"eta_budget", view.eta_budget},
          {"last_event", view.last_event},
          {"last_event_age_s", optional_number(view.last_event_age_s)},
          {"device_seconds", view.device_seconds},
          {"slurm_jobs", jobs},
          {"slurm_jobs_ended", view.jobs_ended},
          {"journal_skipped", view.journal_skipped}};
}

std::string format_run_status(const RunStatusView& view) {
  std::ostringstream out;
  out << "run       " << view.id << "  (" << view.dir.string() << ")\n";
  out << "task      " << view.task << "\n";
  out << "status    " << view.status;
  if (!view.stop_reason.empty()) out << " (" << view.stop_reason << ")";
  out << "\n";
  out << "daemon    ";
  if (view.daemon_alive)
    out << "alive, pid " << view.daemon_pid << "\n";
  else if (parse_run_status(view.status) == RunStatus::running)
    out << "gone without recording an end (killed?); `evoteam resume` continues it\n";
  else
    out << "not running\n";
  out << "cycle     " << view.cycles_finished << " finished";
  if (view.current_cycle > view.cycles_finished) out << ", " << view.current_cycle << " under way";
  out << "\n";
  if (!view.team.empty()) out << "team      " << view.pattern << " [" << join(view.team, ", ") << "]\n";
  if (view.best_speedup)
    out << "best      " << view.best_candidate << "  " << fixed(*view.best_speedup, 2) << "x\n";
  else
    out << "best      none yet\n";
  out << "elapsed   " << format_duration(view.elapsed_s) << "\n";
  for (const BudgetBurn& burn : view.budgets) {
    if (burn.limit <= 0) continue;
    out << "budget    " << burn.name << ": " << fixed(burn.spent, burn.name == "hours" ? 2 : 0) << " of "
        << fixed(burn.limit, burn.name == "hours" ? 2 : 0) << " (" << fixed(burn.percent.value_or(0), 0) << "%"
        << (burn.parts.empty() ? "" : "; " + burn.parts) << "): " << burn.counts << "\n";
  }
  out << "eta       ";
  if (view.eta_s)
    out << format_duration(*view.eta_s) << " (" << view.eta_budget << " budget)\n";
  else
    out << (view.daemon_alive ? "unknown (no budget to extrapolate)\n" : "-\n");
  if (view.device_seconds.size() > 1) {
    std::vector<std::string> parts;
    for (const auto& [device, seconds] : view.device_seconds) parts.push_back(device + " " + fixed(seconds, 1) + " s");
    out << "devices   " << join(parts, ", ") << "\n";
  }
  for (const ClusterJobView& job : view.jobs) {
    out << "slurm     job " << job.id << " " << job.state;
    if (!job.node.empty()) out << " on " << job.node;
    if (job.state == "PENDING" && !job.reason.empty()) out << " (" << job.reason << ")";
    out << "\n";
  }
  if (view.jobs_ended > 0) out << "slurm     " << view.jobs_ended << " worker job(s) ended\n";
  out << "last      ";
  if (view.last_event_age_s)
    out << view.last_event << " " << format_duration(*view.last_event_age_s) << " ago\n";
  else
    out << "no journal record\n";
  for (const std::string& skipped : view.journal_skipped) out << "warning   " << skipped << "\n";
  return out.str();
}

std::optional<int> recorded_exit_code(const nlohmann::json& run_json) {
  if (run_json.contains("exit_code") && run_json["exit_code"].is_number_integer())
    return run_json["exit_code"].get<int>();
  const std::optional<RunStatus> status = parse_run_status(text_or(run_json, "status"));
  if (status == RunStatus::running) return std::nullopt;
  if (status == RunStatus::stopped) return static_cast<int>(ExitCode::interrupted);
  if (status != RunStatus::finished) return static_cast<int>(ExitCode::failure);
  // The run loop's rule (run_end) on the recorded reason; a finished run without a known one ran its cycles.
  const StopReason reason = parse_stop_reason(text_or(run_json, "stop_reason")).value_or(StopReason::max_cycles);
  const double target = number_or(run_json.value("budgets", nlohmann::json::object()), "target_speedup", 0);
  return static_cast<int>(run_end(reason, target).exit_code);
}

WaitOutcome wait_for_run(const std::filesystem::path& run_dir, std::optional<std::chrono::milliseconds> timeout,
                         std::chrono::milliseconds poll) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    // The daemon records the run's end in run.json before it lets go of the lock, so once the lock is free
    // run.json says how the run ended, or nothing did.
    if (!lock_holder(run_dir)) {
      const nlohmann::json run = read_run_json(run_dir);
      const std::string status = text_or(run, "status");
      if (std::optional<int> code = recorded_exit_code(run)) {
        std::string message = "run " + run_dir.string() + " " + status;
        if (!text_or(run, "stop_reason").empty()) message += " (" + text_or(run, "stop_reason") + ")";
        return {*code, message + ", exit code " + std::to_string(*code)};
      }
      return {static_cast<int>(ExitCode::failure), "run " + run_dir.string() +
                                                       " died without recording its end (its daemon was killed?); "
                                                       "`evoteam resume` continues it"};
    }
    if (timeout && std::chrono::steady_clock::now() - start >= *timeout)
      return {k_wait_timeout_exit_code, "timed out waiting for run " + run_dir.string() + ": it is still running"};
    std::this_thread::sleep_for(poll);
  }
}

}  // namespace evoteam
