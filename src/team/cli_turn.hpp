#pragma once
// One coding-agent CLI process for one turn: started headless in its own process group (in bubblewrap when the run
// has it) with a scrubbed environment — the CLI's own key, a private home for its state — and the turn's deadline.
// Its event stream goes to the member's transcript as it arrives, and the usage and cost it reports into the run's
// meter; a spent budget stops the whole group at once. How it ended is a closed set.
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include <evoteam/agent/agent_cli.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/llm/meter.hpp>

namespace evoteam {

enum class CliTurnEnd {
  finished,      // exited 0 after its last event
  failed,        // exited non-zero or was killed by a signal (a crash mid-stream among them)
  auth_failed,   // said its key or login was refused
  unreachable,   // could not reach its model at all (no connection, no route, no name)
  did_nothing,   // ended without a successful tool call of evoteam's and without changing the kernel
  garbage,       // printed no event at all
  truncated,     // its stream stopped before the last event
  timed_out,     // ran past the turn's deadline
  over_budget,   // the run's token or dollar budget ran out while it worked
  budget_spent,  // another run budget (evaluations, GPU-seconds, time) ran out
  interrupted,   // the daemon was interrupted
  not_started,   // could not be started
};
std::string to_string(CliTurnEnd end);

struct CliTurnResult {
  CliTurnEnd end = CliTurnEnd::not_started;
  std::string detail;  // one line: the exit, the CLI's own words, the budget
  Usage usage;         // what the CLI reported, as charged to the meter
  double cost_usd = 0;
  int events = 0;       // lines that were events of the CLI
  int other_lines = 0;  // lines that were not
  double wall_s = 0;
  std::string model;    // the model its events named last (or the one it was given)
  std::string version;  // the CLI's version, when its events name it
};

struct CliTurnInputs {
  AgentCli cli;
  AgentCliInvocation invocation;
  std::filesystem::path member_dir;  // transcript.jsonl, cli_stderr.txt
  std::filesystem::path home;        // the CLI's private home (writable)
  // Its environment besides evoteam's own variables and its key: gateway settings, agent.cli.env, the endpoint.
  std::map<std::string, std::string> passed_env;
  std::filesystem::path channel_dir;  // the turn's socket directory (reachable from the sandbox)
  bool sandboxed = false;
  std::vector<std::filesystem::path> readable;  // besides the program's directory (agent.cli.readable)
  double timeout_s = 1800;
  Meter* meter = nullptr;
  // The price of tokens at a model, or nothing when the price table does not know the model.
  std::function<std::optional<double>(const std::string& model, const Usage& usage)> price;
  // Asked as the CLI works: a reason to stop it now (a run budget the tools found spent), or nothing.
  std::function<std::optional<std::string>()> stop_reason;
};

CliTurnResult run_cli_turn(const CliTurnInputs& inputs, ProcessRunner& runner);

}  // namespace evoteam
