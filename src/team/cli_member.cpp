// Coding-agent CLI members: each turn runs the role's CLI headless in the member's workspace, with evoteam's tools
// served to it over MCP by the daemon's own lab (lab_tool_service, mcp/turn_channel). What the CLI reports is
// charged to the run's meter as it comes; whatever it does wrong is a typed end of the turn (cli_turn), and the run
// goes on. A turn that never submitted has its workspace evaluated once as the member's candidate.
#include <evoteam/team/cli_team.hpp>

#include <cstdlib>

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/inventory.hpp>
#include <evoteam/core/text.hpp>
#include <evoteam/mcp/turn_channel.hpp>
#include <evoteam/team/llm_team.hpp>

#include "team/cli_turn.hpp"
#include "team/lab_tool_backend.hpp"
#include "team/lab_tool_service.hpp"
#include "team/turn_setup.hpp"

namespace evoteam {

namespace {

constexpr const char* k_binding_file = "mcp_turn.json";

bool role_may_edit(const RoleDefinition& role) {
  for (const std::string& tool : role.tools)
    if (tool == "write_file" || tool == "edit_file") return true;
  return false;
}

// The CLI's own state (sessions, caches) lives in a home of its own for the turn, outside the run directory; the
// login it keeps under the real home is copied in so that a CLI logged in without a key still runs. Removed after.
class PrivateHome {
 public:
  explicit PrivateHome(const AgentCli& cli) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/evoteam-home-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) throw IoError("cannot create a home for the CLI: " + errno_text(errno));
    m_path = pattern;
    const char* home = std::getenv("HOME");
    if (home == nullptr || *home == '\0') return;
    for (const std::string& file : cli.credential_files) {
      const std::filesystem::path from = std::filesystem::path(home) / file;
      if (!std::filesystem::is_regular_file(from)) continue;
      evoteam::create_directories((m_path / file).parent_path());
      std::error_code ignored;
      std::filesystem::copy_file(from, m_path / file, ignored);
    }
  }
  ~PrivateHome() {
    std::error_code ignored;
    std::filesystem::remove_all(m_path, ignored);
  }
  PrivateHome(const PrivateHome&) = delete;
  PrivateHome& operator=(const PrivateHome&) = delete;
  const std::filesystem::path& path() const { return m_path; }

 private:
  std::filesystem::path m_path;
};

class CliMember : public TeamMember {
 public:
  CliMember(CliTeam& team, RoleDefinition role, AgentCli cli)
      : m_team(team), m_role(std::move(role)), m_cli(std::move(cli)) {}

  TurnOutcome act(TurnContext& context) override {
    TurnSetup turn = prepare_turn(context, {m_team.run_dir, m_role.name, m_team.workspace_limits, m_team.digest_chars,
                                            "the steps your CLI allows"});
    Lab& lab = *context.lab;
    const Task& task = *turn.task;
    LabToolBackend backend(lab, turn.head, task.kernel_files, turn.submission);
    std::unique_ptr<KnowledgeAccess> knowledge =
        make_knowledge_access(*context.knowledge, m_role.name, m_team.digest_chars, turn.head.candidate_id);
    LabReview review(lab, *context.knowledge, m_role.name);
    Toolbox tools(turn.workspace, &backend, knowledge.get(), m_role.tools, m_team.tool_settings, &review);
    tools.set_budget_check([&lab] { return lab.budget_spent(); });

    TurnBinding binding{m_team.run_id, context.cycle, m_role.name, {}, make_turn_token(), {}, {}};
    ToolboxMcpService service(tools, describe_task_contract(task), tool_server_instructions(binding.scope()));
    TurnChannel channel(service, binding.token);
    binding.socket = channel.socket_path();
    binding.instructions = service.instructions();
    binding.tools = service.tools();
    write_turn_binding(turn.member_dir / k_binding_file, binding);

    PrivateHome home(m_cli);
    const std::filesystem::path config_dir = turn.member_dir / "cli";
    evoteam::create_directories(config_dir);
    CliTurnInputs inputs{
        m_cli,
        {prompt_of(context, turn),
         turn.workspace.root(),
         config_dir,
         {m_team.evoteam_program.string(), "mcp", "--turn", (turn.member_dir / k_binding_file).string()},
         service.tool_names(),
         role_may_edit(m_role),
         m_team.members.model,
         m_team.members.max_turns,
         static_cast<int>(m_team.members.turn_timeout_s)},
        turn.member_dir,
        home.path(),
        channel.directory(),
        m_team.sandboxed,
        m_team.members.readable,
        m_team.members.turn_timeout_s,
        m_team.meter,
        [this](const std::string& model, const Usage& usage) { return m_team.price(model, usage); },
        [&lab, &service]() -> std::optional<std::string> {
          if (std::optional<std::string> spent = service.budget_spent()) return spent;
          return lab.budget_spent();
        }};
    const CliTurnResult result = run_cli_turn(inputs, m_team.runner ? *m_team.runner : system_runner());
    channel.close();  // calls after the turn now find it ended

    const bool submitted = service.submitted() || !backend.submissions().empty();
    std::string end_of_turn;
    if (!submitted && role_may_edit(m_role) && evaluates_leftovers(result.end) &&
        !backend.holds_the_head(turn.workspace)) {
      backend.submit(turn.workspace, "the workspace at the end of the turn (the CLI did not submit)", "");
      end_of_turn = " (its workspace evaluated: no submit came)";
    }
    return outcome_of(result, backend, end_of_turn);
  }

