#include "team/lab_tool_backend.hpp"

#include <evoteam/agent/workspace.hpp>
#include <evoteam/core/fs.hpp>

namespace evoteam {

LabToolBackend::LabToolBackend(Lab& lab, std::string head_id, ParamValues params, std::vector<std::string> kernel_files)
    : m_lab(lab), m_head_id(std::move(head_id)), m_params(std::move(params)), m_kernel_files(std::move(kernel_files)) {}

namespace {

const ToolResult k_budget_spent = {"the run's evaluation budget is spent: not evaluated", true};

}  // namespace

ToolResult LabToolBackend::evaluate(const Workspace& workspace, Stage through) {
  ++m_calls;
  if (through == Stage::profile) {
    const std::optional<CandidateEvaluator::Profile> profile =
        holds_the_head(workspace) ? m_lab.profile(m_head_id) : m_lab.trial_profile(workspace.root(), m_params);
    if (!profile) return k_budget_spent;
    return {"bound: " + profile->bound + "\n" + profile->summary + "\n" + profile->metrics.dump(1), false};
  }
  const std::optional<CandidateEvaluator::Result> result = m_lab.trial(workspace.root(), m_params, through);
  if (!result) return k_budget_spent;
  return {result->summary, !counts_as_pass(result->verdict)};
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
  if (!m_lab.rule(candidate_id, accepted, m_role, reason))
    return {candidate_id + " stays rejected: " + record->ruling, true};
  const KnowledgeEntry entry{(accepted ? "accepted " : "rejected ") + candidate_id,
                             {{"candidate", candidate_id}, {"author", m_role}}, reason};
  if (accepted)
    m_knowledge.add_role_record(m_role, entry);
  else
    m_knowledge.add(KnowledgeKind::failed_attempt, entry);
  return {std::string(accepted ? "accepted " : "rejected ") + candidate_id +
              (accepted ? "" : ": it can no longer become a lineage's head or the best"),
          false};
}

}  // namespace evoteam
