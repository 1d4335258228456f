// load_task: reads task.json and validates every field against the rest of the task, so that everything
// downstream (evaluator, agents, search) can trust a loaded Task.
#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/text.hpp>
#include <evoteam/task/task.hpp>

#include <algorithm>
#include <cmath>
#include <regex>
#include <set>

#include "task/task_reader.hpp"

namespace evoteam {
namespace {

// Names the harness or the C and C++ runtime already define: an entry point of that name would clash at link
// time or silently interpose on them, and come back as an INFRA_ERROR far from its cause.
bool is_reserved_symbol(const std::string& name) {
  static const std::set<std::string> reserved = {
      "main", "memcpy", "memmove", "memset", "memcmp", "malloc", "calloc", "realloc", "free",   "printf",
      "puts", "exit",   "abort",   "strlen", "strcpy", "strcmp", "sqrt",   "sqrtf",   "exp",    "expf",
      "log",  "logf",   "sin",     "cos",    "fabs",   "pow",    "read",   "write",   "open",   "close",
      "time", "clock",  "rand",    "srand",  "qsort",  "atexit", "signal", "raise",   "assert", "operator"};
  return reserved.count(name) > 0;
}

using task_detail::FieldReader;
using task_detail::is_identifier;
using task_detail::is_safe_relative_path;
using task_detail::require_file;

const std::vector<std::string> k_top_level_keys = {"name",
                                                   "description",
                                                   "target",
                                                   "archs",
                                                   "axes",
                                                   "inputs",
                                                   "outputs",
                                                   "constraints",
                                                   "entry",
                                                   "reference",
                                                   "kernel",
                                                   "hooks",
                                                   "workloads",
                                                   "distributions",
                                                   "tolerances",
                                                   "flops",
                                                   "bytes",
                                                   "params",
                                                   "param_constraints",
                                                   "static_constraints",
                                                   "libraries",
                                                   "baseline",
                                                   "vendor_baseline",
                                                   "deterministic",
                                                   "scalars",
                                                   "min_devices",
                                                   "ranks_axis",
                                                   "expects_tensor_cores",
                                                   "python_reference"};

const std::set<std::string> k_distributions = {"normal", "uniform", "heavy_tailed", "small_int"};

std::vector<Axis> parse_axes(const FieldReader& reader, const nlohmann::json& value) {
  std::vector<Axis> axes;
  for (const auto& [name, spec] : reader.object_of(value, "axes").items()) {
    const std::string field = "axes." + name;
    if (!is_identifier(name)) reader.fail(field, "axis names must be identifiers");
    reader.object_of(spec, field);
    reader.only_keys(spec, {"type", "value", "description"}, field);
    Axis axis;
    axis.name = name;
    std::string type = reader.string_of(reader.require(spec, "type", field), field + ".type");
    if (type != "const" && type != "var")
      reader.fail(field + ".type", "must be \"const\" or \"var\", got \"" + type + "\"");
    axis.is_const = type == "const";
    if (axis.is_const) {
      axis.value = reader.integer_of(reader.require(spec, "value", field), field + ".value");
      if (axis.value < 1) reader.fail(field + ".value", "must be >= 1");
    } else if (spec.contains("value")) {
      reader.fail(field + ".value", "only const axes have a value (workloads give var axes)");
    }
    if (spec.contains("description")) axis.description = reader.string_of(spec["description"], field + ".description");
    axes.push_back(axis);
  }
  if (axes.empty()) reader.fail("axes", "at least one axis is required");
  return axes;
}

InputGenerator parse_generator(const FieldReader& reader, const nlohmann::json& value, const std::string& field) {
  InputGenerator generator;
  if (value.is_string()) {
    std::string text = value.get<std::string>();
    if (text == "battery") return generator;
    if (text.rfind("hook:", 0) == 0) {
      generator.kind = InputGenerator::Kind::hook;
      generator.hook = text.substr(5);
      if (!is_identifier(generator.hook)) reader.fail(field, "hook names must be identifiers");
      return generator;
    }
    reader.fail(field, "must be \"battery\", \"hook:NAME\" or {\"kind\": \"uniform_int\", ...}");
  }
  reader.object_of(value, field);
  reader.only_keys(value, {"kind", "low", "high", "name"}, field);
  std::string kind = reader.string_of(reader.require(value, "kind", field), field + ".kind");
  if (kind == "uniform_int") {
    generator.kind = InputGenerator::Kind::uniform_int;
    auto expression = [&](const char* key) {
      const nlohmann::json& bound = reader.require(value, key, field);
      return bound.is_number() ? std::to_string(reader.integer_of(bound, field + "." + key))
                               : reader.string_of(bound, field + "." + key);
    };
    generator.low = expression("low");
    generator.high = expression("high");
  } else if (kind == "hook") {
    generator.kind = InputGenerator::Kind::hook;
    generator.hook = reader.string_of(reader.require(value, "name", field), field + ".name");
    if (!is_identifier(generator.hook)) reader.fail(field + ".name", "hook names must be identifiers");
  } else {
    reader.fail(field + ".kind", "must be \"uniform_int\" or \"hook\", got \"" + kind + "\"");
  }
  return generator;
}

std::vector<TensorSpec> parse_tensors(const FieldReader& reader, const nlohmann::json& value, TensorRole role,
                                      const Task& task) {
  const std::string section = role == TensorRole::input ? "inputs" : "outputs";
  std::vector<TensorSpec> tensors;
  for (const auto& [name, spec] : reader.object_of(value, section).items()) {
    const std::string field = section + "." + name;
    if (!is_identifier(name)) reader.fail(field, "tensor names must be identifiers");
    if (task.find_axis(name) != nullptr) reader.fail(field, "a tensor and an axis cannot share a name");
    reader.object_of(spec, field);
    reader.only_keys(spec,
                     role == TensorRole::input ? std::vector<std::string>{"dtype", "shape", "generate", "description"}
                                               : std::vector<std::string>{"dtype", "shape", "scratch", "description"},
                     field);
    TensorSpec tensor;
    tensor.name = name;
    tensor.role = role;
    std::string dtype = reader.string_of(reader.require(spec, "dtype", field), field + ".dtype");
    std::optional<DType> parsed = parse_dtype(dtype);
    if (!parsed) reader.fail(field + ".dtype", "unknown dtype \"" + dtype + "\"");
    tensor.dtype = *parsed;
    bool host_dtype = tensor.dtype == DType::float32 || tensor.dtype == DType::float64 ||
                      tensor.dtype == DType::int32 || tensor.dtype == DType::int64 || tensor.dtype == DType::uint8;
    if (task.target == Target::host && !host_dtype)
      reader.fail(field + ".dtype", dtype + " is supported for cuda tasks only");
    const nlohmann::json& shape = reader.array_of(reader.require(spec, "shape", field), field + ".shape");
    if (shape.empty()) reader.fail(field + ".shape", "must list at least one dimension (a scalar is shaped [1])");
    for (std::size_t i = 0; i < shape.size(); ++i) {
      const std::string dim_field = field + ".shape[" + std::to_string(i) + "]";
      tensor.shape.push_back(shape[i].is_number() ? std::to_string(reader.integer_of(shape[i], dim_field))
                                                  : reader.string_of(shape[i], dim_field));
    }
    if (role == TensorRole::input && spec.contains("generate")) {
      tensor.generator = parse_generator(reader, spec["generate"], field + ".generate");
      if (tensor.generator.kind != InputGenerator::Kind::battery && is_floating(tensor.dtype) &&
          tensor.generator.kind == InputGenerator::Kind::uniform_int)
        reader.fail(field + ".generate", "uniform_int needs an integer dtype");
    }
    if (role == TensorRole::output && spec.contains("scratch"))
      tensor.scratch = reader.boolean_of(spec["scratch"], field + ".scratch");
    tensors.push_back(tensor);
  }
  if (tensors.empty()) reader.fail(section, "at least one " + section.substr(0, section.size() - 1) + " is required");
  return tensors;
}

// Every shape and generator expression must evaluate with the axes alone.
void check_expressions(const FieldReader& reader, const Task& task) {
  std::map<std::string, std::int64_t> ones;
  for (const Axis& axis : task.axes) ones[axis.name] = axis.is_const ? axis.value : 7;
  std::map<std::string, double> values;
  for (const auto& [name, value] : ones) values[name] = static_cast<double>(value);
  for (const TensorSpec* tensor : task.tensors()) {
    const std::string section = tensor->role == TensorRole::input ? "inputs." : "outputs.";
    for (std::size_t i = 0; i < tensor->shape.size(); ++i) {
      try {
        evaluate_expression(tensor->shape[i], values, "");
      } catch (const InvalidInput& error) {
        reader.fail(section + tensor->name + ".shape[" + std::to_string(i) + "]", error.what());
      }
    }
    if (tensor->generator.kind == InputGenerator::Kind::uniform_int) {
      for (const std::string* bound : {&tensor->generator.low, &tensor->generator.high}) {
        try {
          evaluate_expression(*bound, values, "");
        } catch (const InvalidInput& error) {
          reader.fail(section + tensor->name + ".generate", error.what());
        }
      }
    }
  }
  for (std::size_t i = 0; i < task.constraints.size(); ++i) {
    try {
      evaluate_expression(task.constraints[i], values, "");
    } catch (const InvalidInput& error) {
      reader.fail("constraints[" + std::to_string(i) + "]", error.what());
    }
  }
}

// Scalars are fixed for the task, so their expressions may use const axes only.
std::vector<ScalarSpec> parse_scalars(const FieldReader& reader, const nlohmann::json& value, const Task& task) {
  std::map<std::string, double> constants;
  for (const Axis& axis : task.axes)
    if (axis.is_const) constants[axis.name] = static_cast<double>(axis.value);
  std::vector<ScalarSpec> scalars;
  for (const auto& [name, spec] : reader.object_of(value, "scalars").items()) {
    const std::string field = "scalars." + name;
    if (!is_identifier(name)) reader.fail(field, "scalar names must be identifiers");
    if (task.find_axis(name) != nullptr || task.find_tensor(name) != nullptr)
      reader.fail(field, "a scalar cannot share a name with an axis or a tensor");
    reader.object_of(spec, field);
    reader.only_keys(spec, {"dtype", "value", "description"}, field);
    ScalarSpec scalar;
    scalar.name = name;
    const std::string dtype = reader.string_of(reader.require(spec, "dtype", field), field + ".dtype");
    const std::optional<DType> parsed = parse_dtype(dtype);
    if (!parsed ||
        (*parsed != DType::float32 && *parsed != DType::float64 && *parsed != DType::int32 && *parsed != DType::int64))
      reader.fail(field + ".dtype", "must be float32, float64, int32 or int64, got \"" + dtype + "\"");
    scalar.dtype = *parsed;
    const nlohmann::json& given = reader.require(spec, "value", field);
    scalar.expression = given.is_number() ? given.dump() : reader.string_of(given, field + ".value");
    try {
      scalar.value = evaluate_expression(scalar.expression, constants, "");
    } catch (const InvalidInput& error) {
      reader.fail(field + ".value", std::string(error.what()) + " (only const axes may appear)");
    }
    if (!is_floating(scalar.dtype) && scalar.value != std::floor(scalar.value))
      reader.fail(field + ".value", "an integer scalar needs an integral value");
    scalars.push_back(scalar);
  }
  return scalars;
}

EntryPoint parse_entry(const FieldReader& reader, const nlohmann::json& value, const Task& task) {
  reader.object_of(value, "entry");
  reader.only_keys(value, {"name", "args"}, "entry");
  EntryPoint entry;
  entry.name = reader.string_of(reader.require(value, "name", "entry"), "entry.name");
  if (!is_identifier(entry.name) || entry.name.rfind("evoteam_", 0) == 0)
    reader.fail("entry.name", "must be an identifier not starting with evoteam_");
  if (is_reserved_symbol(entry.name))
    reader.fail("entry.name",
                "\"" + entry.name + "\" is already defined by the harness or the C runtime; choose another name");
  entry.args = reader.strings_of(reader.require(value, "args", "entry"), "entry.args");
  std::set<std::string> seen;
  for (std::size_t i = 0; i < entry.args.size(); ++i) {
    const std::string& arg = entry.args[i];
    if (task.find_tensor(arg) == nullptr && task.find_axis(arg) == nullptr && task.find_scalar(arg) == nullptr)
      reader.fail("entry.args[" + std::to_string(i) + "]", "\"" + arg + "\" is neither a tensor, an axis nor a scalar");
    if (!seen.insert(arg).second) reader.fail("entry.args[" + std::to_string(i) + "]", "\"" + arg + "\" appears twice");
  }
  for (const TensorSpec* tensor : task.tensors())
    if (!seen.count(tensor->name))
      reader.fail("entry.args", "tensor \"" + tensor->name + "\" is not passed to the entry point");
  return entry;
}

std::vector<std::string> parse_kernel_files(const FieldReader& reader, const nlohmann::json& value, const Task& task) {
  reader.object_of(value, "kernel");
  reader.only_keys(value, {"files"}, "kernel");
  std::vector<std::string> files = reader.strings_of(reader.require(value, "files", "kernel"), "kernel.files");
  const std::vector<std::string> sources =
      task.target == Target::host ? std::vector<std::string>{".cpp", ".cc", ".cxx"} : std::vector<std::string>{".cu"};
  const std::vector<std::string> headers = {".h", ".hpp", ".cuh", ".inc"};
  bool has_source = false;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const std::string field = "kernel.files[" + std::to_string(i) + "]";
    require_file(reader, task, files[i], field);
    if (files[i].find('/') != std::string::npos) reader.fail(field, "kernel files live directly in the task directory");
    if (!seen.insert(files[i]).second) reader.fail(field, "listed twice");
    std::string extension = std::filesystem::path(files[i]).extension().string();
    bool is_source = std::find(sources.begin(), sources.end(), extension) != sources.end();
    bool is_header = std::find(headers.begin(), headers.end(), extension) != headers.end();
    if (!is_source && !is_header)
      reader.fail(field, "unsupported extension \"" + extension + "\" for target " + to_string(task.target));
    has_source |= is_source;
  }
  if (!has_source) reader.fail("kernel.files", "at least one source file is required");
  return files;
}

Tolerance default_tolerance(DType dtype) {
  Tolerance tolerance;
  if (dtype == DType::float64) tolerance = {1e-10, 0.0, 1e-10, 1e-12};
  if (dtype == DType::float16) tolerance = {1e-2, 0.0, 1e-2, 1e-3};
  if (dtype == DType::bfloat16) tolerance = {2e-2, 0.0, 2e-2, 8e-3};
  return tolerance;
}

std::map<std::string, Tolerance> parse_tolerances(const FieldReader& reader, const nlohmann::json* value,
                                                  const Task& task) {
  std::map<std::string, Tolerance> tolerances;
  for (const TensorSpec& output : task.outputs) tolerances[output.name] = default_tolerance(output.dtype);
  if (value == nullptr) return tolerances;
  for (const auto& item : reader.object_of(*value, "tolerances").items()) {
    const std::string& name = item.key();
    const nlohmann::json& spec = item.value();  // a reference, not a binding: the lambda below captures it
    const std::string field = "tolerances." + name;
    const TensorSpec* tensor = task.find_tensor(name);
    if (tensor == nullptr || tensor->role != TensorRole::output) reader.fail(field, "not an output");
    reader.object_of(spec, field);
    reader.only_keys(spec, {"rtol", "atol", "atol_rms", "normwise"}, field);
    Tolerance& tolerance = tolerances[name];
    auto read = [&](const char* key, double& target) {
      if (!spec.contains(key)) return;
      target = reader.number_of(spec[key], field + "." + key);
      if (target < 0) reader.fail(field + "." + key, "must be >= 0");
    };
    read("rtol", tolerance.rtol);
    read("atol", tolerance.atol);
    read("atol_rms", tolerance.atol_rms);
    read("normwise", tolerance.normwise);
  }
  return tolerances;
}

// The archs a ptx or sass constraint is scoped to: each one of the task's archs.
std::vector<std::string> parse_constraint_archs(const FieldReader& reader, const nlohmann::json& value,
                                                const Task& task, const StaticConstraint& constraint,
                                                const std::string& field) {
  if (task.target != Target::cuda) reader.fail(field, "only cuda tasks scope constraints to archs");
  if (constraint.scope != "ptx" && constraint.scope != "sass")
    reader.fail(field, "archs apply to the ptx and sass scopes only, not \"" + constraint.scope + "\"");
  std::vector<std::string> archs = reader.strings_of(value, field);
  if (archs.empty()) reader.fail(field, "name at least one arch, or leave the field out for every arch");
  for (std::size_t i = 0; i < archs.size(); ++i)
    if (std::find(task.archs.begin(), task.archs.end(), archs[i]) == task.archs.end())
      reader.fail(field + "[" + std::to_string(i) + "]",
                  "\"" + archs[i] + "\" is not one of the task's archs (" + join(task.archs, ", ") + ")");
  return archs;
}

std::vector<StaticConstraint> parse_static_constraints(const FieldReader& reader, const nlohmann::json& value,
                                                       const Task& task) {
  const Target target = task.target;
  std::vector<StaticConstraint> constraints;
  std::set<std::string> names;
  const nlohmann::json& items = reader.array_of(value, "static_constraints");
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string field = "static_constraints[" + std::to_string(i) + "]";
    reader.object_of(items[i], field);
    reader.only_keys(items[i], {"name", "scope", "require", "forbid", "message", "archs", "once_adopted"}, field);
    StaticConstraint constraint;
    constraint.name = items[i].contains("name") ? reader.string_of(items[i]["name"], field + ".name")
                                                : "constraint " + std::to_string(i);
    constraint.scope = reader.string_of(reader.require(items[i], "scope", field), field + ".scope");
    const std::set<std::string> scopes = target == Target::host
                                             ? std::set<std::string>{"source", "symbols", "disassembly"}
                                             : std::set<std::string>{"source", "symbols", "ptx", "sass"};
    if (!scopes.count(constraint.scope))
      reader.fail(field + ".scope", "\"" + constraint.scope + "\" is not a scope for target " + to_string(target));
    bool has_require = items[i].contains("require");
    if (has_require == items[i].contains("forbid"))
      reader.fail(field, "exactly one of \"require\" and \"forbid\" is needed");
    constraint.required = has_require;
    constraint.pattern =
        reader.string_of(items[i][has_require ? "require" : "forbid"], field + (has_require ? ".require" : ".forbid"));
    try {
      std::regex compiled(constraint.pattern);
    } catch (const std::regex_error& error) {
      reader.fail(field, std::string("invalid regex: ") + error.what());
    }
    if (items[i].contains("message")) constraint.message = reader.string_of(items[i]["message"], field + ".message");
    if (items[i].contains("archs"))
      constraint.archs = parse_constraint_archs(reader, items[i]["archs"], task, constraint, field + ".archs");
    if (items[i].contains("once_adopted")) {
      constraint.once_adopted = reader.boolean_of(items[i]["once_adopted"], field + ".once_adopted");
      if (constraint.once_adopted && !constraint.required)
        reader.fail(field + ".once_adopted", "only a \"require\" constraint can be kept once adopted");
    }
    // Rulings and evaluation records name a constraint, so a name must mean one constraint.
    if (!names.insert(constraint.name).second)
      reader.fail(field + ".name", "\"" + constraint.name + "\" is used twice");
    constraints.push_back(constraint);
  }
  return constraints;
}

