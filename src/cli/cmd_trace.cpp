// `evoteam import`, `import-solution` and `export`: FlashInfer-Trace Definitions and published Solutions in,
// Solutions and Traces out.
#include <iostream>
#include <memory>
#include <optional>

#include <evoteam/report/report.hpp>
#include <evoteam/task/task.hpp>
#include <evoteam/trace/solution_import.hpp>
#include <evoteam/trace/trace_export.hpp>
#include <evoteam/trace/trace_import.hpp>

#include "cli/command.hpp"

namespace evoteam::cli {

void add_import(CLI::App& sub, CommandContext& context) {
  auto definition = std::make_shared<std::string>();
  auto workloads = std::make_shared<std::string>();
  auto out_dir = std::make_shared<std::string>();
  auto strict = std::make_shared<bool>(false);
  auto json = std::make_shared<bool>(false);
  sub.add_option("DEFINITION", *definition, "A FlashInfer-Trace Definition (JSON)")->required();
  sub.add_option("--workloads", *workloads, "Its workload traces (JSON lines)");
  sub.add_option("--out", *out_dir, "The task directory to write (new or empty), e.g. kernels/NAME")->required();
  sub.add_flag("--strict", *strict, "Refuse (exit 3, nothing written) when the import cannot carry everything");
  sub.add_flag("--json", *json, "Print the findings and what remains as JSON");
  sub.callback([&context, definition, workloads, out_dir, strict, json] {
    (void)context;
    context.action = [definition, workloads, out_dir, strict, json] {
      const std::optional<std::filesystem::path> lines =
          workloads->empty() ? std::nullopt : std::optional<std::filesystem::path>(*workloads);
      const ImportedTask imported = import_definition(*definition, lines, *out_dir, *strict);
      if (*json) {
        nlohmann::json findings = nlohmann::json::array();
        for (const TraceFinding& finding : imported.findings)
          findings.push_back({{"file", finding.file},
                              {"field", finding.field},
                              {"message", finding.message},
                              {"blocking", finding.blocking}});
        print_json({{"task_dir", *out_dir},
                    {"name", imported.name},
                    {"family", imported.family},
                    {"starting_kernel", imported.starting_kernel},
                    {"cpu_reference", imported.cpu_reference},
                    {"vendor", imported.vendor},
                    {"published_workloads", imported.published_workloads},
                    {"random_input_workloads", imported.random_input_workloads},
                    {"workloads", imported.task["workloads"].size()},
                    {"archs", imported.task["archs"]},
                    {"findings", findings},
                    {"remaining", imported.remaining}});
        return 0;
      }
      std::cout << "imported " << imported.name << " into " << *out_dir << "\n";
      for (const TraceFinding& finding : imported.findings)
        std::cout << (finding.blocking ? "  not carried: " : "  translated: ") << describe(finding) << "\n";
      std::cout << (imported.starting_kernel
                        ? "runnable: op family " + imported.family +
                              " generated its starting kernel and references; still to write, and notes (README.md):\n"
                        : "not runnable yet; still to write (README.md):\n");
      for (const std::string& item : imported.remaining) std::cout << "  - " << item << "\n";
      return 0;
    };
  });
}

void add_import_solution(CLI::App& sub, CommandContext& context) {
  auto solution = std::make_shared<std::string>();
  auto task_dir = std::make_shared<std::string>();
  auto out_dir = std::make_shared<std::string>();
  auto definition = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  sub.add_option("SOLUTION", *solution, "A published FlashInfer-Trace Solution (JSON)")->required();
  sub.add_option("--task", *task_dir, "The task directory whose definition the Solution implements")->required();
  sub.add_option("--out", *out_dir, "The candidate directory to write (for `evoteam eval TASK --candidate`)")
      ->required();
  sub.add_option("--definition", *definition,
                 "The published Definition: checks the Solution's definition and dtypes, gives the argument order");
  sub.add_flag("--json", *json, "Print what was written as JSON");
  sub.callback([&context, solution, task_dir, out_dir, definition, json] {
    context.action = [solution, task_dir, out_dir, definition, json] {
      const Task task = load_task(*task_dir);
      ImportSolutionOptions options;
      if (!definition->empty()) options.definition = std::filesystem::path(*definition);
      const ImportedSolution imported = import_solution(*solution, task, *out_dir, options);
      if (*json) {
        print_json({{"candidate_dir", imported.candidate_dir.string()},
                    {"solution", imported.name},
                    {"author", imported.author},
                    {"definition", imported.definition},
                    {"files", imported.files}});
        return 0;
      }
      std::cout << "imported " << imported.name << " (" << imported.author << ") into "
                << imported.candidate_dir.string() << " for task " << task.name << "\n";
      return 0;
    };
  });
}

void add_export(CLI::App& sub, CommandContext& context) {
  auto run = std::make_shared<std::string>();
  auto runs_dir = std::make_shared<std::string>();
  auto out_dir = std::make_shared<std::string>();
  auto definition = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  sub.add_option("RUN", *run, "Run directory, or a run id under --runs-dir")->required();
  sub.add_option("--runs-dir", *runs_dir, "Directory holding run directories (default: store.runs_dir)");
  sub.add_option("--out", *out_dir, "Write solutions/ and traces/ here (default: RUN/flashinfer_trace)");
  sub.add_option("--definition", *definition,
                 "The FlashInfer-Trace definition the task follows (default: the task's name)");
  sub.add_flag("--json", *json, "Print the written files and the notes as JSON");
  sub.callback([&context, run, runs_dir, out_dir, definition, json] {
    context.action = [&context, run, runs_dir, out_dir, definition, json] {
      const std::filesystem::path dir = resolve_run(*run, context.runs_dir(*runs_dir));
      ExportOptions options;
      options.definition = *definition;
      const ExportedRun exported =
          export_run(dir, out_dir->empty() ? dir / "flashinfer_trace" : std::filesystem::path(*out_dir), options);
      if (*json) {
        print_json({{"solution", exported.solution_file.string()},
                    {"traces", exported.traces_file.string()},
                    {"definition", exported.definition},
                    {"notes", exported.notes}});
        return 0;
      }
      std::cout << exported.solution_file.string() << "\n" << exported.traces_file.string() << "\n";
      for (const std::string& note : exported.notes) std::cout << "note: " << note << "\n";
      return 0;
    };
  });
}

}  // namespace evoteam::cli
