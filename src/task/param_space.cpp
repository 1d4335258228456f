// Tunable params: parsing, validation and the searchable space (the built-in team enumerates it).
#include <evoteam/core/error.hpp>
#include <evoteam/core/text.hpp>
#include <evoteam/task/task.hpp>

#include <algorithm>
#include <cmath>
#include <regex>
#include <set>
#include <sstream>

#include "task/task_reader.hpp"

namespace evoteam {
namespace {

// Values become -D flags, so they must be plain tokens: no spaces, quotes or shell syntax.
bool is_safe_token(const std::string& text) {
  static const std::regex token("[A-Za-z0-9_.+-]+");
  return std::regex_match(text, token);
}

std::optional<double> numeric_value(const std::string& text) {
  try {
    std::size_t used = 0;
    double value = std::stod(text, &used);
    if (used == text.size()) return value;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

std::optional<std::string> constraint_error(const Task& task, const ParamAssignment& params) {
  if (task.param_constraints.empty()) return std::nullopt;
  std::map<std::string, double> values;
  for (const auto& [name, value] : params)
    if (std::optional<double> number = numeric_value(value)) values[name] = *number;
  for (const std::string& constraint : task.param_constraints)
    if (evaluate_expression(constraint, values, task.name + ": param_constraints") == 0)
      return "violates param constraint \"" + constraint + "\"";
  return std::nullopt;
}

}  // namespace

namespace task_detail {

std::vector<ParamSpec> parse_params(const FieldReader& reader, const nlohmann::json& params) {
  std::vector<ParamSpec> result;
  std::set<std::string> names;
  const nlohmann::json& items = reader.array_of(params, "params");
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string field = "params[" + std::to_string(i) + "]";
    reader.object_of(items[i], field);
    reader.only_keys(items[i], {"name", "values", "default", "description"}, field);
    ParamSpec param;
    param.name = reader.string_of(reader.require(items[i], "name", field), field + ".name");
    if (!is_identifier(param.name)) reader.fail(field + ".name", "must be an identifier (it becomes a -D macro)");
    if (!names.insert(param.name).second) reader.fail(field + ".name", "\"" + param.name + "\" declared twice");
    auto token_of = [&](const nlohmann::json& value, const std::string& where) {
      std::string text;
      if (value.is_number_integer() || value.is_number_unsigned())
        text = std::to_string(value.get<std::int64_t>());
      else if (value.is_number_float())
        text = value.dump();
      else if (value.is_string())
        text = value.get<std::string>();
      else if (value.is_boolean())
        text = value.get<bool>() ? "1" : "0";
      else
        reader.fail(where, "must be a number, a boolean or a token string");
      if (!is_safe_token(text)) reader.fail(where, "\"" + text + "\" is not a plain token ([A-Za-z0-9_.+-]+)");
      return text;
    };
    const nlohmann::json& values = reader.array_of(reader.require(items[i], "values", field), field + ".values");
    if (values.empty()) reader.fail(field + ".values", "at least one value is required");
    std::set<std::string> seen;
    // One kind of value per param: a list mixing numbers and strings is almost always a typo ("8" for 8), and
    // the harness reads a numeric param as a number.
    for (std::size_t v = 1; v < values.size(); ++v)
      if (values[v].is_number() != values[0].is_number())
        reader.fail(field + ".values", "mixes numbers and strings; give every value of one param the same kind");
    for (std::size_t v = 0; v < values.size(); ++v) {
      std::string text = token_of(values[v], field + ".values[" + std::to_string(v) + "]");
      if (!seen.insert(text).second) reader.fail(field + ".values", "\"" + text + "\" listed twice");
      param.values.push_back(text);
    }
    param.default_value = token_of(reader.require(items[i], "default", field), field + ".default");
    if (!seen.count(param.default_value))
      reader.fail(field + ".default", "\"" + param.default_value + "\" is not one of the values");
    if (items[i].contains("description"))
      param.description = reader.string_of(items[i]["description"], field + ".description");
    result.push_back(param);
  }
  return result;
}

void check_param_constraints(const FieldReader& reader, const Task& task) {
  for (std::size_t i = 0; i < task.param_constraints.size(); ++i) {
    try {
      std::optional<std::string> error = constraint_error(task, default_params(task));
      if (error && error->find(task.param_constraints[i]) != std::string::npos)
        reader.fail("param_constraints[" + std::to_string(i) + "]", "the default params violate it");
    } catch (const InvalidInput& error) {
      if (std::string(error.what()).rfind(reader.file(), 0) == 0) throw;
      reader.fail("param_constraints[" + std::to_string(i) + "]", error.what());
    }
  }
  if (!task.param_constraints.empty() && param_space(task).empty())
    reader.fail("param_constraints", "no assignment satisfies them");
}

}  // namespace task_detail

ParamAssignment default_params(const Task& task) {
  ParamAssignment params;
  for (const ParamSpec& param : task.params) params[param.name] = param.default_value;
  return params;
}

ParamAssignment complete_params(const Task& task, const ParamAssignment& partial) {
  ParamAssignment params = default_params(task);
  for (const auto& [name, value] : partial) params[name] = value;
  return params;
}

std::optional<std::string> param_error(const Task& task, const ParamAssignment& params) {
  for (const auto& [name, value] : params) {
    const ParamSpec* spec = nullptr;
    for (const ParamSpec& param : task.params)
      if (param.name == name) spec = &param;
    if (spec == nullptr) return "unknown param \"" + name + "\"";
    bool declared = false;
    for (const std::string& allowed : spec->values) declared |= allowed == value;
    if (!declared)
      return "param " + name + "=" + value + " is not one of the declared values (" + join(spec->values, ", ") + ")";
  }
  return constraint_error(task, complete_params(task, params));
}

std::vector<ParamAssignment> param_space(const Task& task) {
  std::vector<ParamAssignment> space;
  std::vector<std::size_t> index(task.params.size(), 0);
  while (true) {
    ParamAssignment params;
    for (std::size_t i = 0; i < task.params.size(); ++i) params[task.params[i].name] = task.params[i].values[index[i]];
    if (!constraint_error(task, params)) space.push_back(params);
    // Odometer increment, last param fastest.
    std::size_t position = task.params.size();
    while (position > 0) {
      --position;
      if (++index[position] < task.params[position].values.size()) break;
      index[position] = 0;
      if (position == 0) return space;
    }
    if (task.params.empty()) return space;
  }
}

std::string describe_param_space(const Task& task) {
  std::string text;
  for (const ParamSpec& spec : task.params)
    text += spec.name + " in {" + join(spec.values, ", ") + "} default " + spec.default_value + "; ";
  if (!task.param_constraints.empty()) text += "constraints: " + join(task.param_constraints, "; ");
  return text.empty() ? "none" : text;
}

std::string describe_static_constraints(const Task& task) {
  std::string text;
  for (const StaticConstraint& constraint : task.static_constraints) {
    const std::string kind = constraint.once_adopted ? "required once adopted (" + constraint.name + ")"
                             : constraint.required   ? "required"
                                                     : "forbidden";
    const std::string archs = constraint.archs.empty() ? "" : " [" + join(constraint.archs, ", ") + "]";
    text += "- " + kind + archs + ": " + constraint.message + "\n";
  }
  return text.empty() ? "none" : text;
}

std::string describe_params(const ParamAssignment& params) {
  return join(params, ",", [](const auto& param) { return param.first + "=" + param.second; });
}

std::optional<std::string> apply_param_text(const Task& task, const std::string& text, ParamAssignment& params) {
  ParamAssignment changed = complete_params(task, params);
  std::string spaced = text;
  std::replace(spaced.begin(), spaced.end(), ',', ' ');
  std::istringstream words(spaced);
  for (std::string word; words >> word;) {
    const std::size_t equals = word.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == word.size())
      return "\"" + word + "\" is not NAME=value";
    changed[word.substr(0, equals)] = word.substr(equals + 1);
  }
  if (std::optional<std::string> error = param_error(task, changed)) return error;
  params = std::move(changed);
  return std::nullopt;
}

nlohmann::json to_json(const ParamAssignment& params) {
  nlohmann::json object = nlohmann::json::object();
  for (const auto& [name, value] : params) object[name] = value;
  return object;
}

}  // namespace evoteam
