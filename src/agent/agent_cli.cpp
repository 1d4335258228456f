// The coding-agent CLI table and the readers of their event streams.
#include <evoteam/agent/agent_cli.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <set>

#include <nlohmann/json.hpp>

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/text.hpp>

namespace evoteam {

namespace {

constexpr const char* k_server_name = "evoteam";

std::uint64_t count_of(const nlohmann::json& object, const char* field) {
  if (!object.is_object() || !object.contains(field) || !object[field].is_number()) return 0;
  const double value = object[field].get<double>();
  return value > 0 ? static_cast<std::uint64_t>(value) : 0;
}

// The part of `now` not already in `counted` (never negative).
Usage usage_beyond(const Usage& now, const Usage& counted) {
  auto minus = [](std::uint64_t a, std::uint64_t b) { return a > b ? a - b : 0; };
  return {minus(now.input, counted.input), minus(now.output, counted.output), minus(now.cache_read, counted.cache_read),
          minus(now.cache_write, counted.cache_write)};
}

std::optional<nlohmann::json> json_object_of(const std::string& line) {
  try {
    nlohmann::json value = nlohmann::json::parse(line);
    if (value.is_object()) return value;
  } catch (const nlohmann::json::parse_error&) {
  }
  return std::nullopt;
}

// The MCP configuration in the form Claude Code's --mcp-config (and many other CLIs) read.
std::filesystem::path write_mcp_config(const AgentCliInvocation& invocation) {
  const std::vector<std::string>& command = invocation.mcp_command;
  const nlohmann::json config = {{"mcpServers",
                                  {{k_server_name,
                                    {{"type", "stdio"},
                                     {"command", command.front()},
                                     {"args", std::vector<std::string>(command.begin() + 1, command.end())}}}}}};
  const std::filesystem::path path = invocation.config_dir / "mcp.json";
  write_file_atomic(path, config.dump(1) + "\n");
  return path;
}

// --- Claude Code: `claude -p --output-format stream-json` ------------------------------------------------------

std::vector<std::string> claude_argv(const AgentCliInvocation& invocation) {
  std::vector<std::string> allowed;
  for (const std::string& tool : invocation.evoteam_tools) allowed.push_back("mcp__evoteam__" + tool);
  for (const char* tool : {"Read", "Glob", "Grep"}) allowed.emplace_back(tool);
  if (invocation.may_edit)
    for (const char* tool : {"Edit", "Write"}) allowed.emplace_back(tool);
  std::vector<std::string> argv = {"claude",
                                   "-p",
                                   invocation.prompt,
                                   "--output-format",
                                   "stream-json",
                                   "--verbose",
                                   "--mcp-config",
                                   write_mcp_config(invocation).string(),
                                   "--strict-mcp-config",
                                   "--allowedTools",
                                   join(allowed, ","),
                                   "--disallowedTools",
                                   "Bash,WebFetch,WebSearch",
                                   "--permission-mode",
                                   "acceptEdits"};
  if (!invocation.model.empty()) argv.insert(argv.end(), {"--model", invocation.model});
  if (invocation.max_turns > 0) argv.insert(argv.end(), {"--max-turns", std::to_string(invocation.max_turns)});
  return argv;
}

Usage claude_usage(const nlohmann::json& usage) {
  return {count_of(usage, "input_tokens"), count_of(usage, "output_tokens"), count_of(usage, "cache_read_input_tokens"),
          count_of(usage, "cache_creation_input_tokens")};
}

// Each assistant message carries its usage (repeated on every content block of the message: counted once per
// message id); the result carries the turn's totals and cost, of which only what the messages did not say is new.
class ClaudeStream : public AgentCliStream {
 public:
  AgentCliEvent read(const std::string& line) override {
    AgentCliEvent event;
    std::optional<nlohmann::json> value = json_object_of(line);
    if (!value || !value->contains("type")) return event;
    event.parsed = true;
    const std::string type = value->value("type", "");
    if (type == "assistant" && value->contains("message") && (*value)["message"].is_object()) {
      const nlohmann::json& message = (*value)["message"];
      event.model = message.value("model", "");
      const std::string id = message.value("id", "");
      if (message.contains("usage") && (id.empty() || m_seen.insert(id).second)) {
        event.usage = claude_usage(message["usage"]);
        m_counted += event.usage;
      }
    } else if (type == "result") {
      event.final = true;
      if (value->contains("usage")) {
        const Usage total = claude_usage((*value)["usage"]);
        event.usage = usage_beyond(total, m_counted);
        m_counted += event.usage;
      }
      if (value->contains("total_cost_usd") && (*value)["total_cost_usd"].is_number())
        event.reported_cost_usd = (*value)["total_cost_usd"].get<double>();
      if (value->value("is_error", false) || value->value("subtype", "success") != "success") {
        const std::string words =
            (*value)["result"].is_string() ? (*value)["result"].get<std::string>() : value->value("subtype", "error");
        event.failure = words;
        event.auth_failure = looks_like_auth_failure(words);
      }
    } else if (type == "system") {
      event.model = value->value("model", "");
    }
    return event;
  }

