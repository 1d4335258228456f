// A FlashInfer-Trace Definition and its workload traces translated into the content of an evoteam task.json.
// Field lists follow flashinfer-bench's schema (Definition, TensorSpec, AxisConst/AxisVar, Workload, Trace);
// anything outside them is reported, as is anything inside them that task.json cannot hold.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <regex>
#include <set>

#include <evoteam/core/error.hpp>
#include <evoteam/task/task.hpp>
#include <evoteam/trace/trace_import.hpp>

#include "trace/import_text.hpp"
#include "trace/trace_families.hpp"

namespace evoteam {
namespace {

using ojson = nlohmann::ordered_json;

const std::vector<std::string> k_definition_keys = {"name",      "op_type", "axes",        "inputs",     "outputs",
                                                    "reference", "tags",    "description", "constraints"};
const std::vector<std::string> k_axis_keys = {"type", "value", "description"};
const std::vector<std::string> k_tensor_keys = {"shape", "dtype", "description"};
const std::vector<std::string> k_trace_keys = {"definition", "workload", "solution", "evaluation"};
const std::vector<std::string> k_workload_keys = {"uuid", "axes", "inputs"};

// Relative agreement under which scalar values of different workloads count as one: published sm_scale values
// differ in the float32 rounding of 1/sqrt(d) (0.08838834764831843 and 0.0883883461356163).
constexpr double k_scalar_agreement = 1e-6;

std::string number_text(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

// An axis extent evoteam can hold: at least 1 and within a signed 64-bit integer (an unsigned one past it would
// be written as a negative number).
bool fits_an_extent(const ojson& value) {
  if (value.is_number_unsigned())
    return value.get<std::uint64_t>() >= 1 &&
           value.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  return value.is_number_integer() && value.get<std::int64_t>() >= 1;
}

bool mentions(const std::string& expression, const std::string& name) {
  return std::regex_search(expression, std::regex("\\b" + name + "\\b"));
}

std::string substitute(const std::string& expression, const std::string& name, const std::string& replacement) {
  return std::regex_replace(expression, std::regex("\\b" + name + "\\b"), "(" + replacement + ")");
}

struct AxisIn {
  std::string name;
  bool is_const = false;
  std::int64_t value = 0;
  std::string description;
};

struct TensorIn {
  std::string name;
  std::string dtype;
  std::vector<std::string> shape;
  std::string description;
};

class Translation {
 public:
  Translation(const ojson& definition, std::string definition_file, std::string workloads_file)
      : m_def(definition), m_file(std::move(definition_file)), m_workloads_file(std::move(workloads_file)) {}

  ImportedTask run(const std::vector<ojson>& workload_lines) {
    if (!m_def.is_object()) fail("", "a Definition is a JSON object");
    check_keys(m_def, k_definition_keys, "", m_file);
    m_result.name = required_string(m_def, "name", "name");
    if (m_def.contains("op_type"))
      note("op_type", "no task.json field: \"" + string_or_dump(m_def["op_type"]) + "\" is recorded in README.md");
    if (m_def.contains("tags")) note("tags", "no task.json field: recorded in README.md");
    check_identifier(m_result.name, "name");
    read_axes();
    read_tensors("inputs", m_inputs);
    read_tensors("outputs", m_outputs);
    check_reference_signature();
    read_constraints();
    read_workloads(workload_lines);
    settle_scalars();
    build_task();
    return std::move(m_result);
  }

 private:
  [[noreturn]] void fail(const std::string& field, const std::string& message) const {
    throw InvalidInput(m_file + ": " + (field.empty() ? "" : field + ": ") + message);
  }
  void finding(const std::string& file, const std::string& field, const std::string& message) {
    m_result.findings.push_back({file, field, message, true});
  }
  void note(const std::string& field, const std::string& message) {
    m_result.findings.push_back({m_file, field, message, false});
  }
  void check_keys(const ojson& object, const std::vector<std::string>& keys, const std::string& field,
                  const std::string& file) {
    for (const auto& [key, value] : object.items()) {
      bool known = false;
      for (const std::string& name : keys) known |= name == key;
      if (!known)
        finding(file, field.empty() ? key : field + "." + key,
                "unknown field (FlashInfer-Trace lists " + join_keys(keys) +
                    "); not imported: " + value.dump().substr(0, 80));
    }
  }
  static std::string join_keys(const std::vector<std::string>& keys) {
    std::string text;
    for (const std::string& key : keys) text += (text.empty() ? "" : ", ") + key;
    return text;
  }
  static std::string string_or_dump(const ojson& value) {
    return value.is_string() ? value.get<std::string>() : value.dump();
  }
  std::string required_string(const ojson& object, const std::string& key, const std::string& field) const {
    if (!object.contains(key) || !object[key].is_string() || object[key].get<std::string>().empty())
      fail(field, "a non-empty string is required");
    return object[key].get<std::string>();
  }
  // Names become C parameters, file names and task.json keys: each is an identifier, and one name is one thing.
  void check_identifier(const std::string& name, const std::string& field) const {
    static const std::regex identifier("[A-Za-z_][A-Za-z0-9_]*");
    if (!std::regex_match(name, identifier))
      fail(field, "\"" + name + "\" is not a name evoteam can use (letters, digits and _, not starting with a digit)");
  }
  void check_unique(const std::string& name, const std::string& field) {
    if (!m_names.insert(name).second)
      fail(field, "\"" + name + "\" names another axis or tensor too; each name must be one thing");
  }
  const AxisIn* find_axis(const std::string& name) const {
    for (const AxisIn& axis : m_axes)
      if (axis.name == name) return &axis;
    return nullptr;
  }

  void read_axes() {
    if (!m_def.contains("axes") || !m_def["axes"].is_object()) fail("axes", "an object of axes is required");
    for (const auto& [name, spec] : m_def["axes"].items()) {
      const std::string field = "axes." + name;
      check_identifier(name, field);
      check_unique(name, field);
      if (!spec.is_object()) fail(field, "an axis is an object");
      check_keys(spec, k_axis_keys, field, m_file);
      AxisIn axis;
      axis.name = name;
      const std::string type = spec.contains("type") && spec["type"].is_string() ? spec["type"].get<std::string>() : "";
      if (type != "const" && type != "var") fail(field + ".type", "must be \"const\" or \"var\"");
      axis.is_const = type == "const";
      if (axis.is_const) {
        if (!spec.contains("value") || !spec["value"].is_number_integer())
          fail(field + ".value", "a const axis needs an integer value");
        if (!fits_an_extent(spec["value"]))
          fail(field + ".value",
               "a const axis is an extent from 1 to 9223372036854775807, got " + spec["value"].dump());
        axis.value = spec["value"].get<std::int64_t>();
      }
      if (spec.contains("description") && spec["description"].is_string()) axis.description = spec["description"];
      m_axes.push_back(axis);
    }
  }

  std::string our_dtype(const std::string& dtype, const std::string& field) {
    // The same type under another name: evoteam's fp8 types are the finite (fn) variants.
    if (dtype == "float8_e4m3fn") {
      note(field, "float8_e4m3fn is evoteam's float8_e4m3");
      return "float8_e4m3";
    }
    // Bytes carried as bytes: evoteam has no signed 8-bit type. The one published int8 tensor (a packed fp8 cache
    // with scales) says it is read as uint8; any other stays carried but is reported as losing its sign.
    if (dtype == "int8") {
      finding(m_file, field, "int8 has no evoteam equivalent: carried as uint8 (the same bytes, read unsigned)");
      return "uint8";
    }
    if (!parse_dtype(dtype))
      fail(field, "dtype \"" + dtype +
                      "\" has no evoteam equivalent (float32, float64, int32, int64, uint8, float16, bfloat16, "
                      "float8_e4m3fn, float8_e5m2)");
    return dtype;
  }

  void read_tensors(const std::string& section, std::vector<TensorIn>& tensors) {
    if (!m_def.contains(section) || !m_def[section].is_object()) fail(section, "an object of tensors is required");
    // An op without inputs or outputs has no entry point evoteam could call or check.
    if (m_def[section].empty()) fail(section, "at least one tensor is required");
    for (const auto& [name, spec] : m_def[section].items()) {
      const std::string field = section + "." + name;
      check_identifier(name, field);
      check_unique(name, field);
      if (!spec.is_object()) fail(field, "a tensor is an object");
      check_keys(spec, k_tensor_keys, field, m_file);
      TensorIn tensor;
      tensor.name = name;
      // A dtype that is missing or no string is said as what it is (16, not an empty name).
      if (!spec.contains("dtype") || !spec["dtype"].is_string())
        fail(field + ".dtype", spec.contains("dtype")
                                   ? "a dtype is a name such as \"float32\", got " + spec["dtype"].dump()
                                   : "required (a name such as \"float32\")");
      tensor.dtype = our_dtype(spec["dtype"].get<std::string>(), field + ".dtype");
      if (spec.contains("description") && spec["description"].is_string()) tensor.description = spec["description"];
      if (!spec.contains("shape")) fail(field + ".shape", "required (null for a scalar)");
      if (spec["shape"].is_null()) {
        if (section == "outputs") {
          finding(m_file, field + ".shape", "a scalar output: evoteam outputs are tensors, so it is shaped [1]");
          tensor.shape = {"1"};
        } else {
          m_scalars.push_back(tensor);
          m_order.push_back(name);
          continue;
        }
      } else {
        if (!spec["shape"].is_array()) fail(field + ".shape", "a list of axis names or null");
        for (const auto& dim : spec["shape"]) {
          if (!dim.is_string() || find_axis(dim.get<std::string>()) == nullptr)
            fail(field + ".shape", "names an undefined axis " + dim.dump());
          tensor.shape.push_back(dim.get<std::string>());
        }
      }
      if (section == "inputs") m_order.push_back(name);
      tensors.push_back(tensor);
    }
  }

  // The published reference is run by the oracle with the task's inputs by name: its run() must take exactly the
  // inputs the table lists (in any order; the published moe definitions order them differently).
  void check_reference_signature() const {
    if (!m_def.contains("reference") || !m_def["reference"].is_string()) return;
    static const std::regex run_header(R"(\bdef\s+run\s*\(([^)]*)\))");
    std::smatch match;
    const std::string reference = m_def["reference"].get<std::string>();
    if (!std::regex_search(reference, match, run_header))
      fail("reference", "no `def run(...)`: the entry point is run");
    std::set<std::string> parameters;
    static const std::regex parameter(R"(^\s*\**\s*([A-Za-z_]\w*))");
    const std::string list = match[1];
    for (std::size_t start = 0; start <= list.size();) {
      const std::size_t comma = std::min(list.find(',', start), list.size());
      const std::string item = list.substr(start, comma - start);
      std::smatch name;
      if (std::regex_search(item, name, parameter)) parameters.insert(name[1]);
      start = comma + 1;
    }
    std::set<std::string> inputs;
    for (const auto& [name, spec] : m_def["inputs"].items()) inputs.insert(name);
    for (const std::string& name : parameters)
      if (!inputs.count(name))
        fail("reference", "run() takes " + name + ", which inputs does not list (inputs: " + join_set(inputs) + ")");
    for (const std::string& name : inputs)
      if (!parameters.count(name))
        fail("inputs." + name, "not a parameter of the reference's run(" + join_set(parameters) + ")");
  }
  static std::string join_set(const std::set<std::string>& names) {
    std::string text;
    for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
    return text;
  }

  // Every axis value 2 (1 would hide divisions by a difference): whether `expression` is one over the axes.
  bool is_axis_expression(const std::string& expression, const std::string& without = "") const {
    std::map<std::string, double> values;
    for (const AxisIn& axis : m_axes)
      if (axis.name != without) values[axis.name] = axis.is_const ? static_cast<double>(axis.value) : 2.0;
    try {
      evaluate_expression(expression, values, "constraint");
      return true;
    } catch (const Error&) {
      return false;
    }
  }

  void read_constraints() {
    if (!m_def.contains("constraints")) return;
    if (!m_def["constraints"].is_array()) fail("constraints", "a list of expressions");
    std::vector<std::string> rest;
    // First the constraints that define a var axis by the others ("len_indptr == batch_size + 1"): the axis
    // becomes that expression in every shape, as evoteam tasks write it, and workloads stop giving it.
    static const std::regex defining(R"(^\s*([A-Za-z_]\w*)\s*==\s*(.+?)\s*$)");
    for (std::size_t i = 0; i < m_def["constraints"].size(); ++i) {
      const ojson& item = m_def["constraints"][i];
      if (!item.is_string()) fail("constraints[" + std::to_string(i) + "]", "an expression string");
      const std::string text = item.get<std::string>();
      std::smatch match;
      const AxisIn* axis = nullptr;
      if (std::regex_match(text, match, defining)) axis = find_axis(match[1]);
      if (axis != nullptr && !axis->is_const && !m_substituted.count(axis->name) && !mentions(match[2], axis->name) &&
          is_axis_expression(match[2], axis->name)) {
        m_substituted[axis->name] = match[2];
        note("constraints[" + std::to_string(i) + "]",
             "var axis " + axis->name + " replaced by " + std::string(match[2]) + " in every shape (\"" + text + "\")");
      } else {
        rest.push_back(text);
      }
    }
    for (std::size_t i = 0; i < rest.size(); ++i) {
      std::string expression = std::regex_replace(rest[i], std::regex(R"(\band\b)"), "&&");
      expression = std::regex_replace(expression, std::regex(R"(\bor\b)"), "||");
      for (const auto& [name, replacement] : m_substituted) expression = substitute(expression, name, replacement);
      if (is_axis_expression(expression)) {
        m_constraints.push_back(expression);
      } else {
        finding(m_file, "constraints: \"" + rest[i] + "\"",
                "not an expression over the axes (it reads tensor values): not carried; the task's input "
                "generators must make it hold");
      }
    }
  }

  void read_workloads(const std::vector<ojson>& lines) {
    std::map<std::string, int> file_inputs;  // input -> workloads that load it from a safetensors file
    std::set<std::string> names;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const std::string where = "line " + std::to_string(i + 1);
      const ojson& line = lines[i];
      if (!line.is_object()) {
        finding(m_workloads_file, where, "not a JSON object: skipped");
        continue;
      }
      check_keys(line, k_trace_keys, where, m_workloads_file);
      if (line.contains("definition") && line["definition"] != m_result.name) {
        finding(m_workloads_file, where + ": definition",
                "names " + line["definition"].dump() + ", not " + m_result.name + ": skipped");
        continue;
      }
      if ((line.contains("solution") && !line["solution"].is_null()) ||
          (line.contains("evaluation") && !line["evaluation"].is_null()))
        m_result.findings.push_back(
            {m_workloads_file, where, "a trace with a solution or evaluation: only its workload is imported", false});
      if (!line.contains("workload") || !line["workload"].is_object()) {
        finding(m_workloads_file, where + ": workload", "missing: skipped");
        continue;
      }
      const ojson& workload = line["workload"];
      check_keys(workload, k_workload_keys, where + ": workload", m_workloads_file);
      const std::string uuid =
          workload.contains("uuid") && workload["uuid"].is_string() ? workload["uuid"].get<std::string>() : "";
      ojson axes = ojson::object();
      bool usable = read_workload_axes(workload, where, axes);
      if (usable) usable = substituted_axes_agree(workload, axes, where);
      if (workload.contains("inputs") && workload["inputs"].is_object())
        for (const auto& [name, spec] : workload["inputs"].items()) read_input(name, spec, where, file_inputs);
      if (!usable) continue;
      ojson entry = ojson::object();
      entry["name"] = unique_workload_name(uuid, i, names);
      entry["axes"] = axes;
      // Published with the definition: the task keeps where each came from (a uuid-less one is only described).
      if (!uuid.empty()) {
        entry["origin"] = "published";
        entry["source"] = uuid;
      } else {
        entry["description"] = "published workload at " + m_workloads_file + " " + where;
      }
      const std::string from_files = safetensors_inputs(workload);
      if (!from_files.empty()) {
        // Their values are not in the repository: the shapes are kept and the values generated.
        entry["description"] = (entry.contains("description") ? entry["description"].get<std::string>() + "; " : "") +
                               "random inputs: " + from_files +
                               " published as safetensors files not in the repository, generated here";
        ++m_result.random_input_workloads;
      }
      ++m_result.published_workloads;
      m_workloads.push_back(entry);
    }
    for (const auto& [input, count] : file_inputs)
      finding(m_workloads_file, "workload.inputs." + input,
              "safetensors in " + std::to_string(count) + " of " + std::to_string(lines.size()) +
                  " workloads: evoteam generates every input and loads no tensor files, so the task generates it "
                  "from the battery; write a hook that produces valid values (kernels/README.md, \"generate\")");
  }

  // The inputs a workload loads from safetensors files, comma-separated ("" when none).
  static std::string safetensors_inputs(const ojson& workload) {
    std::string names;
    if (!workload.contains("inputs") || !workload["inputs"].is_object()) return names;
    for (const auto& [name, spec] : workload["inputs"].items())
      if (spec.is_object() && spec.contains("type") && spec["type"] == "safetensors")
        names += (names.empty() ? "" : ", ") + name;
    return names;
  }

  // The workload's var axes into `axes`; false (with findings) when it cannot be a workload of the task.
  bool read_workload_axes(const ojson& workload, const std::string& where, ojson& axes) {
    bool usable = true;
    if (workload.contains("axes") && workload["axes"].is_object()) {
      for (const auto& [name, value] : workload["axes"].items()) {
        const std::string field = where + ": workload.axes." + name;
        const AxisIn* axis = find_axis(name);
        if (axis == nullptr || !value.is_number_integer()) {
          finding(m_workloads_file, field, "not an axis of the definition, or not an integer: skipped");
          usable = false;
          continue;
        }
        if (!fits_an_extent(value)) {
          finding(m_workloads_file, field,
                  "an extent from 1 to 9223372036854775807, got " + value.dump() + ": workload skipped");
          usable = false;
          continue;
        }
        const std::int64_t number = value.get<std::int64_t>();
        if (!axis->is_const && number < 1) {
          finding(m_workloads_file, field,
                  "is " + std::to_string(number) + ": evoteam var axes are >= 1: workload skipped");
          usable = false;
          continue;
        }
        if (axis->is_const) {
          if (number != axis->value) {
            finding(m_workloads_file, field, "differs from the const axis: workload skipped");
            usable = false;
          }
          continue;
        }
        if (m_substituted.count(name)) continue;  // checked by substituted_axes_agree, once every axis is known
        axes[name] = number;
      }
    }
    for (const AxisIn& axis : m_axes)
      if (!axis.is_const && !m_substituted.count(axis.name) && !axes.contains(axis.name)) {
        finding(m_workloads_file, where + ": workload.axes",
                "no value for var axis " + axis.name + ": workload skipped");
        usable = false;
      }
    return usable;
  }

  // Workload names reach file names and reports: the uuid's first 8 characters, the whole uuid when those
  // collide, and the line number for a uuid of other characters.
  static std::string unique_workload_name(const std::string& uuid, std::size_t line_index,
                                          std::set<std::string>& names) {
    static const std::regex plain("[A-Za-z0-9_-]+");
    const bool usable_uuid = std::regex_match(uuid, plain);
    std::string name = usable_uuid ? uuid.substr(0, 8) : "w" + std::to_string(line_index + 1);
    if (names.count(name)) name = !usable_uuid || names.count(uuid) ? "w" + std::to_string(line_index + 1) : uuid;
    names.insert(name);
    return name;
  }

  bool substituted_axes_agree(const ojson& workload, const ojson& axes, const std::string& where) {
    std::map<std::string, double> values;
    for (const AxisIn& axis : m_axes)
      if (axis.is_const) values[axis.name] = static_cast<double>(axis.value);
    for (const auto& [name, value] : axes.items()) values[name] = value.get<double>();
    if (!workload.contains("axes") || !workload["axes"].is_object()) return true;  // nothing given to disagree
    for (const auto& [name, expression] : m_substituted) {
      if (!workload["axes"].contains(name)) continue;
      const double expected = evaluate_expression(expression, values, "axes." + name);
      if (workload["axes"][name] != static_cast<std::int64_t>(expected)) {
        finding(m_workloads_file, where + ": workload.axes." + name, "is not " + expression + ": workload skipped");
        return false;
      }
    }
    return true;
  }

  void read_input(const std::string& name, const ojson& spec, const std::string& where,
                  std::map<std::string, int>& file_inputs) {
    const std::string field = where + ": workload.inputs." + name;
    const std::string type =
        spec.is_object() && spec.contains("type") && spec["type"].is_string() ? spec["type"].get<std::string>() : "";
    bool is_scalar = false;
    for (const TensorIn& scalar : m_scalars) is_scalar |= scalar.name == name;
    bool is_tensor = false;
    for (const TensorIn& tensor : m_inputs) is_tensor |= tensor.name == name;
    if (!is_scalar && !is_tensor) {
      finding(m_workloads_file, field, "not an input of the definition: ignored");
      return;
    }
    if (type == "random") {
      if (is_scalar) finding(m_workloads_file, field, "a random scalar: evoteam scalars are fixed per task");
    } else if (type == "scalar") {
      if (!spec.contains("value") || !(spec["value"].is_number() || spec["value"].is_boolean()) || !is_scalar) {
        finding(m_workloads_file, field, "a scalar value for a tensor, or no number: ignored");
        return;
      }
      m_scalar_values[name].push_back(spec["value"].is_boolean() ? (spec["value"].get<bool>() ? 1.0 : 0.0)
                                                                 : spec["value"].get<double>());
    } else if (type == "safetensors") {
      ++file_inputs[name];
    } else {
      finding(m_workloads_file, field,
              "unsupported input kind \"" + type +
                  "\" (FlashInfer-Trace has random, scalar, safetensors): generated from the battery");
    }
  }

  // A scalar's value comes with each workload in FlashInfer-Trace; an evoteam scalar is fixed per task.
  void settle_scalars() {
    for (const TensorIn& scalar : m_scalars) {
      const std::string field = "inputs." + scalar.name;
      if (scalar.dtype != "float32" && scalar.dtype != "float64" && scalar.dtype != "int32" &&
          scalar.dtype != "int64") {
        finding(m_file, field + ".dtype",
                "a " + scalar.dtype + " scalar: evoteam scalars are float32, float64, int32 or int64; not imported");
        continue;
      }
      const std::vector<double>& values = m_scalar_values[scalar.name];
      std::string value = "1";
      if (values.empty()) {
        finding(m_file, field,
                "no value: the definition gives none and no workload did; set to 1, edit scalars." + scalar.name +
                    ".value");
      } else {
        value = number_text(values.front());
        for (double other : values)
          if (std::fabs(other - values.front()) > k_scalar_agreement * std::fabs(values.front())) {
            finding(m_workloads_file, "workload.inputs." + scalar.name,
                    "values differ across workloads (" + number_text(values.front()) + ", " + number_text(other) +
                        "); an evoteam scalar is fixed per task: the first is used");
            break;
          }
      }
      m_scalar_text[scalar.name] = value;
    }
  }

  ojson tensor_json(const TensorIn& tensor) const {
    ojson spec = ojson::object();
    spec["dtype"] = tensor.dtype;
    ojson shape = ojson::array();
    for (const std::string& dim : tensor.shape) shape.push_back(m_substituted.count(dim) ? m_substituted.at(dim) : dim);
    spec["shape"] = shape;
    if (!tensor.description.empty()) spec["description"] = tensor.description;
    return spec;
  }

  void build_task() {
    ojson& task = m_result.task;
    task["name"] = m_result.name;
    task["description"] = m_def.contains("description") && m_def["description"].is_string()
                              ? m_def["description"].get<std::string>()
                              : "imported from the FlashInfer-Trace definition " + m_result.name;
    task["target"] = "cuda";
    task["archs"] = {"sm_90a", "sm_100a"};
    task["axes"] = axes_json();
    ojson inputs = ojson::object();
    for (const TensorIn& tensor : m_inputs) inputs[tensor.name] = tensor_json(tensor);
    task["inputs"] = inputs;
    const ojson scalars = scalars_json();
    if (!scalars.empty()) task["scalars"] = scalars;
    ojson outputs = ojson::object();
    for (const TensorIn& tensor : m_outputs) outputs[tensor.name] = tensor_json(tensor);
    task["outputs"] = outputs;
    if (!m_constraints.empty()) task["constraints"] = m_constraints;
    task["entry"] = {{"name", m_result.name}, {"args", entry_args(inputs, scalars, task["axes"])}};
    task["reference"] = "reference.cu";
    task["kernel"] = {{"files", {"kernel.cu"}}};
    if (m_workloads.empty()) add_placeholder_workload(task["axes"]);
    task["workloads"] = m_workloads;
    m_result.remaining = {
        "reference.cu: a CUDA (or C++ host-side) reference implementing reference.py; evoteam verifies candidates "
        "against it, and a CPU double reference (cpu_reference.cpp) as the other CUDA tasks have",
        "kernel.cu: a starting kernel (a naive one will do) that the team optimises",
        "tolerances per output, and flops and bytes expressions for the roofline (kernels/README.md)",
        "hooks for inputs whose values must be structured (indices, offsets); see the findings below"};
  }

  // The axes the task keeps: every one but those a constraint defines (they became expressions in the shapes).
  ojson axes_json() const {
    ojson axes = ojson::object();
    for (const AxisIn& axis : m_axes) {
      if (m_substituted.count(axis.name)) continue;
      ojson spec = ojson::object();
      spec["type"] = axis.is_const ? "const" : "var";
      if (axis.is_const) spec["value"] = axis.value;
      if (!axis.description.empty()) spec["description"] = axis.description;
      axes[axis.name] = spec;
    }
    return axes;
  }

  ojson scalars_json() {
    ojson scalars = ojson::object();
    for (const TensorIn& scalar : m_scalars) {
      if (!m_scalar_text.count(scalar.name)) continue;
      ojson spec = ojson::object();
      spec["dtype"] = scalar.dtype;
      spec["value"] = m_scalar_text[scalar.name];
      if (!scalar.description.empty()) spec["description"] = scalar.description;
      scalars[scalar.name] = spec;
    }
    return scalars;
  }

  // Destination-passing order, as FlashInfer-Trace calls a solution: inputs, outputs, then the var axes.
  ojson entry_args(const ojson& inputs, const ojson& scalars, const ojson& axes) const {
    ojson args = ojson::array();
    for (const std::string& name : m_order)
      if (inputs.contains(name) || scalars.contains(name)) args.push_back(name);
    for (const TensorIn& tensor : m_outputs) args.push_back(tensor.name);
    for (const auto& [name, spec] : axes.items())
      if (spec["type"] == "var") args.push_back(name);
    return args;
  }

  // The smallest power of two that, given to every var axis, meets the carried constraints (1 when none does, and
  // the loader then says which constraint fails).
  std::int64_t placeholder_extent() const {
    for (std::int64_t extent = 1; extent <= (std::int64_t{1} << 16); extent *= 2) {
      std::map<std::string, double> values;
      for (const AxisIn& axis : m_axes)
        values[axis.name] = axis.is_const ? static_cast<double>(axis.value) : static_cast<double>(extent);
      bool holds = true;
      for (const std::string& constraint : m_constraints) {
        try {
          holds = holds && evaluate_expression(constraint, values, "constraint") != 0.0;
        } catch (const Error&) {
          holds = false;
        }
      }
      if (holds) return extent;
    }
    return 1;
  }

  // A task needs a workload to load: with none imported, one with every var axis the same extent stands in, said as
  // a finding.
  void add_placeholder_workload(const ojson& axes) {
    const std::int64_t extent = placeholder_extent();
    ojson placeholder = ojson::object();
    ojson values = ojson::object();
    for (const auto& [name, spec] : axes.items())
      if (spec["type"] == "var") values[name] = extent;
    placeholder["name"] = "placeholder";
    placeholder["axes"] = values;
    placeholder["description"] =
        "every var axis " + std::to_string(extent) + ": no published workload was imported; replace it";
    m_workloads.push_back(placeholder);
    finding(m_workloads_file.empty() ? m_file : m_workloads_file, "workloads",
            "no workload imported: one placeholder with every var axis " + std::to_string(extent) +
                " (the smallest power of two meeting the constraints) stands in (pass --workloads FILE.jsonl)");
  }

  const ojson& m_def;
  std::string m_file;
  std::string m_workloads_file;
  ImportedTask m_result;
  std::vector<AxisIn> m_axes;
  std::vector<TensorIn> m_inputs;
  std::vector<TensorIn> m_outputs;
  std::vector<TensorIn> m_scalars;
  std::vector<std::string> m_order;  // inputs and scalars in the definition's order
  std::set<std::string> m_names;     // axes and tensors: one name, one thing
  std::map<std::string, std::string> m_substituted;
  std::vector<std::string> m_constraints;
  std::vector<ojson> m_workloads;
  std::map<std::string, std::vector<double>> m_scalar_values;
  std::map<std::string, std::string> m_scalar_text;
};

}  // namespace

std::string describe(const TraceFinding& finding) {
  return finding.file + ": " + finding.field + ": " + finding.message;
}

ImportedTask translate_definition(const nlohmann::ordered_json& definition, const std::string& definition_file,
                                  const std::vector<nlohmann::ordered_json>& workload_lines,
                                  const std::string& workloads_file) {
  ImportedTask imported = Translation(definition, definition_file, workloads_file).run(workload_lines);
  if (definition.contains("reference") && definition["reference"].is_string()) {
    imported.reference_py = definition["reference"].get<std::string>();
    // The published reference is the task's Python oracle (`evoteam eval --oracle`).
    imported.task["python_reference"] = {{"file", "reference.py"}, {"framework", "torch"}};
  } else
    imported.findings.push_back({definition_file, "reference", "missing: no reference.py written", true});
  imported.reference_stub = trace_detail::entry_stub(imported.task, "the task's reference, reference.py in CUDA");
  imported.kernel_stub = trace_detail::entry_stub(imported.task, "the starting kernel the team optimises");
  trace_detail::apply_family(imported, definition);
  const std::string sources =
      imported.starting_kernel
          ? "reference.cu (double), kernel.cu (the naive starting kernel) and\n// cpu_reference.* are generated for "
            "op family " +
                imported.family + " (README.md says what the import could not carry).\n"
          : "reference.cu and kernel.cu are stubs still to be written (op family " + imported.family +
                " has no generator yet;\n// README.md says what remains and what the import could not carry).\n";
  imported.task_text = "// Imported from the FlashInfer-Trace definition " + imported.name + " (" + definition_file +
                       ") by `evoteam import`.\n// reference.py is its PyTorch reference; " + sources +
                       imported.task.dump(2) + "\n";
  imported.readme = trace_detail::import_readme(imported, definition, definition_file, workloads_file);
  return imported;
}

}  // namespace evoteam
