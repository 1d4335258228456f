// The one reader of the configuration's "eval" section, and the section's JSON form.
#include <evoteam/eval/eval_settings.hpp>

#include <evoteam/core/config.hpp>
#include <evoteam/core/error.hpp>

#include <algorithm>
#include <iterator>
#include <utility>

namespace evoteam {
namespace {

// An enum value and its spelling in the configuration.
template <typename Enum>
using NamedValue = std::pair<Enum, const char*>;

constexpr NamedValue<CudaRun> k_cuda_run_names[] = {{CudaRun::automatic, "auto"}, {CudaRun::off, "off"}};
constexpr NamedValue<SecretScope> k_secret_scope_names[] = {{SecretScope::evaluation, "evaluation"},
                                                            {SecretScope::evaluator, "evaluator"}};
constexpr NamedValue<TimingClock> k_timing_clock_names[] = {{TimingClock::thread_cpu, "thread_cpu"},
                                                            {TimingClock::wall, "wall"}};
constexpr NamedValue<PerfMode> k_perf_mode_names[] = {{PerfMode::automatic, "auto"}, {PerfMode::off, "off"}};

// Loading the configuration refuses a name outside its closed set, so one that reaches the reader is a bug.
std::string unknown_name(const nlohmann::json& in) {
  return "eval settings: " + in.dump() + " passed the configuration checks but names nothing";
}

template <typename Enum, std::size_t N>
const char* name_of(Enum value, const NamedValue<Enum> (&names)[N]) {
  const auto* found =
      std::find_if(std::begin(names), std::end(names), [value](const auto& entry) { return entry.first == value; });
  EVOTEAM_CHECK(found != std::end(names), "an enum value without a configuration name");
  return found->second;
}

template <typename Enum, std::size_t N>
Enum named(const nlohmann::json& in, const NamedValue<Enum> (&names)[N]) {
  const auto* found =
      std::find_if(std::begin(names), std::end(names), [&in](const auto& entry) { return in == entry.second; });
  EVOTEAM_CHECK(found != std::end(names), unknown_name(in));
  return found->first;
}

}  // namespace

EvalSettings eval_settings(const Config& config) { return config.at("eval").get<EvalSettings>(); }

void to_json(nlohmann::json& out, Stage stage) { out = to_string(stage); }

void from_json(const nlohmann::json& in, Stage& stage) {
  const std::optional<Stage> parsed = parse_stage(in.get<std::string>());
  EVOTEAM_CHECK(parsed, unknown_name(in));
  stage = *parsed;
}

void to_json(nlohmann::json& out, SandboxMode mode) { out = to_string(mode); }

void from_json(const nlohmann::json& in, SandboxMode& mode) {
  const std::optional<SandboxMode> parsed = parse_sandbox_mode(in.get<std::string>());
  EVOTEAM_CHECK(parsed, unknown_name(in));
  mode = *parsed;
}

void to_json(nlohmann::json& out, CudaRun run) { out = name_of(run, k_cuda_run_names); }
void from_json(const nlohmann::json& in, CudaRun& run) { run = named(in, k_cuda_run_names); }
void to_json(nlohmann::json& out, SecretScope scope) { out = name_of(scope, k_secret_scope_names); }
void from_json(const nlohmann::json& in, SecretScope& scope) { scope = named(in, k_secret_scope_names); }
void to_json(nlohmann::json& out, TimingClock clock) { out = name_of(clock, k_timing_clock_names); }
void from_json(const nlohmann::json& in, TimingClock& clock) { clock = named(in, k_timing_clock_names); }
void to_json(nlohmann::json& out, PerfMode perf) { out = name_of(perf, k_perf_mode_names); }
void from_json(const nlohmann::json& in, PerfMode& perf) { perf = named(in, k_perf_mode_names); }

void to_json(nlohmann::json& out, const StageTimeouts& stages) {
  out = {{"static", stages.static_checks},    {"build", stages.build},   {"reference", stages.reference},
         {"correctness", stages.correctness}, {"timing", stages.timing}, {"profile", stages.profile}};
}

void from_json(const nlohmann::json& in, StageTimeouts& stages) {
  in.at("static").get_to(stages.static_checks);
  in.at("build").get_to(stages.build);
  in.at("reference").get_to(stages.reference);
  in.at("correctness").get_to(stages.correctness);
  in.at("timing").get_to(stages.timing);
  in.at("profile").get_to(stages.profile);
}

void to_json(nlohmann::json& out, const LibrarySettings& library) {
  out = {{"name", library.name}, {"symbols", library.symbols}, {"link", library.link}};
}

void from_json(const nlohmann::json& in, LibrarySettings& library) {
  in.at("name").get_to(library.name);
  library.symbols = in.value("symbols", std::vector<std::string>{});
  library.link = in.value("link", std::vector<std::string>{});
}

void to_json(nlohmann::json& out, const EvalSettings& settings) {
  out = {{"pipeline", settings.pipeline},
         {"sandbox", settings.sandbox},
         {"cache_dir", settings.cache_dir},
         {"build_cache_dir", settings.build_cache_dir},
         {"lock_dir", settings.lock_dir},
         {"keep_scratch", settings.keep_scratch},
         {"reuse_results", settings.reuse_results},
         {"stages", settings.stages},
         {"host", settings.host},
         {"cuda", settings.cuda},
         {"static", settings.static_checks},
         {"libraries", settings.libraries},
         {"correctness", settings.correctness},
         {"timing", settings.timing},
         {"profile", settings.profile},
         {"machine", settings.machine},
         {"oracle", settings.oracle}};
}

void from_json(const nlohmann::json& in, EvalSettings& settings) {
  in.at("pipeline").get_to(settings.pipeline);
  // The stages run in pipeline order, once each, whatever order the configuration lists them in.
  std::sort(settings.pipeline.begin(), settings.pipeline.end());
  settings.pipeline.erase(std::unique(settings.pipeline.begin(), settings.pipeline.end()), settings.pipeline.end());
  in.at("sandbox").get_to(settings.sandbox);
  in.at("cache_dir").get_to(settings.cache_dir);
  settings.build_cache_dir = in.value("build_cache_dir", "");  // absent in configurations frozen before the key
  in.at("lock_dir").get_to(settings.lock_dir);
  in.at("keep_scratch").get_to(settings.keep_scratch);
  settings.reuse_results = in.value("reuse_results", true);  // absent in configurations frozen before the key
  in.at("stages").get_to(settings.stages);
  in.at("host").get_to(settings.host);
  in.at("cuda").get_to(settings.cuda);
  in.at("static").get_to(settings.static_checks);
  in.at("libraries").get_to(settings.libraries);
  in.at("correctness").get_to(settings.correctness);
  in.at("timing").get_to(settings.timing);
  in.at("profile").get_to(settings.profile);
  in.at("machine").get_to(settings.machine);
  in.at("oracle").get_to(settings.oracle);
}

}  // namespace evoteam
