// The one reader of the configuration's "cluster" section.
#include <evoteam/cluster/cluster.hpp>

namespace evoteam {

ClusterSettings cluster_settings(const Config& config) {
  ClusterSettings settings;
  // The configuration's rules hold each value to its closed set, so one comparison decides each enum.
  settings.executor = executor_from_string(config.get<std::string>("cluster.executor"));
  settings.devices = config.get<std::string>("cluster.devices");
  SlurmSettings& slurm = settings.slurm;
  slurm.mode = config.get<std::string>("cluster.slurm.mode") == "srun" ? SlurmMode::srun : SlurmMode::worker;
  slurm.workers = config.get<int>("cluster.slurm.workers");
  slurm.partition = config.get<std::string>("cluster.slurm.partition");
  slurm.gres = config.get<std::string>("cluster.slurm.gres");
  slurm.time = config.get<std::string>("cluster.slurm.time");
  slurm.account = config.get<std::string>("cluster.slurm.account");
  slurm.qos = config.get<std::string>("cluster.slurm.qos");
  slurm.extra_args = config.get<std::vector<std::string>>("cluster.slurm.extra_args");
  slurm.build_on_login = config.get<std::string>("cluster.slurm.build_on") == "login";
  slurm.start_timeout_s = config.get<double>("cluster.slurm.start_timeout_s");
  slurm.max_attempts = config.get<int>("cluster.slurm.max_attempts");
  slurm.idle_exit_s = config.get<double>("cluster.slurm.idle_exit_s");
  slurm.poll_s = config.get<double>("cluster.slurm.poll_s");
  slurm.evoteam = config.get<std::string>("cluster.slurm.evoteam");
  return settings;
}

ExecutorSettings executor_settings(const Config& config) { return {eval_settings(config), cluster_settings(config)}; }

std::filesystem::path cluster_jobs_file(const std::filesystem::path& run_dir) {
  return run_dir / "cluster" / "jobs.json";
}

}  // namespace evoteam
