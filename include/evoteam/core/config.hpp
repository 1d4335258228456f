#pragma once
// Layered configuration: built-in defaults < configs/default.json < --config FILE < EVOTEAM_* environment
// < command-line flags (--set key.path=value and dedicated flags).
// The built-in defaults are the schema: every key and its type. The rule table (config_rules.hpp) says what each
// value may be beyond its type. Unknown keys, wrong types and values a rule refuses are InvalidInput errors naming
// the source (file, variable or flag) and the key path, raised by the layer that sets them.
// Modules do not read keys by path: each reads its section once into a typed struct (`<module>_settings.cpp`,
// the only files that call get/at) and takes that struct.
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace evoteam {

class Config {
 public:
  // The built-in defaults alone.
  Config();

  // Overlays a JSON object. `source` names it in error messages (a file path, "EVOTEAM_X", "--set").
  void overlay(const nlohmann::json& layer, const std::string& source);
  void overlay_file(const std::filesystem::path& path);
  // Overlays EVOTEAM_<SECTION>__<KEY>=value variables (double underscore between levels, case-insensitive).
  void overlay_env(const std::map<std::string, std::string>& environment);
  // Overlays one "a.b.c=value" assignment; the value is parsed as JSON, falling back to a string.
  void overlay_assignment(const std::string& assignment, const std::string& source);

  // Checks the rules that relate two keys (a minimum and a maximum), on the merged layers; load_config calls it
  // once every layer is in. The error names both keys and where each value came from.
  void check_relations() const;
  // The layer that set a key last ("the built-in defaults" when none did).
  std::string source_of(const std::string& dotted_path) const;
  // One line per key a layer set: "path=value from source", in path order (for debug output).
  std::vector<std::string> describe_sources() const;

  // Typed access by dotted path, for the settings readers. A missing key is a bug (the defaults define every key).
  template <typename T>
  T get(const std::string& dotted_path) const {
    return at(dotted_path).get<T>();
  }
  const nlohmann::json& at(const std::string& dotted_path) const;
  const nlohmann::json& json() const { return m_value; }

  // The built-in defaults (also the schema).
  static const nlohmann::json& defaults();

  // For tests: from now on every path passed to get/at is added to `reads` (which must outlive the reads), so a
  // key that no settings reader reads is found.
  void record_reads_into(std::set<std::string>* reads) { m_reads = reads; }

 private:
  nlohmann::json m_value;
  std::map<std::string, std::string> m_sources;  // dotted path -> the layer that set it
  std::set<std::string>* m_reads = nullptr;
};

// Where shipped files live: the source tree's configs/, roles/, kernels/ (overridable by EVOTEAM_HOME).
std::filesystem::path install_root();

// The environment of the daemon as a map.
std::map<std::string, std::string> current_environment();

// Builds the standard layered config: defaults, <root>/configs/default.json, `config_file` if not empty,
// the environment, then each `--set` assignment; then checks the relations.
Config load_config(const std::filesystem::path& config_file, const std::vector<std::string>& assignments);

}  // namespace evoteam
