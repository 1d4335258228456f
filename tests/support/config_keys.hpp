#pragma once
// Every configuration key of the built-in defaults as a dotted path (lists are leaves), for tests that walk them all.
#include <string>
#include <vector>

#include <evoteam/core/config.hpp>

namespace evoteam::testing {

inline void collect_key_paths(const nlohmann::json& node, const std::string& prefix, std::vector<std::string>& paths) {
  for (const auto& [key, value] : node.items()) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    if (value.is_object())
      collect_key_paths(value, path, paths);
    else
      paths.push_back(path);
  }
}

inline std::vector<std::string> config_key_paths() {
  std::vector<std::string> paths;
  collect_key_paths(Config::defaults(), "", paths);
  return paths;
}

}  // namespace evoteam::testing
