// Building one implementation into a shared object, with the static checks for untrusted sources, and the
// build cache.
#include <evoteam/core/clock.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <regex>
#include <sstream>

#include "eval/build_cache.hpp"
#include "eval/host/host_build.hpp"
#include "eval/host/static_check.hpp"

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
  if (vectorized == 0)
    outcome.warnings.push_back("no loop was vectorized (gcc -fopt-info-vec): the inner loops run scalar");
  if (max_stack > 256 * 1024)
    outcome.warnings.push_back("a stack frame of " + std::to_string(max_stack) + " bytes in " + max_stack_function +
                               ": large local arrays risk overflowing the stack");
}

// A build tool run in the build directory, under the build's sandbox.
using ToolRun = std::function<ProcessResult(std::vector<std::string> argv, double timeout_s)>;

// One compile_and_check: what its parts share. A part that fails says why in the outcome and returns false.
struct CompileJob {
  const BuildRequest& request;
  const HostToolchain& tools;
  ToolRun run_tool;
  double timeout_s;
  double static_timeout_s;
  BuildOutcome outcome;
  std::vector<std::string> objects;  // obj/<stem>.o, relative to the build directory
};

void fail(BuildOutcome& outcome, BuildStatus status, std::string reason) {
  outcome.status = status;
  outcome.reason = std::move(reason);
}

bool rejected(BuildOutcome& outcome, const std::optional<StaticFinding>& finding) {
  if (!finding) return false;
  fail(outcome, BuildStatus::static_reject, finding->reason);
  outcome.evidence = finding->evidence;
  return true;
}

StaticPolicy static_policy(const StaticCheckSettings& checks) {
  StaticPolicy policy;
  policy.allowed_symbols = checks.allowed_symbols;
  policy.forbidden_instructions = checks.forbidden_instructions;
  policy.forbid_writable_data = checks.forbid_writable_data;
  return policy;
}

// The checks on untrusted sources as written, before anything is compiled.
bool check_sources_first(CompileJob& job) {
  const auto start = Clock::now();
  if (job.request.untrusted) {
    if (rejected(job.outcome, check_sources(*job.request.task, job.request.files))) return false;
    job.outcome.warnings = source_warnings(*job.request.task, job.request.files);
  }
  job.outcome.static_s += seconds_since(start);
  return true;
}

bool compile_source(CompileJob& job, const std::string& name) {
  const HostToolchain& tools = job.tools;
  const std::string stem = fs::path(name).stem().string();
  const std::string object = "obj/" + stem + ".o";
  std::vector<std::string> argv = {tools.compiler};
  argv.insert(argv.end(), tools.flags.begin(), tools.flags.end());
  argv.push_back("-fPIC");
  for (const auto& [param, value] : job.request.params) argv.push_back("-D" + param + "=" + value);
  argv.insert(argv.end(), {"-I", "src", "-c", "src/" + name, "-o", object});
  if (tools.gcc) argv.insert(argv.end(), {"-fopt-info-vec-optimized=obj/" + stem + ".vec", "-fstack-usage"});
  const ProcessResult result = job.run_tool(argv, job.timeout_s);
  job.outcome.log += result.err.text;
  if (result.timed_out) {
    fail(job.outcome, BuildStatus::compile_timeout, "compiling " + name + " " + result.describe());
  } else if (!result.spawned) {
    fail(job.outcome, BuildStatus::infra_error, "cannot run the compiler: " + result.describe());
  } else if (!result.ok()) {
    fail(job.outcome, BuildStatus::compile_error, "compiling " + name + ": " + result.describe());
    job.outcome.evidence = {{"file", name}};
  } else {
    job.objects.push_back(object);
    return true;
  }
  return false;
}

bool compile_sources(CompileJob& job) {
  for (const auto& [name, text] : job.request.files)
    if (is_source(name) && !compile_source(job, name)) return false;
  return true;
}

std::uint64_t text_bytes(const std::vector<ObjectScan>& scans) {
  std::uint64_t bytes = 0;
  for (const ObjectScan& scan : scans)
    for (const auto& [section, size] : scan.sections)
      if (section.rfind(".text", 0) == 0) bytes += size;
  return bytes;
}

