// The timing run started beside correctness (eval/timing_run.hpp): its harness prepares inputs but times nothing
// until released; cancelling or dropping it ends the harness untimed; the release waits for the device's timing
// lock. Also the host profile taken from the timing stage's samples where perf counts no hardware events.
#include <evoteam/core/clock.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/eval/evaluator.hpp>

#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "eval/device_lock.hpp"
#include "eval/eval_phases.hpp"
#include "eval/host/host_profile.hpp"
#include "eval/timing_run.hpp"
#include "support/temp_dir.hpp"
#include "unit/eval_test_support.hpp"

namespace evoteam::eval {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using evoteam::testing::TempDir;

// The records of the timing harness, in order.
std::vector<nlohmann::json> timing_records(const fs::path& scratch) {
  std::vector<nlohmann::json> records;
  std::istringstream lines(read_file(scratch / "plan-timing.records.jsonl"));
  std::string line;
  while (std::getline(lines, line))
    if (!line.empty()) records.push_back(nlohmann::json::parse(line));
  return records;
}

std::vector<std::string> events(const std::vector<nlohmann::json>& records) {
  std::vector<std::string> names;
  for (const nlohmann::json& record : records) names.push_back(record.value("ev", ""));
  return names;
}

class TimingRunEarly : public ::testing::Test {
 protected:
  void SetUp() override {
    m_task = evoteam::testing::small_matmul_task(m_dir.path() / "task");
    m_settings = evoteam::testing::eval_test_settings();
    m_settings.lock_dir = (m_dir.path() / "locks").string();
  }
  // An evaluation prepared up to correctness with m_settings: references computed, the starting kernel built.
  void prepare() {
    m_shared = std::make_unique<EvaluatorShared>(m_settings, system_runner(), evoteam::testing::eval_test_cache());
    m_scratch = m_dir.path() / "scratch";
    fs::create_directories(m_scratch);
    m_run = std::make_unique<EvaluationRun>(EvaluationRun{*m_shared,
                                                          m_shared->host,
                                                          m_task,
                                                          SandboxMode::none,
                                                          m_scratch,
                                                          {},
                                                          m_scratch / "references",
                                                          {},
                                                          {},
                                                          0,
                                                          true});
    ASSERT_EQ(prepare_references(*m_run, fresh_secret()), std::nullopt);
    BuildRequest request;
    request.task = &m_task;
    request.files["kernel.cpp"] = read_file(m_task.dir / "kernel.cpp");
    request.params = default_params(m_task);
    const BuildOutcome build = m_shared->host.build(request, SandboxMode::none);
    ASSERT_EQ(build.status, BuildStatus::ok) << build.log;
    m_candidate = build.library;
  }
  DeviceLock hold_lock() {
    std::optional<DeviceLock> lock =
        DeviceLock::acquire(m_settings.lock_dir, m_shared->host.device(), std::chrono::milliseconds(1000));
    EXPECT_TRUE(lock.has_value());
    return std::move(*lock);
  }

