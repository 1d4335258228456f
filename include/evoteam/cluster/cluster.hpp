#pragma once
// Evaluations away from the daemon's machine: Slurm jobs running `evoteam worker`, fed through the run directory.
//
// The daemon (on a login node, perhaps without a GPU) puts each evaluation request into <run>/cluster/pending/;
// a worker claims one by renaming it into claimed/<worker>/, evaluates it with the run's frozen task and
// configuration, and renames it into done/ beside its result. Each step is one rename, so a request is in exactly
// one place and nothing is half-written when a worker or the daemon dies. A worker lost to preemption, a time
// limit, scancel or a node failure has its claims put back in pending/ for another worker; a request lost
// `max_attempts` times comes back as INFRA_ERROR.
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <evoteam/core/config.hpp>
#include <evoteam/core/process.hpp>
#include <evoteam/eval/candidate_evaluator.hpp>
#include <evoteam/task/task.hpp>

namespace evoteam {

// Where a run's evaluations go (cluster.executor, `optimize --executor`): `executors()` names them, says what each
// is, and makes each one's evaluator; nothing else spells an executor's name.
enum class Executor { local, slurm };
enum class SlurmMode { worker, srun };

// The "cluster" section (configs/default.json explains each key).
struct SlurmSettings {
  SlurmMode mode = SlurmMode::worker;
  int workers = 1;
  std::string partition, gres, time, account, qos;
  std::vector<std::string> extra_args;
  bool build_on_login = false;
  double start_timeout_s = 600;
  int max_attempts = 3;
  double idle_exit_s = 300;
  double poll_s = 0.5;
  std::string evoteam;  // "": this binary
};
struct ClusterSettings {
  Executor executor = Executor::local;
  std::string devices = "all";  // --devices: "all" or a comma-separated list
  SlurmSettings slurm;
};
ClusterSettings cluster_settings(const Config& config);

// What a run's evaluations need from its configuration, typed once where the run starts (from its frozen
// configuration) and passed down: the evaluator's settings and where evaluations go.
struct ExecutorSettings {
  EvalSettings eval;
  ClusterSettings cluster;
};
ExecutorSettings executor_settings(const Config& config);

// What a run's evaluator needs from the run: its directory (the frozen task is its task/), the runner of its
// children, the workloads it evaluates, and the interrupt flag long waits poll.
struct ExecutorRequest {
  std::filesystem::path run_dir;
  ProcessRunner& runner;
  WorkloadSelection workloads = WorkloadSelection::all;
  std::function<bool()> interrupted;
};

// One row per executor: its name, what it is (for --executor's help), whether its evaluations run on this machine
// (then this machine's devices and tools must serve the task, and optimize checks them before the run exists;
// otherwise they say nothing about where evaluations run), and the maker of a run's evaluator.
struct ExecutorKind {
  Executor executor;
  std::string_view name;
  std::string_view description;
  bool evaluates_here;
  std::unique_ptr<CandidateEvaluator> (*make)(const ExecutorSettings& settings, const ExecutorRequest& request);
};
const std::vector<ExecutorKind>& executors();
const ExecutorKind& executor_kind(Executor executor);
std::string to_string(Executor executor);
// Throws InvalidInput naming the executors for a name that is none of them.
Executor executor_from_string(const std::string& name);
std::vector<std::string> executor_names();

// The one factory of a run's evaluator, for the executor of the settings (cluster.executor):
// - local: the task evaluator on the machine's default device, or a pool of one per device of cluster.devices, each
//   evaluation on a free one (parallel_width() is their number). Throws InvalidInput for a device list the machine
//   cannot honour (cluster/device_pool.hpp says which).
// - slurm: requests through <run_dir>/cluster, worker jobs submitted, watched and cancelled as needed. Throws Error
//   when sbatch refuses the allocation, and from evaluate() when no worker starts within start_timeout_s (naming
//   Slurm's reason) or workers keep being lost. `interrupted` is polled while waiting: an interrupted wait answers
//   INFRA_ERROR at once. Cancels its jobs when destroyed.
std::unique_ptr<CandidateEvaluator> make_executor(const ExecutorSettings& settings, const ExecutorRequest& request);

// The devices of this machine a run evaluates on ("" alone: the default device, no pool). Throws InvalidInput
// for a device list the machine cannot honour; optimize asks before the run exists.
std::vector<std::string> local_devices(const ClusterSettings& settings, const Task& task, ProcessRunner& runner);

// `evoteam worker`: serves a run's evaluation requests until the run asks its workers to stop, nothing arrives for
// idle_exit_s, or it is interrupted; with `request_id`, serves that one request and exits (srun mode). `name`
// identifies its claims: the Slurm job id, or "local-<pid>" outside Slurm. Returns the number served.
struct WorkerOptions {
  std::string name;
  std::string request_id;
};
int run_worker(const Config& config, const std::filesystem::path& run_dir, const WorkerOptions& options,
               ProcessRunner& runner);

// Where a run's Slurm jobs are recorded (status reads it): <run>/cluster/jobs.json.
std::filesystem::path cluster_jobs_file(const std::filesystem::path& run_dir);

}  // namespace evoteam
