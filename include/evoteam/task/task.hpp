#pragma once
// A kernel task: kernels/<task>/task.json and the files beside it (format reference: kernels/README.md).
// Modelled on the FlashInfer-Trace Definition: named axes (const or var), input and output tensors whose shapes
// are expressions over the axes, constraints; plus target, reference, starting kernel, workloads, tolerances,
// FLOP/byte formulas, tunable params, static constraints, libraries and the baseline. Loading validates
// everything and throws InvalidInput naming the file and the field; nothing here runs a process.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace evoteam {

enum class Target { host, cuda };
std::string to_string(Target target);

// Element types. The host target supports float32, float64, int32, int64 and uint8; the 16-bit and 8-bit float
// types are accepted for cuda tasks only.
enum class DType { float32, float64, int32, int64, uint8, float16, bfloat16, float8_e4m3, float8_e5m2 };
std::string to_string(DType dtype);
std::optional<DType> parse_dtype(const std::string& text);
std::size_t dtype_size(DType dtype);
bool is_floating(DType dtype);

struct Axis {
  std::string name;
  bool is_const = false;
  std::int64_t value = 0;  // for const axes
  std::string description;
};

enum class TensorRole { input, output };

// How an input is filled. `battery`: the trial's distribution (normal, uniform, heavy_tailed, small_int);
// `uniform_int`: integers in [low, high) (expressions over the axes); `hook`: a function in the task's hooks file.
struct InputGenerator {
  enum class Kind { battery, uniform_int, hook };
  Kind kind = Kind::battery;
  std::string low = "0";
  std::string high = "1";
  std::string hook;  // hook name for Kind::hook
};

struct TensorSpec {
  std::string name;
  TensorRole role = TensorRole::input;
  DType dtype = DType::float32;
  std::vector<std::string> shape;  // expressions over the axes, outermost first
  InputGenerator generator;        // inputs only
  bool scratch = false;            // outputs only: a workspace passed like an output but never compared
};

// A by-value argument of the entry point (e.g. sm_scale). Its value is an expression over const axes, fixed
// for the task; entry args may name it.
struct ScalarSpec {
  std::string name;
  DType dtype = DType::float32;  // float32, float64, int32 or int64
  std::string expression;
  double value = 0;
};

// An output element passes when |y - r| <= atol + atol_rms * RMS(r) + rtol * |r|; the whole output also needs
// ||y - r||_2 / ||r||_2 <= normwise. Integer outputs compare exactly.
struct Tolerance {
  double rtol = 1e-4;
  double atol = 0.0;
  double atol_rms = 1e-4;
  double normwise = 1e-5;
};

// Where a workload comes from: published with the definition the task follows (FlashInfer-Bench's workloads),
// or added by this project (edge shapes, sizes of our own). task.json's "origin" field; "ours" when absent.
enum class WorkloadOrigin { ours, published };
std::string to_string(WorkloadOrigin origin);
std::optional<WorkloadOrigin> parse_workload_origin(const std::string& text);

struct Workload {
  std::string name;
  std::map<std::string, std::int64_t> axes;  // var axes only; const axes come from the task
  WorkloadOrigin origin = WorkloadOrigin::ours;
  std::string source;  // published workloads: where they were published (e.g. the trace's workload uuid)
};

// The workloads a command evaluates: `--workloads published|ours|all`.
enum class WorkloadSelection { all, published, ours };
std::string to_string(WorkloadSelection selection);
std::optional<WorkloadSelection> parse_workload_selection(const std::string& text);

// A tunable compile-time parameter, passed to the build as -D<name>=<value>.
struct ParamSpec {
  std::string name;
  std::vector<std::string> values;  // as written in task.json (numbers printed canonically)
  std::string default_value;
  std::string description;
};
using ParamAssignment = std::map<std::string, std::string>;

// A required or forbidden construct, checked by the static stage. scope: "source" (the candidate's files),
// "symbols" (undefined symbols of its objects), "disassembly" (host objects), "ptx" or "sass" (cuda).
struct StaticConstraint {
  std::string name;
  std::string scope;
  std::string pattern;    // ECMAScript regex
  bool required = false;  // true: must match somewhere; false: must not match anywhere
  std::string message;
  // ptx and sass scopes of cuda tasks: the archs whose code the constraint judges; empty means every arch.
  std::vector<std::string> archs;
  // A required construct a team keeps once it has adopted it: never a rejection by the static stage. The
  // evaluation reports whether a candidate meets it, and once the run's best does, the lab rejects a later
  // candidate that does not ("slid back from <name>").
  bool once_adopted = false;
};

enum class BaselineKind { starting, reference, library };
std::string to_string(BaselineKind kind);

// What speedups are measured against: the starting kernel at its default params, the reference, or a named
// library implementation in the task directory (vendor: a vendor-library baseline, where >10x is suspicious).
struct Baseline {
  BaselineKind kind = BaselineKind::starting;
  std::string name;  // for library baselines
  std::string file;  // for library baselines, relative to the task directory
  bool vendor = false;
};

// A vendor library the task's results are also stated against (FlashInfer), beside the baseline: built from the
// library's own sources for each arch, called through the same harness and timed by the same protocol, trusted
// (its `<entry>_plan` hook, which schedules a batch on the host, runs before the timed calls). Candidates are
// reported as a fraction of its speed. kind empty: the task has none.
struct VendorBaseline {
  std::string kind;         // "flashinfer"
  std::string file;         // relative to the task directory; empty when the vendor has no kernel for the task
  std::string unavailable;  // why the vendor has no kernel for this task (then there is no file)
  std::map<std::string, std::string> missing_archs;  // arch -> why the vendor has no kernel for it
};

