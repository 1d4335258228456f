#pragma once
// What a run's coding-agent CLI members share: which CLI acts for which role and how it runs, the prices that charge
// a CLI reporting no cost, the meter every member charges, the role files, and the evoteam program each CLI starts as
// its MCP server for the turn (src/team/cli_member.cpp).
#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include <evoteam/agent/agent_cli.hpp>
#include <evoteam/agent/tools.hpp>
#include <evoteam/agent/workspace.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/llm/llm.hpp>
#include <evoteam/llm/meter.hpp>
#include <evoteam/team/role.hpp>
#include <evoteam/team/team.hpp>

namespace evoteam {

struct CliTeam {
  std::filesystem::path run_dir;
  std::string run_id;
  AgentMemberSettings members;
  std::map<std::string, RoleDefinition> roles;
  std::unique_ptr<PriceTable> prices;
  Meter* meter = nullptr;
  ToolSettings tool_settings;
  WorkspaceLimits workspace_limits;
  std::size_t digest_chars = 4000;
  std::filesystem::path evoteam_program;  // the MCP server the CLIs start: `evoteam mcp --turn BINDING`
  bool sandboxed = false;                 // bubblewrap, resolved once for the run from agent.cli.sandbox
  ProcessRunner* runner = nullptr;        // null: the system's

  bool serves(const std::string& role) const { return is_agent_cli(members.member_for(role)); }
  std::unique_ptr<TeamMember> make_member(const RoleAssignment& assignment);
  // The cost of a CLI's reported usage at the configured (or reported) model; nothing when the table does not price
  // it (said once per model).
  std::optional<double> price(const std::string& model, const Usage& usage) const;
  // The CLI's version as `--version` prints it (its first line), asked once a run; for a CLI whose stream does not
  // name it.
  std::string version_of(const AgentCli& cli);

 private:
  std::mutex m_versions_mutex;
  std::map<std::string, std::string> m_versions;  // by program
  mutable std::mutex m_unpriced_mutex;
  mutable std::set<std::string> m_unpriced_warned;
};

// Before a run exists: every CLI the settings name is installed (InvalidInput naming the CLI and the PATH looked
// in, when one is not), and a dollar budget can be held — a CLI that reports no cost needs agent.cli.model in
// the price table.
void check_cli_members(const AgentMemberSettings& members, const PriceTable& prices, double budget_usd);

// Whether the CLI members run in bubblewrap: agent.cli.sandbox none says no; auto and bwrap need it
// to work here, and refuse (InvalidInput, exit 3, naming the reason and the fix) rather than run unconfined.
bool cli_members_sandboxed(const AgentMemberSettings& members, ProcessRunner& runner);

}  // namespace evoteam
