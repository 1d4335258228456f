#include "task/task_reader.hpp"

#include <evoteam/core/error.hpp>
#include <evoteam/core/text.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>

namespace evoteam::task_detail {

void FieldReader::fail(const std::string& field, const std::string& message) const {
  throw InvalidInput(m_file + ": " + (field.empty() ? "" : field + ": ") + message);
}

const nlohmann::json& FieldReader::require(const nlohmann::json& object, const std::string& key,
                                           const std::string& field) const {
  if (!object.is_object() || !object.contains(key)) fail(join_field(field, key), "missing (required)");
  return object.at(key);
}

std::string FieldReader::string_of(const nlohmann::json& value, const std::string& field) const {
  if (!value.is_string()) fail(field, std::string("must be a string, got ") + value.type_name());
  return value.get<std::string>();
}

std::int64_t FieldReader::integer_of(const nlohmann::json& value, const std::string& field) const {
  // An unsigned number past the largest signed one would wrap to a negative (18446744073709551615 reads as -1).
  if (value.is_number_unsigned() &&
      value.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    fail(field, "must be an integer up to 9223372036854775807, got " + value.dump());
  if (value.is_number_integer()) return value.get<std::int64_t>();
  if (value.is_number_float()) {
    double number = value.get<double>();
    if (number == std::floor(number) && std::abs(number) < 9e15) return static_cast<std::int64_t>(number);
  }
  fail(field, std::string("must be an integer, got ") + value.dump());
}

double FieldReader::number_of(const nlohmann::json& value, const std::string& field) const {
  if (!value.is_number()) fail(field, std::string("must be a number, got ") + value.dump());
  return value.get<double>();
}

bool FieldReader::boolean_of(const nlohmann::json& value, const std::string& field) const {
  if (!value.is_boolean()) fail(field, std::string("must be true or false, got ") + value.dump());
  return value.get<bool>();
}

const nlohmann::json& FieldReader::array_of(const nlohmann::json& value, const std::string& field) const {
  if (!value.is_array()) fail(field, std::string("must be an array, got ") + value.type_name());
  return value;
}

const nlohmann::json& FieldReader::object_of(const nlohmann::json& value, const std::string& field) const {
  if (!value.is_object()) fail(field, std::string("must be an object, got ") + value.type_name());
  return value;
}

std::vector<std::string> FieldReader::strings_of(const nlohmann::json& value, const std::string& field) const {
  std::vector<std::string> result;
  const nlohmann::json& items = array_of(value, field);
  for (std::size_t i = 0; i < items.size(); ++i)
    result.push_back(string_of(items[i], field + "[" + std::to_string(i) + "]"));
  return result;
}

void FieldReader::only_keys(const nlohmann::json& object, const std::vector<std::string>& allowed,
                            const std::string& field) const {
  for (const auto& [key, value] : object.items()) {
    (void)value;
    bool known = false;
    for (const std::string& name : allowed) known |= name == key;
    if (!known) fail(join_field(field, key), "unknown field (known: " + join(allowed, ", ") + ")");
  }
}

bool is_identifier(const std::string& text) {
  if (text.empty() || std::isdigit(static_cast<unsigned char>(text[0]))) return false;
  for (char c : text)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

bool is_safe_relative_path(const std::string& text) {
  if (text.empty() || text[0] == '/' || text.find('\\') != std::string::npos) return false;
  for (const auto& part : std::filesystem::path(text))
    if (part == ".." || part == ".") return false;
  return true;
}

std::string join_field(const std::string& parent, const std::string& child) {
  return parent.empty() ? child : parent + "." + child;
}

std::string require_file(const FieldReader& reader, const Task& task, const std::string& name,
                         const std::string& field) {
  if (!is_safe_relative_path(name))
    reader.fail(field, "\"" + name + "\" must be a relative path inside the task directory");
  if (!std::filesystem::is_regular_file(task.dir / name))
    reader.fail(field, "no such file: " + (task.dir / name).string());
  // A link could reach a file outside the task, and the run's frozen copy keeps no links: refuse it like "..".
  std::error_code error;
  const std::filesystem::path real = std::filesystem::canonical(task.dir / name, error);
  const std::filesystem::path root = std::filesystem::canonical(task.dir, error);
  const bool inside = !error && std::mismatch(root.begin(), root.end(), real.begin(), real.end()).first == root.end();
  if (std::filesystem::is_symlink(task.dir / name) || !inside)
    reader.fail(field, "\"" + name + "\" must be a regular file inside the task directory, not a link");
  return name;
}

}  // namespace evoteam::task_detail
