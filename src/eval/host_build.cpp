// Building one implementation into a shared object, with the static checks for untrusted sources, and the
// build cache.
#include <evoteam/clock.hpp>
#include <evoteam/error.hpp>
#include <evoteam/fs.hpp>

#include <chrono>
#include <regex>
#include <sstream>

#include "eval/build_cache.hpp"
#include "eval/host_build.hpp"
#include "eval/static_check.hpp"

namespace evoteam::eval {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

bool is_source(const std::string& name) {
  const std::string extension = fs::path(name).extension().string();
  return extension == ".cpp" || extension == ".cc" || extension == ".cxx";
}

// Sums of the build's resource report: vectorised loops (gcc -fopt-info-vec) and the largest stack frame
// (-fstack-usage).
void read_report(const fs::path& objects, BuildOutcome& outcome, bool gcc) {
  int vectorized = 0;
  std::int64_t max_stack = 0;
  std::string max_stack_function;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(objects, error)) {
    if (entry.path().extension() == ".vec") {
      std::istringstream lines(read_file(entry.path()));
      std::string line;
      while (std::getline(lines, line)) vectorized += line.find("vectorized") != std::string::npos ? 1 : 0;
    } else if (entry.path().extension() == ".su") {
      std::istringstream lines(read_file(entry.path()));
      std::string line;
      while (std::getline(lines, line)) {
        std::vector<std::string> fields;
        std::stringstream parts(line);
        std::string field;
        while (std::getline(parts, field, '\t')) fields.push_back(field);
        if (fields.size() >= 2 && std::stoll("0" + fields[1]) > max_stack) {
          max_stack = std::stoll("0" + fields[1]);
          max_stack_function = fields[0];
        }
      }
    }
  }
  if (!gcc) return;
  outcome.report["vectorized_loops"] = vectorized;
  outcome.report["max_stack_bytes"] = max_stack;
  outcome.report["max_stack_function"] = max_stack_function;
  if (vectorized == 0) outcome.warnings.push_back("no loop was vectorized (gcc -fopt-info-vec): the inner loops run scalar");
  if (max_stack > 256 * 1024)
    outcome.warnings.push_back("a stack frame of " + std::to_string(max_stack) + " bytes in " + max_stack_function +
                               ": large local arrays risk overflowing the stack");
}

}  // namespace

void library_settings(const Config& config, const Task& task, std::vector<std::string>* link,
                      std::vector<std::string>* symbols) {
  const nlohmann::json& libraries = config.at("eval.libraries");
  for (const std::string& name : task.libraries) {
    bool known = false;
    for (const auto& library : libraries) {
      if (library.value("name", "") != name) continue;
      known = true;
      for (const auto& flag : library.value("link", nlohmann::json::array())) link->push_back(flag.get<std::string>());
      for (const auto& symbol : library.value("symbols", nlohmann::json::array())) symbols->push_back(symbol.get<std::string>());
    }
    if (!known) throw InvalidInput(task.dir.string() + "/task.json: libraries: \"" + name + "\" is not configured in eval.libraries");
  }
}

BuildOutcome HostBuilder::build(const BuildRequest& request, SandboxMode sandbox) {
  const auto start = Clock::now();
  BuildOutcome outcome;
  try {
    const HostToolchain& tools = toolchain();
    std::string material = "build-v1\n" + tools.identity + "\n" + harness_version() + "\n" + request.task->entry.name;
    for (const std::string& flag : tools.flags) material += "\nflag " + flag;
    material += std::string("\nuntrusted ") + (request.untrusted ? m_config.at("eval.static").dump() : "no");
    material += "\nlibraries " + nlohmann::json(request.task->libraries).dump() + m_config.at("eval.libraries").dump();
    for (const auto& [name, value] : request.params) material += "\nparam " + name + "=" + value;
    for (const auto& [name, text] : request.files) material += "\nfile " + name + " " + sha256_hex(text);
    if (request.untrusted) material += "\nconstraints " + nlohmann::json(request.task->static_constraints.size()).dump() + request.task->content_hash;
    return cached_build(m_cache_dir / "builds", material, m_locks,
                        [&](const fs::path& dir) { return compile_and_check(request, sandbox, dir); });
  } catch (const InvalidInput&) {
    throw;
  } catch (const Error& error) {
    outcome.status = BuildStatus::infra_error;
    outcome.reason = error.what();
  }
  outcome.wall_s = seconds_since(start);
  return outcome;
}