Baseline parse_baseline(const FieldReader& reader, const nlohmann::json* value, const Task& task) {
  Baseline baseline;
  if (value == nullptr) return baseline;
  reader.object_of(*value, "baseline");
  reader.only_keys(*value, {"kind", "name", "file", "vendor"}, "baseline");
  std::string kind = reader.string_of(reader.require(*value, "kind", "baseline"), "baseline.kind");
  if (kind == "starting")
    baseline.kind = BaselineKind::starting;
  else if (kind == "reference")
    baseline.kind = BaselineKind::reference;
  else if (kind == "library")
    baseline.kind = BaselineKind::library;
  else
    reader.fail("baseline.kind", "must be \"starting\", \"reference\" or \"library\", got \"" + kind + "\"");
  if (baseline.kind == BaselineKind::library) {
    baseline.name = reader.string_of(reader.require(*value, "name", "baseline"), "baseline.name");
    baseline.file = require_file(
        reader, task, reader.string_of(reader.require(*value, "file", "baseline"), "baseline.file"), "baseline.file");
    if (value->contains("vendor")) baseline.vendor = reader.boolean_of((*value)["vendor"], "baseline.vendor");
  } else if (value->contains("file") || value->contains("vendor")) {
    reader.fail("baseline", "\"file\" and \"vendor\" apply to library baselines only");
  }
  return baseline;
}

