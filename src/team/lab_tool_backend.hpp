#pragma once
// The LLM agents' tools the lab serves. Evaluation tools (compile, run_tests, benchmark, profile) run on the
// workspace's files at the head's params or the changes the model asked for: trials are counted, not recorded as
// candidates, with one exception — profiling the head's own code at its params profiles the head, so a candidate
// is marked profiled from the same fact whichever team asked. record_candidate and submit record the workspace's
// kernel as a candidate, as many times in a turn as the turn's allowance. The rule tool makes a reviewer's ruling
// binding, as the builtin Disciplinarian's is.
#include <filesystem>
#include <string>
#include <vector>

#include <evoteam/agent/tools.hpp>
#include <evoteam/team/knowledge.hpp>
#include <evoteam/team/lab.hpp>

namespace evoteam {

// Whose candidates a member's submissions become, and how many it may record in its turn.
struct SubmissionTarget {
  std::string role;
  std::string lineage = "best";
  int cycle = 0;
  Lab::Screening screening = Lab::Screening::off;
  int allowance = 1;
  std::filesystem::path staging_dir;  // the workspace's kernel files are copied here for the lab
};

class LabToolBackend : public EvaluationBackend {
 public:
  LabToolBackend(Lab& lab, const EvaluationRecord& head, std::vector<std::string> kernel_files,
                 SubmissionTarget target);

  ToolResult evaluate(const Workspace& workspace, Stage through, const std::string& params) override;
  ToolResult submit(const Workspace& workspace, const std::string& summary, const std::string& params) override;

  int trials() const { return m_trials; }
  // The candidates this turn recorded, in order (reused ones included: they cost nothing).
  const std::vector<LabOutcome>& submissions() const { return m_submissions; }
  // True when every kernel file in the workspace is byte-identical to the head's.
  bool holds_the_head(const Workspace& workspace) const;

 private:
  Lab& m_lab;
  std::string m_head_id;
  ParamValues m_head_params;
  std::vector<std::string> m_kernel_files;
  SubmissionTarget m_target;
  int m_trials = 0;
  std::vector<LabOutcome> m_submissions;
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

// "c0007 (PASS, 1.8x, 42% of roofline)": a recorded candidate in one phrase, for the model and the journal.
std::string describe_record(const EvaluationRecord& record);

}  // namespace evoteam