// The fixed entry point every implementation (reference, starting kernel, candidate, library baseline)
// defines with C linkage. args name tensors (inputs become `const T*`, outputs `T*`) or axes (`int64_t`), in
// call order; for cuda tasks a trailing `cudaStream_t` is added and the return type is `cudaError_t`.
struct EntryPoint {
  std::string name;
  std::vector<std::string> args;
};

// A Python reference beside the C++/CUDA one, run as an extra oracle (`evoteam eval --oracle`): a module in the
// task directory whose `function` takes the task's inputs, axes and scalars by keyword (numpy arrays, or torch
// tensors for the torch framework) and returns its outputs. task.json's "python_reference" field.
enum class PythonFramework { numpy, torch };
std::string to_string(PythonFramework framework);

struct PythonReference {
  std::string file;  // relative to the task directory
  PythonFramework framework = PythonFramework::numpy;
  std::string function = "run";
};

struct Task {
  std::filesystem::path dir;  // absolute
  std::string name;
  std::string description;
  Target target = Target::host;
  std::vector<std::string> archs;  // cuda only: "sm_90a", "sm_100a"
  std::vector<Axis> axes;
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  std::vector<ScalarSpec> scalars;
  std::vector<std::string> constraints;  // expressions over the axes that every workload must satisfy
  EntryPoint entry;
  std::string reference_file;  // relative to dir
  std::optional<PythonReference> python_reference;
  std::vector<std::string> kernel_files;  // the starting kernel; exactly the files a candidate may edit
  std::string hooks_file;                 // optional, relative to dir
  std::vector<Workload> workloads;
  std::vector<std::string> distributions;       // empty: the configured default battery
  std::map<std::string, Tolerance> tolerances;  // per output
  std::string flops;                            // expression over the axes
  std::string bytes;                            // expression over the axes
  std::vector<ParamSpec> params;
  std::vector<std::string> param_constraints;  // expressions over numeric params
  std::vector<StaticConstraint> static_constraints;
  // cuda only: the task is meant for tensor cores (wgmma on sm_90a, tcgen05 on sm_100a); a candidate without
  // them gets a static warning.
  bool expects_tensor_cores = false;
  std::vector<std::string> libraries;
  Baseline baseline;
  VendorBaseline vendor;
  bool deterministic = true;  // false waives the bitwise repeat check (e.g. atomics)
  int min_devices = 1;        // GPUs one evaluation needs (multi-GPU tasks say so here)
  // The var axis whose value is a workload's group size: one harness process (and GPU) per rank. Empty for
  // tasks that run in one process; required when min_devices > 1.
  std::string ranks_axis;
  std::string content_hash;  // sha256 over task.json and every file it names

  const Axis* find_axis(const std::string& name) const;
  const TensorSpec* find_tensor(const std::string& name) const;
  const ScalarSpec* find_scalar(const std::string& name) const;
  std::vector<const TensorSpec*> tensors() const;  // inputs, then outputs
};

// Loads and validates <task_dir>/task.json (and workloads.jsonl when named). Throws InvalidInput naming the
// file and the field.
Task load_task(const std::filesystem::path& task_dir);

// Keeps the task's workloads of the selected origin (all: every one) and, when that drops any, folds the
// selection into content_hash so results of different selections never share a cache entry. Throws
// InvalidInput naming the task when the selection leaves no workload.
void select_workloads(Task& task, WorkloadSelection selection);

// Evaluates an expression (muparser syntax plus %, floor, ceil, cdiv) with the given variables. Throws
// InvalidInput with `where` in the message.
double evaluate_expression(const std::string& expression, const std::map<std::string, double>& variables,
                           const std::string& where);

// Every axis value of a workload: the const axes plus the workload's var axes.
std::map<std::string, std::int64_t> workload_axes(const Task& task, const Workload& workload);
// Element count of a tensor for the given axis values (throws InvalidInput for negative or non-integral sizes).
std::int64_t tensor_elements(const TensorSpec& tensor, const std::map<std::string, std::int64_t>& axes);
double workload_flops(const Task& task, const std::map<std::string, std::int64_t>& axes);
double workload_bytes(const Task& task, const std::map<std::string, std::int64_t>& axes);
// The first violated constraint, or nullopt when all hold.
std::optional<std::string> violated_constraint(const Task& task, const std::map<std::string, std::int64_t>& axes);

// The param space: every assignment in the cartesian product of the declared values that satisfies the
// param constraints, in declaration order (first param varies slowest). Empty params give one empty assignment.
std::vector<ParamAssignment> param_space(const Task& task);
ParamAssignment default_params(const Task& task);
// `partial` with every missing param set to its default.
ParamAssignment complete_params(const Task& task, const ParamAssignment& partial);
// Why an assignment is invalid (unknown name, value not declared, constraint violated), or nullopt.
std::optional<std::string> param_error(const Task& task, const ParamAssignment& params);
// "NAME=value,NAME=value" in name order.
std::string describe_params(const ParamAssignment& params);
// Applies the changes an agent wrote ("NAME=value, NAME=value"; commas or spaces between them) to `params`,
// each checked against the declared values and the whole against the param constraints. Returns why the text
// cannot be applied (and leaves `params` as it was), or nullopt.
std::optional<std::string> apply_param_text(const Task& task, const std::string& text, ParamAssignment& params);
// For prompts: "NAME in {a, b} default a; ..." and the param constraints, or "none".
std::string describe_param_space(const Task& task);
// For prompts: one "- required: message", "- forbidden: message" or "- required once adopted: message" line per
// static constraint (with its archs when scoped), or "none".
std::string describe_static_constraints(const Task& task);

nlohmann::json to_json(const ParamAssignment& params);

}  // namespace evoteam
