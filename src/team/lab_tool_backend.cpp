#include "team/lab_tool_backend.hpp"

#include <evoteam/agent/workspace.hpp>
#include <evoteam/core/fs.hpp>

#include <sstream>

namespace evoteam {

LabToolBackend::LabToolBackend(Lab& lab, const EvaluationRecord& head, std::vector<std::string> kernel_files,
                               SubmissionTarget target)
    : m_lab(lab),
      m_head_id(head.candidate_id),
      m_head_params(head.params),
      m_kernel_files(std::move(kernel_files)),
      m_target(std::move(target)) {}

namespace {

const ToolResult k_budget_spent = {"the run's evaluation budget is spent: not evaluated", true};

}  // namespace

ToolResult LabToolBackend::evaluate(const Workspace& workspace, Stage through, const std::string& params_text) {
  ParamValues params = m_head_params;
  if (std::optional<std::string> error = m_lab.apply_param_text(params_text, params))
    return {"params: " + *error, true};
  ++m_trials;
  if (through == Stage::profile) {
    const bool the_head = params == m_head_params && holds_the_head(workspace);
    const std::optional<CandidateEvaluator::Profile> profile =
        the_head ? m_lab.profile(m_head_id) : m_lab.trial_profile(workspace.root(), params);
    if (!profile) return k_budget_spent;
    return {"bound: " + profile->bound + "\n" + profile->summary + "\n" + profile->metrics.dump(1), false};
  }
  const std::optional<CandidateEvaluator::Result> result =
      m_lab.trial(workspace.root(), params, through, m_target.cycle, m_target.role, m_target.lineage);
  if (!result) return k_budget_spent;
  return {result->summary, !counts_as_pass(result->verdict)};
}

ToolResult LabToolBackend::submit(const Workspace& workspace, const std::string& summary,
                                  const std::string& params_text) {
  ParamValues params = m_head_params;
  if (std::optional<std::string> error = m_lab.apply_param_text(params_text, params))
    return {"params: " + *error, true};
  if (static_cast<int>(m_submissions.size()) >= m_target.allowance)
    return {"not recorded: this turn's " + std::to_string(m_target.allowance) + " candidate submission(s) are spent",
            false};
  // Only the kernel files become the candidate; the read-only context stays behind.
  std::error_code ignored;
  std::filesystem::remove_all(m_target.staging_dir, ignored);
  for (const std::string& file : m_kernel_files) {
    evoteam::create_directories((m_target.staging_dir / file).parent_path());
    write_file_atomic(m_target.staging_dir / file, read_file(workspace.root() / file));
  }
  LabRequest request{m_head_id, m_target.role, m_target.lineage, summary, params, m_target.staging_dir};
  m_submissions.push_back(m_lab.evaluate(request, m_target.cycle, m_target.screening));
  const LabOutcome& outcome = m_submissions.back();
  const int left = m_target.allowance - static_cast<int>(m_submissions.size());
  return {"recorded " + describe_record(outcome.record) +
              (outcome.reused ? " (identical to an earlier candidate)" : "") + "\n" + outcome.summary + "\n" +
              std::to_string(left) + " candidate submission(s) left this turn",
          false};
}

bool LabToolBackend::holds_the_head(const Workspace& workspace) const {
  const std::filesystem::path head = m_lab.sources_of(m_head_id);
  for (const std::string& file : m_kernel_files) {
    const std::filesystem::path mine = workspace.root() / file;
    if (!std::filesystem::is_regular_file(mine) || !std::filesystem::is_regular_file(head / file)) return false;
    if (read_file(mine) != read_file(head / file)) return false;
  }
  return !m_kernel_files.empty();
}

LabReview::LabReview(Lab& lab, KnowledgeBase& knowledge, std::string role)
    : m_lab(lab), m_knowledge(knowledge), m_role(std::move(role)) {}

ToolResult LabReview::rule(const std::string& candidate_id, bool accepted, const std::string& reason) {
  const RunHistory history = m_lab.snapshot();
  const EvaluationRecord* record = history.find(candidate_id);
  if (record == nullptr || record->state != RecordState::evaluated)
    return {"no evaluated candidate " + candidate_id + " in this run", true};
  if (!m_lab.rule(candidate_id, accepted, m_role, Ruling{RulingKind::review, reason}))
    return {candidate_id + " stays rejected: " + record->ruling, true};
  const KnowledgeEntry entry{
      (accepted ? "accepted " : "rejected ") + candidate_id, {{"candidate", candidate_id}, {"author", m_role}}, reason};
  if (accepted)
    m_knowledge.add_role_record(m_role, entry);
  else
    m_knowledge.add(KnowledgeKind::failed_attempt, entry);
  return {std::string(accepted ? "accepted " : "rejected ") + candidate_id +
              (accepted ? "" : ": it can no longer become a lineage's head or the best"),
          false};
}

std::string describe_record(const EvaluationRecord& record) {
  std::ostringstream out;
  out << record.candidate_id << " (" << record.verdict_text();
  if (record.speedup) out << ", " << *record.speedup << "x";
  if (record.roofline) out << ", " << *record.roofline * 100 << "% of roofline";
  if (record.profiled) out << ", " << record.profile_bound << "-bound";
  out << ")";
  return out.str();
}

}  // namespace evoteam
