#pragma once
// The timing stage's harness run. On the host it can start before correctness has finished: the harness then
// prepares its input sets (trusted code only) on a spare core while correctness runs, and times nothing until
// the evaluator releases it. The timing lock is taken at the release, so it covers every timed call and none of
// the waiting. Cancelling (correctness failed) ends the harness untimed.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <future>
#include <optional>

#include "eval/eval_phases.hpp"

namespace evoteam::eval {

// Builds the baseline the candidate is timed against: the reference, a library implementation, or the starting
// kernel at its default params (task.baseline). TimingRun turns a failed build into INFRA_ERROR.
BuildOutcome build_baseline(EvaluationRun& run);

// A trusted vendor library (task.vendor) timed in the candidate's place against the same baseline, by the same
// protocol, its plan hook called before the timed calls; the caller holds nothing (the timing lock is taken here).
TimingResult time_vendor(EvaluationRun& run, const std::filesystem::path& vendor);

class TimingRun {
 public:
  // Starts the run on a thread of its own: builds the baseline, then runs the timing harness. `early`: the
  // harness waits for release() or cancel() before timing anything; otherwise it takes the timing lock and
  // times at once. Group tasks (several ranks) are never started early.
  TimingRun(EvaluationRun& run, std::filesystem::path candidate, bool early);
  // Cancels an early run that was neither released nor cancelled, and waits for its harness.
  ~TimingRun();
  TimingRun(const TimingRun&) = delete;
  TimingRun& operator=(const TimingRun&) = delete;

  // Takes the device's timing lock (waiting as long as eval.stages.timing.lock_timeout_s), then lets the
  // harness time. When the lock cannot be had the harness is stopped and get() says so.
  void release();
  // Ends an early run without timing.
  void cancel();
  // Waits for the run and returns its analysis. Call once, after release() for an early run.
  TimingResult get();

 private:
  void say(const char* word);

  EvaluationRun& m_run;
  bool m_early;
  bool m_decided = false;
  std::filesystem::path m_release_file;
  std::optional<DeviceLock> m_lock;  // an early run's lock, from release() to the end of get()
  std::optional<Judgement> m_lock_failure;
  std::atomic<std::int64_t> m_released_ns{0};  // steady clock at the word "go"; the stage deadline starts there
  std::future<TimingResult> m_result;
};

}  // namespace evoteam::eval
