// Evaluator::evaluate: the stage pipeline, as a list of steps (k_steps) over one Evaluation. Each step either
// lets the next one run or ends the evaluation with a typed verdict; what every stage did is recorded in the
// result. Every evaluation leaves through finish, which alone decides the GPU probe and the result cache.
#include <evoteam/core/clock.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/text.hpp>
#include <evoteam/eval/evaluator.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <future>
#include <thread>

#include <evoteam/eval/sandbox.hpp>
#include "eval/eval_phases.hpp"
#include "eval/group/rank_group.hpp"
#include "eval/result_cache.hpp"
#include "eval/statistics.hpp"
#include "eval/timing_run.hpp"
#include "eval/vendor_baseline.hpp"

namespace evoteam {

struct Evaluator::Impl {
  Impl(const EvalSettings& settings, ProcessRunner& runner, std::filesystem::path cache_dir)
      : shared(settings, runner, std::move(cache_dir)), results(shared.cache_dir / "results") {}
  eval::EvaluatorShared shared;
  eval::ResultCache results;
};

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using eval::BuildOutcome;
using eval::BuildStatus;
using eval::Judgement;

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
  result.reason =
      "the GPU is unusable after the candidate's " + result.reason + "; later evaluations need a healthy GPU";
}

void record_stage(EvalResult& result, const std::string& name, StageStatus status, double wall_s,
                  const std::string& detail = "") {
  result.stages.push_back({name, status, wall_s, detail});
}

StageStatus passed_or_failed(const std::optional<Judgement>& failure) {
  return failure ? StageStatus::failed : StageStatus::passed;
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
  return join(stages, ",", [](Stage stage) { return to_string(stage); });
}

std::vector<Stage> requested_stages(const EvalSettings& settings, const EvalOptions& options) {
  return options.stages.empty() ? settings.pipeline : options.stages;
}

std::string candidate_hash(const std::map<std::string, std::string>& files, const ParamAssignment& params) {
  std::string material = "candidate-v1";
  for (const auto& [name, text] : files) material += "\n" + name + "\n" + sha256_hex(text);
  material += "\nparams " + describe_params(params);
  return sha256_hex(material);
}

// The evaluation's scratch space (plans, records, per-evaluation reference outputs), removed when the evaluation
// ends unless eval.keep_scratch asks to keep it.
class ScratchDir {
 public:
  ScratchDir(fs::path path, bool keep) : m_path(std::move(path)), m_keep(keep) { evoteam::create_directories(m_path); }
  ~ScratchDir() {
    std::error_code ignored;
    if (!m_keep) fs::remove_all(m_path, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return m_path; }

 private:
  fs::path m_path;
  bool m_keep;
};

// One evaluate() call: what its steps share. Members are destroyed in reverse order, so the threads that use
// `run` (the references, the early profile, the timing run) are joined before `run` and the scratch go.
struct Evaluation {
  Evaluation(eval::EvaluatorShared& evaluator_shared, eval::ResultCache& result_cache, const Task& evaluated_task,
             const Candidate& evaluated, const EvalOptions& evaluation_options)
      : shared(evaluator_shared),
        results(result_cache),
        task(evaluated_task),
        candidate(evaluated),
        options(evaluation_options) {}
  Evaluation(const Evaluation&) = delete;
  Evaluation& operator=(const Evaluation&) = delete;

  bool wants(Stage stage) const {
    const std::vector<Stage>& stages = result.stages_requested;
    return std::find(stages.begin(), stages.end(), stage) != stages.end();
  }

