// `evoteam mcp`: evoteam's tools as a stdio MCP server — for one member's turn (started by a coding-agent CLI the
// daemon runs, bound by the file the daemon wrote) or for a person's own agent session on an existing run.
#include <iostream>
#include <memory>

#include <evoteam/core/error.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/llm/meter.hpp>
#include <evoteam/mcp/mcp_server.hpp>
#include <evoteam/mcp/turn_channel.hpp>
#include <evoteam/report/report.hpp>
#include <evoteam/store/store.hpp>
#include <evoteam/supervisor/supervisor.hpp>

#include "cli/command.hpp"

namespace evoteam::cli {

namespace {

struct McpFlags {
  std::string turn;
  std::string run;
  std::string runs_dir;
  std::string workspace = ".";
};

}  // namespace

void add_mcp(CLI::App& sub, CommandContext& context) {
  auto flags = std::make_shared<McpFlags>();
  CLI::Option* turn = sub.add_option("--turn", flags->turn,
                                     "Serve one member's turn: the binding file the daemon wrote (mcp_turn.json)");
  CLI::Option* run = sub.add_option("--run", flags->run, "Serve a run for your own agent: run directory or id");
  turn->excludes(run);
  sub.add_option("--runs-dir", flags->runs_dir, "Directory holding run directories (default: store.runs_dir)");
  sub.add_option("--workspace", flags->workspace,
                 "With --run: the directory holding your kernel files (default: the current directory; missing files "
                 "are filled from the run's best)");
  sub.callback([&context, flags] {
    context.action = [&context, flags] {
      if (flags->turn.empty() && flags->run.empty())
        throw Error("evoteam mcp needs --turn FILE or --run RUN", ExitCode::usage);
      // Standard output is the protocol's: logs go to standard error, as everywhere.
      if (!flags->turn.empty()) {
        TurnChannelClient tools(read_turn_binding(flags->turn));
        serve_mcp(std::cin, std::cout, tools, EVOTEAM_VERSION);
        return 0;
      }
      RunContext run_context(system_runner(), process_meter());
      serve_run_tools(context.config, resolve_run(flags->run, context.runs_dir(flags->runs_dir)), flags->workspace,
                      run_context, std::cin, std::cout);
      return 0;
    };
  });
}

}  // namespace evoteam::cli
