// Names of the task enums and small lookups.
#include <evoteam/task/c_type.hpp>
#include <evoteam/task/task.hpp>

namespace evoteam {

std::string to_string(Target target) { return target == Target::host ? "host" : "cuda"; }

namespace {

struct DTypeInfo {
  DType dtype;
  const char* name;
  std::size_t size;
  bool floating;
  const char* c_type;
};

constexpr DTypeInfo k_dtypes[] = {
    {DType::float32, "float32", 4, true, "float"},
    {DType::float64, "float64", 8, true, "double"},
    {DType::int32, "int32", 4, false, "std::int32_t"},
    {DType::int64, "int64", 8, false, "std::int64_t"},
    {DType::uint8, "uint8", 1, false, "std::uint8_t"},
    {DType::float16, "float16", 2, true, "__half"},
    {DType::bfloat16, "bfloat16", 2, true, "__nv_bfloat16"},
    {DType::float8_e4m3, "float8_e4m3", 1, true, "__nv_fp8_e4m3"},
    {DType::float8_e5m2, "float8_e5m2", 1, true, "__nv_fp8_e5m2"},
};

const DTypeInfo& info(DType dtype) {
  for (const DTypeInfo& entry : k_dtypes)
    if (entry.dtype == dtype) return entry;
  return k_dtypes[0];
}

}  // namespace

std::string to_string(DType dtype) { return info(dtype).name; }

std::optional<DType> parse_dtype(const std::string& text) {
  for (const DTypeInfo& entry : k_dtypes)
    if (text == entry.name) return entry.dtype;
  return std::nullopt;
}

std::size_t dtype_size(DType dtype) { return info(dtype).size; }
bool is_floating(DType dtype) { return info(dtype).floating; }
std::string c_type(DType dtype) { return info(dtype).c_type; }

std::string to_string(BaselineKind kind) {
  switch (kind) {
    case BaselineKind::starting: return "starting";
    case BaselineKind::reference: return "reference";
    case BaselineKind::library: return "library";
  }
  return "starting";
}

std::string to_string(WorkloadOrigin origin) { return origin == WorkloadOrigin::published ? "published" : "ours"; }

std::optional<WorkloadOrigin> parse_workload_origin(const std::string& text) {
  if (text == "ours") return WorkloadOrigin::ours;
  if (text == "published") return WorkloadOrigin::published;
  return std::nullopt;
}

std::string to_string(WorkloadSelection selection) {
  switch (selection) {
    case WorkloadSelection::all: return "all";
    case WorkloadSelection::published: return "published";
    case WorkloadSelection::ours: return "ours";
  }
  return "all";
}

std::optional<WorkloadSelection> parse_workload_selection(const std::string& text) {
  if (text == "all") return WorkloadSelection::all;
  if (text == "published") return WorkloadSelection::published;
  if (text == "ours") return WorkloadSelection::ours;
  return std::nullopt;
}

const Axis* Task::find_axis(const std::string& axis_name) const {
  for (const Axis& axis : axes)
    if (axis.name == axis_name) return &axis;
  return nullptr;
}

const TensorSpec* Task::find_tensor(const std::string& tensor_name) const {
  for (const TensorSpec* tensor : tensors())
    if (tensor->name == tensor_name) return tensor;
  return nullptr;
}

const ScalarSpec* Task::find_scalar(const std::string& scalar_name) const {
  for (const ScalarSpec& scalar : scalars)
    if (scalar.name == scalar_name) return &scalar;
  return nullptr;
}

std::vector<const TensorSpec*> Task::tensors() const {
  std::vector<const TensorSpec*> all;
  for (const TensorSpec& tensor : inputs) all.push_back(&tensor);
  for (const TensorSpec& tensor : outputs) all.push_back(&tensor);
  return all;
}

}  // namespace evoteam
