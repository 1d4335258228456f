// Which op family a definition belongs to, and what its generator gives to the imported task.
#include "trace/trace_families.hpp"

#include <algorithm>
#include <sstream>

#include <evoteam/core/error.hpp>
#include <evoteam/task/c_type.hpp>
#include <evoteam/task/task.hpp>

namespace evoteam::trace_detail {
namespace {

using ojson = nlohmann::ordered_json;

bool family_name_starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

std::string family_of(const ojson& definition) {
  const std::string name = definition.value("name", "");
  const std::string op = definition.contains("op_type") && definition["op_type"].is_string()
                             ? definition["op_type"].get<std::string>()
                             : "unknown";
  if (family_name_starts_with(name, "fused_add_rmsnorm")) return "fused_add_rmsnorm";
  if (family_name_starts_with(name, "gqa_paged_decode")) return "gqa_paged_decode";
  if (family_name_starts_with(name, "gqa_paged_prefill")) return "gqa_paged_prefill";
  if (family_name_starts_with(name, "gqa_ragged_prefill")) return "gqa_ragged";
  if (family_name_starts_with(name, "mla_paged_decode")) return "mla_paged_decode";
  if (family_name_starts_with(name, "mla_paged_prefill")) return "mla_paged_prefill";
  return op;
}

// Why a family has no generator: said in the task's README and the suite table.
std::string why_no_generator(const std::string& family) {
  if (family == "sampling")
    return "op family sampling: the output is a random draw (torch.multinomial, no seed in the definition) and "
           "evoteam compares outputs element by element with the reference, so no starting kernel could be judged "
           "correct; it needs a seeded sampling contract or a distribution test";
  if (family_name_starts_with(family, "mla"))
    return "no generator for op family " + family +
           " yet (kernels/mla_paged_decode_h16_ckv512_kpe64_ps1 is the hand-written task of one MLA decode definition)";
  if (family == "gdn")
    return "no generator for op family gdn yet (kernels/gdn_prefill_qk4_v8_d128_k_last is the hand-written task of one "
           "GDN prefill definition)";
  return "no generator for op family " + family + " yet";
}

// Flops of the workload, from the task's flops expression; negative when it cannot be evaluated.
double workload_flops(const ojson& task, const ojson& workload, const std::string& expression) {
  std::map<std::string, double> values;
  for (const auto& [name, axis] : task["axes"].items())
    if (axis["type"] == "const") values[name] = axis["value"].get<double>();
  for (const auto& [name, value] : workload["axes"].items()) values[name] = value.get<double>();
  try {
    return evaluate_expression(expression, values, "flops");
  } catch (const Error&) {
    return -1;
  }
}

void merge_fields(ojson& task, const FamilySources& sources) {
  for (const auto& [key, value] : sources.task_fields.items()) task[key] = value;
  for (const auto& [input, generate] : sources.input_generators)
    if (task["inputs"].contains(input)) task["inputs"][input]["generate"] = generate;
}

// A scalar no workload gave a value for was set to 1 by the translation; the family knows the default the
// definition states (sm_scale = 1 / sqrt(head_dim)), which replaces it and its finding.
void use_scalar_defaults(ImportedTask& imported, const FamilySources& sources) {
  for (const auto& [scalar, value] : sources.scalar_defaults) {
    const std::string field = "inputs." + scalar;
    const auto unset = std::find_if(imported.findings.begin(), imported.findings.end(), [&](const TraceFinding& f) {
      return f.field == field && f.message.rfind("no value:", 0) == 0;
    });
    if (unset == imported.findings.end()) continue;
    imported.findings.erase(unset);
    imported.task["scalars"][scalar]["value"] = value;
    imported.findings.push_back(
        {imported.name, field, "no value published: set to " + value + ", the default the definition states", false});
  }
}

void use_our_workloads(ImportedTask& imported, const FamilySources& sources) {
  ojson& workloads = imported.task["workloads"];
  if (sources.our_workloads.empty() || workloads.size() != 1 || workloads[0].value("name", "") != "placeholder") return;
  workloads = sources.our_workloads;
  std::vector<TraceFinding> kept;
  for (TraceFinding& finding : imported.findings)
    if (finding.field != "workloads") kept.push_back(std::move(finding));
  imported.findings = std::move(kept);
  imported.findings.push_back(
      {imported.name, "workloads",
       "none published: the " + sources.family + " generator's own workloads stand in (\"origin\": \"ours\")", false});
}

}  // namespace

std::string fill(std::string text, const std::map<std::string, std::string>& values) {
  for (const auto& [key, value] : values)
    for (std::size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size()))
      text.replace(at, key.size(), value);
  return text;
}

std::int64_t const_axis(const ojson& task, const std::string& name) {
  if (!task["axes"].contains(name) || task["axes"][name]["type"] != "const")
    throw InvalidInput(task["name"].get<std::string>() + ": axes." + name + ": the generator needs it as a const axis");
  return task["axes"][name]["value"].get<std::int64_t>();
}

std::string entry_parameters(const ojson& task) {
  auto c_name = [](const ojson& spec) {
    const std::optional<DType> parsed = parse_dtype(spec["dtype"].get<std::string>());
    return parsed ? c_type(*parsed) : std::string("void");
  };
  std::ostringstream out;
  bool first = true;
  for (const auto& arg_value : task["entry"]["args"]) {
    const std::string arg = arg_value.get<std::string>();
    out << (first ? "" : ", ");
    first = false;
    if (task["inputs"].contains(arg))
      out << "const " << c_name(task["inputs"][arg]) << "* " << arg;
    else if (task["outputs"].contains(arg))
      out << c_name(task["outputs"][arg]) << "* " << arg;
    else if (task.contains("scalars") && task["scalars"].contains(arg))
      out << c_name(task["scalars"][arg]) << " " << arg;
    else
      out << "std::int64_t " << arg;
  }
  return out.str();
}

