// `evoteam import-solution`: a published Solution into a candidate of the task that follows its definition. The
// candidate is the task's one kernel file: the torch stand-in (torch_shim), the Solution's sources verbatim in
// dependency order (headers first) with their local and torch includes commented out, then the glue that wraps
// the harness's buffers as tensors and calls the Solution's entry point as its binding would be called.
#include <algorithm>
#include <regex>
#include <set>
#include <sstream>

#include <evoteam/core/fs.hpp>
#include <evoteam/task/c_type.hpp>
#include <evoteam/trace/solution_import.hpp>

#include "trace/torch_shim.hpp"

namespace evoteam {
namespace {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

ojson read_solution_json(const fs::path& file, const std::string& what) {
  // A file the user named that is not there is bad input (exit 3); IoError is kept for reads and writes that fail.
  if (!fs::is_regular_file(file)) throw InvalidInput(what + " " + file.string() + ": no such file");
  const std::string text = read_file(file);
  try {
    return ojson::parse(text, nullptr, /*allow_exceptions=*/true, /*ignore_comments=*/true);
  } catch (const nlohmann::json::exception& error) {
    throw InvalidInput(what + " " + file.string() + " is not valid JSON: " + error.what());
  }
}

std::string string_field(const ojson& object, const std::string& key, const std::string& field) {
  if (!object.is_object() || !object.contains(key)) throw SolutionRefused(field, "missing");
  if (!object[key].is_string()) throw SolutionRefused(field, "not a string");
  return object[key].get<std::string>();
}

// Languages whose sources compile into a CUDA task's kernel file; the rest (python, triton, tilelang, ...) run
// from Python, which a CUDA harness cannot host.
bool compiled_language(const std::string& language) {
  std::string lower = language;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return lower == "cuda" || lower == "cpp" || lower == "c++";
}

// The definition a task follows: its own name, or the definition whose published workloads it keeps.
bool task_follows(const Task& task, const std::string& definition) {
  return task.name == definition || fs::is_regular_file(task.dir / "published" / (definition + ".jsonl"));
}

struct SourceFile {
  std::string path;
  std::string content;
};

bool is_header(const std::string& path) {
  const std::string ext = fs::path(path).extension().string();
  return ext == ".h" || ext == ".hpp" || ext == ".cuh" || ext == ".hh" || ext == ".inl";
}

// Headers first (in published order), then CUDA sources, then host sources: every file is then declared before
// the one that included it.
std::vector<SourceFile> ordered_sources(const std::vector<SourceFile>& sources) {
  std::vector<SourceFile> ordered;
  for (const SourceFile& file : sources)
    if (is_header(file.path)) ordered.push_back(file);
  for (const SourceFile& file : sources)
    if (!is_header(file.path) && fs::path(file.path).extension() == ".cu") ordered.push_back(file);
  for (const SourceFile& file : sources)
    if (!is_header(file.path) && fs::path(file.path).extension() != ".cu") ordered.push_back(file);
  return ordered;
}

// Includes the candidate file resolves itself: the Solution's own files (inlined) and torch's headers (the
// stand-in).
bool replaced_include(const std::string& target, const std::set<std::string>& own) {
  if (own.count(target) > 0 || own.count(fs::path(target).filename().string()) > 0) return true;
  const std::string top = target.substr(0, target.find('/'));
  return top == "torch" || top == "ATen" || top == "c10" || top == "pybind11" || top == "ATen.h";
}

std::string inline_source(const SourceFile& file, const std::set<std::string>& own) {
  static const std::regex k_include(R"(^\s*#\s*include\s*[<"]([^>"]+)[>"])");
  std::ostringstream out;
  std::istringstream text(file.content);
  for (std::string line; std::getline(text, line);) {
    std::smatch match;
    if (std::regex_search(line, match, k_include) && replaced_include(match[1].str(), own))
      out << "// (import-solution) " << line << "\n";
    else
      out << line << "\n";
  }
  return out.str();
}

std::string shim_dtype(DType dtype) {
  switch (dtype) {
    case DType::float32: return "Float";
    case DType::float64: return "Double";
    case DType::int32: return "Int";
    case DType::int64: return "Long";
    case DType::uint8: return "Byte";
    case DType::float16: return "Half";
    case DType::bfloat16: return "BFloat16";
    case DType::float8_e4m3:
    case DType::float8_e5m2: break;
  }
  return "";
}

// A shape expression as C++ over the glue's axis variables (task expressions are integer arithmetic over axis
// names, which the glue declares under the same names).
std::string shape_list(const TensorSpec& tensor) {
  std::string list = "{";
  for (std::size_t i = 0; i < tensor.shape.size(); ++i)
    list += (i == 0 ? "" : ", ") + std::string("static_cast<std::int64_t>(") + tensor.shape[i] + ")";
  return list + "}";
}

std::string numel(const TensorSpec& tensor) {
  std::string product = "static_cast<std::int64_t>(1)";
  for (const std::string& dim : tensor.shape) product += " * static_cast<std::int64_t>(" + dim + ")";
  return product;
}

std::string parameter(const Task& task, const std::string& arg) {
  if (const TensorSpec* tensor = task.find_tensor(arg))
    return (tensor->role == TensorRole::input ? "const " : "") + c_type(tensor->dtype) + "* " + arg;
  if (const ScalarSpec* scalar = task.find_scalar(arg)) return c_type(scalar->dtype) + " " + arg;
  return "std::int64_t " + arg;
}

// The definition's argument names in the entry point's order: inputs, then outputs. From the Definition when
// given, else from the task's entry args (its scratch outputs are the task's own and never passed).
void call_order(const Task& task, const std::optional<ojson>& definition, std::vector<std::string>* inputs,
                std::vector<std::string>* outputs) {
  if (definition) {
    for (const auto& [name, spec] : (*definition)["inputs"].items()) {
      if (task.find_tensor(name) == nullptr && task.find_scalar(name) == nullptr)
        throw SolutionRefused("definition.inputs." + name, "the task has no tensor or scalar of that name");
      inputs->push_back(name);
    }
    for (const auto& [name, spec] : (*definition)["outputs"].items()) {
      const TensorSpec* tensor = task.find_tensor(name);
      if (tensor == nullptr || tensor->role != TensorRole::output)
        throw SolutionRefused("definition.outputs." + name, "the task has no output of that name");
      outputs->push_back(name);
    }
    return;
  }
  for (const std::string& arg : task.entry.args) {
    const TensorSpec* tensor = task.find_tensor(arg);
    if (task.find_scalar(arg) != nullptr || (tensor != nullptr && tensor->role == TensorRole::input))
      inputs->push_back(arg);
    else if (tensor != nullptr && !tensor->scratch)
      outputs->push_back(arg);
  }
}

void check_definition_dtypes(const Task& task, const ojson& definition) {
  for (const char* group : {"inputs", "outputs"}) {
    if (!definition.contains(group) || !definition[group].is_object())
      throw SolutionRefused(std::string("definition.") + group, "missing from the Definition");
    for (const auto& [name, spec] : definition[group].items()) {
      const std::string published = spec.value("dtype", "");
      std::optional<DType> ours;
      if (const TensorSpec* tensor = task.find_tensor(name)) ours = tensor->dtype;
      if (const ScalarSpec* scalar = task.find_scalar(name)) ours = scalar->dtype;
      if (ours && parse_dtype(published) != ours)
        throw SolutionRefused(std::string("definition.") + group + "." + name + ".dtype",
                              published + " in the Definition, " + to_string(*ours) + " in task " + task.name +
                                  " (the Solution's code is written for the Definition's type)");
    }
  }
}

std::string glue(const Task& task, const std::string& function, const std::vector<std::string>& inputs,
                 const std::vector<std::string>& outputs) {
  std::ostringstream out;
  out << "\n// ---- import-solution: the task's entry point calls the Solution's " << function << " ----\n";
  out << "extern \"C\" cudaError_t " << task.entry.name << "(";
  for (const std::string& arg : task.entry.args) out << parameter(task, arg) << ", ";
  out << "cudaStream_t stream) {\n";
  // Const axes the entry point does not pass are declared for the shape expressions.
  for (const Axis& axis : task.axes)
    if (axis.is_const && std::find(task.entry.args.begin(), task.entry.args.end(), axis.name) == task.entry.args.end())
      out << "  const std::int64_t " << axis.name << " = " << axis.value << ";\n";
  for (const Axis& axis : task.axes) out << "  (void)" << axis.name << ";\n";
  out << "  published_shim::Frame frame;\n  frame.stream = stream;\n  published_shim::Frame::current() = &frame;\n";
  // The outputs in the definition's order (the task's list is by name), then the scratch tensors.
  std::vector<std::pair<const TensorSpec*, std::string>> slots;
  for (const std::string& name : outputs) slots.emplace_back(task.find_tensor(name), "outputs");
  for (const TensorSpec& tensor : task.outputs)
    if (tensor.scratch) slots.emplace_back(&tensor, "scratch");
  for (const auto& [tensor, kind] : slots)
    out << "  frame." << kind << ".push_back({static_cast<void*>(" << tensor->name
        << "), published_shim::ScalarType::" << shim_dtype(tensor->dtype) << ", " << numel(*tensor) << " * "
        << dtype_size(tensor->dtype) << ", false});\n";
  auto tensor_of = [&](const std::string& name) {
    const TensorSpec& tensor = *task.find_tensor(name);
    return "torch::Tensor(const_cast<void*>(static_cast<const void*>(" + name +
           ")), published_shim::ScalarType::" + shim_dtype(tensor.dtype) + ", " + shape_list(tensor) + ")";
  };
  out << "  auto inputs = std::make_tuple(";
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    out << (i == 0 ? "" : ",\n      ");
    if (const ScalarSpec* scalar = task.find_scalar(inputs[i]))
      out << "published_shim::ScalarArg{static_cast<double>(" << inputs[i]
          << "), published_shim::ScalarType::" << shim_dtype(scalar->dtype) << ", 0.0f, 0.0}";
    else
      out << tensor_of(inputs[i]);
  }
  out << ");\n  std::vector<torch::Tensor> outs = {";
  for (std::size_t i = 0; i < outputs.size(); ++i) out << (i == 0 ? "" : ", ") << tensor_of(outputs[i]);
  out << "};\n  auto outputs = std::make_tuple(";
  for (std::size_t i = 0; i < outputs.size(); ++i) out << (i == 0 ? "" : ", ") << "outs[" << i << "]";
  out << ");\n";
  out << "  auto entry = [](auto&&... args) -> decltype(" << function << "(args...)) { return " << function
      << "(args...); };\n";
  out << "  published_shim::call_published(entry, inputs, outputs, outs);\n";
  out << "  published_shim::Frame::current() = nullptr;\n  return cudaGetLastError();\n}\n";
  return out.str();
}

SolutionSource read_source(const fs::path& solution_file) {
  SolutionSource source;
  const fs::path index = solution_file.parent_path() / "provenance.json";
  if (!fs::is_regular_file(index)) return source;
  const ojson all = read_solution_json(index, "provenance index");
  const std::string key = solution_file.filename().string();
  if (!all.is_object() || !all.contains(key) || !all[key].is_object()) return source;
  const ojson& entry = all[key];
  source.repository = entry.value("repository", "");
  source.commit = entry.value("commit", "");
  source.path = entry.value("path", "");
  source.licence = entry.value("licence", "");
  return source;
}

}  // namespace