 private:
  std::set<std::string> m_seen;
  Usage m_counted;
};

// --- Codex: `codex exec --json` ----------------------------------------------------------------------------------

std::string toml_string(const std::string& text) { return nlohmann::json(text).dump(); }  // JSON strings are TOML

std::vector<std::string> codex_argv(const AgentCliInvocation& invocation) {
  const std::vector<std::string>& command = invocation.mcp_command;
  std::string args = "[";
  for (std::size_t i = 1; i < command.size(); ++i) args += (i > 1 ? "," : "") + toml_string(command[i]);
  args += "]";
  std::vector<std::string> argv = {"codex",     "exec",
                                   "--json",    "--skip-git-repo-check",
                                   "--sandbox", "workspace-write",
                                   "--cd",      invocation.workspace.string()};
  if (!invocation.model.empty()) argv.insert(argv.end(), {"--model", invocation.model});
  const std::string server = std::string("mcp_servers.") + k_server_name;
  // Codex's workspace-write sandbox also lets it write /tmp and $TMPDIR unless told not to; and it cuts an MCP call
  // after 60 s by default, shorter than an evaluation may take.
  argv.insert(argv.end(), {"-c", server + ".command=" + toml_string(command[0]), "-c", server + ".args=" + args, "-c",
                           server + ".tool_timeout_sec=" + std::to_string(invocation.tool_timeout_s), "-c",
                           "sandbox_workspace_write.exclude_slash_tmp=true", "-c",
                           "sandbox_workspace_write.exclude_tmpdir_env_var=true", invocation.prompt});
  return argv;
}

// Codex reports usage once, on turn.completed; its input count includes the cached part.
class CodexStream : public AgentCliStream {
 public:
  AgentCliEvent read(const std::string& line) override {
    AgentCliEvent event;
    std::optional<nlohmann::json> value = json_object_of(line);
    if (!value || !value->contains("type")) return event;
    event.parsed = true;
    const std::string type = value->value("type", "");
    if (type == "turn.completed") {
      event.final = true;
      const nlohmann::json usage = value->value("usage", nlohmann::json::object());
      const std::uint64_t input = count_of(usage, "input_tokens"), cached = count_of(usage, "cached_input_tokens");
      event.usage = {input > cached ? input - cached : 0, count_of(usage, "output_tokens"), cached, 0};
    } else if (type == "turn.failed" || type == "error") {
      event.final = type == "turn.failed";
      const nlohmann::json error = value->value("error", nlohmann::json::object());
      const std::string words = error.is_object() ? error.value("message", "") : value->value("message", "");
      event.failure = words.empty() ? type : words;
      event.auth_failure = looks_like_auth_failure(words);
    }
    return event;
  }
};

// --- Any other CLI: a command template ------------------------------------------------------------------------

// Splits on blanks, with single or double quotes keeping blanks inside a word (no escapes, no shell).
std::vector<std::string> split_template(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (char c : text) {
    if (quote != 0) {
      if (c == quote)
        quote = 0;
      else
        word += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote != 0) throw InvalidInput("agent.member: unbalanced quote in the command template: " + text);
  if (in_word) words.push_back(word);
  return words;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

std::vector<std::string> template_argv(const std::string& member, const AgentCliInvocation& invocation) {
  std::vector<std::string> argv = split_template(member);
  const bool wants_config =
      std::any_of(argv.begin(), argv.end(), [](const std::string& w) { return w.find("{mcp_config}") != w.npos; });
  const std::string config = wants_config ? write_mcp_config(invocation).string() : "";
  std::string prompt_file;
  if (std::any_of(argv.begin(), argv.end(), [](const std::string& w) { return w.find("{prompt_file}") != w.npos; })) {
    prompt_file = (invocation.config_dir / "prompt.md").string();
    write_file_atomic(prompt_file, invocation.prompt);
  }
  for (std::string& word : argv) {
    word = replace_all(word, "{prompt_file}", prompt_file);
    word = replace_all(word, "{mcp_config}", config);
    word = replace_all(word, "{workspace}", invocation.workspace.string());
    word = replace_all(word, "{model}", invocation.model);
    word = replace_all(word, "{prompt}", invocation.prompt);
  }
  return argv;
}

// JSON lines that carry "usage" ({input_tokens, output_tokens}) and a "cost_usd" or "total_cost_usd" are counted as
// they come; anything else is text.
class CommandStream : public AgentCliStream {
 public:
  AgentCliEvent read(const std::string& line) override {
    AgentCliEvent event;
    std::optional<nlohmann::json> value = json_object_of(line);
    if (!value) return event;
    event.parsed = true;
    if (value->contains("usage")) event.usage = claude_usage((*value)["usage"]);
    for (const char* field : {"cost_usd", "total_cost_usd"})
      if (value->contains(field) && (*value)[field].is_number())
        event.reported_cost_usd = (*value)[field].get<double>();
    return event;
  }
};

}  // namespace

std::vector<std::string> AgentCli::argv(const AgentCliInvocation& invocation) const {
  EVOTEAM_CHECK(!invocation.mcp_command.empty(), "a CLI member's turn needs the MCP server's command");
  switch (kind) {
    case AgentCliKind::claude_code: return claude_argv(invocation);
    case AgentCliKind::codex: return codex_argv(invocation);
    case AgentCliKind::command: return template_argv(member, invocation);
  }
  throw_check_failure(__FILE__, __LINE__, "an agent CLI kind without a command line");
}

std::unique_ptr<AgentCliStream> AgentCli::stream() const {
  switch (kind) {
    case AgentCliKind::claude_code: return std::make_unique<ClaudeStream>();
    case AgentCliKind::codex: return std::make_unique<CodexStream>();
    case AgentCliKind::command: return std::make_unique<CommandStream>();
  }
  throw_check_failure(__FILE__, __LINE__, "an agent CLI kind without a stream reader");
}

AgentCli agent_cli_for(const std::string& member) {
  AgentCli cli;
  cli.member = member;
  if (member == "claude-code") {
    cli.kind = AgentCliKind::claude_code;
    cli.program = "claude";
    cli.key_variables = {"ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"};
    cli.credential_files = {".claude/.credentials.json"};
    cli.reports_cost = true;
    cli.headless_help = {"--help"};
    cli.headless_flag = "--output-format";
    return cli;
  }
  if (member == "codex") {
    cli.kind = AgentCliKind::codex;
    cli.program = "codex";
    cli.key_variables = {"CODEX_API_KEY", "OPENAI_API_KEY"};
    cli.credential_files = {".codex/auth.json"};
    cli.headless_help = {"exec", "--help"};
    cli.headless_flag = "--json";
    return cli;
  }
  if (member.empty() || member == k_builtin_loop_member)
    throw InvalidInput("agent.member: '" + member + "' is not a coding-agent CLI");
  const std::vector<std::string> words = split_template(member);
  if (words.empty()) throw InvalidInput("agent.member: the command template is empty");
  cli.program = words.front();
  cli.headless_help = {"--help"};
  return cli;
}

const std::string& AgentMemberSettings::member_for(const std::string& role) const {
  auto it = by_role.find(role);
  return it != by_role.end() ? it->second : member;
}

bool AgentMemberSettings::any_cli() const {
  if (is_agent_cli(member)) return true;
  return std::any_of(by_role.begin(), by_role.end(), [](const auto& entry) { return is_agent_cli(entry.second); });
}

bool is_agent_cli(const std::string& member) { return !member.empty() && member != k_builtin_loop_member; }

const std::vector<std::string>& named_agent_clis() {
  static const std::vector<std::string> names = {"claude-code", "codex"};
  return names;
}

std::vector<ToolProbe> probe_agent_clis(ProcessRunner& runner) {
  std::vector<ToolProbe> rows;
  for (const std::string& member : named_agent_clis()) {
    const AgentCli cli = agent_cli_for(member);
    ToolProbe row{"agent " + member, false, "", "", false};
    const std::optional<std::filesystem::path> program = find_program(cli.program);
    if (!program) {
      row.detail = "'" + cli.program + "' is not in PATH";
      row.fix = cli.kind == AgentCliKind::claude_code ? "npm install -g @anthropic-ai/claude-code"
                                                      : "npm install -g @openai/codex";
      rows.push_back(row);
      continue;
    }
    Command command;
    command.argv = {program->string(), cli.version_flag};
    command.timeout = std::chrono::seconds(30);
    const ProcessResult version = runner.run(command);
    command.argv = {program->string()};
    command.argv.insert(command.argv.end(), cli.headless_help.begin(), cli.headless_help.end());
    const ProcessResult help = runner.run(command);
    const bool headless = help.out.text.find(cli.headless_flag) != std::string::npos ||
                          help.err.text.find(cli.headless_flag) != std::string::npos;
    std::string first_line = version.out.text.substr(0, version.out.text.find('\n'));
    row.usable = version.ok() && headless;
    row.detail =
        (version.ok() ? first_line : "--version failed: " + version.describe()) + " at " + program->string() +
        (headless ? "; runs headless (" + cli.headless_flag + ")" : "; its help shows no " + cli.headless_flag);
    if (!row.usable) row.fix = "update " + cli.program + " to a version with " + cli.headless_flag;
    rows.push_back(row);
  }
  return rows;
}

bool looks_like_auth_failure(const std::string& text) {
  std::string lower = text;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* sign : {"401", "403", "unauthorized", "unauthorised", "invalid api key", "invalid x-api-key",
                           "api key", "not logged in", "/login", "authentication", "forbidden"})
    if (lower.find(sign) != std::string::npos) return true;
  return false;
}

}  // namespace evoteam