  eval::EvaluatorShared& shared;
  eval::ResultCache& results;
  const Task& task;
  const Candidate& candidate;
  const EvalOptions& options;
  const Clock::time_point start = Clock::now();
  EvalResult result;
  std::map<std::string, std::string> files;
  SandboxMode sandbox = SandboxMode::none;
  eval::TargetBackend* backend = nullptr;
  std::optional<std::string> cache_key;  // known once the toolchain is
  std::optional<ScratchDir> scratch;
  bool evaluator_scope = false;  // eval.correctness.secret_scope: one secret per evaluator, not per evaluation
  std::uint64_t secret = 0;
  std::optional<eval::EvaluationRun> run;
  std::optional<Judgement> no_device;  // why the run stages cannot run here
  bool needs_run = false;              // run stages were asked for and can run
  std::future<std::optional<Judgement>> references;
  BuildOutcome build;
  bool profile_by_timing = false;
  std::future<eval::ProfileOutcome> early_profile;
  std::optional<eval::ProfileOutcome> profiled;  // the early profile, once correctness has finished
  std::optional<eval::TimingRun> timing_run;
  std::optional<Judgement> noisy;           // the timing's NOISY verdict, which does not stop the profile
  std::optional<eval::VendorBuild> vendor;  // the task's vendor baseline, built beside the candidate
};

// What a step leaves the evaluation to do.
enum class Flow { next, finish };
using Step = Flow (*)(Evaluation&);

std::optional<Judgement> wait_references(Evaluation& evaluation) {
  if (!evaluation.references.valid()) return std::nullopt;
  try {
    return evaluation.references.get();
  } catch (const std::exception& error) {
    return Judgement{Verdict::infra_error, std::string("reference computation: ") + error.what(),
                     nlohmann::json::object()};
  }
}

Flow check_params(Evaluation& evaluation) {
  const std::optional<std::string> error = param_error(evaluation.task, evaluation.candidate.params);
  if (!error) return Flow::next;
  conclude(evaluation.result,
           {Verdict::static_reject, "invalid params: " + *error, {{"params", to_json(evaluation.candidate.params)}}});
  record_stage(evaluation.result, "static", StageStatus::failed, seconds_since(evaluation.start), *error);
  return Flow::finish;
}

// The compiler and the harness name the result in the cache, beside the task, the candidate and the settings.
Flow identify_toolchain(Evaluation& evaluation) {
  EvalResult& result = evaluation.result;
  try {
    result.compiler = evaluation.backend->toolchain_identity();
    result.harness_version = evaluation.backend->harness_version();
  } catch (const Error& error) {
    conclude(result, {Verdict::infra_error, error.what(), nlohmann::json::object()});
    return Flow::finish;
  }
  evaluation.cache_key =
      sha256_hex("result-v1\n" + evaluation.task.content_hash + "\n" + result.candidate_hash + "\n" +
                 stages_text(result.stages_requested) + "\n" + result.compiler + "\n" + result.harness_version + "\n" +
                 nlohmann::json(evaluation.shared.settings).dump() + "\n" + result.sandbox);
  return Flow::next;
}

Flow serve_cached_result(Evaluation& evaluation) {
  if (evaluation.options.result_cache != CachePolicy::use) return Flow::next;
  std::optional<EvalResult> cached = evaluation.results.get(*evaluation.cache_key);
  if (!cached) return Flow::next;
  evaluation.result = std::move(*cached);
  evaluation.result.result_cache_hit = true;
  return Flow::finish;
}

Flow prepare_run(Evaluation& evaluation) {
  eval::EvaluatorShared& shared = evaluation.shared;
  const EvalSettings& settings = shared.settings;
  evaluation.scratch.emplace(eval::unique_sibling(shared.cache_dir / "scratch" / "eval"), settings.keep_scratch);
  const fs::path& scratch = evaluation.scratch->path();
  evaluation.evaluator_scope = settings.correctness.secret_scope == SecretScope::evaluator;
  evaluation.secret = evaluation.evaluator_scope ? shared.evaluator_secret : eval::fresh_secret();
  eval::EvaluationRun& run = evaluation.run.emplace(eval::EvaluationRun{
      shared, *evaluation.backend, evaluation.task, evaluation.sandbox, scratch, {}, {}, {}, {}, 0, true});
  run.reference_dir = evaluation.evaluator_scope
                          ? shared.cache_dir / "references" / evaluation.task.content_hash.substr(0, 24)
                          : scratch / "references";
  const bool wants_run =
      evaluation.wants(Stage::correctness) || evaluation.wants(Stage::timing) || evaluation.wants(Stage::profile);
  // Without a usable device the build still runs (it needs none), and the evaluation then says why it stopped.
  evaluation.no_device = wants_run ? eval::device_unavailable(run) : std::nullopt;
  evaluation.needs_run = wants_run && !evaluation.no_device;
  // The reference outputs do not depend on the candidate, so they are computed while it builds.
  if (evaluation.needs_run)
    evaluation.references = std::async(
        std::launch::async, [&run, secret = evaluation.secret] { return eval::prepare_references(run, secret); });
  return Flow::next;
}

void record_build(EvalResult& result, const BuildOutcome& build) {
  result.build_log = build.log;
  result.build_report = build.report;
  result.static_warnings = build.warnings;
  result.build_cache_hit = build.cache_hit;
  result.build_s = build.cache_hit ? 0.0 : build.wall_s;
  const bool static_failed = build.status == BuildStatus::static_reject;
  // A cached build reports the lookup as its time; its static checks ran when it was built.
  const double static_s = build.cache_hit ? 0.0 : build.static_s;
  const double build_only_s = build.cache_hit ? build.wall_s : std::max(0.0, build.wall_s - build.static_s);
  const StageStatus unless_failed = build.cache_hit ? StageStatus::cached : StageStatus::passed;
  record_stage(result, "static", static_failed ? StageStatus::failed : unless_failed, static_s,
               static_failed ? build.reason : "");
  if (static_failed) return;
  if (build.status != BuildStatus::ok)
    record_stage(result, "build", StageStatus::failed, build_only_s, build.reason);
  else
    record_stage(result, "build", unless_failed, build_only_s);
}

Flow build_candidate(Evaluation& evaluation) {
  eval::BuildRequest request;
  request.task = &evaluation.task;
  request.files = evaluation.files;
  request.params = evaluation.result.params;
  const BuildOutcome& build = evaluation.build = evaluation.backend->build(request, evaluation.sandbox);
  record_build(evaluation.result, build);
  if (build.status != BuildStatus::ok) {
    conclude(evaluation.result, {build_verdict(build.status), build.reason, build.evidence});
    wait_references(evaluation);
    return Flow::finish;
  }
  evaluation.result.verdict = Verdict::pass;
  evaluation.result.adopted_constraints = build.adopted_constraints;
  evaluation.run->build_report = build.report;
  return Flow::next;
}

// The task's vendor baseline is built with every candidate (a cached build after the first), so that a machine
// without a GPU still shows that it builds for each arch. Its outcome never decides the candidate's verdict.
Flow build_vendor(Evaluation& evaluation) {
  if (evaluation.task.vendor.kind.empty()) return Flow::next;
  const auto start = Clock::now();
  const eval::VendorBuild& vendor = evaluation.vendor.emplace(eval::build_vendor(*evaluation.run));
  evaluation.result.vendor = vendor.comparison;
  const bool built = vendor.comparison.status == "built";
  const bool failed = !built && vendor.build.status != BuildStatus::infra_error;  // it was compiled and failed
  const StageStatus status = built ? (vendor.build.cache_hit ? StageStatus::cached : StageStatus::passed)
                                   : (failed ? StageStatus::failed : StageStatus::skipped);
  record_stage(evaluation.result, "vendor", status, seconds_since(start), vendor.comparison.detail);
  return Flow::next;
}

Flow skip_without_device(Evaluation& evaluation) {
  if (!evaluation.no_device) return Flow::next;
  EvalResult& result = evaluation.result;
  for (Stage stage : result.stages_requested) {
    if (stage == Stage::static_checks || stage == Stage::build) continue;
    if (stage == Stage::profile && evaluation.task.target == Target::cuda) {
      // What the build learned still helps an agent: registers, spills, tensor-core and TMA instruction counts.
      result.profile = eval::static_cuda_profile(evaluation.build.report, "no GPU: static profile from the build");
      record_stage(result, "profile", StageStatus::static_profile, 0, "from ptxas and the PTX/SASS scan");
      continue;
    }
    record_stage(result, to_string(stage), StageStatus::skipped, 0, evaluation.no_device->reason);
  }
  conclude(result, *evaluation.no_device);
  return Flow::finish;
}

Flow await_references(Evaluation& evaluation) {
  if (!evaluation.needs_run) return Flow::next;
  EvalResult& result = evaluation.result;
  const std::optional<Judgement> failure = wait_references(evaluation);
  const StageStatus unless_failed = evaluation.run->references_cached ? StageStatus::cached : StageStatus::passed;
  record_stage(result, "reference", failure ? StageStatus::failed : unless_failed, evaluation.run->reference_s,
               failure ? failure->reason : "");
  if (failure) {
    conclude(result, *failure);
    return Flow::finish;
  }
  result.protocol = evaluation.run->battery.describe();
  result.protocol["secret_scope"] = evaluation.evaluator_scope ? "evaluator" : "evaluation";
  result.protocol["timing"] = evaluation.shared.settings.timing;
  return Flow::next;
}

// On the host, with a core to spare, the timing harness starts now and prepares its input sets beside
// correctness; it times nothing until correctness has passed (eval/timing_run.hpp). A profile that needs a
// run of its own (perf with hardware counters) runs beside correctness too; its result counts only once the
// gates before it passed, and it is finished before timing starts. Otherwise the timing samples give it.
Flow start_beside_correctness(Evaluation& evaluation) {
  const bool needs_run = evaluation.needs_run;
  const bool spare_core = needs_run && evaluation.task.target == Target::host && evaluation.wants(Stage::correctness) &&
                          std::thread::hardware_concurrency() >= 2;
  evaluation.profile_by_timing = needs_run && evaluation.wants(Stage::profile) && evaluation.wants(Stage::timing) &&
                                 !eval::profile_needs_own_run(*evaluation.run);
  const fs::path& library = evaluation.build.library;
  if (spare_core && evaluation.wants(Stage::profile) && !evaluation.profile_by_timing)
    evaluation.early_profile = eval::start_profile(*evaluation.run, library);
  if (spare_core && evaluation.wants(Stage::timing)) evaluation.timing_run.emplace(*evaluation.run, library, true);
  return Flow::next;
}

std::optional<Judgement> check_with_sanitizer(Evaluation& evaluation) {
  const auto start = Clock::now();
  nlohmann::json sanitizer;
  std::optional<Judgement> failure = eval::run_cuda_sanitizer(*evaluation.run, evaluation.build.library, &sanitizer);
  evaluation.result.protocol["sanitizer"] = sanitizer;
  const StageStatus unless_failed = sanitizer.contains("skipped") ? StageStatus::skipped : StageStatus::passed;
  record_stage(evaluation.result, "sanitizer", failure ? StageStatus::failed : unless_failed, seconds_since(start),
               failure ? failure->reason : sanitizer.value("skipped", ""));
  return failure;
}

Flow check_correctness(Evaluation& evaluation) {
  if (!evaluation.wants(Stage::correctness)) return Flow::next;
  const auto start = Clock::now();
  std::optional<Judgement> failure = eval::run_correctness(*evaluation.run, evaluation.build.library);
  record_stage(evaluation.result, "correctness", passed_or_failed(failure), seconds_since(start),
               failure ? failure->reason : "");
  if (!failure && evaluation.task.target == Target::cuda) failure = check_with_sanitizer(evaluation);
  if (evaluation.early_profile.valid()) evaluation.profiled = evaluation.early_profile.get();
  if (!failure) return Flow::next;
  conclude(evaluation.result, *failure);
  return Flow::finish;
}

// Geometric means over the workloads.
void summarise_speedups(EvalResult& result) {
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
}

std::optional<Judgement> judge_timing(Evaluation& evaluation, bool capped) {
  summarise_speedups(evaluation.result);
  std::optional<Judgement> failure =
      eval::check_timing_gates(*evaluation.run, evaluation.result, capped, evaluation.build.library);
  // NOISY is a verdict about the measurement, not a failed gate: the profile still runs.
  if (failure && failure->verdict == Verdict::noisy) {
    evaluation.noisy = failure;
    failure.reset();
  }
  return failure;
}

Flow time_candidate(Evaluation& evaluation) {
  if (!evaluation.wants(Stage::timing)) return Flow::next;
  const auto start = Clock::now();
  EvalResult& result = evaluation.result;
  if (evaluation.timing_run)
    evaluation.timing_run->release();
  else
    evaluation.timing_run.emplace(*evaluation.run, evaluation.build.library, false);
  const eval::TimingResult timing = evaluation.timing_run->get();
  std::optional<Judgement> failure = timing.failure;
  result.workloads = timing.outcome.workloads;
  result.timed_s = timing.outcome.timed_s;
  if (!failure && !result.workloads.empty()) failure = judge_timing(evaluation, timing.outcome.capped);
  record_stage(result, "timing", passed_or_failed(failure), seconds_since(start),
               failure ? failure->reason : "lock wait " + fixed(timing.lock_wait_s, 3) + " s");
  result.stages.back().lock_wait_s = timing.lock_wait_s;
  if (!failure) return Flow::next;
  conclude(result, *failure);
  // A speedup is only worth reporting for outputs that were verified.
  if (!outputs_verified(result.verdict)) {
    result.speedup.reset();
    result.speedup_low.reset();
    result.speedup_high.reset();
  }
  return Flow::finish;
}

// The candidate's speed as a fraction of the vendor's, on the workloads just timed.
Flow compare_with_vendor(Evaluation& evaluation) {
  if (!evaluation.vendor || !evaluation.wants(Stage::timing) || evaluation.result.workloads.empty()) return Flow::next;
  const auto start = Clock::now();
  eval::measure_vendor(*evaluation.run, *evaluation.vendor, evaluation.result);
  const VendorComparison& vendor = *evaluation.result.vendor;
  const StageStatus status = vendor.status == "measured" ? StageStatus::passed : StageStatus::failed;
  record_stage(evaluation.result, "vendor_timing", status, seconds_since(start), vendor.detail);
  return Flow::next;
}

// The profile from beside correctness, from the timing samples, or from a run of its own.
eval::ProfileOutcome take_profile(Evaluation& evaluation) {
  if (evaluation.profiled) {
    eval::ProfileOutcome outcome = *evaluation.profiled;
    outcome.profile["beside"] = "correctness";
    return outcome;
  }
  const auto start = Clock::now();
  eval::ProfileOutcome outcome;
  if (evaluation.profile_by_timing)
    outcome.failure = eval::profile_from_timing(*evaluation.run, evaluation.result.workloads, &outcome.profile);
  else
    outcome.failure = eval::run_profile(*evaluation.run, evaluation.build.library, &outcome.profile);
  outcome.wall_s = seconds_since(start);
  return outcome;
}

Flow profile_candidate(Evaluation& evaluation) {
  if (!evaluation.wants(Stage::profile)) return Flow::next;
  const eval::ProfileOutcome outcome = take_profile(evaluation);
  const std::optional<Judgement>& failure = outcome.failure;
  record_stage(evaluation.result, "profile", passed_or_failed(failure), outcome.wall_s, failure ? failure->reason : "");
  if (failure) {
    conclude(evaluation.result, *failure);
    return Flow::finish;
  }
  evaluation.result.profile = outcome.profile;
  return Flow::next;
}

Flow conclude_noisy_timing(Evaluation& evaluation) {
  if (evaluation.noisy) conclude(evaluation.result, *evaluation.noisy);
  return Flow::finish;
}

// The pipeline, in order; each step returns early when its stage was not asked for.
constexpr Step k_steps[] = {check_params,        identify_toolchain,   serve_cached_result,
                            prepare_run,         build_candidate,      build_vendor,
                            skip_without_device, await_references,     start_beside_correctness,
                            check_correctness,   time_candidate,       compare_with_vendor,
                            profile_candidate,   conclude_noisy_timing};

// A result is stored when it says something about the candidate: not the evaluator's own failure (which may not
// recur), not a result the cache just served, and only once its key (the toolchain) is known.
bool worth_storing(const Evaluation& evaluation) {
  return evaluation.cache_key && !evaluation.result.result_cache_hit &&
         evaluation.options.result_cache != CachePolicy::bypass && !is_infra(evaluation.result.verdict);
}

// The one way out of an evaluation, whichever step ended it.
EvalResult finish(Evaluation& evaluation) {
  // Only a candidate that ran can have broken the GPU (a cached result ran in an earlier evaluation).
  if (evaluation.run) check_gpu_after_fault(*evaluation.run, evaluation.result);
  if (worth_storing(evaluation)) evaluation.results.put(*evaluation.cache_key, evaluation.result);
  evaluation.result.wall_s = seconds_since(evaluation.start);
  return std::move(evaluation.result);
}

}  // namespace

