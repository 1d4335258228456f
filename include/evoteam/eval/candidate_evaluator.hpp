#pragma once
// The seam between whoever asks for evaluations (the team's lab, the cluster's workers) and wherever they run: the
// task evaluator on this machine, a pool of devices, Slurm workers.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <evoteam/core/process.hpp>
#include <evoteam/eval/eval_settings.hpp>
#include <evoteam/eval/measurement.hpp>
#include <evoteam/eval/verdict.hpp>
#include <evoteam/task/task.hpp>

namespace evoteam {

// Seam between the team and the evaluator: the real adapter wraps the evaluator; tests use fakes.
class CandidateEvaluator {
 public:
  // The evaluator's measurement (the part the run's record holds), with what only agents and files need.
  struct Result : Measurement {
    std::string summary;       // the write-up for agents (describe_for_agent)
    nlohmann::json eval_json;  // the evaluator's full result the measurement was taken from (eval.json)
    std::string build_log;
  };
  struct Profile {
    std::string bound;    // memory | compute | latency | unknown
    std::string summary;  // compact, fits in a prompt
    nlohmann::json metrics;
    double device_s = 0;
    std::string device = {};  // what held it ("host", "cuda:0"); empty when unknown
  };
  virtual ~CandidateEvaluator() = default;
  // Runs every stage up to and including `through` (build, correctness or timing). `seed_salt` varies the
  // correctness seeds (fresh seeds for re-verification).
  virtual Result evaluate(const std::filesystem::path& sources_dir, const ParamAssignment& params, Stage through,
                          std::uint64_t seed_salt) = 0;
  virtual Profile profile(const std::filesystem::path& sources_dir, const ParamAssignment& params) = 0;
  virtual std::vector<ParamSpec> param_space() const = 0;
  // The task's editable sources of the starting kernel.
  virtual std::filesystem::path starting_sources() const = 0;
  // The task behind the evaluator, when there is one (agents' prompts are rendered from it).
  virtual const Task* task() const { return nullptr; }
  // How many evaluations it runs at once (a device pool's devices, a cluster's workers); callers with several
  // candidates in hand send that many together.
  virtual int parallel_width() const { return 1; }
};

// The real evaluator on a task (the frozen copy in the run directory) with the run's eval settings, running its
// children through `runner`, over the task's workloads of the selected origin (`optimize --workloads`), on `device`
// (EvalSettings::device; "": the machine's default). Throws InvalidInput for a bad task or a selection that leaves
// no workload.
std::unique_ptr<CandidateEvaluator> make_task_evaluator(const EvalSettings& settings,
                                                        const std::filesystem::path& task_dir, ProcessRunner& runner,
                                                        WorkloadSelection workloads = WorkloadSelection::all,
                                                        const std::string& device = "");

}  // namespace evoteam