// The vendors evoteam can build from their sources (eval/vendor_baseline.cpp knows where each one lives).
const std::set<std::string> k_vendor_kinds = {"flashinfer"};

VendorBaseline parse_vendor_baseline(const FieldReader& reader, const nlohmann::json* value, const Task& task) {
  VendorBaseline vendor;
  if (value == nullptr) return vendor;
  const std::string field = "vendor_baseline";
  reader.object_of(*value, field);
  reader.only_keys(*value, {"kind", "file", "unavailable", "missing_archs"}, field);
  vendor.kind = reader.string_of(reader.require(*value, "kind", field), field + ".kind");
  if (k_vendor_kinds.count(vendor.kind) == 0)
    reader.fail(field + ".kind", "must be \"flashinfer\", got \"" + vendor.kind + "\"");
  if (task.target != Target::cuda) reader.fail(field, "vendor baselines are for cuda tasks");
  if (value->contains("file") == value->contains("unavailable"))
    reader.fail(field, "needs exactly one of \"file\" (the vendor's kernel) and \"unavailable\" (why it has none)");
  if (value->contains("file"))
    vendor.file = require_file(reader, task, reader.string_of((*value)["file"], field + ".file"), field + ".file");
  else
    vendor.unavailable = reader.string_of((*value)["unavailable"], field + ".unavailable");
  if (value->contains("missing_archs")) {
    const nlohmann::json& missing = (*value)["missing_archs"];
    reader.object_of(missing, field + ".missing_archs");
    for (const auto& [arch, why] : missing.items()) {
      if (std::find(task.archs.begin(), task.archs.end(), arch) == task.archs.end())
        reader.fail(field + ".missing_archs." + arch, "is not one of the task's archs");
      vendor.missing_archs[arch] = reader.string_of(why, field + ".missing_archs." + arch);
    }
  }
  return vendor;
}

