// The coding-agent CLI table: each one's command line, environment and doctor row (agent_cli_stream.cpp reads
// their event streams).
#include <evoteam/agent/agent_cli.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <set>

#include <nlohmann/json.hpp>

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/log.hpp>
#include <evoteam/core/text.hpp>

namespace evoteam {

namespace {

constexpr const char* k_server_name = "evoteam";

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
  // The raw stream's events too: each model call's usage as it starts and grows, so a turn cut short has been
  // charged what its model served.
  argv.emplace_back("--include-partial-messages");
  if (!invocation.model.empty()) argv.insert(argv.end(), {"--model", invocation.model});
  if (invocation.max_turns > 0) argv.insert(argv.end(), {"--max-turns", std::to_string(invocation.max_turns)});
  // What the run's dollar budget has left: Claude Code stops the turn once it spent that, so a turn overshoots the
  // budget by at most the model call it was in.
  if (invocation.max_budget_usd)
    argv.insert(argv.end(), {"--max-budget-usd", fixed(std::max(*invocation.max_budget_usd, 0.0), 6)});
  return argv;
}

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
  // Codex's workspace-write sandbox also lets it write /tmp and $TMPDIR unless told not to; it cuts an MCP call
  // after 60 s by default, shorter than an evaluation may take; and headless, it cancels every call of a server
  // whose tools are not approved beforehand (nobody is there to approve them).
  argv.insert(argv.end(), {"-c", server + ".command=" + toml_string(command[0]), "-c", server + ".args=" + args, "-c",
                           server + ".tool_timeout_sec=" + std::to_string(invocation.tool_timeout_s), "-c",
                           server + ".default_tools_approval_mode=\"approve\"", "-c",
                           "sandbox_workspace_write.exclude_slash_tmp=true", "-c",
                           "sandbox_workspace_write.exclude_tmpdir_env_var=true"});
  // Codex reads its endpoint from its configuration only (no variable): --base-url becomes a provider of its own,
  // spoken to over HTTP (Codex would first try WebSockets, which an OpenAI-compatible server rarely serves) with the
  // key Codex reads.
  if (!invocation.base_url.empty()) {
    const std::string provider = "model_providers.evoteam";
    argv.insert(argv.end(), {"-c", "model_provider=\"evoteam\"", "-c", provider + ".name=\"evoteam\"", "-c",
                             provider + ".base_url=" + toml_string(invocation.base_url), "-c",
                             provider + ".env_key=\"CODEX_API_KEY\"", "-c", provider + ".wire_api=\"responses\"", "-c",
                             provider + ".supports_websockets=false"});
  }
  argv.push_back(invocation.prompt);
  return argv;
}

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

