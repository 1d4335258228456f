// `evoteam doctor`, `evoteam runs`, `evoteam show`: read-only inspection commands.
#include <iomanip>
#include <iostream>
#include <memory>

#include <evoteam/core/inventory.hpp>
#include <evoteam/report/report.hpp>

#include "cli/command.hpp"

namespace evoteam::cli {

void add_doctor(CLI::App& sub, CommandContext& context) {
  auto json = std::make_shared<bool>(false);
  sub.add_flag("--json", *json, "Print one JSON object");
  sub.callback([&context, json] {
    context.action = [json] {
      std::vector<ToolProbe> probes = probe_inventory(system_runner());
      bool missing_required = false;
      for (const ToolProbe& probe : probes) missing_required |= probe.required && !probe.usable;
      if (*json) {
        print_json({{"tools", to_json(probes)}, {"ok", !missing_required}});
      } else {
        for (const ToolProbe& probe : probes) {
          std::cout << (probe.usable ? "  ok   " : (probe.required ? "  FAIL " : "  --   ")) << std::left
                    << std::setw(20) << probe.name << probe.detail << "\n";
          if (!probe.fix.empty()) std::cout << "         " << std::setw(20) << "" << "fix: " << probe.fix << "\n";
        }
      }
      return missing_required ? 1 : 0;
    };
  });
}

void add_runs(CLI::App& sub, CommandContext& context) {
  auto runs_dir = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  sub.add_option("--runs-dir", *runs_dir, "Directory holding run directories (default: store.runs_dir)");
  sub.add_flag("--json", *json, "Print a JSON array");
  sub.callback([&context, runs_dir, json] {
    context.action = [&context, runs_dir, json] {
      const std::filesystem::path dir = context.runs_dir(*runs_dir);
      std::vector<RunSummary> runs = summarize_runs(dir);
      if (*json) {
        nlohmann::json items = nlohmann::json::array();
        for (const RunSummary& run : runs) items.push_back(to_json(run));
        print_json(items);
      } else {
        std::cout << format_runs_table(runs);
      }
      return 0;
    };
  });
}

void add_show(CLI::App& sub, CommandContext& context) {
  auto run = std::make_shared<std::string>();
  auto runs_dir = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  sub.add_option("RUN", *run, "Run directory, or a run id under --runs-dir")->required();
  sub.add_option("--runs-dir", *runs_dir, "Directory holding run directories (default: store.runs_dir)");
  sub.add_flag("--json", *json, "Print one JSON object");
  sub.callback([&context, run, runs_dir, json] {
    context.action = [&context, run, runs_dir, json] {
      const std::filesystem::path dir = context.runs_dir(*runs_dir);
      nlohmann::json description = describe_run(resolve_run(*run, dir));
      if (*json) print_json(description);
      else std::cout << format_run_description(description);
      return 0;
    };
  });
}

}  // namespace evoteam::cli
