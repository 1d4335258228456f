// The evaluator of a run whose evaluations go to Slurm (cluster.hpp has the protocol). The daemon side: it sends
// requests through the queue, keeps the configured number of worker jobs alive, puts a lost worker's requests back
// for another, and turns a job that never starts into an error that names Slurm's reason.
#include <algorithm>
#include <chrono>
#include <mutex>
#include <thread>

#include <unistd.h>

#include <spdlog/spdlog.h>

#include <evoteam/cluster/cluster.hpp>
#include <evoteam/core/clock.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/text.hpp>
#include <evoteam/core/timestamp.hpp>

#include "cluster/executors.hpp"
#include "cluster/remote_result.hpp"
#include "cluster/request_queue.hpp"
#include "cluster/slurm.hpp"

namespace evoteam {

namespace {

using cluster::JobState;
using SteadyClock = std::chrono::steady_clock;

// How often squeue is asked, at most: the controller serves every user of the cluster.
constexpr double k_watch_interval_s = 2.0;
// srun: how long one evaluation may run once its job started (the evaluator's own stage deadlines end it sooner).
constexpr double k_srun_evaluation_s = 3600;

std::string single_quoted(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::filesystem::path evoteam_binary(const SlurmSettings& settings) {
  if (!settings.evoteam.empty()) return settings.evoteam;
  std::error_code error;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) throw Error("cannot find this evoteam binary for the workers; set cluster.slurm.evoteam");
  return self;
}

struct WorkerJob {
  std::string id;
  SteadyClock::time_point submitted;
  std::string submitted_at;  // UTC, for jobs.json
  JobState last;
};

class SlurmEvaluator : public CandidateEvaluator {
 public:
  SlurmEvaluator(const ExecutorSettings& settings, const std::filesystem::path& run_dir, ProcessRunner& runner,
                 WorkloadSelection workloads, std::function<bool()> interrupted)
      : m_settings(settings.cluster.slurm),
        m_run_dir(std::filesystem::absolute(run_dir)),
        m_slurm(m_settings, runner),
        m_queue(m_run_dir / "cluster"),
        m_local(make_task_evaluator(settings.eval, m_run_dir / "task", runner, workloads)),
        m_interrupted(std::move(interrupted)),
        m_binary(evoteam_binary(m_settings)) {
    cancel_jobs_of_an_earlier_daemon();
    m_queue.reset();
    evoteam::create_directories(m_run_dir / "cluster" / "workers");
    write_file_atomic(script_path(),
                      "#!/bin/sh\n# An evoteam worker job: serves this run's evaluation requests.\nexec " +
                          single_quoted(m_binary) + " worker " + single_quoted(m_run_dir) +
                          " --name \"$SLURM_JOB_ID\"\n");
    std::filesystem::permissions(script_path(), std::filesystem::perms::owner_all, std::filesystem::perm_options::add);
    // Workers are asked for at once, so a refused allocation is reported before the team starts work.
    if (m_settings.mode == SlurmMode::worker) {
      std::lock_guard<std::mutex> lock(m_mutex);
      while (static_cast<int>(m_jobs.size()) < m_settings.workers) submit_worker();
      write_jobs_file();
    }
  }

  ~SlurmEvaluator() override {
    try {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_queue.request_stop();
      std::vector<std::string> ids;
      for (const WorkerJob& job : m_jobs) ids.push_back(job.id);
      m_slurm.cancel(ids);
      for (WorkerJob& job : m_jobs) job.last.state = "CANCELLED";
      write_jobs_file();
    } catch (const std::exception& error) {
      spdlog::warn("could not release the run's Slurm jobs: {}", error.what());
    }
  }

  Result evaluate(const std::filesystem::path& sources_dir, const ParamAssignment& params, Stage through,
                  std::uint64_t seed_salt) override {
    if (m_settings.build_on_login) {
      // A candidate that does not build costs no job time; one that does is built again on the worker unless
      // eval.cache_dir is shared with the nodes.
      Result built = m_local->evaluate(sources_dir, params, Stage::build, seed_salt);
      if (through <= Stage::build || built.verdict != Verdict::pass) return built;
    }
    const nlohmann::json request = {
        {"kind", "evaluate"}, {"params", params}, {"through", to_string(through)}, {"seed_salt", seed_salt}};
    const nlohmann::json reply = dispatch(request, sources_dir);
    return cluster::result_from_json(reply);
  }

