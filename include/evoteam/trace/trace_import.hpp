#pragma once
// FlashInfer-Trace interop, inward: a published Definition (and its workloads) becomes an evoteam task directory.
// The two formats share axes, tensors with dtypes and shapes, constraints and workloads; what evoteam cannot
// express (tensors loaded from safetensors files, tensor-valued constraints, fields it does not know) comes back
// as findings naming the file and the field, never dropped without a word.
#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace evoteam {

struct TraceFinding {
  std::string file;
  std::string field;  // "inputs.state.optional", "workloads line 3: inputs.kv_indptr"
  std::string message;
  // Blocking findings lose meaning (an unsupported input kind, an unknown field, a constraint not carried);
  // notes record a translation that keeps it (a var axis replaced by its expression). --strict fails on the first.
  bool blocking = true;
};

std::string describe(const TraceFinding& finding);

// What an import produces before anything is written: the files of the task directory and the findings.
struct ImportedTask {
  std::string name;             // the definition's name, also the task's
  nlohmann::ordered_json task;  // task.json without its header comment
  std::string task_text;        // task.json as written: a header comment, then `task`
  std::string reference_py;     // the definition's PyTorch reference, verbatim
  std::string reference_stub;   // reference.cu: the entry point returning cudaErrorNotSupported
  std::string kernel_stub;      // kernel.cu: the same, to be replaced by a starting kernel
  std::string readme;
  std::vector<TraceFinding> findings;
  std::vector<std::string> remaining;  // what still needs writing before the task is runnable
  // What the op family's generator gave (trace/trace_families.hpp): the family, whether kernel.cu and reference.cu
  // are real, the CPU reference ("yes ..." or why not), the vendor baseline ("flashinfer" or why unavailable), and
  // the other files it wrote (cpu_reference.*, hooks.cpp, baseline_flashinfer.cu).
  std::string family;
  bool starting_kernel = false;
  std::string cpu_reference;
  std::string vendor;
  std::map<std::string, std::string> extra_files;
  std::size_t published_workloads = 0;
  std::size_t random_input_workloads = 0;  // published workloads whose safetensors inputs are generated here
};

// Translates a Definition (parsed with its key order) and the workload trace lines of a JSONL file. Throws
// InvalidInput for a definition it cannot translate at all (no name, a dtype without an evoteam equivalent).
ImportedTask translate_definition(const nlohmann::ordered_json& definition, const std::string& definition_file,
                                  const std::vector<nlohmann::ordered_json>& workload_lines,
                                  const std::string& workloads_file);

// Reads DEFINITION.json and the optional workloads JSONL, translates them and writes the task directory
// `out_dir` (which must not exist or be empty): task.json, reference.py, reference.cu and kernel.cu (generated for
// an op family with a generator, stubs otherwise), the generator's other files and README.md. With `strict`, blocking
// findings throw InvalidInput before anything is written. The written task is then loaded with the real task loader:
// a refusal throws InvalidInput (exit 3), with nothing left under `strict`, else the directory kept for editing and
// its README saying why.
ImportedTask import_definition(const std::filesystem::path& definition_file,
                               const std::optional<std::filesystem::path>& workloads_file,
                               const std::filesystem::path& out_dir, bool strict);

}  // namespace evoteam
