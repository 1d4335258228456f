// One CLI turn's process: the command, its environment and sandbox, and the watch that reads its stream.
#include "team/cli_turn.hpp"

#include <chrono>
#include <cstdlib>

#include <evoteam/agent/transcript.hpp>
#include <evoteam/core/config.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/inventory.hpp>
#include <evoteam/eval/sandbox.hpp>

namespace evoteam {

namespace {

// The environment of a CLI: the daemon's allowlisted variables (no credentials), its private home, the keys this
// CLI needs, and what the run passes it (its gateway settings, agent.cli.env, the endpoint); nothing else.
std::map<std::string, std::string> cli_environment(const CliTurnInputs& inputs) {
  const AgentCli& cli = inputs.cli;
  // An evaluation may take minutes: the CLI's own limit on one MCP call must not cut it (Claude Code reads this).
  const std::string call_ms = std::to_string(static_cast<long long>(inputs.timeout_s * 1000));
  std::map<std::string, std::string> extra = {
      {"HOME", inputs.home.string()}, {"NO_COLOR", "1"}, {"MCP_TOOL_TIMEOUT", call_ms}};
  extra.insert(cli.fixed_variables.begin(), cli.fixed_variables.end());
  if (!cli.home_variable.empty())
    extra[cli.home_variable] = (inputs.home / std::filesystem::path(cli.config_file).parent_path()).string();
  const std::map<std::string, std::string> daemon = current_environment();
  for (const auto& [name, read_as] : cli.key_aliases)
    if (auto it = daemon.find(name); it != daemon.end() && !it->second.empty()) extra[read_as] = it->second;
  for (const std::string& name : cli.key_variables)
    if (auto it = daemon.find(name); it != daemon.end() && !it->second.empty()) extra[name] = it->second;
  for (const auto& [name, value] : inputs.passed_env) extra[name] = value;
  return scrubbed_env(extra);
}

// What the watch learns from the stream, line by line.
class StreamWatch {
 public:
  StreamWatch(const CliTurnInputs& inputs, Transcript& transcript)
      : m_inputs(inputs), m_transcript(transcript), m_stream(inputs.cli.stream()) {}

  // The process runner's watch: false stops the CLI.
  bool operator()(std::string_view piece) {
    m_pending.append(piece);
    for (std::size_t newline = m_pending.find('\n'); newline != std::string::npos; newline = m_pending.find('\n')) {
      std::string line = m_pending.substr(0, newline);
      m_pending.erase(0, newline + 1);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (!line.empty()) read_line(line);
    }
    return !should_stop();
  }

  // A last line without its newline (a CLI that died mid-write).
  void finish() {
    if (!m_pending.empty()) read_line(m_pending);
    m_pending.clear();
  }

  CliTurnResult& result() { return m_result; }
  bool saw_final() const { return m_final; }
  const std::optional<std::string>& failure() const { return m_failure; }
  bool auth_failure() const { return m_auth_failure; }
  bool unreachable() const { return m_unreachable; }
  bool usage_seen() const { return m_usage_seen; }
  // The last error the CLI said and got over (or not: a turn that then fails names it).
  const std::optional<std::string>& last_notice() const { return m_last_notice; }
  const std::optional<CliTurnEnd>& stopped_for() const { return m_stopped_for; }

 private:
  void read_line(const std::string& line) {
    const AgentCliEvent event = m_stream->read(line);
    if (!event.parsed) {
      ++m_result.other_lines;
      m_transcript.append({{"type", "cli_text"}, {"text", line}});
      return;
    }
    ++m_result.events;
    m_transcript.append({{"type", "cli_event"}, {"event", nlohmann::json::parse(line)}});
    if (!event.model.empty()) m_result.model = event.model;
    if (!event.version.empty()) m_result.version = event.version;
    charge(event);
    if (event.failure) m_failure = event.failure;
    if (event.notice) m_last_notice = event.notice;
    m_auth_failure = m_auth_failure || ((event.failure || event.notice) && event.auth_failure);
    m_unreachable = m_unreachable || ((event.failure || event.notice) && event.unreachable);
    m_final = m_final || event.final;
  }

