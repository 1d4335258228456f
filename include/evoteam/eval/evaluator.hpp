#pragma once
// The evaluator: static checks -> build -> correctness -> timing -> profile for one candidate of one task,
// ending in a typed verdict with evidence (the protocol: kernels/README.md and the evaluator reference).
// Every phase that runs candidate code is a fresh harness process with a deadline, optionally inside
// bubblewrap; the verdict comes from the harness's record channel, never from the candidate's output.
// Evaluator::evaluate is safe to call from several threads: builds run in parallel (bounded by the cores),
// timing holds a per-device lock file that other evoteam processes respect too.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <evoteam/core/process.hpp>
#include <evoteam/eval/eval_settings.hpp>
#include <evoteam/eval/measurement.hpp>
#include <evoteam/eval/oracle.hpp>
#include <evoteam/eval/verdict.hpp>
#include <evoteam/task/task.hpp>

namespace evoteam {

// use: serve a cached result for an identical evaluation and store new ones; refresh: always evaluate, then
// store; bypass: neither read nor write the result cache. (Builds are always cached.)
enum class CachePolicy { use, refresh, bypass };

struct EvalOptions {
  // Stages to run, in pipeline order; empty means the settings' pipeline (eval.pipeline). Typical selections:
  // {static, build} for a compile check, + correctness for tests, + timing for a benchmark, + profile.
  std::vector<Stage> stages;
  std::optional<SandboxMode> sandbox;  // empty: the settings' sandbox (eval.sandbox)
  CachePolicy result_cache = CachePolicy::use;

  // Every stage of the canonical order (static, build, correctness, timing, profile) up to and including `last`.
  static EvalOptions through(Stage last);
};

// What to evaluate: a directory with (some of) the task's kernel files, plus param values. Kernel files the
// directory lacks come from the task's starting kernel; other files in it are ignored. Missing params take
// their defaults.
struct Candidate {
  std::filesystem::path source_dir;
  ParamAssignment params;

  // The task's own starting kernel at its default params.
  static Candidate starting(const Task& task);
};

// Statistics of one side's timing samples (seconds per call).
struct SampleStats {
  int samples = 0;
  double median_s = 0;
  double mean_s = 0;
  double min_s = 0;
  double p10_s = 0;
  double p90_s = 0;
  double relstdev = 0;
  double sem_s = 0;
  nlohmann::json to_json() const;
};

// The task's vendor library (FlashInfer) on one workload, timed against the same baseline as the candidate:
// its latency, its speedup over that baseline, and the candidate's speed as a fraction of the vendor's (the
// ratio of the two speedups; > 1: the candidate is faster).
struct VendorWorkload {
  double median_s = 0;
  double speedup = 0;
  double fraction = 0;
};

struct WorkloadResult {
  std::string name;
  std::map<std::string, std::int64_t> axes;
  SampleStats candidate;
  SampleStats baseline;
  double speedup = 0;      // baseline median / candidate median
  double speedup_low = 0;  // 95% bootstrap interval
  double speedup_high = 0;
  std::optional<double> roofline_fraction;  // max(FLOP/s / peak FLOP/s, B/s / peak B/s)
  double gflops = 0;
  double gbytes_per_s = 0;
  std::string stop;  // converged | noise_stable | cap
  int batch = 1;     // calls per sample (candidate)
  int rotation_sets = 0;
  std::uint64_t rotation_bytes = 0;
  // Where the timing harness spent this workload's time: input and buffer setup, warm-up, the measured samples
  // (calls plus their rechecks) and the whole measurement; timed_s is the measured calls alone. setup_ahead_s:
  // the part of setup_s that ran beside correctness, before the timing run was released.
  double setup_s = 0, warmup_s = 0, measured_s = 0, elapsed_s = 0, timed_s = 0, setup_ahead_s = 0;
  std::optional<VendorWorkload> vendor;  // when the task has a vendor baseline that was measured
  nlohmann::json to_json() const;
};

// What became of the task's vendor baseline in one evaluation. status: "built" (its build for every arch it
// has a kernel for passed; timing needs a GPU or was not asked for), "measured" (workloads carry its figures),
// "unavailable" (no kernel for the task, sources not installed, or its build or timing failed: detail says).
struct VendorComparison {
  std::string name;     // "flashinfer"
  std::string version;  // of the sources built, when known
  std::string status;
  std::string detail;
  std::vector<std::string> archs;                    // built for
  std::map<std::string, std::string> missing_archs;  // arch -> why the vendor has no kernel for it
  std::optional<double> fraction;                    // geometric mean of the workloads' fractions
  nlohmann::json to_json() const;
  static VendorComparison from_json(const nlohmann::json& value);
};

// What became of one stage. static_profile: a CUDA profile taken from the build, without a GPU.
enum class StageStatus { passed, failed, skipped, cached, static_profile };
// eval.json's spelling: "passed", "failed", "skipped", "cached", "static".
std::string to_string(StageStatus status);
std::optional<StageStatus> parse_stage_status(const std::string& text);

struct StageRecord {
  std::string name;  // a Stage name, or the name of a step around one ("reference", "vendor", "sanitizer", ...)
  StageStatus status = StageStatus::passed;
  double wall_s = 0;
  std::string detail;
  // Of wall_s, the time spent waiting for the device's timing lock (another evaluation held the device): never
  // device time.
  double lock_wait_s = 0;

