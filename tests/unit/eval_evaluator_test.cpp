// The evaluator end to end on a small copy of host_matmul: verdicts, stages, caches, gates, threads.
#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/inventory.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/eval/candidate_evaluator.hpp>
#include <evoteam/eval/evaluator.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <future>

#include <unistd.h>

#include "eval/device_lock.hpp"
#include "support/temp_dir.hpp"
#include "unit/eval_test_support.hpp"

namespace {

namespace fs = std::filesystem;
using namespace evoteam;
using evoteam::testing::TempDir;

class EvalEvaluator : public ::testing::Test {
 protected:
  void SetUp() override { m_task = evoteam::testing::small_matmul_task(m_dir.path() / "task"); }
  EvalResult evaluate(const Candidate& candidate, EvalOptions options = {},
                      const EvalSettings& settings = evoteam::testing::eval_test_settings()) {
    Evaluator evaluator(settings, system_runner(), evoteam::testing::eval_test_cache());
    if (options.result_cache == CachePolicy::use) options.result_cache = CachePolicy::bypass;
    return evaluator.evaluate(m_task, candidate, options);
  }
  // A candidate directory holding `source` as kernel.cpp.
  Candidate candidate_with(const std::string& name, const std::string& source) {
    const fs::path dir = m_dir.path() / name;
    fs::create_directories(dir);
    write_file_atomic(dir / "kernel.cpp", source);
    return Candidate{dir, {}};
  }
  TempDir m_dir;
  Task m_task;
};

TEST_F(EvalEvaluator, StartingKernelPassesWithSpeedupNearOne) {
  EvalResult result = evaluate(Candidate::starting(m_task));
  ASSERT_EQ(result.verdict, Verdict::pass) << result.reason << " " << result.evidence.dump();
  ASSERT_TRUE(result.speedup.has_value());
  EXPECT_GT(*result.speedup, 0.6);
  EXPECT_LT(*result.speedup, 1.6);
  EXPECT_LE(*result.speedup_low, *result.speedup);
  EXPECT_GE(*result.speedup_high, *result.speedup);
  ASSERT_EQ(result.workloads.size(), 2u);
  for (const WorkloadResult& workload : result.workloads) {
    EXPECT_GE(workload.candidate.samples, 20);
    EXPECT_GE(workload.baseline.samples, 20);
    EXPECT_GT(workload.gflops, 0);
    EXPECT_TRUE(workload.roofline_fraction.has_value());
    EXPECT_GE(workload.rotation_sets, 3);
  }
  std::vector<std::string> stages;
  for (const StageRecord& stage : result.stages) stages.push_back(stage.name);
  EXPECT_EQ(stages, (std::vector<std::string>{"static", "build", "reference", "correctness", "timing", "profile"}));
  EXPECT_TRUE(result.profile.is_object());
  EXPECT_TRUE(result.profile.contains("gflops"));
  EXPECT_EQ(result.protocol["seeds_per_workload"], 5);
  EXPECT_GE(result.protocol["hidden_shapes"].get<int>(), 8);
  EXPECT_TRUE(result.sandbox == "bwrap" || result.sandbox == "none");
  EXPECT_EQ(result.params, default_params(m_task));
  EXPECT_FALSE(result.compiler.empty());
  EXPECT_FALSE(result.harness_version.empty());
}

TEST_F(EvalEvaluator, CachedReevaluationIsAtLeastTwentyTimesFaster) {
  Evaluator evaluator(evoteam::testing::eval_test_settings(), system_runner(), evoteam::testing::eval_test_cache());
  EvalOptions options;
  options.result_cache = CachePolicy::refresh;  // evaluate and store, whatever an earlier run left
  const auto cold_start = std::chrono::steady_clock::now();
  EvalResult cold = evaluator.evaluate(m_task, Candidate::starting(m_task), options);
  const double cold_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - cold_start).count();
  ASSERT_EQ(cold.verdict, Verdict::pass) << cold.reason;
  EXPECT_FALSE(cold.result_cache_hit);
  options.result_cache = CachePolicy::use;
  const auto warm_start = std::chrono::steady_clock::now();
  EvalResult warm = evaluator.evaluate(m_task, Candidate::starting(m_task), options);
  const double warm_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - warm_start).count();
  EXPECT_TRUE(warm.result_cache_hit);
  EXPECT_EQ(warm.verdict, cold.verdict);
  EXPECT_EQ(warm.speedup, cold.speedup);
  EXPECT_GE(cold_s / warm_s, 20.0) << "cold " << cold_s << " s, cached " << warm_s << " s";
  // A changed param is a different evaluation, never the cached one.
  EvalResult other =
      evaluator.evaluate(m_task, Candidate{m_task.dir, {{"TILE_N", "256"}}}, EvalOptions::through(Stage::build));
  EXPECT_NE(other.candidate_hash, cold.candidate_hash);
  EXPECT_EQ(other.params.at("TILE_N"), "256");
  EXPECT_EQ(other.stages.size(), 2u);
}

