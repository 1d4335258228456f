#pragma once
// The "eval" section of the configuration as typed values, one struct per sub-section (configs/default.json
// explains every key). eval_settings() is the only reader of "eval.*" keys: the evaluator and its parts take
// these structs, each part the narrowest one it needs. Core checks ranges and closed sets when the configuration
// loads, so the values here are valid. The JSON conversions give back the section's own keys and spellings,
// for result records and cache keys.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace evoteam {

class Config;

enum class Stage { static_checks, build, correctness, timing, profile };
// "static", "build", "correctness", "timing", "profile".
std::string to_string(Stage stage);
std::optional<Stage> parse_stage(const std::string& text);
// "static,build,correctness" -> stages in pipeline order; throws InvalidInput naming `where` on an unknown name.
std::vector<Stage> parse_stage_list(const std::string& list, const std::string& where);

enum class SandboxMode { automatic, bwrap, none };
std::string to_string(SandboxMode mode);  // "auto", "bwrap", "none"
std::optional<SandboxMode> parse_sandbox_mode(const std::string& text);

// eval.cuda.run: "auto" lets correctness and timing run where a GPU answers the probe; "off" stops after the build.
enum class CudaRun { automatic, off };
// eval.correctness.secret_scope: a fresh seed salt per evaluation, or one per Evaluator.
enum class SecretScope { evaluation, evaluator };
// eval.timing.clock: what a host timing sample measures.
enum class TimingClock { thread_cpu, wall };
// eval.profile.perf: "auto" profiles under perf stat where perf counts hardware events; "off" never does.
enum class PerfMode { automatic, off };

// eval.stages: each phase's wall-clock deadline.
struct StageTimeout {
  double timeout_s = 0;
};
struct TimingStageTimeouts {
  double timeout_s = 0;
  double lock_timeout_s = 0;  // the wait for the device's timing lock
};
struct StageTimeouts {
  StageTimeout static_checks;  // "static"
  StageTimeout build;
  StageTimeout reference;
  StageTimeout correctness;
  TimingStageTimeouts timing;
  StageTimeout profile;
};

struct HostSettings {
  std::string compiler;                    // looked up in PATH
  std::vector<std::string> flags;          // every implementation's
  std::vector<std::string> harness_flags;  // the trusted harness's
  int compile_jobs = 0;                    // 0: one per CPU core
  std::uint64_t max_address_space_mb = 0;  // 0: unlimited
  double harness_build_timeout_s = 0;      // one compile of the trusted harness or the peaks probe

  std::uint64_t max_address_space_bytes() const { return max_address_space_mb << 20; }
};

struct CudaSettings {
  std::vector<std::string> flags;
  std::vector<std::string> harness_flags;
  std::vector<std::string> allowed_host_symbols;  // '*' globs, beyond the built-in allowlist
  CudaRun run = CudaRun::automatic;
  double peak_gflops = 0;  // both 0: measured per GPU
  double peak_gbytes_per_s = 0;
  std::vector<std::string> sanitizer_tools;  // empty: no compute-sanitizer
  std::string flashinfer;  // FlashInfer's sources for vendor baselines; empty: found (eval/vendor_baseline.hpp)
  double harness_build_timeout_s = 0;  // one nvcc compile of the trusted CUDA harness
};

// eval.static: the host candidate's static checks.
struct StaticCheckSettings {
  std::vector<std::string> allowed_symbols;  // '*' globs
  std::vector<std::string> forbidden_instructions;
  bool forbid_writable_data = true;
};

// One entry of eval.libraries: what a task that allows the library by name may reference and links with.
struct LibrarySettings {
  std::string name;
  std::vector<std::string> symbols;  // '*' globs
  std::vector<std::string> link;     // link flags
};

struct CorrectnessSettings {
  int seeds = 0;
  std::vector<std::string> distributions;
  SecretScope secret_scope = SecretScope::evaluation;
  std::vector<std::int64_t> edge_values;
  std::int64_t edge_base = 0;
  std::int64_t guard_bytes = 0;
  bool determinism = true;
  double call_deadline_factor = 0;
  double call_deadline_min_s = 0;
};

struct TimingSettings {
  double warmup_s = 0;
  int min_samples = 0;
  double min_time_s = 0;
  double max_noise = 0;
  int noise_window = 0;
  double noise_stability = 0;
  double max_time_s = 0;
  double min_sample_s = 0;
  TimingClock clock = TimingClock::thread_cpu;
  int rotation_min_sets = 0;
  double rotation_llc_factor = 0;
  std::int64_t rotation_max_bytes = 0;
  int rotation_max_sets = 0;
  int fresh_probes = 0;
  double fresh_ratio = 0;
  int bootstrap_resamples = 0;
  double side_work_fraction = 0;
  double impossible_fraction = 0;
  double suspicious_speedup = 0;
};