  // The pipeline stage it records; nullopt for the steps around the stages.
  std::optional<Stage> stage() const { return parse_stage(name); }
};

struct EvalResult {
  Verdict verdict = Verdict::infra_error;
  std::string reason;  // the verdict's detail: "SIGSEGV", "forbidden symbol fopen (file I/O)", ...
  nlohmann::json evidence = nlohmann::json::object();  // workload, seed, distribution, first bad index, norms
  std::string task;
  std::string target;
  std::string device;          // "host", later "cuda:<uuid>"
  std::string candidate_hash;  // sha256 over the candidate's files and params
  ParamAssignment params;
  std::string baseline;  // what speedups are relative to
  std::vector<Stage> stages_requested;
  std::vector<StageRecord> stages;
  std::vector<WorkloadResult> workloads;
  std::optional<double> speedup;  // geometric mean over workloads
  std::optional<double> speedup_low;
  std::optional<double> speedup_high;
  std::optional<double> roofline_fraction;  // geometric mean over workloads
  std::optional<VendorComparison> vendor;   // when the task has a vendor baseline
  std::string build_log;
  nlohmann::json build_report = nlohmann::json::object();  // resource report of the build
  std::vector<std::string> static_warnings;
  // The task's once-adopted static constraints the candidate meets, by name; absent when its build did not get
  // through the static stage (then nothing is known either way).
  std::optional<std::vector<std::string>> adopted_constraints;
  nlohmann::json profile;                              // null unless the profile stage ran
  nlohmann::json protocol = nlohmann::json::object();  // seeds, distributions, trials, hidden shapes, settings
  std::string sandbox;                                 // "bwrap" or "none"
  bool result_cache_hit = false;
  bool build_cache_hit = false;
  double wall_s = 0;   // this call
  double build_s = 0;  // compiling and linking the candidate
  double timed_s = 0;  // accumulated timed work of both sides
  std::string harness_version;
  std::string compiler;

  bool passed() const { return verdict == Verdict::pass; }
  nlohmann::json to_json() const;  // the content of candidates/<cid>/eval.json
  static EvalResult from_json(const nlohmann::json& value);
};

// The part of the result the team and the run's record read (eval/measurement.hpp), taken once, here.
Measurement measurement_of(const EvalResult& result);

// Why this machine cannot run the task's correctness and timing stages (a CUDA task without a GPU, with
// eval.cuda.run off, or needing more GPUs (min_devices) than the machine has), or nullopt when it can. Cheap: looks at
// device nodes and the settings only; the evaluator still probes the GPU before trusting it.
std::optional<std::string> run_stages_unavailable(const Task& task, const EvalSettings& settings);

class Evaluator {
 public:
  // `cache_dir` holds build outputs, cached results and measured machine peaks; created when missing.
  Evaluator(const EvalSettings& settings, ProcessRunner& runner, const std::filesystem::path& cache_dir);
  ~Evaluator();
  Evaluator(const Evaluator&) = delete;
  Evaluator& operator=(const Evaluator&) = delete;

  // Never throws for what the candidate does; throws InvalidInput only when the call itself is wrong (a
  // candidate directory that does not exist).
  EvalResult evaluate(const Task& task, const Candidate& candidate, const EvalOptions& options = {});

  // Runs the task's python_reference on the correctness inputs and compares it with the C++/CUDA reference
  // (eval/oracle.hpp). Throws InvalidInput when the task has no python_reference; everything else is in the report.
  OracleReport check_oracle(const Task& task);

  // "auto" resolved: bwrap when it works here (probed once), else none.
  SandboxMode resolve_sandbox(SandboxMode requested);
  const std::filesystem::path& cache_dir() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

// eval.cache_dir when set, else $XDG_CACHE_HOME/evoteam, else $HOME/.cache/evoteam, else /tmp/evoteam-cache.
std::filesystem::path default_cache_dir(const EvalSettings& settings);

}  // namespace evoteam