ImportedSolution import_solution(const fs::path& solution_file, const Task& task, const fs::path& out_dir,
                                 const ImportSolutionOptions& options) {
  const ojson solution = read_solution_json(solution_file, "Solution");
  if (!solution.is_object()) throw SolutionRefused("(top level)", "a Solution is a JSON object");
  ImportedSolution imported;
  imported.name = string_field(solution, "name", "name");
  imported.definition = string_field(solution, "definition", "definition");
  imported.author = solution.value("author", "");
  if (!solution.contains("spec") || !solution["spec"].is_object()) throw SolutionRefused("spec", "missing");
  const ojson& spec = solution["spec"];
  const std::string language = string_field(spec, "language", "spec.language");
  if (!compiled_language(language))
    throw SolutionRefused("spec.language",
                          "\"" + language + "\" runs from Python; a CUDA task's harness calls compiled code only");
  if (task.target != Target::cuda)
    throw SolutionRefused("spec.language", "\"" + language + "\" and task " + task.name + " is not a CUDA task");
  if (!task_follows(task, imported.definition))
    throw SolutionRefused("definition",
                          "\"" + imported.definition + "\" is not the definition task " + task.name + " follows");
  // The schema's default for CUDA and C++ is tvm-ffi (flashinfer_bench/data/solution.py, BuildSpec.binding).
  const std::string binding =
      spec.contains("binding") && spec["binding"].is_string() ? spec["binding"].get<std::string>() : "tvm-ffi";
  if (binding != "torch")
    throw SolutionRefused("spec.binding", "\"" + binding + "\"" + (spec.contains("binding") ? "" : " (the default)") +
                                              ": only torch-bound entry points are mapped");
  if (spec.contains("dependencies") && spec["dependencies"].is_array() && !spec["dependencies"].empty())
    throw SolutionRefused("spec.dependencies", spec["dependencies"].dump() + ": the harness provides none");
  imported.entry_point = string_field(spec, "entry_point", "spec.entry_point");
  const std::size_t colons = imported.entry_point.find("::");
  if (colons == std::string::npos || colons == 0 || colons + 2 >= imported.entry_point.size())
    throw SolutionRefused("spec.entry_point", "\"" + imported.entry_point + "\" is not FILE::FUNCTION");
  const std::string entry_file = imported.entry_point.substr(0, colons);
  const std::string function = imported.entry_point.substr(colons + 2);
  if (!std::regex_match(function, std::regex("[A-Za-z_][A-Za-z0-9_]*")))
    throw SolutionRefused("spec.entry_point", "\"" + function + "\" is not a C++ function name");
  if (function == task.entry.name)
    throw SolutionRefused("spec.entry_point", "\"" + function + "\" is the task's own entry point name");

  if (!solution.contains("sources") || !solution["sources"].is_array() || solution["sources"].empty())
    throw SolutionRefused("sources", "missing or empty");
  std::vector<SourceFile> sources;
  std::set<std::string> own;
  for (std::size_t i = 0; i < solution["sources"].size(); ++i) {
    const ojson& item = solution["sources"][i];
    const std::string field = "sources[" + std::to_string(i) + "]";
    SourceFile file{string_field(item, "path", field + ".path"), string_field(item, "content", field + ".content")};
    const std::string ext = fs::path(file.path).extension().string();
    if (ext == ".py") throw SolutionRefused(field + ".path", "\"" + file.path + "\" is Python");
    own.insert(file.path);
    own.insert(fs::path(file.path).filename().string());
    sources.push_back(std::move(file));
  }
  if (own.count(entry_file) == 0)
    throw SolutionRefused("spec.entry_point", "file \"" + entry_file + "\" is not among the sources");
  if (task.kernel_files.size() != 1 || fs::path(task.kernel_files.front()).extension() != ".cu")
    throw SolutionRefused("definition", "task " + task.name + " has not exactly one .cu kernel file");

  std::optional<ojson> definition;
  if (options.definition) {
    definition = read_solution_json(*options.definition, "Definition");
    const std::string name = definition->value("name", "");
    if (name != imported.definition)
      throw SolutionRefused("definition", "\"" + imported.definition + "\", the Definition given is \"" + name + "\"");
    check_definition_dtypes(task, *definition);
  }
  std::vector<std::string> inputs, outputs;
  call_order(task, definition, &inputs, &outputs);
  for (const std::string& name : outputs)
    if (shim_dtype(task.find_tensor(name)->dtype).empty())
      throw SolutionRefused("definition.outputs." + name, "its dtype has no torch stand-in type");
  for (const std::string& name : inputs) {
    const TensorSpec* tensor = task.find_tensor(name);
    if (tensor != nullptr && shim_dtype(tensor->dtype).empty())
      throw SolutionRefused("definition.inputs." + name, "its dtype has no torch stand-in type");
  }

  imported.source = read_source(solution_file);
  std::ostringstream kernel;
  kernel << "// Published FlashInfer-Trace Solution " << imported.name << " by " << imported.author
         << ", imported by evoteam import-solution for task " << task.name << " (provenance: published.json).\n"
         << "// Below: evoteam's torch stand-in, then the Solution's sources verbatim (their local and torch includes "
            "commented out), then the glue.\n";
  kernel << torch_shim_text();
  // The evaluator passes the task's params as -D defines; the Solution has none, and its own names must not be
  // rewritten by them (a tile size called like a param would become a number).
  for (const ParamSpec& param : task.params)
    kernel << "#ifdef " << param.name << "\n#undef " << param.name << "\n#endif\n";
  for (const SourceFile& file : ordered_sources(sources))
    kernel << "\n// ---- " << file.path << " (verbatim) ----\n" << inline_source(file, own);
  kernel << glue(task, function, inputs, outputs);

  imported.candidate_dir = out_dir;
  evoteam::create_directories(out_dir);
  const std::string kernel_file = task.kernel_files.front();
  write_file_atomic(out_dir / kernel_file, kernel.str());
  imported.files = {kernel_file, "published.json"};
  nlohmann::json record = {
      {"format", "evoteam-published-solution-v1"},
      {"task", task.name},
      {"definition", imported.definition},
      {"solution", imported.name},
      {"author", imported.author},
      {"description", solution.value("description", "")},
      {"language", language},
      {"binding", binding},
      {"entry_point", imported.entry_point},
      {"target_hardware", spec.value("target_hardware", ojson::array())},
      {"source",
       {{"repository", imported.source.repository},
        {"commit", imported.source.commit},
        {"path", imported.source.path},
        {"licence", imported.source.licence}}},
      {"solution_sha256", sha256_hex(read_file(solution_file))},
      {"kernel_file", kernel_file},
  };
  write_json_atomic(out_dir / "published.json", record);
  return imported;
}

