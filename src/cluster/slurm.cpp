#include "cluster/slurm.hpp"

#include <evoteam/core/error.hpp>
#include <evoteam/core/text.hpp>

namespace evoteam::cluster {

namespace {

// Slurm's client commands answer in well under a second on a healthy controller; a hung controller must not hang
// the daemon.
constexpr std::chrono::milliseconds k_client_timeout{60'000};

Command client(std::vector<std::string> argv) {
  Command command;
  command.argv = std::move(argv);
  command.timeout = k_client_timeout;
  return command;
}

std::string refusal(const std::string& what, const ProcessResult& result) {
  const std::string said = trim(result.err.text.empty() ? result.out.text : result.err.text);
  return what + " failed (" + result.describe() + ")" + (said.empty() ? "" : ": " + said);
}

}  // namespace

std::vector<std::string> Slurm::allocation_args() const {
  std::vector<std::string> args;
  const std::pair<const char*, const std::string*> options[] = {{"--partition=", &m_settings.partition},
                                                                {"--gres=", &m_settings.gres},
                                                                {"--time=", &m_settings.time},
                                                                {"--account=", &m_settings.account},
                                                                {"--qos=", &m_settings.qos}};
  for (const auto& [flag, value] : options)
    if (!value->empty()) args.push_back(flag + *value);
  args.insert(args.end(), m_settings.extra_args.begin(), m_settings.extra_args.end());
  return args;
}

std::string Slurm::submit(const std::filesystem::path& script, const std::string& job_name,
                          const std::filesystem::path& output) {
  std::vector<std::string> argv = {"sbatch", "--parsable", "--job-name=" + job_name, "--output=" + output.string()};
  for (std::string& arg : allocation_args()) argv.push_back(std::move(arg));
  argv.push_back(script.string());
  const ProcessResult result = m_runner.run(client(argv));
  if (!result.ok()) throw Error("Slurm refused the worker job: " + refusal("sbatch", result));
  // --parsable prints "<id>" or "<id>;<cluster>".
  const std::string line = trim(first_line(result.out.text));
  const std::string id = line.substr(0, line.find(';'));
  if (id.empty() || id.find_first_not_of("0123456789_") != std::string::npos)
    throw Error("sbatch printed no job id: '" + line + "'");
  return id;
}

std::optional<JobState> parse_job_state(const std::string& line) {
  const std::string text = trim(line);
  if (text.empty()) return std::nullopt;
  JobState job;
  const std::size_t first = text.find('|');
  job.state = text.substr(0, first);
  if (first != std::string::npos) {
    const std::size_t second = text.find('|', first + 1);
    job.reason = text.substr(first + 1, second == std::string::npos ? std::string::npos : second - first - 1);
    if (second != std::string::npos) job.node = text.substr(second + 1);
  }
  return job;
}

std::optional<JobState> Slurm::state(const std::string& job) {
  // -t all: a job that ended is still listed (for MinJobAge), with the state that says why it ended.
  const ProcessResult result = m_runner.run(client({"squeue", "-h", "-t", "all", "-j", job, "-o", "%T|%r|%N"}));
  // squeue exits 1 with "Invalid job id specified" once the controller has purged the job.
  if (!result.ok()) {
    if (result.spawned && result.err.text.find("Invalid job id") != std::string::npos) return std::nullopt;
    throw Error("cannot ask Slurm about job " + job + ": " + refusal("squeue", result));
  }
  return parse_job_state(trim(first_line(result.out.text)));
}

void Slurm::cancel(const std::vector<std::string>& jobs) {
  if (jobs.empty()) return;
  std::vector<std::string> argv = {"scancel"};
  argv.insert(argv.end(), jobs.begin(), jobs.end());
  m_runner.run(client(argv));  // a job that already ended is not an error worth stopping for
}

ProcessResult Slurm::run(const std::vector<std::string>& command, const std::string& job_name,
                         std::chrono::milliseconds timeout) {
  std::vector<std::string> argv = {"srun", "--ntasks=1", "--job-name=" + job_name};
  for (std::string& arg : allocation_args()) argv.push_back(std::move(arg));
  argv.insert(argv.end(), command.begin(), command.end());
  Command srun = client(argv);
  srun.timeout = timeout;
  return m_runner.run(srun);
}

}  // namespace evoteam::cluster