  // Tokens as they come; a CLI that reports its cost at the end is charged the estimate meanwhile and the rest of
  // its own figure then.
  // The price table prices what the stream showed, the same tokens the meter counts; the CLI's own cost figure (at
  // its end) stands in only for tokens the table cannot price (its own estimate of a broken-off stream is not taken
  // over the endpoint's counts).
  void charge(const AgentCliEvent& event) {
    const std::string& model = m_inputs.invocation.model.empty() ? m_result.model : m_inputs.invocation.model;
    const std::optional<double> priced = m_inputs.price ? m_inputs.price(model, event.usage) : std::nullopt;
    if (!priced && event.usage.total() > 0) m_unpriced_tokens = true;
    double cost = priced.value_or(0);
    if (event.reported_cost_usd && m_unpriced_tokens)
      cost = std::max(0.0, *event.reported_cost_usd - m_result.cost_usd);
    if (event.usage.total() == 0 && cost == 0) return;
    m_usage_seen = true;
    m_inputs.meter->charge(event.usage, cost);
    m_result.usage += event.usage;
    m_result.cost_usd += cost;
  }

  bool should_stop() {
    if (m_stopped_for) return true;
    if (const LimitHit hit = m_inputs.meter->check(); hit == LimitHit::tokens || hit == LimitHit::cost) {
      m_stopped_for = CliTurnEnd::over_budget;
      m_result.detail = hit == LimitHit::tokens ? "the run's token budget is spent" : "the run's cost budget is spent";
    } else if (std::optional<std::string> reason = m_inputs.stop_reason ? m_inputs.stop_reason() : std::nullopt) {
      m_stopped_for = CliTurnEnd::budget_spent;
      m_result.detail = *reason;
    }
    return m_stopped_for.has_value();
  }

