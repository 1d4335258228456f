// `evoteam status` and `evoteam wait`: watching a run that a daemon (often a detached one) is running.
#include <iostream>
#include <memory>

#include <evoteam/campaign/campaign.hpp>
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
  sub.add_option("RUN", *run, "Run or campaign directory, or an id under --runs-dir")->required();
  sub.add_option("--runs-dir", *runs_dir, "Directory holding run directories (default: store.runs_dir)");
  sub.add_flag("--json", *json, "Print one JSON object");
  sub.callback([&context, run, runs_dir, json] {
    context.action = [&context, run, runs_dir, json] {
      if (const std::optional<std::filesystem::path> campaign = find_campaign(*run, context.runs_dir(*runs_dir))) {
        if (*json)
          print_json(campaign_status_json(*campaign));
        else
          std::cout << format_campaign_status(*campaign);
        return 0;
      }
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
  sub.add_option("RUN", *run, "Run or campaign directory, or an id under --runs-dir")->required();
  sub.add_option("--runs-dir", *runs_dir, "Directory holding run directories (default: store.runs_dir)");
  sub.add_option("--timeout", *timeout_s, "Give up after this many seconds (exit 124)")->check(CLI::NonNegativeNumber);
  sub.callback([&context, run, runs_dir, timeout_s] {
    context.action = [&context, run, runs_dir, timeout_s] {
      std::optional<std::chrono::milliseconds> timeout;
      if (*timeout_s) timeout = std::chrono::milliseconds(static_cast<long long>(**timeout_s * 1000));
      if (const std::optional<std::filesystem::path> campaign = find_campaign(*run, context.runs_dir(*runs_dir))) {
        const CampaignWait waited = wait_for_campaign(*campaign, timeout, k_wait_poll);
        (waited.exit_code == 0 ? std::cout : std::cerr) << waited.message << "\n";
        return waited.exit_code;
      }
      const WaitOutcome outcome = wait_for_run(resolve_run(*run, context.runs_dir(*runs_dir)), timeout, k_wait_poll);
      (outcome.exit_code == 0 ? std::cout : std::cerr) << outcome.message << "\n";
      return outcome.exit_code;
    };
  });
}

}  // namespace evoteam::cli
