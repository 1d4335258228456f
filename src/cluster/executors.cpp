// The executor table: each way a run's evaluations can go, by name, with its maker.
#include "cluster/executors.hpp"

#include <evoteam/core/error.hpp>
#include <evoteam/core/text.hpp>

namespace evoteam {

namespace {

std::unique_ptr<CandidateEvaluator> make_local_executor(const ExecutorSettings& settings,
                                                        const ExecutorRequest& request) {
  return make_local_evaluator(settings, request.run_dir / "task", request.runner, request.workloads);
}

std::unique_ptr<CandidateEvaluator> make_slurm_executor(const ExecutorSettings& settings,
                                                        const ExecutorRequest& request) {
  return make_slurm_evaluator(settings, request.run_dir, request.runner, request.workloads, request.interrupted);
}

}  // namespace

const std::vector<ExecutorKind>& executors() {
  static const std::vector<ExecutorKind> table = {
      {Executor::local, "local", "this machine", true, make_local_executor},
      {Executor::slurm, "slurm", "worker jobs; see cluster.slurm in the configuration", false, make_slurm_executor},
  };
  return table;
}

const ExecutorKind& executor_kind(Executor executor) {
  for (const ExecutorKind& kind : executors())
    if (kind.executor == executor) return kind;
  throw_check_failure(__FILE__, __LINE__, "an executor without a row in the executor table");
}

std::string to_string(Executor executor) { return std::string(executor_kind(executor).name); }

std::vector<std::string> executor_names() {
  std::vector<std::string> names;
  for (const ExecutorKind& kind : executors()) names.emplace_back(kind.name);
  return names;
}

Executor executor_from_string(const std::string& name) {
  for (const ExecutorKind& kind : executors())
    if (kind.name == name) return kind.executor;
  throw InvalidInput("unknown executor '" + name + "' (one of: " + join(executor_names(), ", ") + ")");
}

std::unique_ptr<CandidateEvaluator> make_executor(const ExecutorSettings& settings, const ExecutorRequest& request) {
  return executor_kind(settings.cluster.executor).make(settings, request);
}

}  // namespace evoteam