  TempDir m_dir;
  Task m_task;
  EvalSettings m_settings;
  std::unique_ptr<EvaluatorShared> m_shared;
  std::unique_ptr<EvaluationRun> m_run;
  fs::path m_scratch;
  fs::path m_candidate;
};

TEST_F(TimingRunEarly, PreparesAheadAndTimesOnlyAfterTheRelease) {
  prepare();
  TimingRun timing(*m_run, m_candidate, true);
  // Long enough for the harness to start and prepare: it must then be found waiting.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  timing.release();
  const TimingResult result = timing.get();
  ASSERT_FALSE(result.failure.has_value()) << result.failure->reason;
  ASSERT_EQ(result.outcome.workloads.size(), 2u);
  const std::vector<nlohmann::json> records = timing_records(m_scratch);
  const std::vector<std::string> names = events(records);
  const auto release = std::find(names.begin(), names.end(), "release");
  const auto first_timing = std::find(names.begin(), names.end(), "timing");
  ASSERT_NE(release, names.end());
  ASSERT_NE(first_timing, names.end());
  EXPECT_LT(release - names.begin(), first_timing - names.begin()) << "a workload was timed before the release";
  const nlohmann::json& word = records[static_cast<std::size_t>(release - names.begin())];
  EXPECT_EQ(word["word"], "go");
  EXPECT_GE(word["waited_s"].get<double>(), 0.3) << "the harness did not wait for the release";
  bool any_ahead = false;
  for (const nlohmann::json& record : records)
    if (record.value("ev", "") == "timing") any_ahead = any_ahead || record.value("setup_ahead_s", 0.0) > 0;
  EXPECT_TRUE(any_ahead) << "no workload was prepared while the harness waited";
}

TEST_F(TimingRunEarly, CancelledRunEndsUntimed) {
  prepare();
  const auto start = Clock::now();
  TimingRun timing(*m_run, m_candidate, true);
  timing.cancel();
  const TimingResult result = timing.get();
  ASSERT_TRUE(result.failure.has_value());
  EXPECT_EQ(result.failure->verdict, Verdict::infra_error);
  EXPECT_TRUE(result.outcome.workloads.empty());
  EXPECT_LT(seconds_since(start), 20.0);
  const std::vector<nlohmann::json> records = timing_records(m_scratch);
  const std::vector<std::string> names = events(records);
  EXPECT_EQ(std::count(names.begin(), names.end(), "timing"), 0);
  ASSERT_EQ(std::count(names.begin(), names.end(), "release"), 1);
  for (const nlohmann::json& record : records) {
    if (record.value("ev", "") == "release") {
      EXPECT_EQ(record["word"], "stop");
    }
  }
}

TEST_F(TimingRunEarly, DroppedUndecidedRunStopsItsHarness) {
  prepare();
  const auto start = Clock::now();
  { TimingRun timing(*m_run, m_candidate, true); }
  EXPECT_LT(seconds_since(start), 20.0);
  const std::vector<std::string> names = events(timing_records(m_scratch));
  EXPECT_EQ(std::count(names.begin(), names.end(), "timing"), 0);
  EXPECT_EQ(std::count(names.begin(), names.end(), "release"), 1);
}

// Whether process `pid` has ended (gone, or a zombie nobody reaped).
bool ended(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return true;
  const std::size_t paren = text.rfind(')');
  return paren == std::string::npos || text.substr(paren + 2, 1) == "Z";
}

TEST_F(TimingRunEarly, AHarnessWhoseEvaluatorDiedStopsWaiting) {
  prepare();
  { TimingRun timing(*m_run, m_candidate, true); }  // leaves the plan, which waits an hour for its word
  fs::remove(m_scratch / "timing.release");
  const fs::path out = m_scratch / "orphan.records";
  // The shell starts the harness in a session of its own (the runner ends the shell's group with the shell) and
  // exits once the harness runs: the harness is re-parented while it waits.
  Command command;
  // One script in two literals, not a missing comma.
  // NOLINTBEGIN(bugprone-suspicious-missing-comma)
  command.argv = {
      "/bin/sh",
      "-c",
      "setsid \"$0\" --plan \"$1\" --result-fd 3 --candidate \"$2\" --baseline \"$2\" 3>\"$3\" >/dev/null 2>&1 & "
      "for i in $(seq 200); do grep -q '\"ev\":\"start\"' \"$3\" 2>/dev/null && break; sleep 0.05; done; echo $!",
      m_run->harness.string(),
      (m_scratch / "plan-timing.json").string(),
      m_candidate.string(),
      out.string()};
  // NOLINTEND(bugprone-suspicious-missing-comma)
  const ProcessResult started = system_runner().run(command);
  ASSERT_TRUE(started.ok()) << started.describe();
  const pid_t pid = std::stoi(started.out.text);
  const auto start = Clock::now();
  while (!ended(pid) && seconds_since(start) < 20) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(ended(pid)) << "the orphaned harness is still waiting for its word";
  if (!ended(pid)) kill(pid, SIGKILL);
  EXPECT_NE(read_file(out).find(R"("word":"none")"), std::string::npos) << read_file(out);
}

TEST_F(TimingRunEarly, ReleaseWaitsForTheTimingLock) {
  prepare();
  TimingRun timing(*m_run, m_candidate, true);
  std::thread holder([lock = hold_lock()]() mutable {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    DeviceLock released = std::move(lock);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  timing.release();
  const TimingResult result = timing.get();
  holder.join();
  ASSERT_FALSE(result.failure.has_value()) << result.failure->reason;
  EXPECT_GE(result.lock_wait_s, 0.3);
}

TEST_F(TimingRunEarly, ALockNeverFreedStopsTheHarnessWithAnInfraError) {
  m_settings.stages.timing.lock_timeout_s = 1;
  prepare();
  DeviceLock lock = hold_lock();
  TimingRun timing(*m_run, m_candidate, true);
  timing.release();
  const TimingResult result = timing.get();
  ASSERT_TRUE(result.failure.has_value());
  EXPECT_EQ(result.failure->verdict, Verdict::infra_error);
  EXPECT_NE(result.failure->reason.find("timing lock"), std::string::npos) << result.failure->reason;
  const std::vector<std::string> names = events(timing_records(m_scratch));
  EXPECT_EQ(std::count(names.begin(), names.end(), "timing"), 0);
}

// The early run's deadline once released is the timing stage's own: a warm-up far longer than the stage may take
// is cut at the stage deadline (HANG_TIMEOUT), not at the deadline that also covered the wait for the release
// (correctness, profile and the lock wait: over an hour by default).
TEST_F(TimingRunEarly, TheStageDeadlineStartsAtTheReleaseWhateverTheSettings) {
  m_settings.timing.warmup_s = 30;
  m_settings.stages.timing.timeout_s = 1;
  prepare();
  TimingRun timing(*m_run, m_candidate, true);
  timing.release();
  const TimingResult result = timing.get();
  ASSERT_TRUE(result.failure.has_value()) << "timed to the end: the stage deadline did not hold";
  EXPECT_EQ(result.failure->verdict, Verdict::hang_timeout) << result.failure->reason;
  EXPECT_TRUE(result.outcome.workloads.empty());
}

// A runner that answers every command with one canned stderr, as perf stat would.
class CannedPerf : public ProcessRunner {
 public:
  explicit CannedPerf(std::string err) : m_err(std::move(err)) {}
  ProcessResult run(const Command&) override {
    ProcessResult result;
    result.spawned = true;
    result.exit_code = 0;
    result.err.text = m_err;
    return result;
  }

 private:
  std::string m_err;
};

TEST(HostProfilePerfProbe, CountsHardwareOnlyWhenCyclesOrInstructionsAreCounted) {
  CannedPerf virtual_machine("<not supported>,,cycles,0,100.00,,\n<not supported>,,instructions,0,100.00,,\n");
  EXPECT_FALSE(perf_counts_hardware(virtual_machine, "/usr/bin/perf"));
  CannedPerf bare_metal("1234567,,cycles,1000,100.00,,\n2345678,,instructions,1000,100.00,1.90,insn per cycle\n");
  EXPECT_TRUE(perf_counts_hardware(bare_metal, "/usr/bin/perf"));
}

TEST(HostProfileFromTiming, UsesTheTimingSamplesOfTheFirstTimedWorkload) {
  TempDir dir;
  const Task task = evoteam::testing::small_matmul_task(dir.path() / "task");
  EvalSettings settings = evoteam::testing::eval_test_settings();
  settings.profile.perf = PerfMode::off;
  Evaluator evaluator(settings, system_runner(), evoteam::testing::eval_test_cache());
  EvalOptions options;
  options.result_cache = CachePolicy::bypass;
  const EvalResult result = evaluator.evaluate(task, Candidate::starting(task), options);
  ASSERT_EQ(result.verdict, Verdict::pass) << result.reason;
  ASSERT_FALSE(result.workloads.empty());
  EXPECT_EQ(result.profile.value("source", ""), "timing stage");
  EXPECT_EQ(result.profile.value("workload", ""), result.workloads.front().name);
  EXPECT_DOUBLE_EQ(result.profile.value("median_s", 0.0), result.workloads.front().candidate.median_s);
  EXPECT_TRUE(result.profile.contains("roofline_fraction"));
  EXPECT_EQ(result.profile.value("tool", ""), "timing");
}

}  // namespace
}  // namespace evoteam::eval