 private:
  std::string prompt_of(const TurnContext& context, const TurnSetup& turn) const {
    return render(m_role, turn.prompt_values) + "\n\nCycle " + std::to_string(context.cycle) +
           ". Your working directory holds " + join(turn.task->kernel_files, ", ") + " of " + turn.head.candidate_id +
           "; edit only there. evoteam's tools (the MCP server \"evoteam\") judge and record your kernel: "
           "describe_task gives the contract; compile, run_tests, benchmark and profile measure it; call submit with "
           "a one-paragraph summary when done (record_candidate records a version and lets you go on).";
  }

  // A turn cut short by a spent budget or an interrupt leaves its workspace alone: the run is ending.
  static bool evaluates_leftovers(CliTurnEnd end) {
    return end != CliTurnEnd::over_budget && end != CliTurnEnd::budget_spent && end != CliTurnEnd::interrupted &&
           end != CliTurnEnd::not_started;
  }

  TurnOutcome outcome_of(const CliTurnResult& result, const LabToolBackend& backend,
                         const std::string& end_of_turn) const {
    TurnOutcome outcome;
    outcome.usage.tokens = static_cast<long long>(result.usage.total());
    outcome.usage.cost_usd = result.cost_usd;
    outcome.usage.evaluations = backend.trials();
    // A refused key or login refuses every later turn too: as for an LLM member, the run stops when all are.
    outcome.provider_refused = result.end == CliTurnEnd::auth_failed;
    outcome.summary = m_cli.member + " " + to_string(result.end) + ": " + result.detail + end_of_turn;
    for (const LabOutcome& submitted : backend.submissions()) {
      outcome.usage.evaluations += submitted.reused ? 0 : 1;
      outcome.summary += " → " + describe_record(submitted.record);
    }
    outcome.handoff_note = outcome.summary;
    return outcome;
  }

  CliTeam& m_team;
  RoleDefinition m_role;
  AgentCli m_cli;
};

}  // namespace

std::unique_ptr<TeamMember> CliTeam::make_member(const RoleAssignment& assignment) {
  auto it = roles.find(assignment.name);
  if (it == roles.end())
    throw InvalidInput("no role file for '" + assignment.name + "' in " + default_roles_dir().string());
  return std::make_unique<CliMember>(*this, it->second, agent_cli_for(members.member_for(assignment.name)));
}

double CliTeam::price(const std::string& model, const Usage& usage) const {
  if (!prices || model.empty() || prices->find(model) == nullptr) return 0;
  return prices->cost(model, usage);
}

void check_cli_members(const AgentMemberSettings& members, const PriceTable& prices, double budget_usd) {
  std::vector<std::string> named = {members.member};
  for (const auto& [role, member] : members.by_role) named.push_back(member);
  for (const std::string& member : named) {
    if (!is_agent_cli(member)) continue;
    const AgentCli cli = agent_cli_for(member);
    if (!find_program(cli.program)) {
      const char* path = std::getenv("PATH");
      throw InvalidInput("agent.member: " + member + " needs the program '" + cli.program +
                         "', which is not installed (looked in PATH=" + (path != nullptr ? path : "") + ")");
    }
    if (budget_usd > 0 && !cli.reports_cost && (members.model.empty() || prices.find(members.model) == nullptr))
      throw InvalidInput("agent.member: " + member +
                         " reports no cost, so a dollar budget needs agent.cli.model set to a model of the price "
                         "table (it is '" +
                         members.model + "')");
  }
  if (!members.any_cli()) return;
  for (const std::filesystem::path& path : members.readable)
    if (!path.is_absolute() || !std::filesystem::exists(path))
      throw InvalidInput("agent.cli.readable: '" + path.string() +
                         "' must be an absolute path that exists (the sandbox shows it to the CLI read-only)");
}

}  // namespace evoteam
