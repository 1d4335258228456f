// The rule of every configuration key, as a table. A row says what a value may be; configs/default.json says
// what it means. Reasons for a bound are in the row's comment when the key's own comment does not make it plain.
#include <evoteam/core/config_rules.hpp>

#include <algorithm>
#include <cctype>
#include <sstream>

namespace evoteam {

ConfigRule& ConfigRule::at_most(double value) {
  max = value;
  return *this;
}

ConfigRule& ConfigRule::not_empty() {
  non_empty = true;
  return *this;
}

ConfigRule& ConfigRule::wide_integer() {
  wide = true;
  return *this;
}

namespace {

// A key whose type is the whole rule: booleans, and free text such as compiler flags or a model name.
ConfigRule any(const char* path) {
  ConfigRule rule;
  rule.path = path;
  return rule;
}
ConfigRule at_least(const char* path, double value) {
  ConfigRule rule = any(path);
  rule.min = value;
  return rule;
}
ConfigRule above(const char* path, double value) {
  ConfigRule rule = at_least(path, value);
  rule.min_exclusive = true;
  return rule;
}
ConfigRule fraction(const char* path) { return at_least(path, 0).at_most(1); }
ConfigRule one_of(const char* path, std::vector<std::string> choices) {
  ConfigRule rule = any(path);
  rule.choices = std::move(choices);
  return rule;
}

// eval.libraries: [{"name": "...", "symbols": ["glob", ...], "link": ["-l...", ...]}, ...]
std::optional<std::string> library_entries_shape(const nlohmann::json& libraries) {
  auto strings = [](const nlohmann::json& list) {
    return list.is_array() &&
           std::all_of(list.begin(), list.end(), [](const nlohmann::json& x) { return x.is_string(); });
  };
  for (std::size_t i = 0; i < libraries.size(); ++i) {
    const nlohmann::json& entry = libraries[i];
    const std::string where = "entry " + std::to_string(i);
    if (!entry.is_object()) return where + " must be an object {\"name\", \"symbols\", \"link\"}";
    for (const auto& [key, value] : entry.items())
      if (key != "name" && key != "symbols" && key != "link") return where + " has an unknown field '" + key + "'";
    if (!entry.contains("name") || !entry["name"].is_string() || entry["name"].get<std::string>().empty())
      return where + " needs a non-empty string \"name\"";
    for (const char* list : {"symbols", "link"})
      if (entry.contains(list) && !strings(entry[list])) return where + "'s \"" + list + "\" must be a list of strings";
  }
  return std::nullopt;
}

ConfigRule library_list(const char* path) {
  ConfigRule rule = any(path);
  rule.shape = library_entries_shape;
  return rule;
}

// Upper bounds of durations. Each is far beyond any sensible value, and near enough that a deadline built from it
// stays a deadline: 1e308 seconds overflows every clock and turns "wait this long" into "wait for ever".
constexpr double k_hour_s = 3600.0;
constexpr double k_day_s = 24 * k_hour_s;
constexpr double k_week_s = 7 * k_day_s;
constexpr double k_timing_s = k_hour_s;  // one workload's warm-up, timing or profile: an hour is already absurd
constexpr double k_year_h = 366 * 24.0;

// A list whose default is empty gives the schema no entry type: the rule says "strings" instead.
std::optional<std::string> string_entries_shape(const nlohmann::json& list) {
  if (!list.is_array()) return std::nullopt;  // the schema's type check names it
  for (std::size_t i = 0; i < list.size(); ++i)
    if (!list[i].is_string()) return "entry " + std::to_string(i) + " must be a string, got " + list[i].dump();
  return std::nullopt;
}

ConfigRule string_list(const char* path) {
  ConfigRule rule = any(path);
  rule.shape = string_entries_shape;
  return rule;
}

// agent.cli.env: each entry a variable's NAME, or NAME=VALUE; a name is letters, digits and underscores, not
// starting with a digit.
std::optional<std::string> environment_entries_shape(const nlohmann::json& list) {
  if (std::optional<std::string> wrong = string_entries_shape(list)) return wrong;
  if (!list.is_array()) return std::nullopt;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string entry = list[i].get<std::string>();
    const std::string name = entry.substr(0, entry.find('='));
    const bool valid = !name.empty() && std::isdigit(static_cast<unsigned char>(name.front())) == 0 &&
                       std::all_of(name.begin(), name.end(),
                                   [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; });
    if (!valid)
      return "entry " + std::to_string(i) + " must be NAME or NAME=VALUE with a variable's name, got \"" + name + "\"";
  }
  return std::nullopt;
}

ConfigRule environment_list(const char* path) {
  ConfigRule rule = any(path);
  rule.shape = environment_entries_shape;
  return rule;
}

// Above any index a machine hands out: nvidia-smi numbers GPUs from 0, and the host target's simulated devices
// are a handful. A longer number is a typo that would otherwise start a run.
constexpr long k_max_device_index = 63;

bool device_uuid(const std::string& entry) {
  if (entry.rfind("GPU-", 0) != 0 && entry.rfind("MIG-", 0) != 0) return false;
  return entry.size() > 4 && std::all_of(entry.begin() + 4, entry.end(), [](char c) {
           return std::isxdigit(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '/';
         });
}

// cluster.devices: "all", or a comma-separated list of GPU indices (0 to 63) or UUIDs (GPU-..., MIG-...), each once.
std::optional<std::string> device_list_shape(const nlohmann::json& value) {
  if (!value.is_string()) return std::nullopt;
  const std::string& text = value.get_ref<const std::string&>();
  if (text == "all" || text.empty()) return std::nullopt;  // empty: not_empty says so
  const std::string expected =
      "\"all\" or a list of GPU indices (0 to " + std::to_string(k_max_device_index) + ") or UUIDs such as 0,1";
  std::vector<std::string> seen;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    std::string entry = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    entry.erase(0, entry.find_first_not_of(' '));
    entry.erase(entry.find_last_not_of(' ') + 1);
    const bool index = !entry.empty() && entry.size() <= 2 &&
                       std::all_of(entry.begin(), entry.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
                       std::stol(entry) <= k_max_device_index;
    if (entry.empty()) return "has an empty entry; expected " + expected + ", got \"" + text + "\"";
    if (!index && !device_uuid(entry))
      return "entry \"" + entry + "\" is no device; expected " + expected + ", got \"" + text + "\"";
    if (std::find(seen.begin(), seen.end(), entry) != seen.end())
      return "names device " + entry + " twice, got \"" + text + "\"";
    seen.push_back(entry);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return std::nullopt;
}

ConfigRule device_list(const char* path) {
  ConfigRule rule = any(path).not_empty();
  rule.shape = device_list_shape;
  return rule;
}

std::vector<ConfigRule> make_rules() {
  const std::vector<std::string> stages = {"static", "build", "correctness", "timing", "profile"};
  return {
      one_of("log.verbosity", {"quiet", "normal", "verbose", "debug"}),

      at_least("process.kill_grace_s", 0).at_most(k_hour_s),
      at_least("process.output_cap_bytes", 0).wide_integer(),  // 0: no cap
      at_least("process.max_open_files", 1),

      any("store.runs_dir").not_empty(),

      one_of("eval.pipeline", stages).not_empty(),
      one_of("eval.sandbox", {"auto", "bwrap", "none"}),
      any("eval.cache_dir"),        // "": the user's cache directory
      any("eval.build_cache_dir"),  // "": under eval.cache_dir
      any("eval.lock_dir").not_empty(),
      any("eval.keep_scratch"),
      any("eval.reuse_results"),
      // A deadline of 0 would kill every phase at once; the timing lock may be tried once (0).
      above("eval.stages.static.timeout_s", 0).at_most(k_day_s),
      above("eval.stages.build.timeout_s", 0).at_most(k_day_s),
      above("eval.stages.reference.timeout_s", 0).at_most(k_day_s),
      above("eval.stages.correctness.timeout_s", 0).at_most(k_day_s),
      above("eval.stages.timing.timeout_s", 0).at_most(k_day_s),
      at_least("eval.stages.timing.lock_timeout_s", 0).at_most(k_day_s),
      above("eval.stages.profile.timeout_s", 0).at_most(k_day_s),
      any("eval.host.compiler").not_empty(),
      any("eval.host.flags"),
      any("eval.host.harness_flags"),
      at_least("eval.host.compile_jobs", 0),          // 0: one per core
      at_least("eval.host.max_address_space_mb", 0),  // 0: unlimited
      above("eval.host.harness_build_timeout_s", 0).at_most(k_day_s),
      any("eval.cuda.flags"),
      any("eval.cuda.harness_flags"),
      any("eval.cuda.allowed_host_symbols"),
      one_of("eval.cuda.run", {"auto", "off"}),
      at_least("eval.cuda.peak_gflops", 0),  // 0: measure
      at_least("eval.cuda.peak_gbytes_per_s", 0),
      one_of("eval.cuda.sanitizer_tools", {"memcheck", "racecheck", "synccheck", "initcheck"}),
      any("eval.cuda.flashinfer"),
      above("eval.cuda.harness_build_timeout_s", 0).at_most(k_day_s),
      any("eval.static.allowed_symbols"),
      any("eval.static.forbidden_instructions"),
      any("eval.static.forbid_writable_data"),
      library_list("eval.libraries"),
      at_least("eval.correctness.seeds", 1),
      one_of("eval.correctness.distributions", {"normal", "uniform", "heavy_tailed", "small_int"}).not_empty(),
      one_of("eval.correctness.secret_scope", {"evaluation", "evaluator"}),
      at_least("eval.correctness.edge_values", 1),  // each value is an axis extent
      at_least("eval.correctness.edge_base", 1),
      at_least("eval.correctness.guard_bytes", 0).wide_integer(),
      any("eval.correctness.determinism"),
      above("eval.correctness.call_deadline_factor", 0),
      above("eval.correctness.call_deadline_min_s", 0).at_most(k_hour_s),
      at_least("eval.timing.warmup_s", 0).at_most(k_timing_s),
      at_least("eval.timing.min_samples", 2),  // a spread needs two samples
      at_least("eval.timing.min_time_s", 0).at_most(k_timing_s),
      above("eval.timing.max_noise", 0),
      at_least("eval.timing.noise_window", 2),
      above("eval.timing.noise_stability", 0),
      // 0 would stop every measurement at its first sample and call it NOISY: a setting that can only mislead.
      above("eval.timing.max_time_s", 0).at_most(k_timing_s),
      above("eval.timing.min_sample_s", 0).at_most(k_timing_s),
      one_of("eval.timing.clock", {"thread_cpu", "wall"}),
      at_least("eval.timing.rotation_min_sets", 1),
      at_least("eval.timing.rotation_llc_factor", 0),
      at_least("eval.timing.rotation_max_bytes", 0).wide_integer(),
      at_least("eval.timing.rotation_max_sets", 1),
      at_least("eval.timing.fresh_probes", 0),
      at_least("eval.timing.fresh_ratio", 1),  // a fresh input set cannot be expected to run faster than the median
      at_least("eval.timing.bootstrap_resamples", 100),  // fewer cannot place the tails of a 95% interval
      fraction("eval.timing.side_work_fraction"),
      above("eval.timing.impossible_fraction", 0),
      at_least("eval.timing.suspicious_speedup", 1),
      one_of("eval.profile.perf", {"auto", "off"}),
      any("eval.profile.events"),
      above("eval.profile.time_s", 0).at_most(k_timing_s),
      at_least("eval.machine.peak_gflops", 0),  // 0: measure
      at_least("eval.machine.peak_gbytes_per_s", 0),
      any("eval.oracle.python").not_empty(),
      above("eval.oracle.timeout_s", 0).at_most(k_day_s),

      one_of("llm.provider", {"auto", "anthropic", "openai", "scripted", "builtin"}),
      any("llm.model"),                                  // "": the provider's default
      any("llm.base_url"),                               // "": the environment's, else the provider's own
      at_least("llm.context_window", 0).wide_integer(),  // 0: the server's, the models file's, or a default
      any("llm.models_file"),
      any("llm.allow_unpriced_models"),
      any("llm.scripted_file"),
      at_least("llm.max_tokens", 1),
      any("llm.temperature").at_most(2),  // negative: the server's default; no provider accepts above 2
      any("llm.prompt_caching"),
      one_of("llm.openai_max_tokens_field", {"max_completion_tokens", "max_tokens"}),
      one_of("llm.openai_tool_choice", {"", "auto", "required"}),
      above("llm.connect_timeout_s", 0).at_most(k_hour_s),
      above("llm.request_timeout_s", 0).at_most(k_day_s),
      at_least("llm.max_retries", 0),
      at_least("llm.backoff_initial_s", 0).at_most(k_hour_s),
      at_least("llm.backoff_max_s", 0).at_most(k_hour_s),
      at_least("llm.retry_after_max_s", 0).at_most(k_hour_s),

      at_least("agent.max_steps", 1),
      at_least("agent.max_tokens", 0).wide_integer(),  // 0: unlimited, as every budget below
      at_least("agent.max_cost_usd", 0),
      at_least("agent.max_wall_s", 0).at_most(k_week_s),
      at_least("agent.max_consecutive_malformed", 1),
      at_least("agent.tool_output_max_chars", 0),  // 0: no cut
      at_least("agent.max_write_bytes", 1).wide_integer(),
      at_least("agent.max_read_bytes", 1).wide_integer(),
      at_least("agent.max_list_entries", 1),
      fraction("agent.context_clear_fraction"),
      any("agent.member").not_empty(),  // builtin-loop, claude-code, codex or a command template
      any("agent.members.optimizer"),
      any("agent.members.debugger"),
      any("agent.members.profiling-scientist"),
      any("agent.members.knowledge-integrator"),
      any("agent.members.disciplinarian"),
      any("agent.cli.model"),
      at_least("agent.cli.max_turns", 0),
      above("agent.cli.turn_timeout_s", 0).at_most(k_week_s),
      one_of("agent.cli.sandbox", {"auto", "bwrap", "none"}),
      string_list("agent.cli.readable"),
      environment_list("agent.cli.env"),
      any("agent.cli.config.claude-code"),
      any("agent.cli.config.codex"),

      one_of("supervisor.policy", {"auto", "rules", "llm"}),
      fraction("supervisor.stuck_failure_rate"),
      at_least("supervisor.recurring_error_count", 1),
      at_least("supervisor.max_changes_per_candidate", 0),
      at_least("supervisor.repeated_failure_count", 1),
      at_least("supervisor.stagnation_cycles", 1),
      at_least("supervisor.min_gain", 0),
      above("supervisor.roofline_stop", 0),
      at_least("supervisor.clear_after_cycles", 1),
      above("supervisor.optimizer_share", 0).at_most(1),

      one_of("team.mode", {"evolving", "fixed", "single"}),
      at_least("team.evaluations_per_cycle", 1),
      at_least("team.reverify_ratio", 1),
      at_least("team.digest_chars", 0),
      at_least("team.seed", 0).wide_integer(),

      one_of("cluster.executor", {"local", "slurm"}),
      device_list("cluster.devices"),
      one_of("cluster.slurm.mode", {"worker", "srun"}),
      at_least("cluster.slurm.workers", 1),
      any("cluster.slurm.partition"),
      any("cluster.slurm.gres"),
      any("cluster.slurm.time"),
      any("cluster.slurm.account"),
      any("cluster.slurm.qos"),
      string_list("cluster.slurm.extra_args"),
      one_of("cluster.slurm.build_on", {"worker", "login"}),
      above("cluster.slurm.start_timeout_s", 0).at_most(k_week_s),
      at_least("cluster.slurm.max_attempts", 1),
      above("cluster.slurm.idle_exit_s", 0).at_most(k_week_s),
      above("cluster.slurm.poll_s", 0).at_most(k_hour_s),
      any("cluster.slurm.evoteam"),

      at_least("budgets.max_cycles", 0),  // 0: no limit, as every budget
      at_least("budgets.tokens", 0).wide_integer(),
      at_least("budgets.usd", 0),
      at_least("budgets.hours", 0).at_most(k_year_h),
      at_least("budgets.gpu_seconds", 0),
      at_least("budgets.evaluations", 0),
      at_least("budgets.target_speedup", 0),
  };
}

std::string number_text(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

std::optional<std::string> number_violation(const ConfigRule& rule, double value) {
  if (rule.min && (rule.min_exclusive ? !(value > *rule.min) : !(value >= *rule.min)))
    return std::string(rule.min_exclusive ? "must be above " : "must be at least ") + number_text(*rule.min);
  if (rule.max && !(value <= *rule.max)) return "must be at most " + number_text(*rule.max);
  return std::nullopt;
}

std::optional<std::string> choice_violation(const ConfigRule& rule, const std::string& value) {
  if (rule.choices.empty() || std::find(rule.choices.begin(), rule.choices.end(), value) != rule.choices.end())
    return std::nullopt;
  std::string list;
  for (const std::string& choice : rule.choices) list += (list.empty() ? "" : ", ") + choice;
  return "must be one of " + list;
}

// The check of one scalar: a number against the bounds, a string against the choices.
std::optional<std::string> scalar_violation(const ConfigRule& rule, const nlohmann::json& value) {
  if (value.is_number()) return number_violation(rule, value.get<double>());
  if (value.is_string()) return choice_violation(rule, value.get<std::string>());
  return std::nullopt;
}

}  // namespace

const std::vector<ConfigRule>& config_rules() {
  static const std::vector<ConfigRule> rules = make_rules();
  return rules;
}

const std::vector<ConfigRelation>& config_relations() {
  static const std::vector<ConfigRelation> relations = {
      {"eval.timing.rotation_min_sets", "eval.timing.rotation_max_sets"},
      {"llm.backoff_initial_s", "llm.backoff_max_s"},
  };
  return relations;
}

const ConfigRule* find_config_rule(const std::string& path) {
  for (const ConfigRule& rule : config_rules())
    if (rule.path == path) return &rule;
  return nullptr;
}

std::optional<std::string> rule_violation(const ConfigRule& rule, const nlohmann::json& value) {
  // json::empty() is false for every string, so a string's emptiness is asked of the string.
  const bool empty =
      value.is_string() ? value.get_ref<const std::string&>().empty() : value.is_array() && value.empty();
  if (rule.non_empty && empty) return std::string("must not be empty");
  if (rule.shape)
    if (std::optional<std::string> wrong = rule.shape(value)) return wrong;
  if (!value.is_array()) {
    if (std::optional<std::string> wrong = scalar_violation(rule, value)) return *wrong + ", got " + value.dump();
    return std::nullopt;
  }
  for (std::size_t i = 0; i < value.size(); ++i)
    if (std::optional<std::string> wrong = scalar_violation(rule, value[i]))
      return "entry " + std::to_string(i) + " " + *wrong + ", got " + value[i].dump();
  return std::nullopt;
}

}  // namespace evoteam
