#pragma once
// Host builds: the trusted harness executable (shared objects compiled once per harness version, compiler and
// flags; glue and hooks linked per task) and implementations (candidate, starting kernel, reference, library
// baseline) as shared objects that export only the entry point. Every build is cached under
// <cache>/builds/<key>, keyed by the sources, params, flags, compiler identity and harness version; concurrent
// requests for one key build once.
#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <evoteam/config.hpp>
#include <evoteam/evaluator.hpp>
#include <evoteam/process.hpp>
#include <evoteam/task.hpp>

namespace evoteam::eval {

// A bound on concurrent compiler processes across every evaluation of the daemon.
class CompileSlots {
 public:
  explicit CompileSlots(int slots) : m_free(slots < 1 ? 1 : slots) {}
  void acquire();
  void release();

 private:
  std::mutex m_mutex;
  std::condition_variable m_changed;
  int m_free;
};

struct HostToolchain {
  std::string compiler;  // resolved path
  std::string identity;  // compiler version line, target triple and CPU model (-march=native depends on it)
  bool gcc = false;
  std::vector<std::string> flags;
  std::vector<std::string> harness_flags;
  std::uint64_t max_address_space = 0;
};

struct BuildRequest {
  const Task* task = nullptr;
  std::map<std::string, std::string> files;  // file name -> text
  ParamAssignment params;
  bool untrusted = true;  // static checks apply (candidates; not the reference or the starting kernel as baseline)
  std::string role = "candidate";
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
  bool cache_hit = false;
  double wall_s = 0;
  double static_s = 0;  // part of wall_s spent on static checks
};

class HostBuilder {
 public:
  HostBuilder(const Config& config, ProcessRunner& runner, std::filesystem::path cache_dir);

  // Probed once; throws Error when the compiler cannot be run.
  const HostToolchain& toolchain();
  // sha256 over the harness sources (kernels/common).
  const std::string& harness_version();
  // Never throws for what the sources do; infra problems come back as BuildStatus::infra_error.
  BuildOutcome build(const BuildRequest& request, SandboxMode sandbox);
  // The harness executable for a task. Throws Error when it cannot be built (an evaluator problem).
  std::filesystem::path harness(const Task& task);
  // The machine-peaks probe program. Throws Error.
  std::filesystem::path peaks_program();

 private:
  struct BuildContext;
  std::shared_ptr<std::mutex> key_lock(const std::string& key);
  ProcessResult run_tool(std::vector<std::string> argv, const std::filesystem::path& cwd, double timeout_s,
                         SandboxMode sandbox, const std::filesystem::path& writable);
  std::filesystem::path harness_objects();
  BuildOutcome compile_and_check(const BuildRequest& request, SandboxMode sandbox, const std::filesystem::path& dir);

  const Config& m_config;
  ProcessRunner& m_runner;
  std::filesystem::path m_cache_dir;
  CompileSlots m_slots;
  std::mutex m_mutex;
  std::unique_ptr<HostToolchain> m_toolchain;
  std::string m_harness_version;
  std::map<std::string, std::shared_ptr<std::mutex>> m_key_locks;
};

std::string to_string(BuildStatus status);
// A directory's name for a fresh temporary sibling (unique within and across processes).
std::filesystem::path unique_sibling(const std::filesystem::path& final_dir);

}  // namespace evoteam::eval
