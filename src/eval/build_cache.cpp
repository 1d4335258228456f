#include "eval/build_cache.hpp"

#include <evoteam/core/clock.hpp>
#include <evoteam/core/fs.hpp>

#include <chrono>

#include "eval/host/host_build.hpp"

namespace evoteam::eval {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

}  // namespace

nlohmann::json to_json(const BuildOutcome& outcome) {
  return {{"status", to_string(outcome.status)},
          {"reason", outcome.reason},
          {"evidence", outcome.evidence},
          {"log", outcome.log},
          {"report", outcome.report},
          {"warnings", outcome.warnings},
          {"wall_s", outcome.wall_s},
          {"static_s", outcome.static_s},
          {"adopted_constraints", outcome.adopted_constraints}};
}

BuildOutcome build_outcome_from_json(const nlohmann::json& value) {
  BuildOutcome outcome;
  const std::string status = value.value("status", "");
  for (BuildStatus candidate : {BuildStatus::ok, BuildStatus::compile_error, BuildStatus::compile_timeout,
                                BuildStatus::static_reject, BuildStatus::infra_error})
    if (to_string(candidate) == status) outcome.status = candidate;
  outcome.reason = value.value("reason", "");
  outcome.evidence = value.value("evidence", nlohmann::json::object());
  outcome.log = value.value("log", "");
  outcome.report = value.value("report", nlohmann::json::object());
  outcome.warnings = value.value("warnings", std::vector<std::string>{});
  outcome.wall_s = value.value("wall_s", 0.0);
  outcome.static_s = value.value("static_s", 0.0);
  outcome.adopted_constraints = value.value("adopted_constraints", std::vector<std::string>{});
  return outcome;
}

std::shared_ptr<std::mutex> KeyLocks::get(const std::string& key) {
  std::lock_guard<std::mutex> lock(m_mutex);
  std::shared_ptr<std::mutex>& entry = m_locks[key];
  if (!entry) entry = std::make_shared<std::mutex>();
  return entry;
}

BuildOutcome cached_build(const fs::path& builds_dir, const std::string& material, KeyLocks& locks,
                          const CompileInDirectory& compile) {
  const auto start = Clock::now();
  const fs::path final_dir = builds_dir / sha256_hex(material).substr(0, 32);
  std::shared_ptr<std::mutex> lock = locks.get(final_dir.string());
  std::lock_guard<std::mutex> guard(*lock);
  BuildOutcome outcome;
  if (fs::is_regular_file(final_dir / "build.json")) {
    outcome = build_outcome_from_json(read_json_file(final_dir / "build.json"));
    outcome.cache_hit = true;
    if (outcome.status == BuildStatus::ok) outcome.library = final_dir / "kernel.so";
    outcome.wall_s = seconds_since(start);
    return outcome;
  }
  evoteam::create_directories(builds_dir);
  const fs::path temporary = unique_sibling(final_dir);
  evoteam::create_directories(temporary / "src");
  evoteam::create_directories(temporary / "obj");
  try {
    outcome = compile(temporary);
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(temporary, ignored);
    throw;
  }
  outcome.wall_s = seconds_since(start);
  if (outcome.status == BuildStatus::compile_timeout || outcome.status == BuildStatus::infra_error) {
    std::error_code ignored;
    fs::remove_all(temporary, ignored);
    return outcome;
  }
  write_json_atomic(temporary / "build.json", to_json(outcome));
  std::error_code rename_error;
  fs::rename(temporary, final_dir, rename_error);
  if (rename_error) fs::remove_all(temporary, rename_error);  // another process finished first: same content
  if (outcome.status == BuildStatus::ok) outcome.library = final_dir / "kernel.so";
  return outcome;
}

}  // namespace evoteam::eval