std::vector<PublishedResult> read_published_results(const fs::path& dir) {
  std::vector<fs::path> found;
  if (fs::is_regular_file(dir / "published.json")) {
    found.push_back(dir);
  } else if (fs::is_directory(dir)) {
    for (const fs::path& file : files_under(dir))
      if (file.filename() == "published.json") found.push_back(file.parent_path());
  }
  std::sort(found.begin(), found.end());
  std::vector<PublishedResult> results;
  for (const fs::path& candidate : found) {
    const ojson record = read_solution_json(candidate / "published.json", "published record");
    PublishedResult result;
    result.candidate_dir = candidate;
    result.task = record.value("task", "");
    result.definition = record.value("definition", "");
    result.solution = record.value("solution", "");
    result.author = record.value("author", "");
    if (record.contains("source") && record["source"].is_object()) {
      result.source.repository = record["source"].value("repository", "");
      result.source.commit = record["source"].value("commit", "");
      result.source.path = record["source"].value("path", "");
      result.source.licence = record["source"].value("licence", "");
    }
    if (fs::is_regular_file(candidate / "eval.json")) {
      const ojson eval = read_solution_json(candidate / "eval.json", "eval result");
      result.eval = EvalResult::from_json(nlohmann::json::parse(eval.dump()));
    }
    results.push_back(std::move(result));
  }
  return results;
}

}  // namespace evoteam
