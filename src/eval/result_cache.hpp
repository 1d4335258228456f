#pragma once
// Finished evaluations by key (the hash of everything that determines them): <cache>/results/<key>.json.
#include <filesystem>
#include <optional>
#include <string>

#include <evoteam/eval/evaluator.hpp>

namespace evoteam::eval {

class ResultCache {
 public:
  explicit ResultCache(std::filesystem::path dir) : m_dir(std::move(dir)) {}
  // nullopt when absent or unreadable (a damaged entry is a miss, never an error).
  std::optional<EvalResult> get(const std::string& key) const;
  void put(const std::string& key, const EvalResult& result) const;

 private:
  std::filesystem::path m_dir;
};

}  // namespace evoteam::eval
