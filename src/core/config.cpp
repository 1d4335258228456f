#include <evoteam/core/config.hpp>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <optional>

#include <evoteam/core/config_rules.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>

extern char** environ;

namespace evoteam {

extern const char* const k_default_config_text;

namespace {

std::string type_name(const nlohmann::json& value) {
  if (value.is_number_float()) return "number";
  if (value.is_number()) return "integer";
  return value.type_name();
}

// A value may replace a default of the same type; an integer may stand where a float is expected.
bool same_kind(const nlohmann::json& schema, const nlohmann::json& value) {
  if (schema.is_number_float()) return value.is_number();
  if (schema.is_number_integer()) return value.is_number_integer() || value.is_number_unsigned();
  return schema.type() == value.type();
}

// An integer key is read as a 32-bit int unless its rule says it is wide; a value that does not fit would be
// silently wrapped by the reader.
std::optional<std::string> width_violation(const ConfigRule* rule, const nlohmann::json& value) {
  if (!value.is_number_integer() && !value.is_number_unsigned()) return std::nullopt;
  const bool wide = rule != nullptr && rule->wide;
  if (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
    return "is too large, got " + value.dump();
  const std::int64_t number = value.get<std::int64_t>();
  if (!wide && (number > INT32_MAX || number < INT32_MIN)) return "must fit in 32 bits, got " + value.dump();
  return std::nullopt;
}

// A list holds values of the kind of the default's entries (the defaults have no empty lists).
void check_entries(const nlohmann::json& schema, const nlohmann::json& value, const std::string& path,
                   const std::string& source) {
  if (!schema.is_array() || schema.empty()) return;
  for (std::size_t i = 0; i < value.size(); ++i)
    if (!same_kind(schema[0], value[i]))
      throw InvalidInput(source + ": '" + path + "' entry " + std::to_string(i) + " must be " + type_name(schema[0]) +
                         ", got " + type_name(value[i]));
}

void check_leaf(const nlohmann::json& schema, const nlohmann::json& value, const std::string& path,
                const std::string& source) {
  check_entries(schema, value, path, source);
  const ConfigRule* rule = find_config_rule(path);
  std::optional<std::string> wrong = width_violation(rule, value);
  for (std::size_t i = 0; !wrong && value.is_array() && i < value.size(); ++i) wrong = width_violation(rule, value[i]);
  if (!wrong && rule != nullptr) wrong = rule_violation(*rule, value);
  if (wrong) throw InvalidInput(source + ": '" + path + "' " + *wrong);
}

// Checks a layer against the schema and the rules, and collects the dotted paths of the values it sets.
void check_against_schema(const nlohmann::json& schema, const nlohmann::json& layer, const std::string& prefix,
                          const std::string& source, std::vector<std::string>& set_paths) {
  if (!layer.is_object())
    throw InvalidInput(source + ": " + (prefix.empty() ? "the configuration" : "'" + prefix + "'") +
                       " must be an object");
  for (const auto& [key, value] : layer.items()) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    if (!schema.contains(key)) throw InvalidInput(source + ": unknown configuration key '" + path + "'");
    const nlohmann::json& expected = schema.at(key);
    if (!same_kind(expected, value))
      throw InvalidInput(source + ": '" + path + "' must be " + type_name(expected) + ", got " + type_name(value));
    if (expected.is_object()) {
      check_against_schema(expected, value, path, source, set_paths);
    } else {
      check_leaf(expected, value, path, source);
      set_paths.push_back(path);
    }
  }
}

std::vector<std::string> split_path(const std::string& dotted) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = dotted.find('.', start);
    parts.push_back(dotted.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return parts;
}

// Builds {"a":{"b":value}} from "a.b", converting the text by the schema's type.
nlohmann::json layer_for(const std::string& dotted, const std::string& text, const std::string& source) {
  const nlohmann::json* schema = &Config::defaults();
  for (const std::string& part : split_path(dotted)) {
    if (!schema->is_object() || !schema->contains(part))
      throw InvalidInput(source + ": unknown configuration key '" + dotted + "'");
    schema = &schema->at(part);
  }
  nlohmann::json value;
  if (schema->is_string()) {
    value = text;
  } else {
    value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (value.is_discarded())
      throw InvalidInput(source + ": '" + dotted + "' must be " + type_name(*schema) + ", got '" + text + "'");
  }
  nlohmann::json layer = value;
  std::vector<std::string> parts = split_path(dotted);
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) layer = nlohmann::json{{*it, layer}};
  return layer;
}

}  // namespace

