#pragma once
// The LLM agents' evaluation tools (compile, run_tests, benchmark, profile), served by the lab on the workspace's
// files at the head's params. Trials are counted, not recorded as candidates, with one exception: profiling the
// head's own code profiles the head, so a candidate is marked profiled from the same fact whichever team asked.
#include <string>
#include <vector>

#include <evoteam/agent/tools.hpp>
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

}  // namespace evoteam