// A workload whose tensors no machine here can hold (A, B and C are 12 TiB) is refused before anything is allocated,
// naming the workload and the size, instead of ending in std::bad_alloc.
TEST_F(EvalEvaluator, AWorkloadBeyondTheMachinesMemoryIsRefusedBeforeAllocating) {
  nlohmann::json task = read_json_file(m_task.dir / "task.json");
  task["workloads"].push_back({{"name", "huge"}, {"axes", {{"M", 1 << 20}, {"N", 1 << 20}, {"K", 1 << 20}}}});
  write_json_atomic(m_task.dir / "task.json", task);
  m_task = load_task(m_task.dir);
  const EvalResult result = evaluate(Candidate::starting(m_task));
  EXPECT_EQ(result.verdict, Verdict::infra_error) << result.reason;
  EXPECT_NE(result.reason.find("workload huge needs 12288.0 GiB for one set"), std::string::npos) << result.reason;
  EXPECT_NE(result.reason.find("refused before allocating"), std::string::npos) << result.reason;
}

// A run's evaluator serves a candidate measured before from the result cache, unless the run asked to measure
// afresh (eval.reuse_results false: `optimize --no-cache`); that run still stores what it measured.
TEST_F(EvalEvaluator, ARunThatAsksToMeasureAfreshIsNeverServedFromTheResultCache) {
  EvalSettings settings = evoteam::testing::eval_test_settings();
  settings.cache_dir = (m_dir.path() / "cache").string();
  const auto result_hit = [&](CandidateEvaluator& evaluator) {
    const CandidateEvaluator::Result result =
        evaluator.evaluate(evaluator.starting_sources(), default_params(m_task), Stage::correctness, 0);
    return result.eval_json.at("cache").value("result_hit", false);
  };
  std::unique_ptr<CandidateEvaluator> reusing = make_task_evaluator(settings, m_task.dir, system_runner());
  EXPECT_FALSE(result_hit(*reusing));
  EXPECT_TRUE(result_hit(*reusing)) << "the result cache is not in use: the test proves nothing";
  settings.reuse_results = false;
  std::unique_ptr<CandidateEvaluator> afresh = make_task_evaluator(settings, m_task.dir, system_runner());
  EXPECT_FALSE(result_hit(*afresh)) << "served from an earlier run's cached result";
  EXPECT_FALSE(result_hit(*afresh));
}

// Correct on every correctness trial, but crashes once the same call repeats many times in a row, as it does only
// in the profile run (the timing stage, which also repeats calls, is not asked for).
TEST_F(EvalEvaluator, AFailureInTheProfileRunIsCachedLikeAnyOtherCandidateFailure) {
  // The comment makes a candidate of this run's own, which no earlier run can have stored.
  const Candidate crashes_when_profiled = candidate_with("crashes_when_profiled", "// " + m_dir.path().string() + R"(
#include <cstdint>
namespace {
const float* g_last_a = nullptr;
float g_last_a0 = 0;
int g_repeats = 0;
}  // namespace
extern "C" void matmul(const float* A, const float* B, float* C, std::int64_t M, std::int64_t N, std::int64_t K) {
  g_repeats = A == g_last_a && A[0] == g_last_a0 ? g_repeats + 1 : 0;
  g_last_a = A;
  g_last_a0 = A[0];
  if (g_repeats > 50) *reinterpret_cast<volatile float*>(static_cast<std::uintptr_t>(0x10)) = B[0];
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j) {
      float sum = 0;
      for (std::int64_t k = 0; k < K; ++k) sum += A[i * K + k] * B[k * N + j];
      C[i * N + j] = sum;
    }
}
)");
  EvalSettings settings = evoteam::testing::eval_test_settings();
  settings.static_checks.forbid_writable_data = false;
  Evaluator evaluator(settings, system_runner(), evoteam::testing::eval_test_cache());
  EvalOptions options;
  options.stages = {Stage::static_checks, Stage::build, Stage::correctness, Stage::profile};
  options.result_cache = CachePolicy::refresh;  // evaluate and store, whatever an earlier run left
  const EvalResult first = evaluator.evaluate(m_task, crashes_when_profiled, options);
  ASSERT_EQ(first.verdict, Verdict::runtime_fault) << first.reason << " " << first.evidence.dump();
  ASSERT_EQ(first.stages.back().name, "profile");
  EXPECT_EQ(first.stages.back().status, StageStatus::failed);
  options.result_cache = CachePolicy::use;
  const EvalResult again = evaluator.evaluate(m_task, crashes_when_profiled, options);
  EXPECT_TRUE(again.result_cache_hit);
  EXPECT_EQ(again.verdict, Verdict::runtime_fault);
}

