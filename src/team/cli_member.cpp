// Coding-agent CLI members: each turn runs the role's CLI headless in the member's workspace, with evoteam's tools
// served to it over MCP by the daemon's own lab (lab_tool_service, mcp/turn_channel). What the CLI reports is
// charged to the run's meter as it comes; whatever it does wrong is a typed end of the turn (cli_turn), and the run
// goes on. A turn that never submitted has its workspace evaluated once as the member's candidate.
#include <evoteam/team/cli_team.hpp>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <sstream>

#include <spdlog/spdlog.h>

#include <sys/stat.h>
#include <unistd.h>

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/inventory.hpp>
#include <evoteam/core/text.hpp>
#include <evoteam/eval/sandbox.hpp>
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

// The system's temporary directory, as a CLI sees it ($TMPDIR, else /tmp).
std::filesystem::path system_temp_dir() {
  const char* tmp = std::getenv("TMPDIR");
  return std::filesystem::path(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp").lexically_normal();
}

bool is_under(const std::filesystem::path& path, const std::filesystem::path& dir) {
  const std::filesystem::path relative = path.lexically_normal().lexically_relative(dir);
  return !relative.empty() && *relative.begin() != "..";
}

// Where the private homes of a run under the temporary directory go: evoteam's state directory
// ($XDG_STATE_HOME, else ~/.local/state), or /var/tmp when that too is under the temporary directory.
std::filesystem::path homes_outside_temp() {
  const char* state = std::getenv("XDG_STATE_HOME");
  const char* home = std::getenv("HOME");
  for (const std::filesystem::path& base :
       {state != nullptr && *state != '\0' ? std::filesystem::path(state) : std::filesystem::path(),
        home != nullptr && *home != '\0' ? std::filesystem::path(home) / ".local" / "state" : std::filesystem::path()})
    if (!base.empty() && base.is_absolute() && !is_under(base, system_temp_dir()))
      return base / "evoteam" / "cli-homes";
  return std::filesystem::path("/var/tmp") / ("evoteam-cli-homes-" + std::to_string(::geteuid()));
}

// The CLI's own state (sessions, caches, its configuration) lives in a home of its own for the turn — never the
// user's, which the sandbox hides — into which the login it keeps under the real home and the user's configuration
// file for it (agent.cli.config) are copied. It lives beside the member's files in the run, or, for a run under the
// temporary directory, outside it (homes_outside_temp): Codex refuses to set up its sandbox helper under a temporary
// directory. Removed after the turn.
class PrivateHome {
 public:
  PrivateHome(const AgentCli& cli, const std::filesystem::path& member_dir,
              const std::map<std::string, std::filesystem::path>& config_files) {
    m_path = member_dir / "home";
    if (is_under(member_dir, system_temp_dir())) {
      const std::filesystem::path base = homes_outside_temp();
      evoteam::create_directories(base);
      ::chmod(base.c_str(), 0700);  // the homes hold the CLIs' logins
      std::string pattern = (base / "home-XXXXXX").string();
      if (::mkdtemp(pattern.data()) == nullptr)
        throw IoError("cannot create a home for the CLI under " + base.string() + ": " + errno_text(errno));
      m_path = pattern;
    }
    std::error_code ignored;
    std::filesystem::remove_all(m_path, ignored);  // a turn killed mid-way may have left one
    evoteam::create_directories(m_path);
    if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
      for (const std::string& file : cli.credential_files) copy_in(std::filesystem::path(home) / file, file);
    if (auto it = config_files.find(cli.member); it != config_files.end() && !cli.config_file.empty())
      copy_in(it->second, cli.config_file);
  }
  ~PrivateHome() {
    std::error_code ignored;
    std::filesystem::remove_all(m_path, ignored);
  }
  PrivateHome(const PrivateHome&) = delete;
  PrivateHome& operator=(const PrivateHome&) = delete;
  const std::filesystem::path& path() const { return m_path; }

 private:
  void copy_in(const std::filesystem::path& from, const std::string& to) {
    if (!std::filesystem::is_regular_file(from)) return;
    evoteam::create_directories((m_path / to).parent_path());
    std::error_code ignored;
    std::filesystem::copy_file(from, m_path / to, std::filesystem::copy_options::overwrite_existing, ignored);
  }

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

    PrivateHome home(m_cli, turn.member_dir, m_team.members.config_files);
    const std::filesystem::path config_dir = turn.member_dir / "cli";
    evoteam::create_directories(config_dir);
    std::map<std::string, std::string> passed = cli_passed_environment(m_cli, m_team.members, current_environment());
    // The endpoint: --base-url first, else the variable the user set; given as the CLI reads it.
    std::string base_url = m_team.members.base_url;
    if (auto it = passed.find(m_cli.base_url_variable); base_url.empty() && it != passed.end()) base_url = it->second;
    if (base_url.empty() && !m_cli.base_url_variable.empty())
      if (const char* value = std::getenv(m_cli.base_url_variable.c_str()); value != nullptr) base_url = value;
    if (!base_url.empty() && !m_cli.base_url_in_config && !m_cli.base_url_variable.empty())
      passed[m_cli.base_url_variable] = base_url;
    CliTurnInputs inputs{
        m_cli,
        {prompt_of(context, turn, service.tool_names()),
         turn.workspace.root(),
         config_dir,
         {m_team.evoteam_program.string(), "mcp", "--turn", (turn.member_dir / k_binding_file).string()},
         service.tool_names(),
         role_may_edit(m_role),
         m_team.members.model,
         m_team.members.max_turns,
         static_cast<int>(m_team.members.turn_timeout_s),
         m_cli.base_url_in_config ? base_url : "",
         dollars_left()},
        turn.member_dir,
        home.path(),
        std::move(passed),
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
    CliTurnResult result = run_cli_turn(inputs, m_team.runner ? *m_team.runner : system_runner());
    channel.close();  // calls after the turn now find it ended

    const bool submitted = service.submitted() || !backend.submissions().empty();
    const bool changed = !backend.holds_the_head(turn.workspace);
    std::string end_of_turn;
    if (!submitted && role_may_edit(m_role) && evaluates_leftovers(result.end) && changed) {
      backend.submit(turn.workspace, "the workspace at the end of the turn (the CLI did not submit)", "");
      end_of_turn = " (its workspace evaluated: no submit came)";
    }
    // A CLI that says it finished but reached none of evoteam's tools and left the kernel as it was did nothing: a
    // night of such turns must not read as work (its tools cancelled, its edits refused, its model silent).
    if (result.end == CliTurnEnd::finished && service.useful_calls() == 0 && !changed) {
      result.end = CliTurnEnd::did_nothing;
      result.detail = "no tool call of evoteam's succeeded (" + std::to_string(service.calls()) +
                      " made) and the kernel is unchanged; " + result.detail;
    }
    return outcome_of(result, backend, end_of_turn);
  }

 private:
  // The role's prompt as this member has it: its "# Tools" section names evoteam's tools it is served over MCP
  // (its own file tools edit the workspace; evoteam's file tools are not among them), and a host task's prompt has
  // no GPU architecture's section.
  std::string prompt_of(const TurnContext& context, const TurnSetup& turn,
                        const std::vector<std::string>& tool_names) const {
    const Task& task = *turn.task;
    const std::string tools = "evoteam's tools, from the MCP server \"evoteam\": " + join(tool_names, ", ") + ". Read" +
                              (role_may_edit(m_role) ? " and edit" : "") +
                              " the files of your working directory with your own file tools.";
    const std::string prompt =
        fit_prompt(render(m_role, turn.prompt_values),
                   task.target == Target::cuda ? task.archs : std::vector<std::string>{}, "Tools", tools);
    return prompt + "\n\nCycle " + std::to_string(context.cycle) + ". Your working directory holds " +
           join(turn.task->kernel_files, ", ") + " of " + turn.head.candidate_id +
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
    outcome.model_unreachable = result.end == CliTurnEnd::unreachable;
    const std::string version = result.version.empty() ? m_team.version_of(m_cli) : result.version;
    const std::string model = result.model.empty() ? m_team.members.model : result.model;
    outcome.agent =
        m_cli.name + (version.empty() ? "" : " " + version) + " / " + (model.empty() ? "its default model" : model);
    outcome.summary = m_cli.name + " " + to_string(result.end) + ": " + result.detail + end_of_turn;
    for (const LabOutcome& submitted : backend.submissions()) {
      outcome.usage.evaluations += submitted.reused ? 0 : 1;
      outcome.summary += " → " + describe_record(submitted.record);
    }
    outcome.handoff_note = outcome.summary;
    return outcome;
  }

  // What the run's dollar budget has left, for a CLI that caps its turn by it; nothing without a dollar budget.
  std::optional<double> dollars_left() const {
    const MeterLimits limits = m_team.meter->limits();
    if (limits.max_cost_usd <= 0) return std::nullopt;
    return std::max(0.0, limits.max_cost_usd - m_team.meter->totals().cost_usd);
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

std::optional<double> CliTeam::price(const std::string& model, const Usage& usage) const {
  if (!prices || model.empty()) return std::nullopt;
  if (prices->find(model) == nullptr) {
    // Said once a model: its tokens count against a token budget, its dollars only as the CLI reports them.
    std::lock_guard<std::mutex> lock(m_unpriced_mutex);
    if (m_unpriced_warned.insert(model).second)
      spdlog::warn("model {} is not in the price table ({}): its cost counts only as far as the CLI reports one", model,
                   "configs/models.json");
    return std::nullopt;
  }
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
  for (const auto& [member, path] : members.config_files)
    if (!path.is_absolute() || !std::filesystem::is_regular_file(path))
      throw InvalidInput("agent.cli.config." + member + ": '" + path.string() +
                         "' must be an absolute path to a file (it is copied into the CLI's private home)");
}

std::string CliTeam::version_of(const AgentCli& cli) {
  std::lock_guard<std::mutex> lock(m_versions_mutex);
  if (auto it = m_versions.find(cli.program); it != m_versions.end()) return it->second;
  std::string version;
  if (std::optional<std::filesystem::path> program = find_program(cli.program);
      program && cli.kind != AgentCliKind::command) {
    Command command;
    command.argv = {program->string(), cli.version_flag};
    command.timeout = std::chrono::seconds(30);
    const ProcessResult result = (runner != nullptr ? *runner : system_runner()).run(command);
    // "codex-cli 0.147.0", "2.1.327 (Claude Code)": the first word that starts with a digit.
    std::istringstream words(result.ok() ? result.out.text.substr(0, result.out.text.find('\n')) : "");
    for (std::string word; words >> word;)
      if (std::isdigit(static_cast<unsigned char>(word.front())) != 0) {
        version = word;
        break;
      }
  }
  m_versions[cli.program] = version;
  return version;
}

bool cli_members_sandboxed(const AgentMemberSettings& members, ProcessRunner& runner) {
  if (members.sandbox == SandboxMode::none) return false;
  std::string why;
  if (eval::probe_bwrap(runner, &why)) return true;
  // An agent that can read any file and write anywhere is not started by default: the user says so in words.
  throw InvalidInput("agent.cli.sandbox is " + std::string(members.sandbox == SandboxMode::bwrap ? "bwrap" : "auto") +
                     ", but bubblewrap does not work here (" + why +
                     "): CLI members are not started without a sandbox. Install bubblewrap (apt-get install "
                     "bubblewrap) and allow unprivileged user namespaces, or run them unconfined with --set "
                     "agent.cli.sandbox=none");
}

}  // namespace evoteam