  Profile profile(const std::filesystem::path& sources_dir, const ParamAssignment& params) override {
    const nlohmann::json reply = dispatch({{"kind", "profile"}, {"params", params}}, sources_dir);
    return cluster::profile_from_json(reply);
  }

  std::vector<ParamSpec> param_space() const override { return m_local->param_space(); }
  std::filesystem::path starting_sources() const override { return m_local->starting_sources(); }
  const Task* task() const override { return m_local->task(); }
  int parallel_width() const override { return m_settings.workers; }

 private:
  std::filesystem::path script_path() const { return m_run_dir / "cluster" / "worker.sh"; }

  // What a request that cannot be served answers, in the shape its kind expects.
  static nlohmann::json unserved(const nlohmann::json& request, const std::string& reason) {
    if (request.value("kind", "") == "profile") {
      Profile profile;
      profile.bound = "unknown";
      profile.summary = "INFRA_ERROR: " + reason;
      return cluster::profile_to_json(profile);
    }
    return cluster::result_to_json(cluster::infra_failure(reason));
  }

  nlohmann::json dispatch(const nlohmann::json& request, const std::filesystem::path& sources_dir) {
    const std::string id = m_queue.submit(request, sources_dir);
    if (m_settings.mode == SlurmMode::srun) return run_with_srun(id, request);
    while (true) {
      if (std::optional<nlohmann::json> reply = m_queue.take_result(id)) return *reply;
      if (m_interrupted()) return unserved(request, "interrupted while waiting for a Slurm worker");
      watch_workers();
      std::this_thread::sleep_for(std::chrono::duration<double>(m_settings.poll_s));
    }
  }

  // srun mode: one job per request, which serves exactly that request. A job lost mid-evaluation is run again;
  // an srun that never got the request to a worker is Slurm refusing the allocation.
  nlohmann::json run_with_srun(const std::string& id, const nlohmann::json& request) {
    const std::string worker = "srun-" + id;
    const auto timeout =
        std::chrono::milliseconds(static_cast<long long>((m_settings.start_timeout_s + k_srun_evaluation_s) * 1000));
    while (true) {
      const ProcessResult ran = m_slurm.run(
          {m_binary.string(), "worker", m_run_dir.string(), "--name", worker, "--request", id}, job_name(), timeout);
      if (std::optional<nlohmann::json> reply = m_queue.take_result(id)) return *reply;
      if (ran.interrupted || m_interrupted()) return unserved(request, "interrupted while srun ran the evaluation");
      const std::vector<std::string> holders = m_queue.claim_holders();
      if (std::find(holders.begin(), holders.end(), worker) == holders.end())
        throw Error("srun did not start an evoteam worker (" + ran.describe() +
                    "): " + trim(ran.err.text.substr(0, 600)));
      spdlog::warn("srun of request {} ended without a result ({}); trying again", id, ran.describe());
      m_queue.return_claims(worker, m_settings.max_attempts, [&](const nlohmann::json& lost) {
        return unserved(lost, "its srun job was lost " + std::to_string(m_settings.max_attempts) + " times");
      });
      if (std::optional<nlohmann::json> reply = m_queue.take_result(id)) return *reply;
    }
  }

  std::string job_name() const { return "evoteam-" + m_run_dir.filename().string(); }

  // Needs m_mutex. Each job may be lost up to max_attempts times over the run before the run gives up on Slurm.
  void submit_worker() {
    const int allowed = m_settings.workers * (m_settings.max_attempts + 1);
    if (m_submitted >= allowed)
      throw Error("Slurm keeps ending this run's worker jobs (" + std::to_string(m_submitted) +
                  " submitted; the last ended " + m_last_loss + "); see " +
                  (m_run_dir / "cluster" / "workers").string() + " for their logs");
    WorkerJob job;
    job.id = m_slurm.submit(script_path(), job_name(), m_run_dir / "cluster" / "workers" / "%j.log");
    job.submitted = SteadyClock::now();
    job.submitted_at = utc_iso_timestamp();
    job.last.state = "PENDING";
    ++m_submitted;
    spdlog::info("submitted Slurm worker job {}", job.id);
    m_jobs.push_back(std::move(job));
  }

