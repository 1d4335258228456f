#include <algorithm>
#include <sstream>

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/text.hpp>
#include <evoteam/history/journal_records.hpp>
#include <evoteam/report/report.hpp>
#include <evoteam/report/status.hpp>
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

// "anthropic / claude-x", or the name alone when the provider's default model was used.
std::string provider_text(const nlohmann::json& provider) {
  if (!provider.is_object()) return provider.is_string() ? provider.get<std::string>() : provider.dump();
  const std::string name = text_or(provider, "name");
  const std::string model = text_or(provider, "model");
  return (name.empty() ? std::string("?") : name) + (model.empty() ? " (its default model)" : " / " + model);
}

// The budgets the run has, as a person writes them ("12 cycles, 200 evaluations, $5.00"); 0 is no budget.
std::string budgets_text(const nlohmann::json& budgets) {
  if (!budgets.is_object()) return budgets.dump();
  const std::pair<const char*, const char*> names[] = {{"max_cycles", "cycles"},
                                                       {"evaluations", "evaluations"},
                                                       {"tokens", "tokens"},
                                                       {"usd", "USD"},
                                                       {"hours", "hours"},
                                                       {"gpu_seconds", "GPU-seconds"},
                                                       {"target_speedup", "x target speedup"}};
  std::vector<std::string> parts;
  for (const auto& [key, words] : names) {
    if (!budgets.contains(key) || !budgets[key].is_number() || budgets[key].get<double>() <= 0) continue;
    const double value = budgets[key].get<double>();
    const bool whole = value == static_cast<double>(static_cast<long long>(value));
    parts.push_back((whole ? fixed(value, 0) : fixed(value, 2)) + (std::string(key) == "target_speedup" ? "" : " ") +
                    words);
  }
  return parts.empty() ? "none" : join(parts, ", ");
}

}  // namespace

nlohmann::json describe_run(const std::filesystem::path& run_dir) {
  nlohmann::json description = {{"dir", run_dir.string()}};
  description["run"] = read_run_json(run_dir);
  RunSummary summary = summarize_run(run_dir);
  description["summary"] = to_json(summary);
  description["cycles"] = cycle_teams(run_dir);
  // The evaluations figure status, the report and the budget give: candidates plus the agents' trials, with its parts.
  try {
    for (const BudgetBurn& burn : run_status(run_dir).budgets)
      if (burn.name == "evaluations") description["evaluations"] = {{"spent", burn.spent}, {"parts", burn.parts}};
  } catch (const Error&) {
    // The summary's count of candidates stands in (format_run_description says it as such).
  }
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
  const std::string best = summary.best_candidate;
  std::string best_author;
  nlohmann::json agents = nlohmann::json::object();  // role -> the CLI, its version and model that worked it
  for (const nlohmann::json& record : replay.records) {
    if (!record.is_object()) continue;
    std::string damaged;
    const JournalLine line = read_journal_line(record, &damaged);
    if (!damaged.empty()) skipped.push_back("a damaged journal record left out: " + damaged);
    if (!line.entry) continue;
    if (const auto* evaluation = std::get_if<EvaluationEntry>(&*line.entry))
      if (!best.empty() && evaluation->record.candidate_id == best) best_author = evaluation->record.author_role;
    if (const auto* turn = std::get_if<TurnEntry>(&*line.entry); turn != nullptr && !turn->agent.empty())
      agents[turn->role] = turn->agent;  // the latest turn's: a CLI updated mid-run shows as it is now
  }
  if (!agents.empty()) description["agents"] = agents;
  if (!best_author.empty()) description["best_author_role"] = best_author;
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
  if (run.contains("provider")) out << "provider  " << provider_text(run["provider"]) << "\n";
  if (description.contains("agents"))
    for (const auto& [role, agent] : description["agents"].items())
      out << "agent     " << role << ": " << agent.get<std::string>() << "\n";
  out << "used      " << summary.value("cycles", 0) << " cycles, ";
  if (description.contains("evaluations"))
    out << fixed(description["evaluations"].value("spent", 0.0), 0) << " evaluations ("
        << description["evaluations"].value("parts", "") << "), ";
  else
    out << summary.value("evaluations", 0) << " candidates evaluated, ";
  out << summary.value("tokens", 0LL) << " tokens, $" << fixed(summary.value("cost_usd", 0.0), 2) << "\n";
  if (run.contains("budgets")) out << "budgets   " << budgets_text(run["budgets"]) << "\n";
  if (summary.contains("best_speedup") && summary["best_speedup"].is_number())
    out << "best      " << summary.value("best_candidate", "") << "  "
        << fixed(summary["best_speedup"].get<double>(), 2) << "x"
        << (description.contains("best_author_role") ? "  by the " + description["best_author_role"].get<std::string>()
                                                     : std::string())
        << "\n";
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
      if (skipped.is_string()) out << "warning   " << skipped.get<std::string>() << "\n";
  }
  return out.str();
}

}  // namespace evoteam
