#pragma once
// Per-op-family sources of an imported task: the naive CUDA starting kernel (the straightforward translation of
// the definition's reference, parametrised by its constants), the trusted CUDA reference (the same loops with
// double accumulation), the double-precision CPU reference, input hooks, honest params and the FlashInfer vendor
// baseline where the flashinfer-python wheel has a C++/CUDA entry point. A family without a generator yet leaves
// the stubs and says so.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <evoteam/trace/trace_import.hpp>

namespace evoteam::trace_detail {

struct FamilySources {
  std::string family;      // "gemm", "rmsnorm", "fused_add_rmsnorm", "gqa_paged_decode", or the op_type
  bool generated = false;  // kernel.cu and reference.cu are real (not stubs)
  std::map<std::string, std::string> files;  // file name -> text: kernel.cu, reference.cu, cpu_reference.*, ...
  nlohmann::ordered_json task_fields = nlohmann::ordered_json::object();  // merged into task.json
  std::map<std::string, nlohmann::ordered_json> input_generators;         // input -> its "generate" value
  std::string cpu_reference;                                              // "yes", or why there is none
  std::string vendor;                                                     // "flashinfer", or why it is unavailable
  std::string cpu_limit;           // flops expression above k_cpu_flops_limit a CPU reference is too slow for
  std::vector<std::string> notes;  // README lines about the generated sources
  nlohmann::ordered_json our_workloads = nlohmann::ordered_json::array();  // used when none was published
  // scalar -> the value the definition's description gives as the default, used when no workload gave one
  std::map<std::string, std::string> scalar_defaults;
};

// Generates the family's sources into `imported`: the generated files replace the stubs, the task gains the
// family's fields, a family without a generator gets a blocking finding and an unavailable vendor baseline.
void apply_family(ImportedTask& imported, const nlohmann::ordered_json& definition);

// The family of a definition and, where a generator exists, its sources. `task` is the translated task.json.
FamilySources generate_family(const nlohmann::ordered_json& definition, const nlohmann::ordered_json& task);

// The generators, one per family (trace/family_*.cpp).
FamilySources generate_gemm(const nlohmann::ordered_json& definition, const nlohmann::ordered_json& task);
FamilySources generate_rmsnorm(const nlohmann::ordered_json& definition, const nlohmann::ordered_json& task,
                               bool fused_add);
FamilySources generate_gqa_decode(const nlohmann::ordered_json& definition, const nlohmann::ordered_json& task);
FamilySources generate_gqa_prefill(const nlohmann::ordered_json& definition, const nlohmann::ordered_json& task);
std::string gqa_prefill_cpu_reference_hpp();
std::string gqa_prefill_cpu_reference_cpp();
std::string gqa_decode_flashinfer_baseline(const nlohmann::ordered_json& task);

// `text` with each key of `values` replaced by its value (keys are spelled @NAME@ in the templates).
std::string fill(std::string text, const std::map<std::string, std::string>& values);

// The entry point's C parameters with their names, in the task's order (no trailing stream): what the generated
// sources define.
std::string entry_parameters(const nlohmann::ordered_json& task);

// hooks.cpp of the paged-attention tasks: ragged_kv_indptr and page_indices (trace/family_gqa_baseline.cpp).
std::string gqa_decode_hooks();

// A const axis of the translated task; throws InvalidInput naming it when absent.
std::int64_t const_axis(const nlohmann::ordered_json& task, const std::string& name);

// Above this many flops a workload is not run against the CPU reference in reasonable time (minutes at ~1 GFLOP/s
// of naive double loops).
inline constexpr double k_cpu_flops_limit = 2e11;

}  // namespace evoteam::trace_detail
