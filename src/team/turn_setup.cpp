// A member's turn, prepared the same way for every member kind (turn_setup.hpp).
#include "team/turn_setup.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/text.hpp>

namespace evoteam {

namespace {

constexpr std::size_t k_build_log_tail_chars = 3000;

// The failures a later candidate fixed: every failed ancestor of a candidate that passed. The failing lineage moves
// on from them; a Debugger handed one again would debug what already works.
std::set<std::string> fixed_failures(const RunHistory& history) {
  std::map<std::string, const EvaluationRecord*> by_id;
  for (const EvaluationRecord& record : history.evaluations) by_id[record.candidate_id] = &record;
  std::set<std::string> fixed;
  for (const EvaluationRecord& record : history.evaluations) {
    if (!record.passed()) continue;
    std::set<std::string> seen;  // a damaged journal could hold a cycle of parents
    for (auto parent = by_id.find(record.parent_id); parent != by_id.end() && seen.insert(parent->first).second;
         parent = by_id.find(parent->second->parent_id))
      if (parent->second->failed()) fixed.insert(parent->first);
  }
  return fixed;
}

// The latest candidate that failed and was not fixed since: evaluated, so never a parallel member's evaluation still
// under way (pending, its sources not yet stored), nor the evaluator's own failure. One a reviewer rejected is taken
// only when no other failed: it is still the failing code, and a Debugger handed the passing best instead has nothing
// to debug.
std::optional<EvaluationRecord> latest_failure(const RunHistory& history) {
  const std::set<std::string> fixed = fixed_failures(history);
  std::optional<EvaluationRecord> rejected;
  for (auto it = history.evaluations.rbegin(); it != history.evaluations.rend(); ++it) {
    if (!it->failed() || fixed.count(it->candidate_id)) continue;
    if (!it->rejected) return *it;
    if (!rejected) rejected = *it;
  }
  return rejected;
}

std::filesystem::path member_dir_of(const std::filesystem::path& run_dir, int cycle, const std::string& role) {
  char cycle_name[16];
  std::snprintf(cycle_name, sizeof cycle_name, "%04d", cycle);
  return run_dir / "cycles" / cycle_name / "agents" / role;
}

Workspace workspace_of_head(const Lab& lab, const Task& task, const EvaluationRecord& head,
                            const std::filesystem::path& member_dir, const WorkspaceLimits& limits) {
  std::vector<WorkspaceFile> editable, read_only;
  for (const std::string& file : task.kernel_files)
    editable.push_back({file, lab.sources_of(head.candidate_id) / file});
  if (std::filesystem::exists(task.dir / "README.md")) read_only.push_back({"README.md", task.dir / "README.md"});
  read_only.push_back({task.reference_file, task.dir / task.reference_file});
  // A failing head comes with the evidence of its failure.
  const std::filesystem::path build_log = lab.build_log_of(head.candidate_id);
  if (head.failed() && std::filesystem::is_regular_file(build_log)) read_only.push_back({"build.log", build_log});
  return Workspace::create(member_dir / "workspace", editable, read_only, limits);
}

std::map<std::string, std::string> prompt_values_of(const TurnContext& context, const Task& task,
                                                    const EvaluationRecord& head, const TurnSetupInputs& inputs) {
  return {
      {"task_name", task.name},
      {"task_readme",
       std::filesystem::exists(task.dir / "README.md") ? read_file(task.dir / "README.md") : task.description},
      {"target", to_string(task.target) + (task.archs.empty() ? "" : " " + join(task.archs, ", "))},
      {"editable_files", join(task.kernel_files, ", ")},
      {"params", describe_param_space(task)},
      {"constraints", describe_static_constraints(task)},
      {"directives", context.team->directives.empty() ? "none" : "- " + join(context.team->directives, "\n- ")},
      {"knowledge_digest", context.team->knowledge == KnowledgeMode::none
                               ? "(not shared this cycle)"
                               : context.knowledge->digest(inputs.digest_chars)},
      {"best_summary", describe_record(head)},
      {"handoff_note", context.handoff_note},
      {"cycle", std::to_string(context.cycle)},
      {"budget", inputs.step_allowance + ", " + std::to_string(context.evaluation_budget) + " candidate submission(s)"},
      {"team", to_string(context.team->pattern) + ": " + join(context.team->role_names(), ", ")}};
}

}  // namespace

EvaluationRecord head_of_lineage(const RunHistory& history, const std::string& lineage) {
  std::optional<EvaluationRecord> head = lineage == "failing" ? latest_failure(history) : std::nullopt;
  if (!head) head = history.best();
  if (!head && !history.evaluations.empty()) head = history.evaluations.front();
  EVOTEAM_CHECK(head.has_value(), "no candidate to start from");
  return *head;
}

std::string failing_candidate_handoff(const Lab& lab) {
  const std::optional<EvaluationRecord> failing = latest_failure(lab.snapshot());
  if (!failing) return "no candidate has failed: your workspace holds the best";
  std::string note = "failing candidate " + failing->candidate_id + " (" + failing->verdict_text() + ", by " +
                     failing->author_role + " in cycle " + std::to_string(failing->cycle) +
                     "); your workspace holds its code. Failure: " + failing->failure_signature;
  const std::filesystem::path log_file = lab.build_log_of(failing->candidate_id);
  if (std::filesystem::is_regular_file(log_file)) {
    std::string log = read_file(log_file);
    const bool cut = log.size() > k_build_log_tail_chars;
    if (cut) log = "..." + log.substr(log.size() - k_build_log_tail_chars);
    note += "\nIts build log (build.log in your workspace" + std::string(cut ? "; its end" : "") + "):\n" + log;
  }
  return note;
}

TurnSetup prepare_turn(const TurnContext& context, const TurnSetupInputs& inputs) {
  Lab& lab = *context.lab;
  const Task* task = lab.task();
  EVOTEAM_CHECK(task != nullptr, "a member's turn needs a task");
  EvaluationRecord head = head_of_lineage(lab.snapshot(), context.role.lineage);
  const std::filesystem::path member_dir = member_dir_of(inputs.run_dir, context.cycle, inputs.role);
  Workspace workspace = workspace_of_head(lab, *task, head, member_dir, inputs.workspace_limits);
  std::map<std::string, std::string> values = prompt_values_of(context, *task, head, inputs);
  SubmissionTarget submission{inputs.role,
                              context.role.lineage,
                              context.cycle,
                              context.screening(),
                              std::max(1, context.evaluation_budget),
                              member_dir / "submitted"};
  return TurnSetup{task, std::move(head), member_dir, std::move(workspace), std::move(values), std::move(submission)};
}

}  // namespace evoteam