std::optional<std::string> run_stages_unavailable(const Task& task, const EvalSettings& settings) {
  if (task.target != Target::cuda) return std::nullopt;
  if (settings.cuda.run == CudaRun::off) return "eval.cuda.run is off";
  if (eval::gpu_device_nodes().empty()) return "no CUDA device on this machine";
  if (const int gpus = eval::visible_gpu_count(); task.min_devices > 1 && gpus < task.min_devices)
    return "task " + task.name + " needs " + std::to_string(task.min_devices) + " GPUs; this machine has " +
           std::to_string(gpus);
  return std::nullopt;
}

Evaluator::Evaluator(const EvalSettings& settings, ProcessRunner& runner, const std::filesystem::path& cache_dir)
    // Absolute: builds and harnesses run in directories of their own, and the sandbox binds paths as given.
    : m_impl(std::make_unique<Impl>(settings, runner, std::filesystem::absolute(cache_dir))) {
  evoteam::create_directories(m_impl->shared.cache_dir);
}

Evaluator::~Evaluator() = default;

const std::filesystem::path& Evaluator::cache_dir() const { return m_impl->shared.cache_dir; }

OracleReport Evaluator::check_oracle(const Task& task) { return eval::run_oracle(m_impl->shared, task); }

SandboxMode Evaluator::resolve_sandbox(SandboxMode requested) {
  if (requested == SandboxMode::none) return SandboxMode::none;
  eval::EvaluatorShared& shared = m_impl->shared;
  std::call_once(shared.sandbox_probe,
                 [&shared] { shared.bwrap_usable = eval::probe_bwrap(shared.runner, &shared.bwrap_problem); });
  if (shared.bwrap_usable) return SandboxMode::bwrap;
  if (requested == SandboxMode::bwrap)
    throw Error("--sandbox bwrap: bubblewrap does not work here: " + shared.bwrap_problem);
  return SandboxMode::none;
}

EvalResult Evaluator::evaluate(const Task& task, const Candidate& candidate, const EvalOptions& options) {
  eval::EvaluatorShared& shared = m_impl->shared;
  Evaluation evaluation(shared, m_impl->results, task, candidate, options);
  EvalResult& result = evaluation.result;
  result.task = task.name;
  result.target = to_string(task.target);
  result.baseline = baseline_description(task);
  result.stages_requested = requested_stages(shared.settings, options);
  evaluation.sandbox = resolve_sandbox(options.sandbox.value_or(shared.settings.sandbox));
  result.sandbox = to_string(evaluation.sandbox);
  evaluation.files = candidate_files(task, candidate);
  result.params = complete_params(task, candidate.params);
  result.candidate_hash = candidate_hash(evaluation.files, result.params);
  evaluation.backend = task.target == Target::cuda ? static_cast<eval::TargetBackend*>(&shared.cuda) : &shared.host;
  result.device = evaluation.backend->device();
  for (Step step : k_steps)
    if (step(evaluation) == Flow::finish) break;
  return finish(evaluation);
}

}  // namespace evoteam
