#pragma once
// The coding-agent CLIs a team member can be, as one table: how each runs headless with evoteam's tools (its
// command line, the MCP configuration it reads, the one key it needs) and how its event stream reads (the usage and
// cost it reports, its last event, its failures). Claude Code and Codex are rows; any other CLI is a command
// template whose output is read as lines, with usage taken from JSON lines that carry it.
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <evoteam/core/inventory.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/eval/eval_settings.hpp>
#include <evoteam/llm/llm.hpp>

#include <nlohmann/json.hpp>

namespace evoteam {

class Config;

enum class AgentCliKind { claude_code, codex, command };

// agent.member's value for today's loop over the run's provider (or the builtin roles without one).
inline constexpr const char* k_builtin_loop_member = "builtin-loop";

// What one turn hands the CLI.
struct AgentCliInvocation {
  std::string prompt;                      // the role's prompt and the turn's instructions, whole
  std::filesystem::path workspace;         // its working directory, the only one it may write
  std::filesystem::path config_dir;        // where the CLI's MCP configuration file is written
  std::vector<std::string> mcp_command;    // the MCP server's argv: evoteam mcp --turn BINDING
  std::vector<std::string> evoteam_tools;  // the MCP tools the turn serves
  bool may_edit = true;                    // the role edits the kernel (file tools besides reading)
  std::string model;                       // empty: the CLI's default
  int max_turns = 0;                       // 0: the CLI's default
  int tool_timeout_s = 1800;               // the longest one of evoteam's tool calls may take
  std::string base_url;                    // the model's endpoint (--base-url), for a CLI that takes it as a flag
  std::optional<double> max_budget_usd;    // what the dollar budget has left, for a CLI that can cap a turn by it
};

// What one line of the CLI's output means to the daemon.
struct AgentCliEvent {
  bool parsed = false;                      // a JSON event; false for any other line (kept in the transcript as text)
  Usage usage;                              // tokens this event reports that earlier events did not
  std::optional<double> reported_cost_usd;  // the CLI's own cost figure for them, when it reports one
  bool final = false;                       // the CLI's last event of the turn
  std::optional<std::string> failure;       // the CLI reports that the turn failed, in its words
  bool auth_failure = false;                // ... because of a missing or refused key or login
  bool unreachable = false;                 // ... because it could not reach its model at all
  std::optional<std::string> notice;        // an error the CLI got over (a reconnect): said, not a failure
  std::string model;                        // the model the event names, when it names one
  std::string version;                      // the CLI's version, when the event names it
};

// Reads one turn's stream (it remembers what was already counted: Claude Code repeats a message's usage).
class AgentCliStream {
 public:
  virtual ~AgentCliStream() = default;
  virtual AgentCliEvent read(const std::string& line) = 0;
};

struct AgentCli {
  AgentCliKind kind = AgentCliKind::command;
  std::string member;                      // as configured: claude-code, codex or the template
  std::string name;                        // as shown in run files: the member, or "template:<program>"
  std::string program;                     // looked up in PATH
  std::vector<std::string> key_variables;  // the only secrets it gets, when set
  // A key the user keeps under another name, given to the CLI under the name it reads (when that one is not set).
  std::map<std::string, std::string> key_aliases;
  // Its documented settings of where and how it reaches its model — a gateway's URL and token, a cloud provider's
  // switches, proxies and certificates — passed on from the daemon's environment when set (docs/agents.md).
  std::vector<std::string> gateway_variables;
  std::map<std::string, std::string> fixed_variables;  // set for every turn: how evoteam runs it headless
  // The variable of its endpoint: --base-url (llm.base_url) is given to it there, or, when the CLI reads no such
  // variable (base_url_in_config), the variable's value and --base-url become its configuration's endpoint.
  std::string base_url_variable;
  bool base_url_in_config = false;
  std::string home_variable;                  // the variable naming its state directory, set to the private home's
  std::string config_file;                    // under its home: the configuration agent.cli.config carries in
  std::vector<std::string> credential_files;  // under $HOME: a login the CLI keeps (copied into the turn's home)
  std::vector<std::string> tested_versions;   // the versions the test suite runs for real; doctor warns outside
  bool reports_cost = false;
  std::string version_flag = "--version";
  std::vector<std::string> headless_help;  // argv after the program whose output must show the headless flag
  std::string headless_flag;               // e.g. --output-format

  // The command line of a turn; writes the MCP configuration file into invocation.config_dir when the CLI takes
  // one as a file.
  std::vector<std::string> argv(const AgentCliInvocation& invocation) const;
  std::unique_ptr<AgentCliStream> stream() const;
};

// `member` is claude-code, codex or a command template (a program and its arguments with {prompt},
// {prompt_file}, {mcp_config}, {workspace} and {model} placeholders; no shell). Throws InvalidInput for
// builtin-loop or an empty template.
AgentCli agent_cli_for(const std::string& member);
bool is_agent_cli(const std::string& member);  // anything but builtin-loop

// The named CLIs (claude-code, codex), for doctor.
const std::vector<std::string>& named_agent_clis();
// doctor's rows: each named CLI found in PATH or not, its version, and whether its help shows the headless flag
// evoteam runs it with.
std::vector<ToolProbe> probe_agent_clis(ProcessRunner& runner);

// Who acts for each role, and how CLI members run (agent.member, agent.members, agent.cli).
struct AgentMemberSettings {
  std::string member = k_builtin_loop_member;
  std::map<std::string, std::string> by_role;  // roles set apart from `member`
  std::string model;                           // agent.cli.model
  int max_turns = 0;
  double turn_timeout_s = 1800;
  SandboxMode sandbox = SandboxMode::automatic;
  std::vector<std::filesystem::path> readable;  // agent.cli.readable: shown read-only in the sandbox
  // agent.cli.env: more variables for the CLI, each a NAME (passed from the daemon's environment when set) or
  // NAME=VALUE. Those whose names say they are secrets are redacted and never written to run files.
  std::vector<std::string> env;
  // agent.cli.config: per CLI (claude-code, codex), a configuration file of the user's copied into the private home
  // (Claude Code's settings.json, Codex's config.toml with its provider table).
  std::map<std::string, std::filesystem::path> config_files;
  std::string base_url;  // llm.base_url (--base-url): the CLI members' model endpoint too, when set

  const std::string& member_for(const std::string& role) const;
  bool any_cli() const;  // some role is a coding-agent CLI
};
AgentMemberSettings agent_member_settings_from_config(const Config& config);

// Whether the words of a failure say the key or login was refused.
bool looks_like_auth_failure(const std::string& text);
// Whether they say the model could not be reached at all (no connection, no route, no name).
bool looks_like_unreachable(const std::string& text);

// A variable's name that says its value is a secret (a key, token, password, credential, or a proxy URL, which may
// carry a password).
bool is_secret_variable_name(const std::string& name);

// The variables a turn of `cli` gets besides evoteam's own (HOME, the key): the CLI's gateway settings present in
// `daemon`, then agent.cli.env's entries in order. Registers the secret ones for redaction.
std::map<std::string, std::string> cli_passed_environment(const AgentCli& cli, const AgentMemberSettings& settings,
                                                          const std::map<std::string, std::string>& daemon);

// agent.cli.env as written into run files: a secret's NAME=VALUE is kept as its NAME alone.
nlohmann::json recorded_cli_env(const nlohmann::json& entries);

}  // namespace evoteam
