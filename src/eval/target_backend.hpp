#pragma once
// What the evaluator needs from a target (host today, cuda next): builds of implementations, the harness
// executable for a task, and identities for cache keys. Everything after the build (plans, harness records,
// verdicts, timing statistics) is shared by all targets.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <evoteam/eval/evaluator.hpp>
#include <evoteam/task/task.hpp>

namespace evoteam::eval {

struct BuildRequest {
  const Task* task = nullptr;
  std::map<std::string, std::string> files;  // file name -> text
  ParamAssignment params;
  bool untrusted = true;  // static checks apply (candidates; not the reference or the starting kernel as baseline)
  std::string role = "candidate";
  // Trusted builds only: compiler flags a vendor library's sources need (include paths, defines), and the
  // symbols the shared object exports beside the entry point (the vendor's `<entry>_plan`).
  std::vector<std::string> extra_flags;
  std::vector<std::string> extra_exports;
  std::vector<std::string> archs;  // cuda: the archs to build for; empty: the task's
};

enum class BuildStatus { ok, compile_error, compile_timeout, static_reject, infra_error };

struct BuildOutcome {
  BuildStatus status = BuildStatus::infra_error;
  std::string reason;
  nlohmann::json evidence = nlohmann::json::object();
  std::filesystem::path library;  // the shared object, when ok
  std::string log;
  nlohmann::json report = nlohmann::json::object();
  std::vector<std::string> warnings;
  // Names of the task's once-adopted constraints the build meets; empty unless an untrusted build passed its
  // static stage.
  std::vector<std::string> adopted_constraints;
  bool cache_hit = false;
  double wall_s = 0;
  double static_s = 0;  // part of wall_s spent on static checks
};

std::string to_string(BuildStatus status);

class TargetBackend {
 public:
  virtual ~TargetBackend() = default;
  // The device timing runs lock: "host", "cuda:<uuid>".
  virtual std::string device() const = 0;
  // Compiler versions and machine facts that builds depend on (part of every cache key). May throw Error.
  virtual std::string toolchain_identity() = 0;
  // Hash of the harness sources. May throw Error.
  virtual std::string harness_version() = 0;
  // Never throws for what the sources do; evaluator problems come back as BuildStatus::infra_error.
  virtual BuildOutcome build(const BuildRequest& request, SandboxMode sandbox) = 0;
  // The harness executable for a task. Throws Error when it cannot be built (an evaluator problem).
  virtual std::filesystem::path harness(const Task& task) = 0;
};

}  // namespace evoteam::eval