BuildOutcome HostBuilder::compile_and_check(const BuildRequest& request, SandboxMode sandbox, const fs::path& dir) {
  BuildOutcome outcome;
  const Task& task = *request.task;
  const HostToolchain& tools = toolchain();
  const double timeout_s = m_config.get<double>("eval.stages.build.timeout_s");
  const double static_timeout_s = m_config.get<double>("eval.stages.static.timeout_s");
  for (const auto& [name, text] : request.files) write_file_atomic(dir / "src" / name, text);
  std::vector<std::string> link_flags;
  StaticPolicy policy;
  policy.allowed_symbols = m_config.get<std::vector<std::string>>("eval.static.allowed_symbols");
  policy.forbidden_instructions = m_config.get<std::vector<std::string>>("eval.static.forbidden_instructions");
  policy.forbid_writable_data = m_config.get<bool>("eval.static.forbid_writable_data");
  library_settings(m_config, task, &link_flags, &policy.allowed_symbols);

  auto static_start = Clock::now();
  if (request.untrusted) {
    if (std::optional<StaticFinding> finding = check_sources(task, request.files)) {
      outcome.status = BuildStatus::static_reject;
      outcome.reason = finding->reason;
      outcome.evidence = finding->evidence;
      return outcome;
    }
    outcome.warnings = source_warnings(task, request.files);
  }
  outcome.static_s += seconds_since(static_start);

  std::vector<std::string> objects;
  for (const auto& [name, text] : request.files) {
    if (!is_source(name)) continue;
    const std::string object = "obj/" + fs::path(name).stem().string() + ".o";
    std::vector<std::string> argv = {tools.compiler};
    argv.insert(argv.end(), tools.flags.begin(), tools.flags.end());
    argv.push_back("-fPIC");
    for (const auto& [param, value] : request.params) argv.push_back("-D" + param + "=" + value);
    argv.insert(argv.end(), {"-I", "src", "-c", "src/" + name, "-o", object});
    if (tools.gcc)
      argv.insert(argv.end(), {"-fopt-info-vec-optimized=obj/" + fs::path(name).stem().string() + ".vec", "-fstack-usage"});
    ProcessResult result = run_tool(argv, dir, timeout_s, sandbox, dir);
    outcome.log += result.err.text;
    if (result.timed_out) {
      outcome.status = BuildStatus::compile_timeout;
      outcome.reason = "compiling " + name + " " + result.describe();
      return outcome;
    }
    if (!result.spawned) {
      outcome.status = BuildStatus::infra_error;
      outcome.reason = "cannot run the compiler: " + result.describe();
      return outcome;
    }
    if (!result.ok()) {
      outcome.status = BuildStatus::compile_error;
      outcome.reason = "compiling " + name + ": " + result.describe();
      outcome.evidence = {{"file", name}};
      return outcome;
    }
    objects.push_back(object);
  }

  if (request.untrusted) {
    static_start = Clock::now();
    std::vector<ObjectScan> scans;
    for (const std::string& object : objects) {
      ProcessResult result = run_tool({"objdump", "-h", "-t", "-d", "--no-show-raw-insn", object}, dir, static_timeout_s, sandbox, dir);
      if (!result.ok() || result.out.elided_bytes > 0) {
        outcome.status = result.out.elided_bytes > 0 ? BuildStatus::static_reject : BuildStatus::infra_error;
        outcome.reason = result.out.elided_bytes > 0 ? "object too large to check (" + object + ")"
                                                      : "cannot inspect " + object + ": " + result.describe();
        return outcome;
      }
      scans.push_back(parse_objdump(object, result.out.text));
      if (std::optional<StaticFinding> finding = check_object(task, scans.back(), policy)) {
        outcome.status = BuildStatus::static_reject;
        outcome.reason = finding->reason;
        outcome.evidence = finding->evidence;
        return outcome;
      }
    }
    if (std::optional<StaticFinding> finding = check_task_constraints(task, request.files, scans)) {
      outcome.status = BuildStatus::static_reject;
      outcome.reason = finding->reason;
      outcome.evidence = finding->evidence;
      return outcome;
    }
    std::uint64_t text_bytes = 0;
    for (const ObjectScan& scan : scans)
      for (const auto& [section, size] : scan.sections)
        if (section.rfind(".text", 0) == 0) text_bytes += size;
    outcome.report["text_bytes"] = text_bytes;
    outcome.static_s += seconds_since(static_start);
  }

  write_file_atomic(dir / "exports.map", "{ global: " + task.entry.name + "; local: *; };\n");
  std::vector<std::string> argv = {tools.compiler, "-shared", "-o", "kernel.so"};
  argv.insert(argv.end(), objects.begin(), objects.end());
  argv.insert(argv.end(), {"-Wl,--version-script=exports.map", "-Wl,-z,defs"});
  argv.insert(argv.end(), link_flags.begin(), link_flags.end());
  ProcessResult link = run_tool(argv, dir, timeout_s, sandbox, dir);
  outcome.log += link.err.text;
  if (link.timed_out) {
    outcome.status = BuildStatus::compile_timeout;
    outcome.reason = "linking " + link.describe();
    return outcome;
  }
  if (!link.ok()) {
    outcome.status = BuildStatus::compile_error;
    outcome.reason = "linking: " + link.describe();
    return outcome;
  }
  read_report(dir / "obj", outcome, tools.gcc);
  outcome.report["objects"] = objects.size();
  outcome.status = BuildStatus::ok;
  return outcome;
}

}  // namespace evoteam::eval
