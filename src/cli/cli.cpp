#include <evoteam/cli/cli.hpp>

#include <cstdio>
#include <iostream>

#include <evoteam/core/error.hpp>
#include <evoteam/core/log.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/store/store.hpp>

#include "cli/command.hpp"

namespace evoteam {

namespace cli {

void print_json(const nlohmann::json& value) { std::cout << value.dump(2) << std::endl; }

namespace {

// The one table of subcommands. Each entry's `add` registers its options and sets the action.
const Subcommand k_subcommands[] = {
    {"optimize", "Run the supervisor loop over an agent team on a task until a budget or the target is reached",
     "evoteam optimize kernels/host_matmul --max-cycles 4 --json", add_optimize},
    {"campaign",
     "One run per task of a suite (a directory of tasks, a glob or a list with weights), the budgets split across them",
     "evoteam campaign kernels/ --budget-evaluations 40 --detach", add_campaign},
    {"resume", "Continue a stopped or killed run with its budgets and knowledge intact",
     "evoteam resume runs/20261129T184500Z-host_matmul", add_resume},
    {"stop", "Ask the daemon running a run to stop at its next safe point",
     "evoteam stop runs/20261129T184500Z-host_matmul", add_stop},
    {"worker", "Serve a run's evaluation requests on a Slurm node (what --executor slurm submits)",
     "evoteam worker runs/20261129T184500Z-host_matmul --name 4242", add_worker},
    {"status", "A running or finished run now: daemon alive, cycle, team, best, budget burn, ETA, last event",
     "evoteam status runs/20261129T184500Z-host_matmul --json", add_status},
    {"wait", "Block until a run ends and exit with its exit code (124 when --timeout passes first)",
     "evoteam wait runs/20261129T184500Z-host_matmul --timeout 36000", add_wait},
    {"doctor", "Show what is installed and usable: compilers, CUDA tools, GPU, sandbox, provider keys",
     "evoteam doctor --json", add_doctor},
    {"runs", "List runs: id, task, status, cycles, evaluations, best speedup, tokens, cost, start time",
     "evoteam runs --runs-dir runs", add_runs},
    {"show", "Summarise one run: status, budgets used, team per cycle, best candidate",
     "evoteam show runs/20261129T184500Z-host_matmul", add_show},
    {"report", "Write a run's report: report.html (charts, team timeline, lineage) and report.md",
     "evoteam report runs/20261129T184500Z-host_matmul --out /tmp/report", add_report},
    {"compare", "Runs side by side at equal budget: spend, best, evaluations to 90% of it, area under best so far",
     "evoteam compare runs/A runs/B runs/C --html compare.html", add_compare},
    {"eval", "Evaluate a task's starting kernel or a candidate: verdict, timing, speedup, roofline fraction",
     "evoteam eval kernels/host_matmul --param TILE_N=256 --json", add_eval},
    {"import",
     "Write a task directory from a FlashInfer-Trace Definition and its workloads; reports what it cannot carry",
     "evoteam import gqa_paged_decode_h32_kv8_d128_ps1.json --workloads gqa.jsonl --out kernels/gqa_imported",
     add_import},
    {"import-solution",
     "Write a published FlashInfer-Trace Solution (CUDA sources, torch-bound entry point) as a candidate of a task",
     "evoteam import-solution sol.json --task kernels/gemm_bf16 --out /tmp/published/gemm", add_import_solution},
    {"export", "Write a run's best candidate as a FlashInfer-Trace Solution and a Trace per workload",
     "evoteam export runs/20261129T184500Z-host_matmul --out /tmp/trace", add_export},
    {"mcp", "Serve evoteam's tools (compile, test, benchmark, submit ...) to a coding agent over MCP on stdio",
     "evoteam mcp --run runs/20261129T184500Z-host_matmul --workspace ./my-kernel", add_mcp},
};

// The -q/-v flags win over log.verbosity.
Verbosity verbosity_of(const GlobalOptions& globals, Verbosity configured) {
  if (globals.quiet) return Verbosity::quiet;
  if (globals.verbose >= 2) return Verbosity::debug;
  if (globals.verbose == 1) return Verbosity::verbose;
  return configured;
}

// Loads and checks the configuration once, and hands its core sections to logging and the process runner.
void load_configuration(CommandContext& context) {
  context.config = load_config(context.globals.config_file, context.globals.assignments);
  setup_console_logging(verbosity_of(context.globals, configured_verbosity(context.config)));
  for (const std::string& line : context.config.describe_sources()) spdlog::debug("configuration: {}", line);
  use_process_settings(process_settings(context.config));
}

}  // namespace

std::filesystem::path CommandContext::runs_dir(const std::string& flag) const {
  return flag.empty() ? configured_runs_dir(config) : std::filesystem::path(flag);
}

}  // namespace cli

int cli_main(int argc, char** argv) {
  cli::CommandContext context;
  for (int i = 1; i < argc; ++i) context.arguments.emplace_back(argv[i]);
  CLI::App app{"evoteam: an evolving team of agents that optimises GPU kernels overnight", "evoteam"};
  app.set_version_flag("--version", std::string("evoteam ") + EVOTEAM_VERSION);
  app.require_subcommand(1);
  app.fallthrough();
  app.add_flag("-v,--verbose", context.globals.verbose, "More console output (-vv for debug)");
  app.add_flag("-q,--quiet", context.globals.quiet, "Only warnings and errors on the console");
  app.add_option("--config", context.globals.config_file, "Configuration file layered over configs/default.json");
  app.add_option("--set", context.globals.assignments,
                 "Override one configuration key: --set eval.timing.min_samples=30")
      ->type_name("KEY=VALUE");
  for (const cli::Subcommand& command : cli::k_subcommands) {
    CLI::App* sub = app.add_subcommand(command.name, command.description);
    sub->footer(std::string("Example:\n  ") + command.example);
    command.add(*sub, context);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    int code = app.exit(error);
    return code == 0 ? 0 : static_cast<int>(ExitCode::usage);
  }

  setup_console_logging(cli::verbosity_of(context.globals, Verbosity::normal));
  try {
    if (!context.action) throw Error("no subcommand action", ExitCode::internal);
    cli::load_configuration(context);
    return context.action();
  } catch (const Error& error) {
    spdlog::error("{}", error.what());
    return static_cast<int>(error.code());
  } catch (const std::exception& error) {
    spdlog::error("internal error: {}", error.what());
    return static_cast<int>(ExitCode::internal);
  }
}

}  // namespace evoteam
