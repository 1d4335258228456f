// Stubs and README of an imported task. The stubs carry the real signature so that whoever writes the reference
// or the starting kernel starts from the ABI the harness calls, not from the Python reference's.
#include "trace/import_text.hpp"

#include <sstream>

#include <evoteam/core/text.hpp>
#include <evoteam/task/c_type.hpp>
#include <evoteam/task/task.hpp>

namespace evoteam::trace_detail {
namespace {

std::string c_type(const std::string& dtype) {
  const std::optional<DType> parsed = parse_dtype(dtype);
  return parsed ? evoteam::c_type(*parsed) : "void";
}

std::string parameter(const nlohmann::ordered_json& task, const std::string& arg) {
  // Names stay in comments: the stub ignores its arguments and candidate builds warn on unused parameters.
  if (task["inputs"].contains(arg)) return "const " + c_type(task["inputs"][arg]["dtype"]) + "* /*" + arg + "*/";
  if (task["outputs"].contains(arg)) return c_type(task["outputs"][arg]["dtype"]) + "* /*" + arg + "*/";
  if (task.contains("scalars") && task["scalars"].contains(arg))
    return c_type(task["scalars"][arg]["dtype"]) + " /*" + arg + "*/";
  return "std::int64_t /*" + arg + "*/";
}

}  // namespace

std::string entry_stub(const nlohmann::ordered_json& task, const std::string& what_to_write) {
  std::ostringstream out;
  out << "// Not written yet: " << what_to_write << ".\n"
      << "// Imported from the FlashInfer-Trace definition " << task["name"].get<std::string>()
      << "; reference.py holds its PyTorch reference. Until this file is\n"
      << "// written, every evaluation of the task fails with cudaErrorNotSupported.\n"
      << "#include <cstdint>\n\n#include <cuda_bf16.h>\n#include <cuda_fp16.h>\n#include <cuda_fp8.h>\n"
      << "#include <cuda_runtime.h>\n\n"
      << "extern \"C\" cudaError_t " << task["entry"]["name"].get<std::string>() << "(";
  for (const auto& arg : task["entry"]["args"]) out << parameter(task, arg.get<std::string>()) << ", ";
  out << "cudaStream_t /*stream*/) {\n  return cudaErrorNotSupported;\n}\n";
  return out.str();
}

std::string import_readme(const ImportedTask& imported, const nlohmann::ordered_json& definition,
                          const std::string& definition_file, const std::string& workloads_file) {
  std::ostringstream out;
  out << "# " << imported.name << "\n\n";
  if (definition.contains("description") && definition["description"].is_string())
    out << definition["description"].get<std::string>() << "\n\n";
  out << "Imported by `evoteam import` from the FlashInfer-Trace definition `" << definition_file << "`";
  if (!workloads_file.empty()) out << " with the workloads of `" << workloads_file << "`";
  out << ".";
  if (definition.contains("op_type") && definition["op_type"].is_string())
    out << " Its op type is `" << definition["op_type"].get<std::string>() << "`";
  if (definition.contains("tags") && definition["tags"].is_array() && !definition["tags"].empty()) {
    std::vector<std::string> tags;
    for (const auto& tag : definition["tags"]) tags.push_back(tag.is_string() ? tag.get<std::string>() : tag.dump());
    out << "; its tags: " << join(tags, ", ");
  }
  out << (definition.contains("op_type") ? ".\n\n" : "\n\n");
  out << "`reference.py` is the definition's PyTorch reference, kept as published: the semantics to follow. "
      << "The entry point `" << imported.task["entry"]["name"].get<std::string>()
      << "` takes the inputs in the definition's order (scalars by value), then the outputs, then the var axes "
         "as `int64_t`, and a trailing `cudaStream_t`.\n\n";
  out << "## Generated sources\n\n"
      << "- op family: " << (imported.family.empty() ? "unknown" : imported.family) << "\n"
      << "- starting kernel: "
      << (imported.starting_kernel ? "kernel.cu, the naive CUDA translation of reference.py (not FlashInfer)"
                                   : "none (kernel.cu is a stub)")
      << "\n- CPU reference (double): " << imported.cpu_reference << "\n"
      << "- FlashInfer vendor baseline: "
      << (imported.vendor == "flashinfer" ? "baseline_flashinfer.cu" : "unavailable: " + imported.vendor) << "\n"
      << "- workloads: " << imported.published_workloads << " published";
  if (imported.random_input_workloads > 0)
    out << " (" << imported.random_input_workloads
        << " with random inputs where the published ones are safetensors files not in the repository)";
  std::size_t ours = 0;
  for (const auto& workload : imported.task["workloads"])
    if (workload.value("origin", "") == "ours") ++ours;
  out << ", " << ours << " ours\n\n";
  out << "## Still to write\n\n";
  for (const std::string& item : imported.remaining) out << "- " << item << "\n";
  if (imported.remaining.empty()) out << "Nothing.\n";
  out << "\n## What the import could not carry\n\n";
  bool any = false;
  for (const TraceFinding& finding : imported.findings) {
    if (!finding.blocking) continue;
    out << "- " << describe(finding) << "\n";
    any = true;
  }
  if (!any) out << "Nothing.\n";
  out << "\n## Translations\n\n";
  any = false;
  for (const TraceFinding& finding : imported.findings) {
    if (finding.blocking) continue;
    out << "- " << describe(finding) << "\n";
    any = true;
  }
  if (!any) out << "None.\n";
  return out.str();
}

}  // namespace evoteam::trace_detail
