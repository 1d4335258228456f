// Evaluator::evaluate: the stage pipeline. Each stage either passes or ends the evaluation with a typed
// verdict; what every stage did is recorded in the result.
#include <evoteam/error.hpp>
#include <evoteam/evaluator.hpp>
#include <evoteam/fs.hpp>

#include <chrono>
#include <cmath>
#include <future>
#include <thread>

#include "eval/eval_phases.hpp"
#include "eval/rank_group.hpp"
#include "eval/result_cache.hpp"
#include "eval/sandbox.hpp"
#include "eval/statistics.hpp"
#include "eval/timing_run.hpp"

namespace evoteam {

struct Evaluator::Impl {
  Impl(const Config& config, ProcessRunner& runner, std::filesystem::path cache_dir)
      : shared(config, runner, std::move(cache_dir)), results(shared.cache_dir / "results") {}
  eval::EvaluatorShared shared;
  eval::ResultCache results;
};

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using eval::BuildOutcome;
using eval::BuildStatus;
using eval::Judgement;

double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

bool wants(const std::vector<Stage>& stages, Stage stage) {
  return std::find(stages.begin(), stages.end(), stage) != stages.end();
}

void conclude(EvalResult& result, const Judgement& judgement) {
  result.verdict = judgement.verdict;
  result.reason = judgement.reason;
  result.evidence = judgement.evidence;
}

// After a CUDA candidate crashed, hung or faulted, a fresh process checks that the GPU still works. When it does
// not, nothing measured next on it can be trusted and the machine, not the candidate, is the problem.
void check_gpu_after_fault(eval::EvaluationRun& run, EvalResult& result) {
  if (run.task.target != Target::cuda) return;
  if (result.verdict != Verdict::runtime_fault && result.verdict != Verdict::hang_timeout &&
      result.verdict != Verdict::worker_crash && result.verdict != Verdict::oob_write)
    return;
  std::string why;
  if (eval::probe_gpu(run, &why)) {
    result.evidence["gpu_after_fault"] = "usable";
    return;
  }
  result.evidence["gpu_after_fault"] = "unusable: " + why;
  result.evidence["candidate_verdict"] = to_string(result.verdict);
  result.verdict = Verdict::infra_error;
  result.reason = "the GPU is unusable after the candidate's " + result.reason + "; later evaluations need a healthy GPU";
}

void record_stage(EvalResult& result, const std::string& name, const std::string& status, double wall_s,
                  const std::string& detail = "") {
  result.stages.push_back({name, status, wall_s, detail});
}

Verdict build_verdict(BuildStatus status) {
  switch (status) {
    case BuildStatus::compile_error: return Verdict::compile_error;
    case BuildStatus::compile_timeout: return Verdict::compile_timeout;
    case BuildStatus::static_reject: return Verdict::static_reject;
    default: return Verdict::infra_error;
  }
}

std::string baseline_description(const Task& task) {
  switch (task.baseline.kind) {
    case BaselineKind::starting: return "the starting kernel at its default params";
    case BaselineKind::reference: return "the reference implementation";
    case BaselineKind::library: return "library implementation " + task.baseline.name;
  }
  return "";
}

// The files of the candidate: each kernel file from its directory, else the task's starting version.
std::map<std::string, std::string> candidate_files(const Task& task, const Candidate& candidate) {
  if (!fs::is_directory(candidate.source_dir))
    throw InvalidInput("candidate directory " + candidate.source_dir.string() + " does not exist");
  std::map<std::string, std::string> files;
  for (const std::string& name : task.kernel_files) {
    const fs::path own = candidate.source_dir / name;
    files[name] = read_file(fs::is_regular_file(own) ? own : task.dir / name);
  }
  return files;
}

std::string stages_text(const std::vector<Stage>& stages) {
  std::string text;
  for (Stage stage : stages) text += (text.empty() ? "" : ",") + to_string(stage);
  return text;
}

}  // namespace

std::optional<std::string> run_stages_unavailable(const Task& task, const Config& config) {
  if (task.target != Target::cuda) return std::nullopt;
  if (config.get<std::string>("eval.cuda.run") == "off") return "eval.cuda.run is off";
  if (eval::gpu_device_nodes().empty()) return "no CUDA device on this machine";
  if (const int gpus = eval::visible_gpu_count(); task.min_devices > 1 && gpus < task.min_devices)
    return "task " + task.name + " needs " + std::to_string(task.min_devices) + " GPUs; this machine has " + std::to_string(gpus);
  return std::nullopt;
}

