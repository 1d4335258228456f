#pragma once
// evoteam's tools for a person's own agent session on an existing run (`evoteam mcp --run RUN`): the task's
// contract, the evaluation tools, the knowledge reads, and record_candidate/submit recording candidates under the
// run — through the run's lab, as a member's tools are. The session works in a directory of its own; the kernel
// files it lacks are filled from the run's best when it opens.
#include <filesystem>
#include <memory>

#include <evoteam/agent/tools.hpp>
#include <evoteam/agent/workspace.hpp>
#include <evoteam/mcp/mcp_server.hpp>
#include <evoteam/team/knowledge.hpp>
#include <evoteam/team/lab.hpp>

namespace evoteam {

struct RunToolsSettings {
  std::string scope;                  // "run R (task)": what the server says it serves
  std::filesystem::path workspace;    // where the session's kernel files are
  std::filesystem::path staging_dir;  // where a submitted kernel is copied for the lab (inside the run)
  int cycle = 1;                      // the cycle its candidates are recorded in
  ToolSettings tool_settings;
  WorkspaceLimits workspace_limits;
  int allowance = 1000;  // candidates the session may record
};

// Throws InvalidInput when the lab has no task or no candidate to start from.
std::unique_ptr<McpToolService> make_run_tools(Lab& lab, KnowledgeBase& knowledge, const RunToolsSettings& settings);

}  // namespace evoteam