const nlohmann::json& Config::defaults() {
  static const nlohmann::json value = nlohmann::json::parse(k_default_config_text, nullptr, true, true);
  return value;
}

Config::Config() : m_value(defaults()) {}

void Config::overlay(const nlohmann::json& layer, const std::string& source) {
  std::vector<std::string> set_paths;
  check_against_schema(defaults(), layer, "", source, set_paths);
  m_value.merge_patch(layer);
  for (const std::string& path : set_paths) m_sources[path] = source;
}

std::string Config::source_of(const std::string& dotted_path) const {
  auto found = m_sources.find(dotted_path);
  return found == m_sources.end() ? "the built-in defaults" : found->second;
}

std::vector<std::string> Config::describe_sources() const {
  std::vector<std::string> lines;
  for (const auto& [path, source] : m_sources) lines.push_back(path + "=" + at(path).dump() + " from " + source);
  return lines;
}

void Config::check_relations() const {
  for (const ConfigRelation& relation : config_relations()) {
    const double lower = at(relation.lower).get<double>();
    const double upper = at(relation.upper).get<double>();
    if (lower > upper)
      throw InvalidInput("'" + relation.lower + "' (" + at(relation.lower).dump() + ", from " +
                         source_of(relation.lower) + ") must not exceed '" + relation.upper + "' (" +
                         at(relation.upper).dump() + ", from " + source_of(relation.upper) + ")");
  }
}

void Config::overlay_file(const std::filesystem::path& path) { overlay(read_json_file(path), path.string()); }

void Config::overlay_env(const std::map<std::string, std::string>& environment) {
  const std::string prefix = "EVOTEAM_";
  for (const auto& [name, text] : environment) {
    // Only EVOTEAM_SECTION__KEY names are config; EVOTEAM_HOME and friends are not.
    if (name.rfind(prefix, 0) != 0 || name.find("__") == std::string::npos) continue;
    std::string dotted = name.substr(prefix.size());
    std::transform(dotted.begin(), dotted.end(), dotted.begin(), [](unsigned char c) { return std::tolower(c); });
    for (std::size_t pos; (pos = dotted.find("__")) != std::string::npos;) dotted.replace(pos, 2, ".");
    overlay(layer_for(dotted, text, name), name);
  }
}

void Config::overlay_assignment(const std::string& assignment, const std::string& source) {
  std::size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) throw InvalidInput(source + ": expected KEY=VALUE, got '" + assignment + "'");
  overlay(layer_for(assignment.substr(0, eq), assignment.substr(eq + 1), source), source);
}

const nlohmann::json& Config::at(const std::string& dotted_path) const {
  if (m_reads != nullptr) m_reads->insert(dotted_path);
  const nlohmann::json* node = &m_value;
  for (const std::string& part : split_path(dotted_path)) {
    EVOTEAM_CHECK(node->is_object() && node->contains(part), "no configuration key '" + dotted_path + "'");
    node = &node->at(part);
  }
  return *node;
}

std::filesystem::path install_root() {
  if (const char* home = std::getenv("EVOTEAM_HOME"); home != nullptr && *home != '\0') return home;
  return EVOTEAM_SOURCE_DIR;
}

std::map<std::string, std::string> current_environment() {
  std::map<std::string, std::string> result;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string text = *entry;
    std::size_t eq = text.find('=');
    if (eq != std::string::npos) result[text.substr(0, eq)] = text.substr(eq + 1);
  }
  return result;
}

Config load_config(const std::filesystem::path& config_file, const std::vector<std::string>& assignments) {
  Config config;
  std::filesystem::path shipped = install_root() / "configs" / "default.json";
  if (std::filesystem::exists(shipped)) config.overlay_file(shipped);
  if (!config_file.empty()) {
    if (!std::filesystem::exists(config_file))
      throw InvalidInput("--config " + config_file.string() + ": no such file");
    config.overlay_file(config_file);
  }
  config.overlay_env(current_environment());
  for (const std::string& assignment : assignments) config.overlay_assignment(assignment, "--set " + assignment);
  config.check_relations();
  return config;
}

}  // namespace evoteam
