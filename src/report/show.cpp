#include <algorithm>
#include <sstream>

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/text.hpp>
#include <evoteam/history/journal_records.hpp>
#include <evoteam/report/report.hpp>
#include <evoteam/store/store.hpp>

#include "report/run_files.hpp"

namespace evoteam {

namespace {

nlohmann::json cycle_teams(const std::filesystem::path& run_dir) {
  nlohmann::json teams = nlohmann::json::array();
  std::filesystem::path cycles = run_dir / "cycles";
  if (!std::filesystem::is_directory(cycles)) return teams;
  std::vector<std::filesystem::path> dirs;
  for (const auto& entry : std::filesystem::directory_iterator(cycles))
    if (entry.is_directory()) dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());
  for (const std::filesystem::path& dir : dirs) {
    nlohmann::json cycle = {{"cycle", dir.filename().string()}};
    try {
      nlohmann::json team = read_json_file(dir / "team.json");
      nlohmann::json roles = nlohmann::json::array();
      for (const nlohmann::json& role : team.value("roles", nlohmann::json::array()))
        roles.push_back(role.value("name", "?"));
      cycle["roles"] = roles;
      cycle["pattern"] = team.value("pattern", "");
      cycle["rationale"] = team.value("rationale", "");
    } catch (const Error& error) {
      cycle["error"] = error.what();
    }
    teams.push_back(cycle);
  }
  return teams;
}

}  // namespace

nlohmann::json describe_run(const std::filesystem::path& run_dir) {
  nlohmann::json description = {{"dir", run_dir.string()}};
  description["run"] = read_run_json(run_dir);
  RunSummary summary = summarize_run(run_dir);
  description["summary"] = to_json(summary);
  description["cycles"] = cycle_teams(run_dir);
  std::filesystem::path best_eval = run_dir / "best" / "eval.json";
  if (std::filesystem::exists(best_eval)) {
    try {
      description["best"] = read_json_file(best_eval);
    } catch (const Error& error) {
      description["best"] = {{"error", error.what()}};
    }
  }
  std::vector<std::string> skipped;
  const JournalReplay replay = read_run_journal(run_dir, skipped);
  for (const nlohmann::json& record : replay.records) {
    std::string damaged;
    if (record.is_object()) read_journal_line(record, &damaged);
    if (!damaged.empty()) skipped.push_back("a damaged record left out: " + damaged);
  }
  description["journal"] = {{"records", replay.records.size()},
                            {"torn_tail", replay.torn_tail},
                            {"warnings", replay.warnings},
                            {"skipped", skipped}};
  return description;
}

std::string format_run_description(const nlohmann::json& description) {
  const nlohmann::json& summary = description.at("summary");
  const nlohmann::json& run = description.at("run");
  std::ostringstream out;
  out << "run       " << summary.value("id", "") << "  (" << description.value("dir", "") << ")\n";
  out << "task      " << summary.value("task", "") << "\n";
  out << "status    " << summary.value("status", "");
  if (!summary.value("stop_reason", "").empty()) out << " (" << summary.value("stop_reason", "") << ")";
  out << "\n";
  out << "started   " << summary.value("started", "") << "\n";
  if (run.contains("provider")) out << "provider  " << run["provider"].dump() << "\n";
  out << "used      " << summary.value("cycles", 0) << " cycles, " << summary.value("evaluations", 0)
      << " evaluations, " << summary.value("tokens", 0LL) << " tokens, $" << fixed(summary.value("cost_usd", 0.0), 2);
  if (run.contains("budgets")) out << "  of budgets " << run["budgets"].dump();
  out << "\n";
  if (summary.contains("best_speedup") && summary["best_speedup"].is_number())
    out << "best      " << summary.value("best_candidate", "") << "  "
        << fixed(summary["best_speedup"].get<double>(), 2) << "x\n";
  else
    out << "best      none yet\n";
  // The best's standing against the task's vendor baseline (FlashInfer), as its evaluation recorded it.
  if (description.contains("best") && description["best"].contains("vendor") &&
      description["best"]["vendor"].is_object()) {
    const nlohmann::json& vendor = description["best"]["vendor"];
    out << "vs " << vendor.value("name", "vendor") << "  ";
    if (vendor.contains("fraction") && vendor["fraction"].is_number())
      out << fixed(vendor["fraction"].get<double>(), 2) << "x of its speed (geometric mean; above 1 is faster)\n";
    else
      out << vendor.value("status", "") << ": " << vendor.value("detail", "") << "\n";
  }
  for (const nlohmann::json& cycle : description.at("cycles")) {
    out << "cycle " << cycle.value("cycle", "") << "  ";
    if (cycle.contains("error")) {
      out << "(" << cycle["error"].get<std::string>() << ")\n";
      continue;
    }
    const auto role_name = [](const nlohmann::json& role) { return role.get<std::string>(); };
    const std::string roles = join(cycle.value("roles", nlohmann::json::array()), ", ", role_name);
    out << cycle.value("pattern", "") << " [" << roles << "]  " << cycle.value("rationale", "") << "\n";
  }
  if (description.contains("journal")) {
    const nlohmann::json& journal = description["journal"];
    out << "journal   " << journal.value("records", 0) << " records";
    if (journal.value("torn_tail", false)) out << ", torn last line (dropped; resume repairs it)";
    out << "\n";
    for (const nlohmann::json& skipped : journal.value("skipped", nlohmann::json::array()))
      if (skipped.is_string()) out << "warning   journal: " << skipped.get<std::string>() << "\n";
  }
  return out.str();
}

}  // namespace evoteam
