#include <evoteam/report/report.hpp>

#include <iomanip>
#include <sstream>

#include <evoteam/core/error.hpp>
#include <evoteam/core/text.hpp>
#include <evoteam/store/store.hpp>

namespace evoteam {

namespace {

template <typename T>
T value_or(const nlohmann::json& object, const char* key, T fallback) {
  if (!object.is_object() || !object.contains(key) || object.at(key).is_null()) return fallback;
  try {
    return object.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    return fallback;
  }
}

std::string format_tokens(long long tokens) {
  if (tokens >= 1'000'000) return fixed(tokens / 1e6, 1) + "M";
  if (tokens >= 1'000) return fixed(tokens / 1e3, 1) + "k";
  return std::to_string(tokens);
}

}  // namespace

RunSummary summarize_run(const std::filesystem::path& run_dir) {
  RunSummary summary;
  summary.dir = run_dir;
  summary.id = run_dir.filename().string();
  nlohmann::json run;
  try {
    run = read_run_json(run_dir);
  } catch (const Error& error) {
    summary.status = "unreadable";
    summary.error = error.what();
    return summary;
  }
  summary.id = value_or<std::string>(run, "id", summary.id);
  summary.task = value_or<std::string>(run, "task", "");
  summary.status = value_or<std::string>(run, "status", "unknown");
  summary.stop_reason = value_or<std::string>(run, "stop_reason", "");
  summary.started = value_or<std::string>(run, "started", "");
  // A run that says "running" but whose daemon is gone was killed; `evoteam resume` continues it.
  if (parse_run_status(summary.status) == RunStatus::running && !lock_holder(run_dir))
    summary.status = "running (dead)";
  const nlohmann::json summary_json = run.value("summary", nlohmann::json::object());
  summary.cycles = value_or<int>(summary_json, "cycles", 0);
  summary.evaluations = value_or<int>(summary_json, "evaluations", 0);
  summary.trials = value_or<int>(summary_json, "trials", 0);
  if (summary_json.contains("best_speedup") && summary_json["best_speedup"].is_number())
    summary.best_speedup = summary_json["best_speedup"].get<double>();
  summary.best_candidate = value_or<std::string>(summary_json, "best_candidate", "");
  const nlohmann::json tokens = summary_json.value("tokens", nlohmann::json::object());
  for (const char* kind : {"input", "output", "cache_read", "cache_write"})
    summary.tokens += value_or<long long>(tokens, kind, 0);
  summary.cost_usd = value_or<double>(summary_json, "cost_usd", 0.0);
  return summary;
}

std::vector<RunSummary> summarize_runs(const std::filesystem::path& runs_dir) {
  std::vector<RunSummary> result;
  for (const std::filesystem::path& dir : list_runs(runs_dir)) result.push_back(summarize_run(dir));
  return result;
}

nlohmann::json to_json(const RunSummary& summary) {
  nlohmann::json value = {{"id", summary.id},
                          {"dir", summary.dir.string()},
                          {"task", summary.task},
                          {"status", summary.status},
                          {"stop_reason", summary.stop_reason},
                          {"cycles", summary.cycles},
                          {"evaluations", summary.evaluations},
                          {"trials", summary.trials},
                          {"best_speedup", nullptr},
                          {"best_candidate", summary.best_candidate},
                          {"tokens", summary.tokens},
                          {"cost_usd", summary.cost_usd},
                          {"started", summary.started}};
  if (summary.best_speedup) value["best_speedup"] = *summary.best_speedup;
  if (!summary.error.empty()) value["error"] = summary.error;
  return value;
}

std::string format_runs_table(const std::vector<RunSummary>& runs) {
  std::ostringstream out;
  out << std::left << std::setw(36) << "ID" << std::setw(22) << "TASK" << std::setw(16) << "STATUS" << std::right
      << std::setw(7) << "CYCLES" << std::setw(7) << "EVALS" << std::setw(9) << "BEST" << std::setw(9) << "TOKENS"
      << std::setw(9) << "COST"
      << "  STARTED\n";
  for (const RunSummary& run : runs) {
    const std::string best = run.best_speedup ? fixed(*run.best_speedup, 2) + "x" : "-";
    const std::string cost = "$" + fixed(run.cost_usd, 2);
    out << std::left << std::setw(36) << run.id << std::setw(22) << run.task << std::setw(16) << run.status
        << std::right << std::setw(7) << run.cycles << std::setw(7) << run.evaluations + run.trials << std::setw(9)
        << best << std::setw(9) << format_tokens(run.tokens) << std::setw(9) << cost << "  " << run.started;
    if (!run.error.empty()) out << "  (" << run.error << ")";
    out << "\n";
  }
  if (runs.empty()) out << "(no runs)\n";
  return out.str();
}

std::filesystem::path resolve_run(const std::string& run, const std::filesystem::path& runs_dir) {
  std::filesystem::path direct(run);
  if (std::filesystem::exists(direct / "run.json") || std::filesystem::exists(direct / "journal.jsonl")) return direct;
  std::filesystem::path under = runs_dir / run;
  if (std::filesystem::exists(under / "run.json") || std::filesystem::exists(under / "journal.jsonl")) return under;
  // A run given by its path and a runs directory it already lies in name one place: say it once.
  const bool same = direct.lexically_normal() == under.lexically_normal();
  throw InvalidInput("no run '" + run + "' (looked for " + (direct / "run.json").string() +
                     (same ? "" : " and " + (under / "run.json").string()) + ")");
}

}  // namespace evoteam