  const CliTurnInputs& m_inputs;
  Transcript& m_transcript;
  std::unique_ptr<AgentCliStream> m_stream;
  std::string m_pending;
  CliTurnResult m_result;
  bool m_final = false;
  std::optional<std::string> m_failure;
  std::optional<std::string> m_last_notice;
  bool m_auth_failure = false;
  bool m_unreachable = false;
  bool m_usage_seen = false;
  bool m_unpriced_tokens = false;  // some tokens the price table could not price
  std::optional<CliTurnEnd> m_stopped_for;
};

// How the turn ended, from the process's end and what its stream said; the first that applies. A template CLI has
// no last event: its exit says how it ended.
void classify(const ProcessResult& process, const AgentCli& cli, StreamWatch& watch) {
  CliTurnResult& result = watch.result();
  result.wall_s = process.wall_s;
  auto end = [&result](CliTurnEnd how, std::string detail) {
    result.end = how;
    result.detail = std::move(detail);
  };
  const std::string other =
      result.other_lines > 0 ? " (" + std::to_string(result.other_lines) + " lines were not events)" : "";
  // The failure in the CLI's words, or the last error it reported on the way (Codex's top-level error events).
  const std::optional<std::string> words = watch.failure() ? watch.failure() : watch.last_notice();
  // What the meter could not know: a CLI that reported no usage at all (Codex reports it only when a turn completes),
  // or the rest of a model call in flight when the turn was cut before the CLI's last event.
  std::string unknown_tail;
  if (cli.kind != AgentCliKind::command && result.events > 0 && !watch.usage_seen())
    unknown_tail = "; it reported no usage: this turn's tokens are unknown to the meter";
  else if (cli.kind != AgentCliKind::command && !watch.saw_final())
    unknown_tail = "; tokens charged as far as its stream showed them (the rest of a model call in flight is unknown)";
  if (!process.spawned) return end(CliTurnEnd::not_started, process.spawn_error);
  if (watch.stopped_for())
    return end(*watch.stopped_for(), result.detail + ": stopped (" + process.describe() + ")" + unknown_tail);
  if (process.interrupted) return end(CliTurnEnd::interrupted, process.describe() + unknown_tail);
  if (process.timed_out)
    return end(watch.unreachable() && !watch.saw_final() ? CliTurnEnd::unreachable : CliTurnEnd::timed_out,
               process.describe() + (words ? ": " + *words : "") + unknown_tail);
  if (watch.auth_failure()) return end(CliTurnEnd::auth_failed, words.value_or("") + " (" + process.describe() + ")");
  if (watch.unreachable() && (watch.failure() || process.exit_code != 0 || process.signal != 0))
    return end(CliTurnEnd::unreachable, words.value_or("") + " (" + process.describe() + ")" + unknown_tail);
  if (process.signal != 0 || process.exit_code != 0)
    return end(CliTurnEnd::failed, process.describe() + (words ? ": " + *words : "") + other + unknown_tail);
  if (cli.kind == AgentCliKind::command) return end(CliTurnEnd::finished, process.describe() + other);
  if (result.events == 0) return end(CliTurnEnd::garbage, "printed no event" + other);
  if (!watch.saw_final())
    return end(CliTurnEnd::truncated, "the stream ended before its last event" + other + unknown_tail);
  if (watch.failure()) return end(CliTurnEnd::failed, *watch.failure() + other + unknown_tail);
  end(CliTurnEnd::finished, process.describe() + other);
}

}  // namespace

std::string to_string(CliTurnEnd end) {
  switch (end) {
    case CliTurnEnd::finished: return "finished";
    case CliTurnEnd::failed: return "failed";
    case CliTurnEnd::auth_failed: return "auth_failed";
    case CliTurnEnd::unreachable: return "unreachable";
    case CliTurnEnd::did_nothing: return "did_nothing";
    case CliTurnEnd::garbage: return "garbage";
    case CliTurnEnd::truncated: return "truncated";
    case CliTurnEnd::timed_out: return "timed_out";
    case CliTurnEnd::over_budget: return "over_budget";
    case CliTurnEnd::budget_spent: return "budget_spent";
    case CliTurnEnd::interrupted: return "interrupted";
    case CliTurnEnd::not_started: return "not_started";
  }
  throw_check_failure(__FILE__, __LINE__, "a CLI turn end without a name");
}

CliTurnResult run_cli_turn(const CliTurnInputs& inputs, ProcessRunner& runner) {
  EVOTEAM_CHECK(inputs.meter != nullptr, "a CLI turn charges the run's meter");
  const std::vector<std::string> argv = inputs.cli.argv(inputs.invocation);
  Transcript transcript(inputs.member_dir / "transcript.jsonl");
  // The prompt is in the transcript once; the command line is recorded without it.
  std::vector<std::string> shown = argv;
  for (std::string& word : shown)
    if (word == inputs.invocation.prompt) word = "{prompt}";
  transcript.append({{"type", "cli_start"},
                     {"member", inputs.cli.name},
                     {"argv", shown},
                     {"prompt", inputs.invocation.prompt},
                     {"sandbox", inputs.sandboxed ? "bwrap" : "none"}});

  Command command;
  eval::SandboxSpec sandbox;
  sandbox.writable = {inputs.invocation.workspace, inputs.home, inputs.channel_dir};
  sandbox.agent_cli = true;
  // The member's directory (the MCP configuration, the binding) and the evoteam program the CLI starts are read.
  sandbox.readable = {inputs.member_dir, std::filesystem::path(inputs.invocation.mcp_command.front()).parent_path()};
  // The program is found where the daemon finds it, and stays visible in the sandbox wherever it lives (a fresh
  // /tmp would hide an install there), through a link too: an npm install's bin entry links into its package.
  std::vector<std::string> resolved = argv;
  if (std::optional<std::filesystem::path> program = find_program(argv.front())) {
    resolved.front() = program->string();
    sandbox.readable.push_back(program->parent_path());
    std::error_code error;
    const std::filesystem::path target = std::filesystem::canonical(*program, error);
    if (!error && target.parent_path() != program->parent_path()) sandbox.readable.push_back(target.parent_path());
  }
  sandbox.readable.insert(sandbox.readable.end(), inputs.readable.begin(), inputs.readable.end());
  command.argv = eval::sandbox_argv(inputs.sandboxed ? SandboxMode::bwrap : SandboxMode::none, resolved, sandbox);
  command.cwd = inputs.invocation.workspace;
  command.env = cli_environment(inputs);
  command.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(inputs.timeout_s * 1000));
  command.output_cap = 1024 * 1024;  // the transcript has the stream whole; this is only the captured copy
  StreamWatch watch(inputs, transcript);
  command.watch = [&watch](std::string_view piece) { return watch(piece); };
  const ProcessResult process = runner.run(command);
  watch.finish();
  if (!process.err.text.empty()) write_file_atomic(inputs.member_dir / "cli_stderr.txt", process.err.text);
  classify(process, inputs.cli, watch);
  CliTurnResult result = watch.result();
  transcript.append({{"type", "cli_end"},
                     {"end", to_string(result.end)},
                     {"detail", result.detail},
                     {"usage", to_json(result.usage)},
                     {"cost_usd", result.cost_usd},
                     {"events", result.events},
                     {"model", result.model},
                     {"version", result.version},
                     {"elapsed_s", result.wall_s}});
  return result;
}

}  // namespace evoteam