namespace {

// The tensors each generator writes code for, by name and section: a definition of the family that names them
// otherwise (or lacks them) gets no generator rather than sources that read what is not there.
struct FamilyTensors {
  const char* family;
  std::vector<const char*> inputs;
  std::vector<const char*> outputs;
};

const std::vector<FamilyTensors>& family_tensors() {
  static const std::vector<FamilyTensors> table = {
      {"gemm", {"A", "B"}, {"C"}},
      {"rmsnorm", {"hidden_states", "weight"}, {"output"}},
      {"fused_add_rmsnorm", {"hidden_states", "residual", "weight"}, {"output"}},
      {"gqa_paged_decode", {"q", "k_cache", "v_cache", "kv_indptr", "kv_indices"}, {"output", "lse"}},
      {"gqa_paged_prefill", {"q", "k_cache", "v_cache", "qo_indptr", "kv_indptr", "kv_indices"}, {"output", "lse"}},
      {"gqa_ragged", {"q", "k", "v", "qo_indptr", "kv_indptr"}, {"output", "lse"}},
  };
  return table;
}

// "no input A": the first tensor the family's generator needs and the task lacks; empty when none is missing.
std::string missing_family_tensor(const std::string& family, const ojson& task) {
  for (const FamilyTensors& row : family_tensors()) {
    if (family != row.family) continue;
    for (const char* name : row.inputs)
      if (!task["inputs"].contains(name)) return std::string("no input ") + name;
    for (const char* name : row.outputs)
      if (!task["outputs"].contains(name)) return std::string("no output ") + name;
  }
  return "";
}

}  // namespace

FamilySources generate_family(const ojson& definition, const ojson& task) {
  const std::string family = family_of(definition);
  if (const std::string missing = missing_family_tensor(family, task); !missing.empty()) {
    FamilySources none;
    none.family = family;
    none.notes.push_back(missing + ": no starting kernel generated");
    return none;
  }
  if (family == "gemm") return generate_gemm(definition, task);
  if (family == "rmsnorm") return generate_rmsnorm(definition, task, false);
  if (family == "fused_add_rmsnorm") return generate_rmsnorm(definition, task, true);
  if (family == "gqa_paged_decode") return generate_gqa_decode(definition, task);
  if (family == "gqa_paged_prefill" || family == "gqa_ragged") return generate_gqa_prefill(definition, task);
  FamilySources none;
  none.family = family;
  return none;
}

void apply_family(ImportedTask& imported, const ojson& definition) {
  FamilySources sources = generate_family(definition, imported.task);
  imported.family = sources.family;
  imported.starting_kernel = sources.generated;
  if (!sources.generated) {
    imported.cpu_reference = "no: no generator for op family " + sources.family + " yet";
    imported.vendor = "not written: the importer has no generator for op family " + sources.family + " yet";
    imported.task["vendor_baseline"] = {{"kind", "flashinfer"}, {"unavailable", imported.vendor}};
    std::string why = why_no_generator(sources.family);
    for (const std::string& note : sources.notes) why = note;
    imported.findings.push_back(
        {imported.name, "kernel.cu", "no starting kernel: " + why + "; kernel.cu and reference.cu are stubs", true});
    return;
  }
  merge_fields(imported.task, sources);
  use_our_workloads(imported, sources);
  use_scalar_defaults(imported, sources);
  imported.kernel_stub = sources.files["kernel.cu"];
  imported.reference_stub = sources.files["reference.cu"];
  for (const auto& [file, text] : sources.files)
    if (file != "kernel.cu" && file != "reference.cu") imported.extra_files[file] = text;
  imported.vendor = sources.vendor;
  // Which workloads the CPU reference can run in reasonable time.
  std::size_t within = 0;
  std::vector<std::string> too_large;
  for (const ojson& workload : imported.task["workloads"]) {
    const double flops = workload_flops(imported.task, workload, sources.cpu_limit);
    if (flops >= 0 && flops <= k_cpu_flops_limit)
      ++within;
    else
      too_large.push_back(workload.value("name", "?"));
  }
  const std::size_t total = imported.task["workloads"].size();
  const bool has_cpu = sources.cpu_reference == "yes";
  imported.cpu_reference = has_cpu ? "yes (" + std::to_string(within) + " of " + std::to_string(total) + " workloads)"
                                   : sources.cpu_reference;
  if (!has_cpu) too_large.clear();
  imported.remaining.clear();
  for (const std::string& note : sources.notes) imported.remaining.push_back("note: " + note);
  if (!too_large.empty()) {
    std::string names;
    for (const std::string& name : too_large) names += (names.empty() ? "" : ", ") + name;
    imported.remaining.push_back("cpu_reference.cpp: too slow on a CPU (over 2e11 flops) for " +
                                 std::to_string(too_large.size()) + " workloads: " + names);
  }
  imported.remaining.push_back(
      "kernel.cu is the naive starting kernel for the team to optimise; reference.cu and "
      "cpu_reference.* compute in double");
}

}  // namespace evoteam::trace_detail