std::string content_hash(const Task& task, const std::string& task_text, const std::string& workloads_text) {
  std::string material = "task.json\n" + task_text + "\nworkloads\n" + workloads_text;
  std::vector<std::string> files = task.kernel_files;
  files.push_back(task.reference_file);
  if (!task.hooks_file.empty()) files.push_back(task.hooks_file);
  if (task.python_reference) files.push_back(task.python_reference->file);
  if (!task.baseline.file.empty()) files.push_back(task.baseline.file);
  if (!task.vendor.file.empty()) files.push_back(task.vendor.file);
  for (const std::string& file : files) material += "\n" + file + "\n" + read_file(task.dir / file);
  return sha256_hex(material);
}

// The task directory's task.json; refused when there is none.
std::filesystem::path task_json_of(const std::filesystem::path& task_dir, std::filesystem::path& dir) {
  std::error_code error;
  dir = std::filesystem::absolute(task_dir, error).lexically_normal();
  if (dir.has_filename() == false) dir = dir.parent_path();
  const std::filesystem::path file = dir / "task.json";
  if (!std::filesystem::is_regular_file(file))
    throw InvalidInput(file.string() + ": no such file (is " + task_dir.string() + " a task directory?)");
  return file;
}

// What the task is called, what it says of itself, and what it targets.
void read_task_identity(const FieldReader& reader, const nlohmann::json& root, Task& task) {
  task.name = reader.string_of(reader.require(root, "name", ""), "name");
  if (task.name.empty() ||
      task.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") !=
          std::string::npos)
    reader.fail("name", "use letters, digits, '_', '.' and '-'");
  if (root.contains("description")) task.description = reader.string_of(root["description"], "description");
  std::string target = reader.string_of(reader.require(root, "target", ""), "target");
  if (target == "host")
    task.target = Target::host;
  else if (target == "cuda")
    task.target = Target::cuda;
  else
    reader.fail("target", "must be \"host\" or \"cuda\", got \"" + target + "\"");
  if (task.target == Target::cuda) {
    task.archs = reader.strings_of(reader.require(root, "archs", ""), "archs");
    if (task.archs.empty()) reader.fail("archs", "a cuda task needs at least one arch, e.g. \"sm_90a\"");
    static const std::regex arch_pattern("sm_[0-9]{2,3}[af]?");
    for (std::size_t i = 0; i < task.archs.size(); ++i)
      if (!std::regex_match(task.archs[i], arch_pattern))
        reader.fail("archs[" + std::to_string(i) + "]",
                    "\"" + task.archs[i] + "\" is not an arch like sm_90a or sm_100a");
  } else if (root.contains("archs")) {
    reader.fail("archs", "only cuda tasks have archs");
  }
}

