#pragma once
// A test and benchmark fixture, never a user-facing evaluator: the CandidateEvaluator seam answered from a
// landscape, the exhaustive table of a task's param space that bench/landscape_sweep.py measured once with the
// real evaluator (bench/landscapes/<task>.json). A whole run of the team and the supervisor over a landscape then
// takes seconds and is deterministic: the measured verdict, failure signature and speedup of each point, with the
// recorded noise optionally resampled from a seed.
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <evoteam/eval/candidate_evaluator.hpp>

namespace evoteam::testing {

struct Landscape {
  struct Point {
    ParamAssignment params;
    Verdict verdict = Verdict::infra_error;
    std::string signature;          // the failure signature the evaluator gave (empty for a pass)
    std::string stage;              // the stage that failed ("" for a pass)
    std::optional<double> speedup;  // geometric mean over the workloads, for passing points
    double noise = 0;               // relative standard deviation of one sample, median over the workloads
  };
  std::string task;
  std::vector<ParamSpec> space;
  std::vector<Point> points;                 // in the table's order
  std::map<std::string, std::size_t> index;  // describe_params(params) -> points[i]

  // Throws InvalidInput when the file is not a landscape table.
  static Landscape load(const std::filesystem::path& file);
  const Point* find(const ParamAssignment& params) const;
  // The largest speedup of a passing point: what a search's best is measured against.
  double best_speedup() const;
};

// Every evaluate() call of the evaluators that share it, in order: the point asked for and what it answered.
class ReplayCallLog {
 public:
  struct Call {
    ParamAssignment params;
    Verdict verdict = Verdict::infra_error;
    std::optional<double> speedup;
  };
  void add(Call call);
  std::vector<Call> calls() const;

 private:
  mutable std::mutex m_mutex;
  std::vector<Call> m_calls;
};

class ReplayEvaluator : public CandidateEvaluator {
 public:
  // `task_dir`: the task the landscape was measured on; its starting kernel is the run's start. `noise_seed`: when set,
  // a passing point's speedup is drawn around the measured one with its recorded noise (the same seed and the same
  // calls give the same answers); unset, the measured speedup itself. `log`, when given, outlives the evaluator and
  // records its calls.
  ReplayEvaluator(const Landscape& landscape, const std::filesystem::path& task_dir,
                  std::optional<std::uint64_t> noise_seed = std::nullopt, ReplayCallLog* log = nullptr);

  Result evaluate(const std::filesystem::path& sources_dir, const ParamAssignment& params, Stage through,
                  std::uint64_t seed_salt) override;
  Profile profile(const std::filesystem::path& sources_dir, const ParamAssignment& params) override;
  std::vector<ParamSpec> param_space() const override { return m_landscape.space; }
  std::filesystem::path starting_sources() const override { return m_task.dir; }
  const Task* task() const override { return &m_task; }

 private:
  const Landscape& m_landscape;
  Task m_task;
  std::optional<std::uint64_t> m_noise_seed;
  ReplayCallLog* m_log;
};

}  // namespace evoteam::testing