TEST_F(EvalEvaluator, StageSubsetsStopWhereAsked) {
  EvalResult build_only = evaluate(Candidate::starting(m_task), EvalOptions::through(Stage::build));
  EXPECT_EQ(build_only.verdict, Verdict::pass);
  EXPECT_FALSE(build_only.speedup.has_value());
  EXPECT_TRUE(build_only.workloads.empty());
  EXPECT_EQ(build_only.stages.size(), 2u);
  EvalResult tested = evaluate(Candidate::starting(m_task), EvalOptions::through(Stage::correctness));
  EXPECT_EQ(tested.verdict, Verdict::pass);
  EXPECT_FALSE(tested.speedup.has_value());
  EXPECT_EQ(tested.stages.back().name, "correctness");
}

TEST_F(EvalEvaluator, InvalidParamsAndBrokenSourcesAreTheCandidatesFault) {
  EvalResult bad_param = evaluate(Candidate{m_task.dir, {{"TILE_N", "100"}}});
  EXPECT_EQ(bad_param.verdict, Verdict::static_reject);
  EXPECT_NE(bad_param.reason.find("TILE_N=100"), std::string::npos);
  EvalResult broken = evaluate(candidate_with("broken", "extern \"C\" void matmul( { this is not C++ }\n"));
  EXPECT_EQ(broken.verdict, Verdict::compile_error);
  EXPECT_NE(broken.build_log.find("error"), std::string::npos);
  EvalResult no_entry = evaluate(candidate_with("no_entry", "extern \"C\" void other() {}\n"));
  EXPECT_NE(no_entry.verdict, Verdict::pass);
  EXPECT_FALSE(is_infra(no_entry.verdict)) << no_entry.reason;
  EXPECT_THROW(evaluate(Candidate{m_dir.path() / "missing", {}}), InvalidInput);
}

TEST_F(EvalEvaluator, EvaluatesFromSeveralThreadsAtOnce) {
  Evaluator evaluator(evoteam::testing::eval_test_settings(), system_runner(), evoteam::testing::eval_test_cache());
  EvalOptions options;
  options.result_cache = CachePolicy::bypass;
  auto run = [&](const ParamAssignment& params) {
    return evaluator.evaluate(m_task, Candidate{m_task.dir, params}, options);
  };
  auto first = std::async(std::launch::async, run, ParamAssignment{});
  auto second = std::async(std::launch::async, run,
                           ParamAssignment{{"ACC_IN_REGISTERS", "1"}, {"TILE_N", "64"}, {"REG_ROWS", "4"}});
  EvalResult a = first.get();
  EvalResult b = second.get();
  EXPECT_EQ(a.verdict, Verdict::pass) << a.reason;
  EXPECT_EQ(b.verdict, Verdict::pass) << b.reason;
  EXPECT_NE(a.candidate_hash, b.candidate_hash);
}

TEST_F(EvalEvaluator, TimingGatesCatchImpossibleAndUnconvergedMeasurements) {
  EvalSettings tiny_peaks = evoteam::testing::eval_test_settings();
  tiny_peaks.machine.peak_gflops = 0.001;
  EvalResult impossible = evaluate(Candidate::starting(m_task), {}, tiny_peaks);
  EXPECT_EQ(impossible.verdict, Verdict::impossible_perf) << impossible.reason;
  EXPECT_TRUE(impossible.evidence.contains("roofline_fraction"));
  EvalSettings no_time = evoteam::testing::eval_test_settings();
  no_time.timing.max_time_s = 0.0;
  EvalResult noisy = evaluate(Candidate::starting(m_task), {}, no_time);
  EXPECT_EQ(noisy.verdict, Verdict::noisy) << noisy.reason;
  EXPECT_TRUE(noisy.speedup.has_value());
  EXPECT_TRUE(noisy.evidence.contains("speedup_interval"));
}

