#pragma once
// What LLM-backed team members share within a run: the provider, the process-wide meter, prices, role files.
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include <evoteam/agent/agent.hpp>
#include <evoteam/agent/tools.hpp>
#include <evoteam/agent/workspace.hpp>
#include <evoteam/llm/llm.hpp>
#include <evoteam/team/role.hpp>
#include <evoteam/team/team.hpp>

namespace evoteam {

struct LlmTeam {
  std::filesystem::path run_dir;
  std::string model;
  // The run model's context window as the endpoint reports it (or as configured); 0: the price table's.
  std::uint64_t context_window = 0;
  std::unique_ptr<PriceTable> prices;
  std::unique_ptr<LlmProvider> provider;
  Meter* meter = nullptr;
  std::map<std::string, RoleDefinition> roles;
  AgentSettings agent_settings;  // for any role: settings_for adds the role, its model and the context window
  ToolSettings tool_settings;
  WorkspaceLimits workspace_limits;
  std::size_t digest_chars = 4000;

  AgentSettings settings_for(const RoleDefinition& role) const;
  std::unique_ptr<TeamMember> make_member(const RoleAssignment& assignment);
};

// The agents' read_knowledge/record_knowledge over the run's knowledge base; notes carry `author` and, when given,
// the `candidate` the agent works from (the base adds task, target and run), and a read without a topic gives
// the digest cut to `digest_chars`.
std::unique_ptr<KnowledgeAccess> make_knowledge_access(KnowledgeBase& knowledge, std::string author,
                                                       std::size_t digest_chars, std::string candidate = "");

}  // namespace evoteam
