// `evoteam status` and `evoteam wait`: watching a run that a daemon (often a detached one) is running.
#include <iostream>
#include <memory>

#include <evoteam/core/error.hpp>
#include <evoteam/report/report.hpp>
#include <evoteam/report/status.hpp>

#include "cli/command.hpp"

namespace evoteam::cli {

namespace {

// Often enough that a script notices the end within a breath, rarely enough to cost nothing.
constexpr std::chrono::milliseconds k_wait_poll{250};

}  // namespace

void add_status(CLI::App& sub, CommandContext& context) {
  auto run = std::make_shared<std::string>();
  auto runs_dir = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  sub.add_option("RUN", *run, "Run directory, or a run id under --runs-dir")->required();
  sub.add_option("--runs-dir", *runs_dir, "Directory holding run directories (default: store.runs_dir)");
  sub.add_flag("--json", *json, "Print one JSON object");
  sub.callback([&context, run, runs_dir, json] {
    context.action = [&context, run, runs_dir, json] {
      const RunStatusView view = run_status(resolve_run(*run, context.runs_dir(*runs_dir)));
      if (*json)
        print_json(to_json(view));
      else
        std::cout << format_run_status(view);
      return 0;
    };
  });
}

void add_wait(CLI::App& sub, CommandContext& context) {
  auto run = std::make_shared<std::string>();
  auto runs_dir = std::make_shared<std::string>();
  auto timeout_s = std::make_shared<std::optional<double>>();
  sub.add_option("RUN", *run, "Run directory, or a run id under --runs-dir")->required();
  sub.add_option("--runs-dir", *runs_dir, "Directory holding run directories (default: store.runs_dir)");
  sub.add_option("--timeout", *timeout_s, "Give up after this many seconds (exit 124)")->check(CLI::NonNegativeNumber);
  sub.callback([&context, run, runs_dir, timeout_s] {
    context.action = [&context, run, runs_dir, timeout_s] {
      std::optional<std::chrono::milliseconds> timeout;
      if (*timeout_s) timeout = std::chrono::milliseconds(static_cast<long long>(**timeout_s * 1000));
      const WaitOutcome outcome = wait_for_run(resolve_run(*run, context.runs_dir(*runs_dir)), timeout, k_wait_poll);
      (outcome.exit_code == 0 ? std::cout : std::cerr) << outcome.message << "\n";
      return outcome.exit_code;
    };
  });
}

}  // namespace evoteam::cli
