#pragma once
// The LLM agents' tools the lab serves. Evaluation tools (compile, run_tests, benchmark, profile) run on the
// workspace's files at the head's params: trials are counted, not recorded as candidates, with one exception —
// profiling the head's own code profiles the head, so a candidate is marked profiled from the same fact whichever
// team asked. The rule tool makes a reviewer's ruling binding, as the builtin Disciplinarian's is.
#include <string>
#include <vector>

#include <evoteam/agent/tools.hpp>
#include <evoteam/team/knowledge.hpp>
#include <evoteam/team/lab.hpp>

namespace evoteam {

class LabToolBackend : public EvaluationBackend {
 public:
  LabToolBackend(Lab& lab, std::string head_id, ParamValues params, std::vector<std::string> kernel_files);

  ToolResult evaluate(const Workspace& workspace, Stage through) override;
  int calls() const { return m_calls; }

 private:
  // True when every kernel file in the workspace is byte-identical to the head's.
  bool holds_the_head(const Workspace& workspace) const;

  Lab& m_lab;
  std::string m_head_id;
  ParamValues m_params;
  std::vector<std::string> m_kernel_files;
  int m_calls = 0;
};

// Rulings through the lab (journaled; a rejected candidate can no longer be a head or the best) and into the
// knowledge: a rejection as a failed attempt with its reason, an acceptance in the reviewer's role record.
class LabReview : public ReviewAccess {
 public:
  LabReview(Lab& lab, KnowledgeBase& knowledge, std::string role);
  ToolResult rule(const std::string& candidate_id, bool accepted, const std::string& reason) override;

 private:
  Lab& m_lab;
  KnowledgeBase& m_knowledge;
  std::string m_role;
};

}  // namespace evoteam
