// Building one CUDA implementation into a shared object (a cubin per declared arch), with the static stage for
// untrusted sources: source rules, then per arch the ptxas resources, the PTX (kept by nvcc -keep), the SASS when
// cuobjdump is installed and the host object's undefined symbols, judged by cuda_static; then the task's own
// constraints on source, symbols, PTX and SASS (cuda_constraints), whose once-adopted ones the outcome reports.
#include <evoteam/core/clock.hpp>
#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>

#include <chrono>

#include "eval/cuda/cuda_backend.hpp"
#include "eval/cuda/cuda_constraints.hpp"
#include "eval/host/static_check.hpp"

namespace evoteam::eval {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using cuda::CudaFinding;
using cuda::CudaStaticPolicy;
using cuda::CudaStaticSignals;
using cuda::CudaStaticVerdict;

const std::vector<std::string>& build_archs(const BuildRequest& request) {
  return request.archs.empty() ? request.task->archs : request.archs;
}

bool is_cuda_source(const std::string& name) { return fs::path(name).extension() == ".cu"; }

// "sm_90a" -> "compute_90a", the name nvcc -keep gives the arch's PTX file.
std::string virtual_arch(const std::string& arch) { return "compute_" + arch.substr(3); }

// Var-axis values of the workloads: a candidate that hard-codes them is likely shape-specialised.
std::vector<std::int64_t> workload_literals(const Task& task) {
  std::vector<std::int64_t> literals;
  for (const Workload& workload : task.workloads)
    for (const auto& [axis, value] : workload.axes)
      if (value >= 64 && std::find(literals.begin(), literals.end(), value) == literals.end())
        literals.push_back(value);
  return literals;
}

void reject(BuildOutcome& outcome, const std::string& reason, nlohmann::json evidence) {
  outcome.status = BuildStatus::static_reject;
  outcome.reason = reason;
  outcome.evidence = std::move(evidence);
}

}  // namespace

