#pragma once
// The Slurm commands evoteam uses (sbatch, srun, squeue, scancel), run through the process runner with their
// output parsed. Nothing here decides policy: the Slurm evaluator does.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <evoteam/cluster/cluster.hpp>
#include <evoteam/core/process.hpp>

namespace evoteam::cluster {

struct JobState {
  std::string state;   // PENDING, RUNNING, COMPLETED, CANCELLED, PREEMPTED, TIMEOUT, NODE_FAIL, FAILED ...
  std::string reason;  // Slurm's reason for a pending job: Resources, Priority, PartitionDown ...
  std::string node;    // where it runs, once it does
  bool waiting() const { return state == "PENDING" || state == "CONFIGURING"; }
  bool alive() const { return waiting() || state == "RUNNING" || state == "COMPLETING"; }
};

class Slurm {
 public:
  Slurm(SlurmSettings settings, ProcessRunner& runner) : m_settings(std::move(settings)), m_runner(runner) {}

  // sbatch of `script` with the configured allocation; returns the job id. Throws Error with sbatch's own words
  // when it refuses (an unknown partition, an impossible gres) or cannot be run.
  std::string submit(const std::filesystem::path& script, const std::string& job_name,
                     const std::filesystem::path& output);
  // The job's state, or nullopt when Slurm no longer knows it (ended and purged).
  std::optional<JobState> state(const std::string& job);
  void cancel(const std::vector<std::string>& jobs);
  // srun of `command` with the configured allocation, waiting up to `timeout` for it to end.
  ProcessResult run(const std::vector<std::string>& command, const std::string& job_name,
                    std::chrono::milliseconds timeout);

 private:
  // --partition, --gres, --time, --account, --qos as configured, then extra_args.
  std::vector<std::string> allocation_args() const;
  SlurmSettings m_settings;
  ProcessRunner& m_runner;
};

// squeue's "%T|%r|%N" line parsed; nullopt for an empty line.
std::optional<JobState> parse_job_state(const std::string& line);

}  // namespace evoteam::cluster
