// The physical floor never accuses the innocent: on a machine busy with other work, the peaks are measured under
// that load and a correct, fast kernel is timed under it, and the kernel is never IMPOSSIBLE_PERF.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <evoteam/core/config.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/eval/evaluator.hpp>

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "support/temp_dir.hpp"
#include "unit/eval_test_support.hpp"

namespace {

namespace fs = std::filesystem;
using namespace evoteam;

// Busy loops in processes of their own, killed when the test ends.
class CpuHogs {
 public:
  explicit CpuHogs(unsigned count) {
    for (unsigned i = 0; i < count; ++i) {
      const pid_t pid = fork();
      if (pid == 0) {
        execl("/bin/sh", "sh", "-c", "while :; do :; done", static_cast<char*>(nullptr));
        _exit(127);
      }
      if (pid > 0) m_pids.push_back(pid);
    }
  }
  ~CpuHogs() {
    for (pid_t pid : m_pids) kill(pid, SIGKILL);
    for (pid_t pid : m_pids) waitpid(pid, nullptr, 0);
  }
  CpuHogs(const CpuHogs&) = delete;
  CpuHogs& operator=(const CpuHogs&) = delete;
  std::size_t size() const { return m_pids.size(); }

 private:
  std::vector<pid_t> m_pids;
};

TEST(EvalLoadedMachine, CpuHogsBesideTheEvaluationNeverMakeACorrectKernelImpossiblyFast) {
  const Task task = load_task(install_root() / "kernels" / "host_matmul");
  Config config = evoteam::testing::eval_test_config();
  // Peaks measured here, under the load, in a cache of this test's own; the builds are the suite's.
  config.overlay(nlohmann::json::parse(R"({"eval": {"machine": {"peak_gflops": 0, "peak_gbytes_per_s": 0}}})"),
                 "measured peaks");
  EvalSettings settings = eval_settings(config);
  settings.build_cache_dir = evoteam::testing::eval_test_cache().string();
  evoteam::testing::TempDir cache;
  // Six busy loops a core. Run by hand beside twelve of them on 2 cores, the peaks probe timed on the wall clock
  // fell from 90 to 9 GFLOP/s, which would make this kernel (about a third of the real peak) look three times faster
  // than the machine; timed on the thread's CPU clock it stayed at 100.
  const CpuHogs hogs(6 * std::thread::hardware_concurrency());
  ASSERT_GT(hogs.size(), 1u);
  Evaluator evaluator(settings, system_runner(), cache.path());
  EvalOptions options;
  options.result_cache = CachePolicy::bypass;
  // The register-blocked configuration: the fastest of the task, far above the starting kernel.
  const EvalResult fast = evaluator.evaluate(
      task, Candidate{task.dir, {{"ACC_IN_REGISTERS", "1"}, {"TILE_N", "64"}, {"REG_ROWS", "4"}}}, options);
  EXPECT_NE(fast.verdict, Verdict::impossible_perf) << fast.reason << "\n" << fast.evidence.dump();
  EXPECT_TRUE(counts_as_pass(fast.verdict)) << to_string(fast.verdict) << ": " << fast.reason;
  ASSERT_TRUE(fast.roofline_fraction.has_value()) << "peaks were measured, so there is a roofline fraction";
  EXPECT_LT(*fast.roofline_fraction, 1.0);
}

}  // namespace
