#pragma once
// Typed access to task.json fields with errors that name the file and the field path ("params[2].default").
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <evoteam/task/task.hpp>

namespace evoteam::task_detail {

class FieldReader {
 public:
  explicit FieldReader(std::string file) : m_file(std::move(file)) {}

  [[noreturn]] void fail(const std::string& field, const std::string& message) const;

  const nlohmann::json& require(const nlohmann::json& object, const std::string& key, const std::string& field) const;
  std::string string_of(const nlohmann::json& value, const std::string& field) const;
  std::int64_t integer_of(const nlohmann::json& value, const std::string& field) const;
  double number_of(const nlohmann::json& value, const std::string& field) const;
  bool boolean_of(const nlohmann::json& value, const std::string& field) const;
  const nlohmann::json& array_of(const nlohmann::json& value, const std::string& field) const;
  const nlohmann::json& object_of(const nlohmann::json& value, const std::string& field) const;
  std::vector<std::string> strings_of(const nlohmann::json& value, const std::string& field) const;
  // Rejects keys outside `allowed`, so a typo is an error instead of a silently ignored field.
  void only_keys(const nlohmann::json& object, const std::vector<std::string>& allowed, const std::string& field) const;

  const std::string& file() const { return m_file; }

 private:
  std::string m_file;
};

bool is_identifier(const std::string& text);
// A file name inside the task directory: relative, no "..", no backslash.
bool is_safe_relative_path(const std::string& text);
// A file the task names (field `field`): a safe relative path to a regular file inside the task directory, not
// a link. Returns `name`.
std::string require_file(const FieldReader& reader, const Task& task, const std::string& name,
                         const std::string& field);
std::string join_field(const std::string& parent, const std::string& child);

// `workloads`: an inline array, or a file name (JSON lines, one {"name"?, "axes": {...}} per line).
std::vector<Workload> parse_workloads(const FieldReader& reader, const nlohmann::json& workloads, const Task& task,
                                      std::string* workloads_file_text);
std::vector<ParamSpec> parse_params(const FieldReader& reader, const nlohmann::json& params);
void check_param_constraints(const FieldReader& reader, const Task& task);
// `ranks_axis` (task_ranks.cpp): a var axis, required exactly when min_devices > 1, whose value in every
// workload is a group size between min_devices and 64.
// `python_reference` (python_reference.cpp): {"file": "reference.py", "framework": "numpy"|"torch",
// "function"?: "run"}; the file must exist in the task directory and the framework must hold every dtype.
PythonReference parse_python_reference(const FieldReader& reader, const nlohmann::json& value, const Task& task);
std::string parse_ranks_axis(const FieldReader& reader, const nlohmann::json* value, const Task& task);

}  // namespace evoteam::task_detail