// The kernel's interface: axes, tensors, scalars, the constraints over them and the entry point.
void read_task_interface(const FieldReader& reader, const nlohmann::json& root, Task& task) {
  task.axes = parse_axes(reader, reader.require(root, "axes", ""));
  task.inputs = parse_tensors(reader, reader.require(root, "inputs", ""), TensorRole::input, task);
  task.outputs = parse_tensors(reader, reader.require(root, "outputs", ""), TensorRole::output, task);
  for (const TensorSpec& output : task.outputs)
    for (const TensorSpec& input : task.inputs)
      if (input.name == output.name) reader.fail("outputs." + output.name, "also declared as an input");
  if (root.contains("constraints")) task.constraints = reader.strings_of(root["constraints"], "constraints");
  check_expressions(reader, task);
  if (root.contains("scalars")) task.scalars = parse_scalars(reader, root["scalars"], task);
  task.entry = parse_entry(reader, reader.require(root, "entry", ""), task);
}

// The files the task names: the reference, the editable kernel files, the Python reference and the input hooks.
void read_task_files(const FieldReader& reader, const nlohmann::json& root, Task& task) {
  task.reference_file =
      require_file(reader, task, reader.string_of(reader.require(root, "reference", ""), "reference"), "reference");
  task.kernel_files = parse_kernel_files(reader, reader.require(root, "kernel", ""), task);
  for (const std::string& kernel_file : task.kernel_files)
    if (kernel_file == task.reference_file) reader.fail("kernel.files", "the reference cannot be a kernel file");
  if (root.contains("python_reference"))
    task.python_reference = task_detail::parse_python_reference(reader, root["python_reference"], task);
  if (root.contains("hooks"))
    task.hooks_file = require_file(reader, task, reader.string_of(root["hooks"], "hooks"), "hooks");
  for (const TensorSpec& input : task.inputs)
    if (input.generator.kind == InputGenerator::Kind::hook && task.hooks_file.empty())
      reader.fail("inputs." + input.name + ".generate", "a hook generator needs \"hooks\": \"FILE\"");
}

