// task.json's "python_reference": the Python module the oracle runs beside the C++/CUDA reference. Checked
// here so that a misspelt framework or a dtype numpy cannot hold fails at load time, not in the runner.
#include <evoteam/task/task.hpp>

#include "task/task_reader.hpp"

namespace evoteam {

std::string to_string(PythonFramework framework) { return framework == PythonFramework::torch ? "torch" : "numpy"; }

namespace task_detail {
namespace {

// numpy has no bfloat16 and no 8-bit floats; those tensors need the torch framework.
bool numpy_holds(DType dtype) {
  return dtype != DType::bfloat16 && dtype != DType::float8_e4m3 && dtype != DType::float8_e5m2;
}

}  // namespace

PythonReference parse_python_reference(const FieldReader& reader, const nlohmann::json& value, const Task& task) {
  const std::string field = "python_reference";
  reader.object_of(value, field);
  reader.only_keys(value, {"file", "framework", "function"}, field);
  PythonReference reference;
  reference.file = require_file(reader, task, reader.string_of(reader.require(value, "file", field), field + ".file"),
                                field + ".file");
  if (std::filesystem::path(reference.file).extension() != ".py")
    reader.fail(field + ".file", "\"" + reference.file + "\" is not a .py file");
  const std::string framework = reader.string_of(reader.require(value, "framework", field), field + ".framework");
  if (framework == "numpy")
    reference.framework = PythonFramework::numpy;
  else if (framework == "torch")
    reference.framework = PythonFramework::torch;
  else
    reader.fail(field + ".framework", "must be \"numpy\" or \"torch\", got \"" + framework + "\"");
  if (value.contains("function")) {
    reference.function = reader.string_of(value["function"], field + ".function");
    if (!is_identifier(reference.function)) reader.fail(field + ".function", "must be a Python identifier");
  }
  if (reference.framework == PythonFramework::numpy)
    for (const TensorSpec* tensor : task.tensors())
      if (!numpy_holds(tensor->dtype))
        reader.fail(field + ".framework",
                    "numpy has no " + to_string(tensor->dtype) + " (tensor \"" + tensor->name + "\"); use \"torch\"");
  return reference;
}

}  // namespace task_detail
}  // namespace evoteam
