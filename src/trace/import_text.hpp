#pragma once
// The text files an import writes beside task.json: the entry-point stubs and the README.
#include <string>

#include <evoteam/trace/trace_import.hpp>

namespace evoteam::trace_detail {

// A reference.cu or kernel.cu that declares the task's entry point with its real signature and returns
// cudaErrorNotSupported, so the task loads and an evaluation says plainly that nothing is written yet.
std::string entry_stub(const nlohmann::ordered_json& task, const std::string& what_to_write);

// README.md: what the task is, where it came from, the findings, and what still needs writing.
std::string import_readme(const ImportedTask& imported, const nlohmann::ordered_json& definition,
                          const std::string& definition_file, const std::string& workloads_file);

}  // namespace evoteam::trace_detail