Evaluator::Evaluator(const Config& config, ProcessRunner& runner, std::filesystem::path cache_dir)
    : m_impl(std::make_unique<Impl>(config, runner, std::move(cache_dir))) {
  evoteam::create_directories(m_impl->shared.cache_dir);
}

Evaluator::~Evaluator() = default;

const std::filesystem::path& Evaluator::cache_dir() const { return m_impl->shared.cache_dir; }

SandboxMode Evaluator::resolve_sandbox(SandboxMode requested) {
  if (requested == SandboxMode::none) return SandboxMode::none;
  eval::EvaluatorShared& shared = m_impl->shared;
  std::call_once(shared.sandbox_probe, [&shared] { shared.bwrap_usable = eval::probe_bwrap(shared.runner, &shared.bwrap_problem); });
  if (shared.bwrap_usable) return SandboxMode::bwrap;
  if (requested == SandboxMode::bwrap) throw Error("--sandbox bwrap: bubblewrap does not work here: " + shared.bwrap_problem);
  return SandboxMode::none;
}

EvalResult Evaluator::evaluate(const Task& task, const Candidate& candidate, const EvalOptions& options) {
  const auto start = Clock::now();
  eval::EvaluatorShared& shared = m_impl->shared;
  const Config& config = shared.config;
  EvalResult result;
  result.task = task.name;
  result.target = to_string(task.target);
  result.baseline = baseline_description(task);
  result.stages_requested = options.stages.empty()
                                ? parse_stage_list([&] {
                                    std::string list;
                                    for (const auto& name : config.get<std::vector<std::string>>("eval.pipeline"))
                                      list += (list.empty() ? "" : ",") + name;
                                    return list;
                                  }(), "eval.pipeline")
                                : options.stages;
  const std::vector<Stage>& stages = result.stages_requested;
  std::optional<SandboxMode> configured = parse_sandbox_mode(config.get<std::string>("eval.sandbox"));
  if (!configured) throw InvalidInput("eval.sandbox: must be auto, bwrap or none");
  const SandboxMode sandbox = resolve_sandbox(options.sandbox.value_or(*configured));
  result.sandbox = to_string(sandbox);
  const std::map<std::string, std::string> files = candidate_files(task, candidate);
  result.params = complete_params(task, candidate.params);
  std::string material = "candidate-v1";
  for (const auto& [name, text] : files) material += "\n" + name + "\n" + sha256_hex(text);
  material += "\nparams " + describe_params(result.params);
  result.candidate_hash = sha256_hex(material);
  auto finish = [&](EvalResult& done) -> EvalResult {
    done.wall_s = since(start);
    return done;
  };

  eval::TargetBackend& backend = task.target == Target::cuda ? static_cast<eval::TargetBackend&>(shared.cuda) : shared.host;
  result.device = backend.device();
  if (std::optional<std::string> error = param_error(task, candidate.params)) {
    conclude(result, {Verdict::static_reject, "invalid params: " + *error, {{"params", to_json(candidate.params)}}});
    record_stage(result, "static", "failed", since(start), *error);
    return finish(result);
  }

  std::string key;
  try {
    result.compiler = backend.toolchain_identity();
    result.harness_version = backend.harness_version();
  } catch (const Error& error) {
    conclude(result, {Verdict::infra_error, error.what(), nlohmann::json::object()});
    return finish(result);
  }
  key = sha256_hex("result-v1\n" + task.content_hash + "\n" + result.candidate_hash + "\n" + stages_text(stages) + "\n" +
                   result.compiler + "\n" + result.harness_version + "\n" + config.at("eval").dump() + "\n" + result.sandbox);
  if (options.result_cache == CachePolicy::use) {
    if (std::optional<EvalResult> cached = m_impl->results.get(key)) {
      cached->result_cache_hit = true;
      return finish(*cached);
    }
  }

  // Scratch space for plans, records and (per-evaluation) reference outputs.
  const fs::path scratch = eval::unique_sibling(shared.cache_dir / "scratch" / "eval");
  evoteam::create_directories(scratch);
  struct ScratchCleanup {
    fs::path path;
    bool keep;
    ~ScratchCleanup() {
      std::error_code ignored;
      if (!keep) fs::remove_all(path, ignored);
    }
  } cleanup{scratch, config.get<bool>("eval.keep_scratch")};

  const bool wants_run = wants(stages, Stage::correctness) || wants(stages, Stage::timing) || wants(stages, Stage::profile);
  const bool evaluator_scope = config.get<std::string>("eval.correctness.secret_scope") == "evaluator";
  const std::uint64_t secret = evaluator_scope ? shared.evaluator_secret : eval::fresh_secret();
  eval::EvaluationRun run{shared, backend, task, sandbox, scratch, {}, {}, {}, {}, 0, true};
  run.reference_dir = evaluator_scope ? shared.cache_dir / "references" / task.content_hash.substr(0, 24) : scratch / "references";
  // Without a usable device the build still runs (it needs none), and the evaluation then says why it stopped.
  const std::optional<Judgement> no_device = wants_run ? eval::device_unavailable(run) : std::nullopt;
  const bool needs_run = wants_run && !no_device;

  // The reference outputs do not depend on the candidate, so they are computed while it builds.
  std::future<std::optional<Judgement>> references;
  if (needs_run) references = std::async(std::launch::async, [&run, secret] { return eval::prepare_references(run, secret); });
  auto wait_references = [&]() -> std::optional<Judgement> {
    if (!references.valid()) return std::nullopt;
    try {
      return references.get();
    } catch (const std::exception& error) {
      return Judgement{Verdict::infra_error, std::string("reference computation: ") + error.what(), nlohmann::json::object()};
    }
  };

  eval::BuildRequest request;
  request.task = &task;
  request.files = files;
  request.params = result.params;
  BuildOutcome build = backend.build(request, sandbox);
  result.build_log = build.log;
  result.build_report = build.report;
  result.static_warnings = build.warnings;
  result.build_cache_hit = build.cache_hit;
  result.build_s = build.cache_hit ? 0.0 : build.wall_s;
  const bool static_failed = build.status == BuildStatus::static_reject;
  // A cached build reports the lookup as its time; its static checks ran when it was built.
  const double static_s = build.cache_hit ? 0.0 : build.static_s;
  const double build_only_s = build.cache_hit ? build.wall_s : std::max(0.0, build.wall_s - build.static_s);
  record_stage(result, "static", static_failed ? "failed" : (build.cache_hit ? "cached" : "passed"), static_s,
               static_failed ? build.reason : "");
  if (build.status != BuildStatus::ok) {
    if (!static_failed) record_stage(result, "build", "failed", build_only_s, build.reason);
    conclude(result, {build_verdict(build.status), build.reason, build.evidence});
    wait_references();
    if (result.verdict != Verdict::infra_error && options.result_cache != CachePolicy::bypass) m_impl->results.put(key, result);
    return finish(result);
  }
  record_stage(result, "build", build.cache_hit ? "cached" : "passed", build_only_s);
  result.verdict = Verdict::pass;
  run.build_report = build.report;
  if (no_device) {
    for (Stage stage : stages) {
      if (stage == Stage::static_checks || stage == Stage::build) continue;
      if (stage == Stage::profile && task.target == Target::cuda) {
        // What the build learned still helps an agent: registers, spills, tensor-core and TMA instruction counts.
        result.profile = eval::static_cuda_profile(build.report, "no GPU: static profile from the build");
        record_stage(result, "profile", "static", 0, "from ptxas and the PTX/SASS scan");
        continue;
      }
      record_stage(result, to_string(stage), "skipped", 0, no_device->reason);
    }
    conclude(result, *no_device);
    return finish(result);
  }

  if (needs_run) {
    std::optional<Judgement> failure = wait_references();
    record_stage(result, "reference", failure ? "failed" : (run.references_cached ? "cached" : "passed"), run.reference_s,
                 failure ? failure->reason : "");
    if (failure) {
      conclude(result, *failure);
      return finish(result);
    }
    result.protocol = run.battery.describe();
    result.protocol["secret_scope"] = evaluator_scope ? "evaluator" : "evaluation";
    result.protocol["timing"] = config.at("eval.timing");
  }

  // On the host, with a core to spare, the timing harness starts now and prepares its input sets beside
  // correctness; it times nothing until correctness has passed (eval/timing_run.hpp). A profile that needs a
  // run of its own (perf with hardware counters) runs beside correctness too; its result counts only once the
  // gates before it passed, and it is finished before timing starts. Otherwise the timing samples give it.
  const bool spare_core = needs_run && task.target == Target::host && wants(stages, Stage::correctness) &&
                          std::thread::hardware_concurrency() >= 2;
  const bool profile_by_timing =
      needs_run && wants(stages, Stage::profile) && wants(stages, Stage::timing) && !eval::profile_needs_own_run(run);
  std::future<eval::ProfileOutcome> early_profile;
  if (spare_core && wants(stages, Stage::profile) && !profile_by_timing) early_profile = eval::start_profile(run, build.library);
  std::optional<eval::ProfileOutcome> profiled;
  std::optional<eval::TimingRun> timing_run;
  if (spare_core && wants(stages, Stage::timing)) timing_run.emplace(run, build.library, true);

  if (wants(stages, Stage::correctness)) {
    const auto stage_start = Clock::now();
    std::optional<Judgement> failure = eval::run_correctness(run, build.library);
    record_stage(result, "correctness", failure ? "failed" : "passed", since(stage_start), failure ? failure->reason : "");
    if (!failure && task.target == Target::cuda) {
      const auto sanitizer_start = Clock::now();
      nlohmann::json sanitizer;
      failure = eval::run_cuda_sanitizer(run, build.library, &sanitizer);
      result.protocol["sanitizer"] = sanitizer;
      record_stage(result, "sanitizer", failure ? "failed" : (sanitizer.contains("skipped") ? "skipped" : "passed"),
                   since(sanitizer_start), failure ? failure->reason : sanitizer.value("skipped", ""));
    }
    if (early_profile.valid()) profiled = early_profile.get();
    if (failure) {
      conclude(result, *failure);
      check_gpu_after_fault(run, result);
      if (!is_infra(result.verdict) && options.result_cache != CachePolicy::bypass) m_impl->results.put(key, result);
      return finish(result);
    }
  }

  std::optional<Judgement> noisy;
  if (wants(stages, Stage::timing)) {
    const auto stage_start = Clock::now();
    if (timing_run)
      timing_run->release();
    else
      timing_run.emplace(run, build.library, false);
    const eval::TimingResult timing = timing_run->get();
    std::optional<Judgement> failure = timing.failure;
    result.workloads = timing.outcome.workloads;
    result.timed_s = timing.outcome.timed_s;
    if (!failure && !result.workloads.empty()) {
      std::vector<double> speedups, lows, highs, fractions;
      for (const WorkloadResult& workload : result.workloads) {
        speedups.push_back(workload.speedup);
        lows.push_back(workload.speedup_low);
        highs.push_back(workload.speedup_high);
        if (workload.roofline_fraction) fractions.push_back(*workload.roofline_fraction);
      }
      result.speedup = eval::geometric_mean(speedups);
      result.speedup_low = eval::geometric_mean(lows);
      result.speedup_high = eval::geometric_mean(highs);
      if (fractions.size() == result.workloads.size()) result.roofline_fraction = eval::geometric_mean(fractions);
      failure = eval::check_timing_gates(run, result, timing.outcome.capped, build.library);
      // NOISY is a verdict about the measurement, not a failed gate: the profile still runs.
      if (failure && failure->verdict == Verdict::noisy) {
        noisy = failure;
        failure.reset();
      }
    }
    record_stage(result, "timing", failure ? "failed" : "passed", since(stage_start),
                 failure ? failure->reason : "lock wait " + std::to_string(timing.lock_wait_s).substr(0, 5) + " s");
    if (failure) {
      conclude(result, *failure);
      check_gpu_after_fault(run, result);
      if (!outputs_verified(result.verdict)) {
        result.speedup.reset();
        result.speedup_low.reset();
        result.speedup_high.reset();
      }
      if (!is_infra(result.verdict) && options.result_cache != CachePolicy::bypass) m_impl->results.put(key, result);
      return finish(result);
    }
  }

  if (wants(stages, Stage::profile)) {
    const auto stage_start = Clock::now();
    nlohmann::json profile;
    std::optional<Judgement> failure;
    double profile_s = 0;
    if (profiled) {
      failure = profiled->failure;
      profile = profiled->profile;
      profile_s = profiled->wall_s;
      profile["beside"] = "correctness";
    } else if (profile_by_timing) {
      failure = eval::profile_from_timing(run, result.workloads, &profile);
      profile_s = since(stage_start);
    } else {
      failure = eval::run_profile(run, build.library, &profile);
      profile_s = since(stage_start);
    }
    record_stage(result, "profile", failure ? "failed" : "passed", profile_s, failure ? failure->reason : "");
    if (failure) {
      conclude(result, *failure);
      return finish(result);
    }
    result.profile = profile;
  }
  if (noisy) conclude(result, *noisy);
  if (options.result_cache != CachePolicy::bypass) m_impl->results.put(key, result);
  return finish(result);
}

}  // namespace evoteam
