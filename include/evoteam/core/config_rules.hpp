#pragma once
// What a configuration value may be beyond its type: ranges, closed sets, non-empty values and how wide an integer
// may be. The rules are data, one row per key (src/core/config_rules.cpp), checked for every value a layer sets, so
// a bad value is refused at load naming its source and key instead of being clamped or misread later.
// A key whose type says everything (a boolean) or whose value is free text (a flag list, a model name) still has
// a row, so a new key cannot slip in unchecked (Config.EveryKeyHasARule).
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace evoteam {

struct ConfigRule {
  std::string path;           // dotted key, e.g. "eval.timing.min_samples"
  std::optional<double> min;  // number (or each number of a list) >= min, or > min when min_exclusive
  bool min_exclusive = false;
  std::optional<double> max;         // number (or each number of a list) <= max
  std::vector<std::string> choices;  // the string (or each string of a list) is one of these
  bool non_empty = false;            // a string or list must not be empty
  bool wide = false;                 // an integer key that may exceed 32 bits (byte counts, token budgets, seeds)
  // Structure a type cannot say (entries of a list of objects); returns what is wrong, or nothing.
  std::function<std::optional<std::string>(const nlohmann::json&)> shape;

  ConfigRule& at_most(double value);
  ConfigRule& not_empty();
  ConfigRule& wide_integer();
};

// Two keys whose values must be ordered on the merged configuration (lower <= upper), e.g. a minimum and a maximum.
struct ConfigRelation {
  std::string lower;
  std::string upper;
};

const std::vector<ConfigRule>& config_rules();
const std::vector<ConfigRelation>& config_relations();
const ConfigRule* find_config_rule(const std::string& path);

// Why `value` breaks `rule` ("must be at least 1, got -5"), or nothing when it keeps it.
std::optional<std::string> rule_violation(const ConfigRule& rule, const nlohmann::json& value);

}  // namespace evoteam