// The checks on untrusted objects: symbols, instructions, data, and the task's own constraints.
bool check_objects(CompileJob& job, const StaticPolicy& policy) {
  if (!job.request.untrusted) return true;
  const Task& task = *job.request.task;
  const auto start = Clock::now();
  std::vector<ObjectScan> scans;
  for (const std::string& object : job.objects) {
    const ProcessResult result =
        job.run_tool({"objdump", "-h", "-t", "-d", "--no-show-raw-insn", object}, job.static_timeout_s);
    if (result.out.elided_bytes > 0) {
      fail(job.outcome, BuildStatus::static_reject, "object too large to check (" + object + ")");
      return false;
    }
    if (!result.ok()) {
      fail(job.outcome, BuildStatus::infra_error, "cannot inspect " + object + ": " + result.describe());
      return false;
    }
    scans.push_back(parse_objdump(object, result.out.text));
    if (rejected(job.outcome, check_object(task, scans.back(), policy))) return false;
  }
  std::vector<std::string> adopted;
  if (rejected(job.outcome, check_task_constraints(task, job.request.files, scans, &adopted))) return false;
  job.outcome.adopted_constraints = adopted;
  job.outcome.report["text_bytes"] = text_bytes(scans);
  job.outcome.static_s += seconds_since(start);
  return true;
}

bool link_library(CompileJob& job, const std::vector<std::string>& link_flags, const fs::path& dir) {
  write_file_atomic(dir / "exports.map", "{ global: " + job.request.task->entry.name + "; local: *; };\n");
  std::vector<std::string> argv = {job.tools.compiler, "-shared", "-o", "kernel.so"};
  argv.insert(argv.end(), job.objects.begin(), job.objects.end());
  // Full RELRO here too: the candidate's own relocated tables are read-only once it is loaded.
  argv.insert(argv.end(), {"-Wl,--version-script=exports.map", "-Wl,-z,defs", "-Wl,-z,relro", "-Wl,-z,now"});
  argv.insert(argv.end(), link_flags.begin(), link_flags.end());
  const ProcessResult link = job.run_tool(argv, job.timeout_s);
  job.outcome.log += link.err.text;
  if (link.timed_out) {
    fail(job.outcome, BuildStatus::compile_timeout, "linking " + link.describe());
    return false;
  }
  if (!link.ok()) {
    fail(job.outcome, BuildStatus::compile_error, "linking: " + link.describe());
    return false;
  }
  return true;
}

}  // namespace

void library_settings(const std::vector<LibrarySettings>& libraries, const Task& task, std::vector<std::string>* link,
                      std::vector<std::string>* symbols) {
  for (const std::string& name : task.libraries) {
    bool known = false;
    for (const LibrarySettings& library : libraries) {
      if (library.name != name) continue;
      known = true;
      link->insert(link->end(), library.link.begin(), library.link.end());
      symbols->insert(symbols->end(), library.symbols.begin(), library.symbols.end());
    }
    if (!known)
      throw InvalidInput(task.dir.string() + "/task.json: libraries: \"" + name +
                         "\" is not configured in eval.libraries");
  }
}

BuildOutcome HostBuilder::build(const BuildRequest& request, SandboxMode sandbox) {
  const auto start = Clock::now();
  BuildOutcome outcome;
  try {
    const HostToolchain& tools = toolchain();
    std::string material = "build-v2\n" + tools.identity + "\n" + harness_version() + "\n" + request.task->entry.name;
    for (const std::string& flag : tools.flags) material += "\nflag " + flag;
    material += "\nuntrusted " + (request.untrusted ? nlohmann::json(m_settings.static_checks).dump() : "no");
    material +=
        "\nlibraries " + nlohmann::json(request.task->libraries).dump() + nlohmann::json(m_settings.libraries).dump();
    for (const auto& [name, value] : request.params) material += "\nparam " + name + "=" + value;
    for (const auto& [name, text] : request.files) material += "\nfile " + name + " " + sha256_hex(text);
    if (request.untrusted)
      material += "\nconstraints " + nlohmann::json(request.task->static_constraints.size()).dump() +
                  request.task->content_hash;
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
  const ToolRun run_tool_here = [this, &dir, sandbox](const std::vector<std::string>& argv, double timeout_s) {
    return run_tool(argv, dir, timeout_s, sandbox, dir);
  };
  CompileJob job{
      request, toolchain(), run_tool_here, m_settings.stages.build.timeout_s, m_settings.stages.static_checks.timeout_s,
      {},      {}};
  for (const auto& [name, text] : request.files) write_file_atomic(dir / "src" / name, text);
  std::vector<std::string> link_flags;
  StaticPolicy policy = static_policy(m_settings.static_checks);
  library_settings(m_settings.libraries, *request.task, &link_flags, &policy.allowed_symbols);
  if (!check_sources_first(job) || !compile_sources(job) || !check_objects(job, policy) ||
      !link_library(job, link_flags, dir))
    return job.outcome;
  read_report(dir / "obj", job.outcome, job.tools.gcc);
  job.outcome.report["objects"] = job.objects.size();
  job.outcome.status = BuildStatus::ok;
  return job.outcome;
}

}  // namespace evoteam::eval
