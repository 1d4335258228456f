#pragma once
// The CUDA target: nvcc builds of implementations (one shared object holding a cubin per declared arch, linked
// against the shared CUDA runtime so harness and implementation share one runtime), the static stage over the
// ptxas report, the kept PTX, the SASS (when cuobjdump is installed) and the host object's symbols; and the CUDA
// harness executable per task. Builds are cached like the host's (eval/build_cache.hpp) and share its compile
// slots. Needs nvcc, never a GPU: whether a device exists is asked by the evaluator through the harness probe.
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <evoteam/core/process.hpp>
#include <evoteam/eval/eval_settings.hpp>

#include "eval/build_cache.hpp"
#include "eval/cuda/cuda_static.hpp"
#include "eval/host/host_build.hpp"
#include "eval/target_backend.hpp"

namespace evoteam::eval {

struct CudaToolchain {
  std::string nvcc;                        // resolved path
  std::string identity;                    // nvcc release line and host compiler version
  std::string cuobjdump;                   // empty when not installed: the PTX scan stands in for SASS
  std::vector<std::string> flags;          // eval.cuda.flags
  std::vector<std::string> harness_flags;  // eval.cuda.harness_flags
};

class CudaBuilder : public TargetBackend {
 public:
  CudaBuilder(const EvalSettings& settings, ProcessRunner& runner, std::filesystem::path cache_dir,
              CompileSlots& slots);

  // Timing runs lock the GPU the harness uses; one machine's processes agree on the name.
  std::string device() const override { return "cuda:" + (m_settings.device.empty() ? "0" : m_settings.device); }
  std::string toolchain_identity() override { return toolchain().identity; }
  std::string harness_version() override;
  BuildOutcome build(const BuildRequest& request, SandboxMode sandbox) override;
  std::filesystem::path harness(const Task& task) override;

  // Probed once; throws Error when nvcc cannot be found or run.
  const CudaToolchain& toolchain();

 private:
  ProcessResult run_tool(const std::vector<std::string>& argv, const std::filesystem::path& cwd, double timeout_s,
                         SandboxMode sandbox, const std::filesystem::path& writable);
  std::filesystem::path harness_objects(const std::vector<std::string>& archs);
  // The nvcc runs of the trusted harness, under eval.cuda.harness_build_timeout_s.
  HarnessTool harness_tool();
  BuildOutcome compile_and_check(const BuildRequest& request, SandboxMode sandbox, const std::filesystem::path& dir);
  // The static stage on compiled objects: per-arch signals judged against the task's policy and constraints.
  void judge_objects(const BuildRequest& request, const std::filesystem::path& dir,
                     const std::vector<std::string>& objects, SandboxMode sandbox, BuildOutcome& outcome);

  EvalSettings m_settings;
  ProcessRunner& m_runner;
  std::filesystem::path m_cache_dir;
  CompileSlots& m_slots;
  std::mutex m_mutex;
  std::unique_ptr<CudaToolchain> m_toolchain;
  std::string m_harness_version;
  KeyLocks m_locks;
};

// -gencode pairs for every arch of a task, in order.
std::vector<std::string> gencode_flags_for(const std::vector<std::string>& archs);

}  // namespace evoteam::eval
