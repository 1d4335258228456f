#include "eval/glue.hpp"

#include <set>
#include <sstream>
#include <vector>

#include <evoteam/core/text.hpp>

namespace evoteam::eval {
namespace {

std::size_t tensor_index(const Task& task, const std::string& name) {
  std::vector<const TensorSpec*> all = task.tensors();
  for (std::size_t i = 0; i < all.size(); ++i)
    if (all[i]->name == name) return i;
  return 0;
}

std::size_t axis_index(const Task& task, const std::string& name) {
  for (std::size_t i = 0; i < task.axes.size(); ++i)
    if (task.axes[i].name == name) return i;
  return 0;
}

std::string parameter_type(const Task& task, const std::string& arg) {
  if (const TensorSpec* tensor = task.find_tensor(arg))
    return (tensor->role == TensorRole::input ? "const " : "") + c_type(tensor->dtype) + "*";
  if (const ScalarSpec* scalar = task.find_scalar(arg)) return c_type(scalar->dtype);
  return "std::int64_t";
}

// A scalar's value as a C++ literal of its type, exact to the last bit of a double.
std::string scalar_literal(const ScalarSpec& scalar) {
  std::ostringstream text;
  text.precision(17);
  text << "static_cast<" << c_type(scalar.dtype) << ">(";
  if (is_floating(scalar.dtype))
    text << std::scientific << scalar.value;
  else
    text << static_cast<long long>(scalar.value) << "LL";
  text << ")";
  return text.str();
}

// How the glue passes one entry argument: a tensor cast to its parameter type, a scalar as a literal, an axis
// from the workload's axis values.
std::string call_argument(const Task& task, const std::string& arg) {
  if (task.find_tensor(arg) != nullptr)
    return "static_cast<" + parameter_type(task, arg) + ">(tensors[" + std::to_string(tensor_index(task, arg)) + "])";
  if (const ScalarSpec* scalar = task.find_scalar(arg)) return scalar_literal(*scalar);
  return "axes[" + std::to_string(axis_index(task, arg)) + "]";
}

// The harness's communicator for a task with a ranks axis: set once per workload by the harness
// (kernels/common/cuda/rank_group.hpp), appended to every call after the task's args. Without a ranks axis
// the same functions exist and refuse, so every CUDA harness links against one set of symbols.
void write_rank_functions(std::ostringstream& out, const Task& task) {
  const bool ranked = !task.ranks_axis.empty();
  out << "int evoteam_glue_ranks_axis(void) { return "
      << (ranked ? static_cast<long long>(axis_index(task, task.ranks_axis)) : -1LL) << "; }\n";
  if (!ranked) {
    out << "void evoteam_glue_set_comm(void* comm, int32_t rank) { (void)comm; (void)rank; }\n"
           "int evoteam_glue_comm_unique_id(void* id, int bytes) { (void)id; (void)bytes; return -1; }\n"
           "int evoteam_glue_comm_init(void** comm, int ranks, const void* id, int rank) {\n"
           "  (void)comm; (void)ranks; (void)id; (void)rank;\n  return -1;\n}\n"
           "int evoteam_glue_comm_destroy(void* comm) { (void)comm; return -1; }\n"
           "int evoteam_glue_max_over_ranks(void* comm, double* values, int64_t count, void* stream) {\n"
           "  (void)comm; (void)values; (void)count; (void)stream;\n  return -1;\n}\n"
           "const char* evoteam_glue_comm_error(int code) { (void)code; return \"this task has no ranks axis\"; }\n\n";
    return;
  }
  out << "static ncclComm_t g_comm = nullptr;\nstatic int32_t g_rank = 0;\n"
         "void evoteam_glue_set_comm(void* comm, int32_t rank) {\n"
         "  g_comm = static_cast<ncclComm_t>(comm);\n  g_rank = rank;\n}\n"
         "int evoteam_glue_comm_unique_id(void* id, int bytes) {\n"
         "  if (bytes < static_cast<int>(sizeof(ncclUniqueId))) return -1;\n"
         "  return static_cast<int>(ncclGetUniqueId(static_cast<ncclUniqueId*>(id)));\n}\n"
         "int evoteam_glue_comm_init(void** comm, int ranks, const void* id, int rank) {\n"
         "  ncclUniqueId unique;\n  std::memcpy(&unique, id, sizeof(unique));\n"
         "  ncclComm_t created = nullptr;\n"
         "  const int status = static_cast<int>(ncclCommInitRank(&created, ranks, unique, rank));\n"
         "  *comm = created;\n  return status;\n}\n"
         "int evoteam_glue_comm_destroy(void* comm) { return "
         "static_cast<int>(ncclCommDestroy(static_cast<ncclComm_t>(comm))); }\n"
         "int evoteam_glue_max_over_ranks(void* comm, double* values, int64_t count, void* stream) {\n"
         "  return static_cast<int>(ncclAllReduce(values, values, static_cast<size_t>(count), ncclFloat64, ncclMax,\n"
         "                                        static_cast<ncclComm_t>(comm), "
         "static_cast<cudaStream_t>(stream)));\n}\n"
         "const char* evoteam_glue_comm_error(int code) { return ncclGetErrorString(static_cast<ncclResult_t>(code)); "
         "}\n\n";
}

}  // namespace

std::string entry_declaration(const Task& task) {
  const bool cuda = task.target == Target::cuda;
  std::vector<std::string> parameters;
  for (const std::string& arg : task.entry.args) parameters.push_back(parameter_type(task, arg) + " " + arg);
  if (cuda && !task.ranks_axis.empty()) parameters.push_back("ncclComm_t comm, std::int32_t rank");
  if (cuda) parameters.push_back("cudaStream_t stream");
  return std::string("extern \"C\" ") + (cuda ? "cudaError_t " : "void ") + task.entry.name + "(" +
         join(parameters, ", ") + ")";
}

std::string glue_source(const Task& task) {
  const bool cuda = task.target == Target::cuda;
  std::ostringstream out;
  out << "// Generated by evoteam for task " << task.name << "; do not edit.\n";
  out << "#include <cstdint>\n#include <cstring>\n";
  const bool ranked = cuda && !task.ranks_axis.empty();
  if (cuda) out << "#include <cuda_runtime.h>\n#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n#include <cuda_fp8.h>\n";
  if (ranked) out << "#include <nccl.h>\n";
  out << "#include \"harness_abi.h\"\n\n";
  std::vector<std::string> parameter_types;
  for (const std::string& arg : task.entry.args) parameter_types.push_back(parameter_type(task, arg));
  if (ranked) parameter_types.push_back("ncclComm_t, std::int32_t");
  if (cuda) parameter_types.push_back("cudaStream_t");
  out << "typedef " << (cuda ? "cudaError_t" : "void") << " (*evoteam_entry_fn)(" << join(parameter_types, ", ")
      << ");\n\n";
  std::set<std::string> hooks;
  for (const TensorSpec& input : task.inputs)
    if (input.generator.kind == InputGenerator::Kind::hook) hooks.insert(input.generator.hook);
  out << "extern \"C\" {\n";
  for (const std::string& hook : hooks)
    out << "void evoteam_hook_" << hook
        << "(void* data, int64_t count, const char* const* axis_names, const int64_t* axis_values, int axis_count, "
           "uint64_t seed);\n";
  if (cuda) write_rank_functions(out, task);
  out << "\nstatic const char* const k_axis_names[] = {"
      << join(task.axes, ", ", [](const Axis& axis) { return "\"" + axis.name + "\""; }) << "};\n\n";
  out << "int evoteam_glue_call(void* entry, void* const* tensors, const int64_t* axes, void* stream) {\n";
  out << "  (void)tensors;\n  (void)axes;\n  (void)stream;\n";
  std::vector<std::string> arguments;
  for (const std::string& arg : task.entry.args) arguments.push_back(call_argument(task, arg));
  if (ranked) arguments.push_back("g_comm, g_rank");
  if (cuda) arguments.push_back("static_cast<cudaStream_t>(stream)");
  // On CUDA the call's status is returned, so the call sits inside static_cast<int>( ... ).
  out << "  " << (cuda ? "return static_cast<int>(" : "") << "reinterpret_cast<evoteam_entry_fn>(entry)("
      << join(arguments, ", ") << ")" << (cuda ? ")" : "") << ";\n"
      << (cuda ? "" : "  return 0;\n") << "}\n\n";
  out << "const char* evoteam_glue_entry_name(void) { return \"" << task.entry.name << "\"; }\n";
  out << "int evoteam_glue_tensor_count(void) { return " << task.tensors().size() << "; }\n";
  out << "int evoteam_glue_axis_count(void) { return " << task.axes.size() << "; }\n";
  out << "const char* const* evoteam_glue_axis_names(void) { return k_axis_names; }\n\n";
  out << "int evoteam_glue_hook(const char* name, void* data, int64_t count, const int64_t* axes, uint64_t seed) {\n";
  out << "  (void)name;\n  (void)data;\n  (void)count;\n  (void)axes;\n  (void)seed;\n";
  for (const std::string& hook : hooks)
    out << "  if (std::strcmp(name, \"" << hook << "\") == 0) {\n    evoteam_hook_" << hook
        << "(data, count, k_axis_names, axes, " << task.axes.size() << ", seed);\n    return 0;\n  }\n";
  out << "  return -1;\n}\n}  // extern \"C\"\n";
  return out.str();
}

}  // namespace evoteam::eval