// How candidates are checked and rated: input distributions, tolerances, and the work a call does (flops, bytes).
void read_task_checks(const FieldReader& reader, const nlohmann::json& root, Task& task) {
  if (root.contains("distributions")) {
    task.distributions = reader.strings_of(root["distributions"], "distributions");
    for (std::size_t i = 0; i < task.distributions.size(); ++i)
      if (!k_distributions.count(task.distributions[i]))
        reader.fail("distributions[" + std::to_string(i) + "]", "unknown distribution \"" + task.distributions[i] +
                                                                    "\" (normal, uniform, heavy_tailed, small_int)");
  }
  task.tolerances = parse_tolerances(reader, root.contains("tolerances") ? &root["tolerances"] : nullptr, task);
  if (root.contains("flops")) task.flops = reader.string_of(root["flops"], "flops");
  if (root.contains("bytes")) task.bytes = reader.string_of(root["bytes"], "bytes");
}

// What the team may vary and what its code must keep: params, their constraints, static constraints.
void read_task_search_space(const FieldReader& reader, const nlohmann::json& root, Task& task) {
  if (root.contains("params")) task.params = task_detail::parse_params(reader, root["params"]);
  for (const ParamSpec& param : task.params)
    if (task.find_axis(param.name) || task.find_tensor(param.name) || param.name == task.entry.name)
      reader.fail("params", "param \"" + param.name + "\" clashes with an axis, a tensor or the entry point");
  if (root.contains("param_constraints"))
    task.param_constraints = reader.strings_of(root["param_constraints"], "param_constraints");
  task_detail::check_param_constraints(reader, task);
  if (root.contains("static_constraints"))
    task.static_constraints = parse_static_constraints(reader, root["static_constraints"], task);
}

