#pragma once
// What a member's turn starts from, whatever kind of member acts in it (an LLM agent today, an external process
// next): the head of its lineage, a workspace holding the head's editable files and the task's files it may read,
// the values its role prompt is rendered with, and where its submissions go. Every member kind gets the same turn.
#include <cstddef>
#include <filesystem>
#include <map>
#include <string>

#include <evoteam/agent/workspace.hpp>
#include <evoteam/history/history.hpp>
#include <evoteam/team/team.hpp>

#include "team/lab_tool_backend.hpp"

namespace evoteam {

struct TurnSetup {
  const Task* task = nullptr;
  EvaluationRecord head;
  std::filesystem::path member_dir;  // cycles/<cycle>/agents/<role>: workspace, transcript, submitted files
  Workspace workspace;
  std::map<std::string, std::string> prompt_values;  // roles/README.md lists them
  SubmissionTarget submission;
};

// What the member kind adds to the turn: where the run is, how large its workspace may grow, how long a knowledge
// digest may be, and what it may spend besides submissions ("40 steps"; the prompt's budget line).
struct TurnSetupInputs {
  std::filesystem::path run_dir;
  std::string role;
  WorkspaceLimits workspace_limits;
  std::size_t digest_chars = 4000;
  std::string step_allowance;
};

// The candidate a member on `lineage` starts from: the run's best; on the failing lineage, the latest candidate
// that failed (turn_setup.cpp says which). Throws (EVOTEAM_CHECK) when the history holds no candidate.
EvaluationRecord head_of_lineage(const RunHistory& history, const std::string& lineage);

// What a member on the failing lineage is handed before anything else: the failing candidate its workspace holds,
// its verdict and failure signature, and the tail of its build log (the whole log is in its workspace as
// build.log). Says so when no candidate has failed.
std::string failing_candidate_handoff(const Lab& lab);

// Prepares the turn: picks the head, creates the workspace under the member's directory and fills the prompt
// values. Throws (EVOTEAM_CHECK) when the lab has no task or no candidate to start from.
TurnSetup prepare_turn(const TurnContext& context, const TurnSetupInputs& inputs);

}  // namespace evoteam