BuildOutcome CudaBuilder::build(const BuildRequest& request, SandboxMode sandbox) {
  const auto start = Clock::now();
  BuildOutcome outcome;
  try {
    const CudaToolchain& tools = toolchain();
    const Task& task = *request.task;
    std::string material = "cuda-build-v2\n" + tools.identity + "\n" + harness_version() + "\n" + task.entry.name;
    for (const std::string& arch : build_archs(request)) material += "\narch " + arch;
    for (const std::string& flag : tools.flags) material += "\nflag " + flag;
    const std::string allowed_host_symbols = nlohmann::json(m_settings.cuda.allowed_host_symbols).dump();
    material += std::string("\nuntrusted ") + (request.untrusted ? allowed_host_symbols : "no");
    material += std::string("\ncuobjdump ") + (tools.cuobjdump.empty() ? "no" : "yes");
    material += "\nlibraries " + nlohmann::json(task.libraries).dump() + nlohmann::json(m_settings.libraries).dump();
    for (const auto& [name, value] : request.params) material += "\nparam " + name + "=" + value;
    for (const auto& [name, text] : request.files) material += "\nfile " + name + " " + sha256_hex(text);
    for (const std::string& flag : request.extra_flags) material += "\nextra flag " + flag;
    for (const std::string& symbol : request.extra_exports) material += "\nexport " + symbol;
    // A failed build is cached too, and what a compiler sees differs inside and outside the sandbox.
    material += "\nsandbox " + to_string(sandbox);
    if (request.untrusted) material += "\nconstraints " + task.content_hash;
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

BuildOutcome CudaBuilder::compile_and_check(const BuildRequest& request, SandboxMode sandbox, const fs::path& dir) {
  BuildOutcome outcome;
  const Task& task = *request.task;
  const CudaToolchain& tools = toolchain();
  const double timeout_s = m_settings.stages.build.timeout_s;
  for (const auto& [name, text] : request.files) write_file_atomic(dir / "src" / name, text);
  std::vector<std::string> link_flags, library_symbols;
  library_settings(m_settings.libraries, task, &link_flags, &library_symbols);

  auto static_start = Clock::now();
  if (request.untrusted) {
    if (std::optional<StaticFinding> finding = check_sources(task, request.files)) {
      reject(outcome, finding->reason, finding->evidence);
      return outcome;
    }
  }
  outcome.static_s += seconds_since(static_start);

  const std::vector<std::string> gencode = gencode_flags_for(build_archs(request));
  evoteam::create_directories(dir / "obj" / "keep");
  std::vector<std::string> objects;
  for (const auto& [name, text] : request.files) {
    if (!is_cuda_source(name)) continue;
    const std::string object = "obj/" + fs::path(name).stem().string() + ".o";
    std::vector<std::string> argv = {tools.nvcc};
    argv.insert(argv.end(), tools.flags.begin(), tools.flags.end());
    argv.insert(argv.end(),
                {"-Xptxas", "-v,-warn-spills,-warn-lmem-usage", "-Xcompiler", "-fPIC", "-cudart", "shared"});
    argv.insert(argv.end(), gencode.begin(), gencode.end());
    for (const auto& [param, value] : request.params) argv.push_back("-D" + param + "=" + value);
    argv.insert(argv.end(), request.extra_flags.begin(), request.extra_flags.end());
    argv.insert(argv.end(), {"-I", "src", "-keep", "-keep-dir", "obj/keep", "-c", "src/" + name, "-o", object});
    const ProcessResult result = run_tool(argv, dir, timeout_s, sandbox, dir);
    outcome.log += result.err.text + result.out.text;
    if (result.timed_out) {
      outcome.status = BuildStatus::compile_timeout;
      outcome.reason = "compiling " + name + " " + result.describe();
      return outcome;
    }
    if (!result.spawned) {
      outcome.status = BuildStatus::infra_error;
      outcome.reason = "cannot run nvcc: " + result.describe();
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
  if (objects.empty()) {
    outcome.status = BuildStatus::compile_error;
    outcome.reason = "no .cu source among the implementation's files";
    return outcome;
  }

  static_start = Clock::now();
  outcome.status = BuildStatus::ok;  // judge_objects lowers it
  judge_objects(request, dir, objects, sandbox, outcome);
  outcome.static_s += seconds_since(static_start);
  if (outcome.status != BuildStatus::ok) return outcome;

  std::string exports = task.entry.name + ";";
  for (const std::string& symbol : request.extra_exports) exports += " " + symbol + ";";
  write_file_atomic(dir / "exports.map", "{ global: " + exports + " local: *; };\n");
  std::vector<std::string> argv = {tools.nvcc, "-shared", "-cudart", "shared"};
  argv.insert(argv.end(), gencode.begin(), gencode.end());
  argv.insert(argv.end(), {"-o", "kernel.so"});
  argv.insert(argv.end(), objects.begin(), objects.end());
  argv.insert(argv.end(), {"-Xlinker", "--version-script=exports.map", "-Xlinker", "-z,defs"});
  argv.insert(argv.end(), link_flags.begin(), link_flags.end());
  const ProcessResult link = run_tool(argv, dir, timeout_s, sandbox, dir);
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
  outcome.report["objects"] = objects.size();
  return outcome;
}

void CudaBuilder::judge_objects(const BuildRequest& request, const fs::path& dir,
                                const std::vector<std::string>& objects, SandboxMode sandbox, BuildOutcome& outcome) {
  const Task& task = *request.task;
  const CudaToolchain& tools = toolchain();
  const double timeout_s = m_settings.stages.static_checks.timeout_s;
  std::vector<std::string> link_flags, allowed;
  library_settings(m_settings.libraries, task, &link_flags, &allowed);
  const std::vector<std::string>& allowed_host_symbols = m_settings.cuda.allowed_host_symbols;
  allowed.insert(allowed.end(), allowed_host_symbols.begin(), allowed_host_symbols.end());

  std::vector<std::string> undefined;
  for (const std::string& object : objects) {
    const ProcessResult nm = run_tool({"nm", "-u", object}, dir, timeout_s, sandbox, dir);
    if (!nm.ok()) {
      outcome.status = BuildStatus::infra_error;
      outcome.reason = "cannot list the symbols of " + object + ": " + nm.describe();
      return;
    }
    for (const std::string& symbol : cuda::parse_nm_undefined(nm.out.text)) undefined.push_back(symbol);
  }
  const std::vector<cuda::KernelResources> kernels = cuda::parse_ptxas(outcome.log);
  std::map<std::string, std::string> ptx_texts, sass_texts;
  nlohmann::json per_arch = nlohmann::json::object();
  for (const std::string& arch : build_archs(request)) {
    CudaStaticSignals signals;
    for (const cuda::KernelResources& kernel : kernels)
      if (kernel.arch == arch) signals.kernels.push_back(kernel);
    std::string ptx;
    for (const std::string& object : objects) {
      const fs::path file =
          dir / "obj" / "keep" / (fs::path(object).stem().string() + "." + virtual_arch(arch) + ".ptx");
      if (fs::is_regular_file(file)) ptx += read_file(file) + "\n";
    }
    ptx_texts[arch] = ptx;
    signals.ptx = cuda::scan_ptx(ptx);
    if (!tools.cuobjdump.empty()) {
      std::string sass;
      for (const std::string& object : objects) {
        const ProcessResult dump =
            run_tool({tools.cuobjdump, "-sass", "-arch", arch, object}, dir, timeout_s, sandbox, dir);
        if (dump.ok()) sass += dump.out.text;
      }
      if (!sass.empty()) {
        sass_texts[arch] = sass;
        signals.sass = cuda::parse_sass(sass);
      }
    }
    signals.host_undefined = undefined;
    if (request.untrusted) signals.sources = request.files;
    CudaStaticPolicy policy;
    policy.arch = arch;
    // A candidate of a tensor-core task is told when its code has none (advice, never a rejection).
    policy.tensor_cores =
        request.untrusted && task.expects_tensor_cores ? cuda::TensorCores::required : cuda::TensorCores::not_required;
    policy.allowed_host_symbols = allowed;
    if (request.untrusted) policy.shape_literals = workload_literals(task);
    // The harness tells its own kernels from the implementation's by the evoteam_ prefix.
    for (const std::string& entry : signals.ptx.entries)
      if (request.untrusted && entry.rfind("evoteam_", 0) == 0) {
        reject(outcome, "kernel " + entry + " uses the harness's reserved evoteam_ prefix (" + arch + ")",
               {{"kernel", entry}, {"arch", arch}});
        return;
      }
    const CudaStaticVerdict verdict = cuda::judge_static(signals, policy);
    per_arch[arch] = verdict.report;
    outcome.report["static_profile"][arch] = cuda::static_profile(signals, policy);
    for (const std::string& warning : verdict.warnings) outcome.warnings.push_back(arch + ": " + warning);
    if (request.untrusted && !verdict.rejections.empty()) {
      const CudaFinding& finding = verdict.rejections.front();
      nlohmann::json evidence = finding.evidence;
      evidence["arch"] = arch;
      reject(outcome, finding.reason + " (" + arch + ")", evidence);
      outcome.report["archs"] = per_arch;
      return;
    }
  }
  outcome.report["archs"] = per_arch;
  outcome.report["sass"] = tools.cuobjdump.empty() ? "not available (cuobjdump missing): PTX scan only" : "cuobjdump";
  if (!request.untrusted) return;
  const cuda::ConstraintVerdict constraints =
      cuda::judge_task_constraints(task, {request.files, undefined, ptx_texts, sass_texts});
  outcome.warnings.insert(outcome.warnings.end(), constraints.warnings.begin(), constraints.warnings.end());
  if (constraints.violation) {
    reject(outcome, constraints.violation->reason, constraints.violation->evidence);
    return;
  }
  outcome.adopted_constraints = constraints.adopted;
}

}  // namespace evoteam::eval