struct ProfileSettings {
  PerfMode perf = PerfMode::automatic;
  std::vector<std::string> events;  // perf events
  double time_s = 0;
};

// eval.machine: the host's peaks; both 0: measured once per machine.
struct MachineSettings {
  double peak_gflops = 0;
  double peak_gbytes_per_s = 0;
};

// eval.oracle: the Python that runs a task's python_reference, and that run's deadline.
struct OracleSettings {
  std::string python;
  double timeout_s = 0;
};

// A default-constructed EvalSettings holds zeros; the defaults are configs/default.json's: eval_settings(Config()).
struct EvalSettings {
  std::vector<Stage> pipeline;  // in pipeline order
  SandboxMode sandbox = SandboxMode::automatic;
  std::string cache_dir;        // "": default_cache_dir() decides
  std::string build_cache_dir;  // "": cache_dir holds the builds too
  std::string lock_dir;
  bool keep_scratch = false;
  bool reuse_results = true;  // false: every evaluation of a run measures afresh (refreshing the cached result)
  StageTimeouts stages;
  HostSettings host;
  CudaSettings cuda;
  StaticCheckSettings static_checks;  // "static"
  std::vector<LibrarySettings> libraries;
  CorrectnessSettings correctness;
  TimingSettings timing;
  ProfileSettings profile;
  MachineSettings machine;
  OracleSettings oracle;
  // Not configured: the device a pool of evaluators gives this one (cluster/device_pool). For CUDA, the entry
  // of CUDA_VISIBLE_DEVICES its harnesses see (an index or a GPU UUID); for the host target, a lane of a
  // simulated pool. "": the machine's default device ("cuda:0", "host").
  std::string device;
};

// The configuration's "eval" section, typed.
EvalSettings eval_settings(const Config& config);

// JSON conversions, found by nlohmann::json through argument-dependent lookup: the section's keys and spellings.
// A name outside a closed set is a bug by the time it is read here (loading the configuration refuses it).
void to_json(nlohmann::json& out, Stage stage);
void from_json(const nlohmann::json& in, Stage& stage);
void to_json(nlohmann::json& out, SandboxMode mode);
void from_json(const nlohmann::json& in, SandboxMode& mode);
void to_json(nlohmann::json& out, CudaRun run);
void from_json(const nlohmann::json& in, CudaRun& run);
void to_json(nlohmann::json& out, SecretScope scope);
void from_json(const nlohmann::json& in, SecretScope& scope);
void to_json(nlohmann::json& out, TimingClock clock);
void from_json(const nlohmann::json& in, TimingClock& clock);
void to_json(nlohmann::json& out, PerfMode perf);
void from_json(const nlohmann::json& in, PerfMode& perf);

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(StageTimeout, timeout_s)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(TimingStageTimeouts, timeout_s, lock_timeout_s)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(HostSettings, compiler, flags, harness_flags, compile_jobs, max_address_space_mb,
                                   harness_build_timeout_s)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CudaSettings, flags, harness_flags, allowed_host_symbols, run, peak_gflops,
                                   peak_gbytes_per_s, sanitizer_tools, flashinfer, harness_build_timeout_s)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(StaticCheckSettings, allowed_symbols, forbidden_instructions, forbid_writable_data)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CorrectnessSettings, seeds, distributions, secret_scope, edge_values, edge_base,
                                   guard_bytes, determinism, call_deadline_factor, call_deadline_min_s)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(TimingSettings, warmup_s, min_samples, min_time_s, max_noise, noise_window,
                                   noise_stability, max_time_s, min_sample_s, clock, rotation_min_sets,
                                   rotation_llc_factor, rotation_max_bytes, rotation_max_sets, fresh_probes,
                                   fresh_ratio, bootstrap_resamples, side_work_fraction, impossible_fraction,
                                   suspicious_speedup)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ProfileSettings, perf, events, time_s)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(MachineSettings, peak_gflops, peak_gbytes_per_s)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(OracleSettings, python, timeout_s)

// By hand where a key is a C++ keyword ("static") or may be left out (a library's "symbols" and "link").
void to_json(nlohmann::json& out, const StageTimeouts& stages);
void from_json(const nlohmann::json& in, StageTimeouts& stages);
void to_json(nlohmann::json& out, const LibrarySettings& library);
void from_json(const nlohmann::json& in, LibrarySettings& library);
void to_json(nlohmann::json& out, const EvalSettings& settings);
void from_json(const nlohmann::json& in, EvalSettings& settings);

}  // namespace evoteam