TEST_F(EvalEvaluator, SpeedupsFarOverAVendorBaselineAreHeldForAudit) {
  // A "vendor library" baseline that is really slow, so the starting kernel beats it by far.
  const fs::path slow = install_root() / "tests" / "data" / "hostile" / "host" / "slower_but_correct" / "kernel.cpp";
  fs::copy_file(slow, m_task.dir / "vendor_blas.cpp");
  nlohmann::json task = read_json_file(m_task.dir / "task.json");
  task["baseline"] = {{"kind", "library"}, {"name", "slowblas"}, {"file", "vendor_blas.cpp"}, {"vendor", true}};
  write_json_atomic(m_task.dir / "task.json", task);
  m_task = load_task(m_task.dir);
  EvalSettings settings = evoteam::testing::eval_test_settings();
  settings.timing.suspicious_speedup = 1.5;
  EvalResult result = evaluate(Candidate::starting(m_task), {}, settings);
  EXPECT_EQ(result.verdict, Verdict::suspicious_speedup) << result.reason;
  EXPECT_EQ(result.evidence["reverified"], true);
  EXPECT_NE(result.baseline.find("slowblas"), std::string::npos);
}

TEST_F(EvalEvaluator, ABrokenReferenceIsAnInfraError) {
  const std::string signature =
      "#include <cstdint>\nextern \"C\" void matmul(const float*, const float*, float* C, std::int64_t, std::int64_t, "
      "std::int64_t) ";
  for (const char* body : {"{ __builtin_trap(); }", "{ (void)C; }"}) {  // crashes; writes nothing
    write_file_atomic(m_task.dir / "reference.cpp", signature + body + "\n");
    m_task = load_task(m_task.dir);
    EvalResult result = evaluate(Candidate::starting(m_task));
    EXPECT_EQ(result.verdict, Verdict::infra_error) << body << ": " << result.reason;
    EXPECT_NE(result.reason.find("reference"), std::string::npos) << result.reason;
    EXPECT_FALSE(result.speedup.has_value());
  }
}

TEST_F(EvalEvaluator, RecordsTheSandboxItRanIn) {
  EvalOptions options = EvalOptions::through(Stage::correctness);
  options.sandbox = SandboxMode::none;
  EvalResult result = evaluate(Candidate::starting(m_task), options);
  EXPECT_EQ(result.sandbox, "none");
  EXPECT_EQ(result.verdict, Verdict::pass) << result.reason;
}

TEST(EvalDeviceLock, ExcludesOtherHoldersAcrossThreadsAndProcesses) {
  TempDir dir;
  using std::chrono::milliseconds;
  std::optional<eval::DeviceLock> held = eval::DeviceLock::acquire(dir.path(), "host", milliseconds(1000));
  ASSERT_TRUE(held.has_value());
  auto other = std::async(std::launch::async,
                          [&] { return eval::DeviceLock::acquire(dir.path(), "host", milliseconds(200)).has_value(); });
  EXPECT_FALSE(other.get());
  Command probe;
  probe.argv = {"flock", "-n", (dir.path() / "evoteam-host.lock").string(), "true"};
  EXPECT_NE(system_runner().run(probe).exit_code, 0) << "another process must see the lock";
  EXPECT_TRUE(eval::DeviceLock::acquire(dir.path(), "cuda:0", milliseconds(200)).has_value())
      << "devices are independent";
  held.reset();
  EXPECT_TRUE(eval::DeviceLock::acquire(dir.path(), "host", milliseconds(1000)).has_value());
  EXPECT_EQ(system_runner().run(probe).exit_code, 0);
}

// The lock directory is the machine's: a run by root leaves it open to the next user's run (a 0755 directory made by
// root stopped every later run by another user with exit 74).
TEST(EvalDeviceLock, ADirectoryMadeByOneUserTakesAnotherUsersLocks) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to act as a second user";
  if (!find_program("setpriv")) GTEST_SKIP() << "needs setpriv (util-linux)";
  // Under /tmp itself: a TempDir is private to its owner, which would stop the second user before the lock dir.
  const std::filesystem::path lock_dir = "/tmp/evoteam-locks-test-" + std::to_string(::getpid());
  std::filesystem::remove_all(lock_dir);
  std::filesystem::create_directory(lock_dir);
  std::filesystem::permissions(lock_dir, std::filesystem::perms(0755));  // as an older run made it
  ASSERT_TRUE(eval::DeviceLock::acquire(lock_dir, "host", std::chrono::milliseconds(1000)).has_value());
  auto as_nobody = [](std::vector<std::string> argv) {
    Command command;
    command.argv = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
    command.argv.insert(command.argv.end(), argv.begin(), argv.end());
    return system_runner().run(command);
  };
  const ProcessResult same_device = as_nobody({"flock", "-n", (lock_dir / "evoteam-host.lock").string(), "true"});
  EXPECT_TRUE(same_device.ok()) << "another user locks the same device: " << same_device.describe() << " "
                                << same_device.err.text;
  const ProcessResult new_device = as_nobody({"touch", (lock_dir / "evoteam-cuda_1.lock").string()});
  EXPECT_TRUE(new_device.ok()) << "another user creates a device's lock: " << new_device.err.text;
  std::filesystem::remove_all(lock_dir);
}

}  // namespace
