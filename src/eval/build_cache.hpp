#pragma once
// The build cache every target shares: <cache>/builds/<key>/{build.json, kernel.so}, keyed by a hash of what the
// build depends on. Deterministic outcomes (ok, compile error, static rejection) are kept; timeouts and evaluator
// failures are not, since they may not recur. Concurrent requests for one key build once.
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "eval/target_backend.hpp"

namespace evoteam::eval {

nlohmann::json to_json(const BuildOutcome& outcome);
BuildOutcome build_outcome_from_json(const nlohmann::json& value);

// One mutex per key, shared by every thread of the process.
class KeyLocks {
 public:
  std::shared_ptr<std::mutex> get(const std::string& key);

 private:
  std::mutex m_mutex;
  std::map<std::string, std::shared_ptr<std::mutex>> m_locks;
};

// Returns the cached outcome for `material`, or runs `compile` in a fresh directory (which must leave
// kernel.so there on success) and caches it. `library` is set on success; `wall_s` covers the whole call.
// Throws what `compile` throws.
using CompileInDirectory = std::function<BuildOutcome(const std::filesystem::path& dir)>;
BuildOutcome cached_build(const std::filesystem::path& builds_dir, const std::string& material, KeyLocks& locks,
                          const CompileInDirectory& compile);

}  // namespace evoteam::eval