  // Looks at the worker jobs (at most every few seconds, whichever thread asks): a lost job's requests go back to
  // pending/ and a new job replaces it; none running long past start_timeout_s is an error naming Slurm's reason.
  void watch_workers() {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (seconds_since(m_last_watch) < k_watch_interval_s) return;
    m_last_watch = SteadyClock::now();
    bool any_running = false;
    std::vector<WorkerJob> alive;
    for (WorkerJob& job : m_jobs) {
      const std::optional<JobState> state = m_slurm.state(job.id);
      job.last = state.value_or(JobState{"GONE", "", ""});
      if (job.last.alive()) {
        any_running = any_running || !job.last.waiting();
        alive.push_back(job);
        continue;
      }
      m_last_loss = job.id + " (" + job.last.state + ")";
      const std::vector<std::string> returned =
          m_queue.return_claims(job.id, m_settings.max_attempts, [&](const nlohmann::json& request) {
            return unserved(request, "its Slurm worker was lost " + std::to_string(m_settings.max_attempts) +
                                         " times, last as job " + m_last_loss);
          });
      spdlog::warn("Slurm worker job {} ended ({}); {} evaluation(s) put back for another worker", job.id,
                   job.last.state, returned.size());
      m_ended.push_back(job);
    }
    m_jobs = std::move(alive);
    if (!any_running)
      for (const WorkerJob& job : m_jobs)
        if (job.last.waiting() && seconds_since(job.submitted) > m_settings.start_timeout_s)
          throw Error("Slurm worker job " + job.id + " has not started after " +
                      std::to_string(static_cast<long long>(m_settings.start_timeout_s)) + " s (" + job.last.state +
                      ", reason: " + job.last.reason +
                      "); check cluster.slurm.partition, gres, time, account and qos against `sinfo`");
    while (static_cast<int>(m_jobs.size()) < m_settings.workers) submit_worker();
    write_jobs_file();
  }

  // Needs m_mutex. jobs.json: what `evoteam status` shows, and what a resumed daemon cancels.
  void write_jobs_file() const {
    auto describe = [](const WorkerJob& job) {
      return nlohmann::json{{"id", job.id},
                            {"state", job.last.state},
                            {"reason", job.last.reason},
                            {"node", job.last.node},
                            {"submitted", job.submitted_at}};
    };
    nlohmann::json jobs = nlohmann::json::array(), ended = nlohmann::json::array();
    for (const WorkerJob& job : m_jobs) jobs.push_back(describe(job));
    for (const WorkerJob& job : m_ended) ended.push_back(describe(job));
    write_json_atomic(cluster_jobs_file(m_run_dir), {{"executor", "slurm"},
                                                     {"mode", m_settings.mode == SlurmMode::srun ? "srun" : "worker"},
                                                     {"jobs", jobs},
                                                     {"ended", ended},
                                                     {"updated", utc_iso_timestamp()}});
  }

  // A daemon killed with -9 left its workers running: they serve nobody now, and their claims are void.
  void cancel_jobs_of_an_earlier_daemon() {
    const std::filesystem::path file = cluster_jobs_file(m_run_dir);
    if (!std::filesystem::is_regular_file(file)) return;
    std::vector<std::string> ids;
    try {
      const nlohmann::json earlier = read_json_file(file);
      for (const nlohmann::json& job : earlier.value("jobs", nlohmann::json::array()))
        if (job.is_object() && job.contains("id") && job["id"].is_string()) ids.push_back(job["id"]);
    } catch (const Error& error) {
      spdlog::warn("ignoring unreadable {}: {}", file.string(), error.what());
    }
    if (!ids.empty()) spdlog::info("cancelling {} Slurm job(s) an earlier daemon of this run left", ids.size());
    m_slurm.cancel(ids);
  }

  SlurmSettings m_settings;
  std::filesystem::path m_run_dir;
  cluster::Slurm m_slurm;
  cluster::RequestQueue m_queue;
  std::unique_ptr<CandidateEvaluator> m_local;  // the task, its params and (build_on login) the builds
  std::function<bool()> m_interrupted;
  std::filesystem::path m_binary;

  std::mutex m_mutex;  // the jobs below, and submitting
  std::vector<WorkerJob> m_jobs;
  std::vector<WorkerJob> m_ended;
  int m_submitted = 0;
  std::string m_last_loss = "-";
  SteadyClock::time_point m_last_watch{};
};

}  // namespace

std::unique_ptr<CandidateEvaluator> make_slurm_evaluator(const ExecutorSettings& settings,
                                                         const std::filesystem::path& run_dir, ProcessRunner& runner,
                                                         WorkloadSelection workloads,
                                                         std::function<bool()> interrupted) {
  return std::make_unique<SlurmEvaluator>(settings, run_dir, runner, workloads, std::move(interrupted));
}

}  // namespace evoteam
