// `evoteam worker`: the node side of the Slurm executor (cluster.hpp has the protocol). It evaluates with the
// run's frozen task and configuration, exactly as the daemon would on its own machine.
#include <atomic>
#include <chrono>
#include <exception>
#include <optional>
#include <thread>
#include <vector>

#include <unistd.h>

#include <spdlog/spdlog.h>

#include <evoteam/cluster/cluster.hpp>
#include <evoteam/core/clock.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/json_fields.hpp>
#include <evoteam/core/timestamp.hpp>
#include <evoteam/store/store.hpp>

#include "cluster/executors.hpp"
#include "cluster/remote_result.hpp"
#include "cluster/request_queue.hpp"

namespace evoteam {

namespace {

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

// The configuration the run was started with, over this process's own.
Config frozen_config(const Config& config, const std::filesystem::path& run_dir, const nlohmann::json& run_json) {
  Config frozen = config;
  if (run_json.contains("config") && run_json["config"].is_object())
    frozen.overlay(run_json["config"], (run_dir / "run.json").string() + " (frozen config)");
  return frozen;
}

WorkloadSelection workloads_of(const nlohmann::json& run_json) {
  const nlohmann::json options = run_json.value("options", nlohmann::json::object());
  if (!options.is_object() || !options.contains("workloads") || !options["workloads"].is_string())
    return WorkloadSelection::all;
  return parse_workload_selection(options["workloads"].get<std::string>()).value_or(WorkloadSelection::all);
}

// Serves one claim. What goes wrong here is the infrastructure's fault, never the candidate's: it is answered as
// INFRA_ERROR so the daemon records it and goes on.
nlohmann::json serve(CandidateEvaluator& evaluator, const cluster::Claim& claim, const std::string& worker) {
  const nlohmann::json& request = claim.request;
  const ParamAssignment params = request.value("params", ParamAssignment{});
  const std::filesystem::path sources = claim.dir / "src";
  try {
    if (request.value("kind", "") == "profile") return cluster::profile_to_json(evaluator.profile(sources, params));
    const std::optional<Stage> through = parse_stage(request.value("through", "timing"));
    if (!through) throw InvalidInput("request " + claim.id + " names no stage");
    CandidateEvaluator::Result result =
        evaluator.evaluate(sources, params, *through, request.value("seed_salt", std::uint64_t{0}));
    // eval.json says where the evaluation ran.
    if (result.eval_json.is_object())
      result.eval_json["worker"] = {{"name", worker}, {"host", host_name()}, {"attempt", request.value("attempt", 1)}};
    return cluster::result_to_json(result);
  } catch (const std::exception& error) {
    spdlog::error("request {}: {}", claim.id, error.what());
    return cluster::result_to_json(cluster::infra_failure(std::string("the worker failed: ") + error.what()));
  }
}

bool run_has_ended(const nlohmann::json& run_json) {
  const std::optional<RunStatus> status = parse_run_status(text_or(run_json, "status"));
  return status && *status != RunStatus::running;
}

}  // namespace

int run_worker(const Config& config, const std::filesystem::path& run_dir, const WorkerOptions& options,
               ProcessRunner& runner) {
  const nlohmann::json run_json = read_run_json(run_dir);
  // A run that has ended sends no more requests: waiting idle_exit_s for one would only hold a node.
  if (run_has_ended(run_json)) {
    spdlog::info("run {} has ended ({}): no request will come; the worker exits", run_dir.string(),
                 text_or(run_json, "status"));
    return 0;
  }
  const ExecutorSettings executor = executor_settings(frozen_config(config, run_dir, run_json));
  const SlurmSettings& settings = executor.cluster.slurm;
  const std::string name = options.name.empty() ? "local-" + std::to_string(::getpid()) : options.name;
  // The node's own devices: a job given several GPUs serves as many requests at once.
  std::unique_ptr<CandidateEvaluator> evaluator =
      make_local_evaluator(executor, run_dir / "task", runner, workloads_of(run_json));
  cluster::RequestQueue queue(run_dir / "cluster");
  const int lanes = options.request_id.empty() ? evaluator->parallel_width() : 1;
  spdlog::info("worker {} on {} serving {} with {} device(s)", name, host_name(), run_dir.string(), lanes);

  std::atomic<int> served{0};
  auto serve_requests = [&] {
    auto idle_since = std::chrono::steady_clock::now();
    while (!interrupted() && !queue.stop_requested()) {
      std::optional<cluster::Claim> claim = queue.claim(name, options.request_id);
      if (!claim) {
        if (!options.request_id.empty())
          throw InvalidInput("request " + options.request_id + " is not pending in " + run_dir.string());
        if (seconds_since(idle_since) > settings.idle_exit_s) break;
        if (run_has_ended(read_run_json(run_dir))) break;  // ended while this worker waited
        std::this_thread::sleep_for(std::chrono::duration<double>(settings.poll_s));
        continue;
      }
      spdlog::info("worker {}: request {} (attempt {})", name, claim->id, claim->request.value("attempt", 1));
      const nlohmann::json result = serve(*evaluator, *claim, name);
      // A job being cancelled or preempted gets SIGTERM first, which cuts the evaluation short: what it measured
      // is not the candidate's doing, so the claim is left for the daemon to give to another worker.
      if (interrupted()) break;
      queue.complete(*claim, result);
      ++served;
      idle_since = std::chrono::steady_clock::now();
      if (!options.request_id.empty()) break;
    }
  };
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(lanes));
  std::vector<std::thread> threads;
  for (int lane = 0; lane < lanes; ++lane)
    threads.emplace_back([&, lane] {
      try {
        serve_requests();
      } catch (...) {
        errors[static_cast<std::size_t>(lane)] = std::current_exception();
      }
    });
  for (std::thread& thread : threads) thread.join();
  for (const std::exception_ptr& error : errors)
    if (error) std::rethrow_exception(error);
  spdlog::info("worker {}: exiting after {} request(s)", name, served.load());
  return served;
}

}  // namespace evoteam
