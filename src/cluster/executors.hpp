#pragma once
// The makers behind the executor table (cluster.hpp, `executors()`); everything outside the cluster module asks
// `make_executor`.
#include <filesystem>
#include <functional>
#include <memory>

#include <evoteam/cluster/cluster.hpp>

namespace evoteam {

// This machine's evaluator: the plain task evaluator on the default device, or a device pool (device_pool.cpp).
// The run's workers use it too, on their node.
std::unique_ptr<CandidateEvaluator> make_local_evaluator(const ExecutorSettings& settings,
                                                         const std::filesystem::path& task_dir, ProcessRunner& runner,
                                                         WorkloadSelection workloads);

// Slurm worker jobs fed through the run directory (slurm_evaluator.cpp).
std::unique_ptr<CandidateEvaluator> make_slurm_evaluator(const ExecutorSettings& settings,
                                                         const std::filesystem::path& run_dir, ProcessRunner& runner,
                                                         WorkloadSelection workloads,
                                                         std::function<bool()> interrupted);

}  // namespace evoteam
