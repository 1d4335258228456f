// `evoteam import`: reading the Definition and its workload lines, writing the task directory, and loading it
// back with the real task loader so that what the import writes is what evoteam runs.
#include <sstream>

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/task/task.hpp>
#include <evoteam/trace/trace_import.hpp>

#include "trace/import_text.hpp"

namespace evoteam {
namespace {

using ojson = nlohmann::ordered_json;

// Key order matters here (it is the entry point's argument order), so the definition is read as ordered JSON.
ojson read_ordered(const std::string& text, const std::string& where) {
  try {
    return ojson::parse(text, nullptr, /*allow_exceptions=*/true, /*ignore_comments=*/true);
  } catch (const nlohmann::json::exception& error) {
    throw InvalidInput(where + " is not valid JSON: " + error.what());
  }
}

std::vector<ojson> read_lines(const std::filesystem::path& file) {
  std::vector<ojson> lines;
  std::istringstream text(read_file(file));
  std::size_t number = 0;
  for (std::string line; std::getline(text, line);) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    lines.push_back(read_ordered(line, file.string() + " line " + std::to_string(number)));
  }
  return lines;
}

}  // namespace

ImportedTask import_definition(const std::filesystem::path& definition_file,
                               const std::optional<std::filesystem::path>& workloads_file,
                               const std::filesystem::path& out_dir, bool strict) {
  if (!std::filesystem::is_regular_file(definition_file))
    throw InvalidInput(definition_file.string() + ": no such file");
  const ojson definition = read_ordered(read_file(definition_file), definition_file.string());
  std::vector<ojson> lines;
  if (workloads_file) {
    if (!std::filesystem::is_regular_file(*workloads_file))
      throw InvalidInput(workloads_file->string() + ": no such file");
    lines = read_lines(*workloads_file);
  }
  const std::string workloads_name = workloads_file ? workloads_file->string() : "";
  ImportedTask imported = translate_definition(definition, definition_file.string(), lines, workloads_name);

  std::string blocking;
  for (const TraceFinding& finding : imported.findings)
    if (finding.blocking) blocking += "\n  " + describe(finding);
  if (strict && !blocking.empty())
    throw InvalidInput(definition_file.string() + ": --strict: the import cannot carry everything:" + blocking);

  std::error_code error;
  const bool existed = std::filesystem::exists(out_dir, error);
  if (existed && !std::filesystem::is_empty(out_dir, error))
    throw InvalidInput(out_dir.string() + ": exists and is not empty; import into a new directory");
  evoteam::create_directories(out_dir);
  write_file_atomic(out_dir / "task.json", imported.task_text);
  if (!imported.reference_py.empty()) write_file_atomic(out_dir / "reference.py", imported.reference_py);
  write_file_atomic(out_dir / "reference.cu", imported.reference_stub);
  write_file_atomic(out_dir / "kernel.cu", imported.kernel_stub);
  // What was written is checked by the loader every command uses: a task it refuses is never an import that
  // succeeded. Under --strict nothing stays; otherwise the directory stays for editing and the refusal says why.
  try {
    load_task(out_dir);
  } catch (const InvalidInput& refusal) {
    if (strict) {
      for (const char* name : {"task.json", "reference.py", "reference.cu", "kernel.cu"})
        std::filesystem::remove(out_dir / name, error);
      if (!existed) std::filesystem::remove(out_dir, error);
      throw InvalidInput(definition_file.string() +
                         ": --strict: the task loader refuses the imported task (nothing written): " + refusal.what());
    }
    imported.findings.push_back(
        {(out_dir / "task.json").string(), "task", std::string("the task loader refuses it: ") + refusal.what(), true});
    imported.readme = trace_detail::import_readme(imported, definition, definition_file.string(), workloads_name);
    write_file_atomic(out_dir / "README.md", imported.readme);
    throw InvalidInput(definition_file.string() + ": the task loader refuses the imported task: " + refusal.what() +
                       " (" + out_dir.string() + " is kept for editing; README.md lists what else remains)");
  }
  imported.readme = trace_detail::import_readme(imported, definition, definition_file.string(), workloads_name);
  write_file_atomic(out_dir / "README.md", imported.readme);
  return imported;
}

}  // namespace evoteam