// What it runs on and is compared with: tensor cores, libraries, baselines, determinism, devices.
void read_task_platform(const FieldReader& reader, const nlohmann::json& root, Task& task) {
  if (root.contains("expects_tensor_cores")) {
    task.expects_tensor_cores = reader.boolean_of(root["expects_tensor_cores"], "expects_tensor_cores");
    if (task.expects_tensor_cores && task.target != Target::cuda)
      reader.fail("expects_tensor_cores", "only cuda tasks have tensor cores");
  }
  if (root.contains("libraries")) task.libraries = reader.strings_of(root["libraries"], "libraries");
  task.baseline = parse_baseline(reader, root.contains("baseline") ? &root["baseline"] : nullptr, task);
  task.vendor =
      parse_vendor_baseline(reader, root.contains("vendor_baseline") ? &root["vendor_baseline"] : nullptr, task);
  if (root.contains("deterministic")) task.deterministic = reader.boolean_of(root["deterministic"], "deterministic");
  if (root.contains("min_devices")) {
    const std::int64_t devices = reader.integer_of(root["min_devices"], "min_devices");
    if (devices < 1 || devices > 64) reader.fail("min_devices", "must be between 1 and 64");
    if (devices > 1 && task.target != Target::cuda)
      reader.fail("min_devices", "only cuda tasks can need several devices");
    task.min_devices = static_cast<int>(devices);
  }
}

}  // namespace

// Each part reads after the parts it checks against (tensors after axes, params after tensors and the entry point).
Task load_task(const std::filesystem::path& task_dir) {
  Task task;
  const std::filesystem::path file = task_json_of(task_dir, task.dir);
  const std::string text = read_file(file);
  const nlohmann::json root = read_json_file(file);
  FieldReader reader(file.string());
  reader.object_of(root, "");
  reader.only_keys(root, k_top_level_keys, "");

  read_task_identity(reader, root, task);
  read_task_interface(reader, root, task);
  read_task_files(reader, root, task);
  read_task_checks(reader, root, task);
  read_task_search_space(reader, root, task);
  read_task_platform(reader, root, task);
  std::string workloads_text;
  task.workloads = task_detail::parse_workloads(reader, reader.require(root, "workloads", ""), task, &workloads_text);
  task.ranks_axis =
      task_detail::parse_ranks_axis(reader, root.contains("ranks_axis") ? &root["ranks_axis"] : nullptr, task);
  task.content_hash = content_hash(task, text, workloads_text);
  return task;
}

}  // namespace evoteam