AgentCli agent_cli_for(const std::string& member) {
  AgentCli cli;
  cli.member = member;
  cli.name = member;
  if (member == "claude-code") {
    cli.kind = AgentCliKind::claude_code;
    cli.program = "claude";
    cli.key_variables = {"ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"};
    cli.gateway_variables = {"ANTHROPIC_BASE_URL",
                             "ANTHROPIC_AUTH_TOKEN",
                             "ANTHROPIC_CUSTOM_HEADERS",
                             "ANTHROPIC_MODEL",
                             "ANTHROPIC_SMALL_FAST_MODEL",
                             "ANTHROPIC_DEFAULT_OPUS_MODEL",
                             "ANTHROPIC_DEFAULT_SONNET_MODEL",
                             "ANTHROPIC_DEFAULT_HAIKU_MODEL",
                             "CLAUDE_CODE_USE_BEDROCK",
                             "CLAUDE_CODE_USE_VERTEX",
                             "CLAUDE_CODE_SKIP_BEDROCK_AUTH",
                             "CLAUDE_CODE_SKIP_VERTEX_AUTH",
                             "ANTHROPIC_BEDROCK_BASE_URL",
                             "ANTHROPIC_VERTEX_BASE_URL",
                             "ANTHROPIC_VERTEX_PROJECT_ID",
                             "CLOUD_ML_REGION",
                             "AWS_REGION",
                             "AWS_PROFILE",
                             "AWS_ACCESS_KEY_ID",
                             "AWS_SECRET_ACCESS_KEY",
                             "AWS_SESSION_TOKEN",
                             "AWS_BEARER_TOKEN_BEDROCK",
                             "GOOGLE_APPLICATION_CREDENTIALS",
                             "API_TIMEOUT_MS",
                             "CLAUDE_CODE_MAX_RETRIES"};
    cli.base_url_variable = "ANTHROPIC_BASE_URL";
    // MCP tools stay listed to the model rather than deferred behind a tool search it must think to use.
    cli.fixed_variables = {{"ENABLE_TOOL_SEARCH", "false"}, {"DISABLE_AUTOUPDATER", "1"}};
    cli.config_file = ".claude/settings.json";
    cli.credential_files = {".claude/.credentials.json"};
    cli.tested_versions = {"2.1.327"};
    cli.reports_cost = true;
    cli.headless_help = {"--help"};
    cli.headless_flag = "--output-format";
  } else if (member == "codex") {
    cli.kind = AgentCliKind::codex;
    cli.program = "codex";
    cli.key_variables = {"CODEX_API_KEY"};
    cli.key_aliases = {{"OPENAI_API_KEY", "CODEX_API_KEY"}};  // codex exec reads CODEX_API_KEY alone
    cli.gateway_variables = {"OPENAI_ORGANIZATION", "OPENAI_PROJECT", "AZURE_OPENAI_API_KEY"};
    // Codex reads no endpoint variable; evoteam takes the usual one and gives it as Codex's setting.
    cli.base_url_variable = "OPENAI_BASE_URL";
    cli.base_url_in_config = true;
    cli.home_variable = "CODEX_HOME";
    cli.config_file = ".codex/config.toml";
    cli.credential_files = {".codex/auth.json"};
    cli.tested_versions = {"0.147.0"};
    cli.headless_help = {"exec", "--help"};
    cli.headless_flag = "--json";
  } else {
    if (member.empty() || member == k_builtin_loop_member)
      throw InvalidInput("agent.member: '" + member + "' is not a coding-agent CLI");
    const std::vector<std::string> words = split_template(member);
    if (words.empty()) throw InvalidInput("agent.member: the command template is empty");
    cli.program = words.front();
    // A template may hold anything, a key among its words: run files name it by its program alone, and the word
    // after a flag that names a secret (--api-key, --token), or a secret's NAME=VALUE, is redacted wherever it shows.
    cli.name = "template:" + std::filesystem::path(cli.program).filename().string();
    std::vector<std::string> secrets;
    for (std::size_t i = 1; i < words.size(); ++i) {
      const std::size_t equals = words[i].find('=');
      if (equals != std::string::npos && is_secret_variable_name(words[i].substr(0, equals)))
        secrets.push_back(words[i].substr(equals + 1));
      else if (words[i - 1].rfind('-', 0) == 0 && is_secret_variable_name(words[i - 1]))
        secrets.push_back(words[i]);
    }
    add_secret_values(secrets);
    cli.headless_help = {"--help"};
    return cli;
  }
  // Every CLI that speaks to its model over HTTPS honours the usual proxy and certificate settings.
  for (const char* name : {"HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy",
                           "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR"})
    cli.gateway_variables.emplace_back(name);
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
    const bool tested =
        std::any_of(cli.tested_versions.begin(), cli.tested_versions.end(),
                    [&first_line](const std::string& v) { return first_line.find(v) != first_line.npos; });
    row.detail =
        (version.ok() ? first_line : "--version failed: " + version.describe()) + " at " + program->string() +
        (headless ? "; runs headless (" + cli.headless_flag + ")" : "; its help shows no " + cli.headless_flag) +
        (tested ? "; a tested version"
                : "; warning: not a tested version (tested: " + join(cli.tested_versions, ", ") +
                      "; docs/agent-clis-tested.md)");
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

bool looks_like_unreachable(const std::string& text) {
  std::string lower = text;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* sign : {"connection error", "connection refused", "econnrefused", "enotfound", "econnreset",
                           "etimedout", "unable to connect", "could not connect", "fetch failed",
                           "error sending request", "stream disconnected", "network is unreachable", "no route to host",
                           "dns error", "failed to lookup address", "connect timeout", "request timed out",
                           // an endpoint that does not speak the CLI's protocol, after the CLI's own retries
                           "empty or malformed response"})
    if (lower.find(sign) != std::string::npos) return true;
  return false;
}

bool is_secret_variable_name(const std::string& name) {
  std::string upper = name;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  for (const char* sign : {"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "PROXY", "HEADERS"})
    if (upper.find(sign) != std::string::npos) return true;
  return false;
}

namespace {

// agent.cli.env's entry: NAME, or NAME=VALUE.
std::pair<std::string, std::optional<std::string>> env_entry(const std::string& entry) {
  const std::size_t equals = entry.find('=');
  if (equals == std::string::npos) return {entry, std::nullopt};
  return {entry.substr(0, equals), entry.substr(equals + 1)};
}

}  // namespace

std::map<std::string, std::string> cli_passed_environment(const AgentCli& cli, const AgentMemberSettings& settings,
                                                          const std::map<std::string, std::string>& daemon) {
  std::map<std::string, std::string> passed;
  auto from_daemon = [&](const std::string& name) {
    if (auto it = daemon.find(name); it != daemon.end() && !it->second.empty()) passed[name] = it->second;
  };
  for (const std::string& name : cli.gateway_variables) from_daemon(name);
  for (const std::string& entry : settings.env) {
    auto [name, value] = env_entry(entry);
    if (value)
      passed[name] = *value;
    else
      from_daemon(name);
  }
  std::vector<std::string> secrets;
  for (const auto& [name, value] : passed)
    if (is_secret_variable_name(name)) secrets.push_back(value);
  add_secret_values(secrets);
  return passed;
}

nlohmann::json recorded_cli_env(const nlohmann::json& entries) {
  if (!entries.is_array()) return entries;
  nlohmann::json recorded = nlohmann::json::array();
  for (const nlohmann::json& entry : entries) {
    if (!entry.is_string()) continue;
    auto [name, value] = env_entry(entry.get<std::string>());
    recorded.push_back(value && is_secret_variable_name(name) ? name : entry.get<std::string>());
  }
  return recorded;
}

}  // namespace evoteam
