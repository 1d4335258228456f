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

#include <evoteam/core/process.hpp>
#include <evoteam/eval/evaluator.hpp>
#include <evoteam/task/task.hpp>

#include "eval/build_cache.hpp"
#include "eval/harness_build.hpp"
#include "eval/target_backend.hpp"

namespace evoteam::eval {

// A bound on concurrent compiler processes across every evaluation of the daemon.
class CompileSlots {
 public:
  // The process's slots for a bound of `slots` (eval.host.compile_jobs resolved): every evaluator of the process
  // with that bound shares them, so a device pool of evaluators does not multiply the compiles running at once.
  static CompileSlots& shared(int slots);

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

class HostBuilder : public TargetBackend {
 public:
  HostBuilder(const EvalSettings& settings, ProcessRunner& runner, std::filesystem::path cache_dir);

  std::string device() const override { return m_settings.device.empty() ? "host" : "host:" + m_settings.device; }
  std::string toolchain_identity() override { return toolchain().identity; }

  // Probed once; throws Error when the compiler cannot be run.
  const HostToolchain& toolchain();
  std::string harness_version() override;
  BuildOutcome build(const BuildRequest& request, SandboxMode sandbox) override;
  std::filesystem::path harness(const Task& task) override;
  // The machine-peaks probe program. Throws Error.
  std::filesystem::path peaks_program();
  // The bound on concurrent compiler processes, shared with the other targets' builders.
  CompileSlots& compile_slots() { return m_slots; }

 private:
  ProcessResult run_tool(const std::vector<std::string>& argv, const std::filesystem::path& cwd, double timeout_s,
                         SandboxMode sandbox, const std::filesystem::path& writable);
  std::filesystem::path harness_objects();
  // The compiler runs of the trusted programs, under eval.host.harness_build_timeout_s.
  HarnessTool harness_tool();
  BuildOutcome compile_and_check(const BuildRequest& request, SandboxMode sandbox, const std::filesystem::path& dir);

  EvalSettings m_settings;
  ProcessRunner& m_runner;
  std::filesystem::path m_cache_dir;
  CompileSlots& m_slots;
  std::mutex m_mutex;
  std::unique_ptr<HostToolchain> m_toolchain;
  std::string m_harness_version;
  KeyLocks m_locks;
};

// The link flags and extra allowed symbols of the libraries the task allows, from the configured `libraries`
// (eval.libraries). Throws InvalidInput for a library the configuration does not know.
void library_settings(const std::vector<LibrarySettings>& libraries, const Task& task, std::vector<std::string>* link,
                      std::vector<std::string>* symbols);

// Runs a compiler or inspection tool inside the sandbox (only `writable` writable) while holding one compile slot.
ProcessResult run_compile_tool(ProcessRunner& runner, CompileSlots& slots, const std::vector<std::string>& argv,
                               const std::filesystem::path& cwd, double timeout_s, SandboxMode sandbox,
                               const std::filesystem::path& writable, std::uint64_t max_address_space);

// The trusted harness sources every target shares: kernels/common under the install root (EVOTEAM_HOME).
std::filesystem::path harness_source_dir();

// A harness version: a hash over every file directly in `dirs`, named relative to `base`. Throws Error when there
// are none (the sources are missing).
std::string hash_harness_sources(const std::vector<std::filesystem::path>& dirs, const std::filesystem::path& base,
                                 const std::string& salt);

// A directory's name for a fresh temporary sibling (unique within and across processes).
std::filesystem::path unique_sibling(const std::filesystem::path& final_dir);

}  // namespace evoteam::eval
