// The CUDA toolchain and the trusted CUDA harness: shared harness objects compiled once per harness version,
// toolchain and arch list; the task's glue and hooks linked per task.
#include "eval/cuda/cuda_backend.hpp"

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/inventory.hpp>

#include <algorithm>

#include <evoteam/eval/sandbox.hpp>
#include "eval/cuda/cuda_tools.hpp"
#include "eval/glue.hpp"
#include "eval/harness_build.hpp"

namespace evoteam::eval {
namespace {

namespace fs = std::filesystem;

// The shared host logic (plan, records, inputs, comparison) and the CUDA harness proper.
std::vector<fs::path> cuda_harness_sources() {
  std::vector<fs::path> sources;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(harness_source_dir(), error))
    if (entry.path().extension() == ".cpp") sources.push_back(entry.path());
  for (const auto& entry : fs::directory_iterator(harness_source_dir() / "cuda", error))
    if (entry.path().extension() == ".cu") sources.push_back(entry.path());
  std::sort(sources.begin(), sources.end());
  return sources;
}

std::string last_line(const std::string& text) {
  std::string trimmed = text;
  while (!trimmed.empty() && (trimmed.back() == '\n' || trimmed.back() == '\r')) trimmed.pop_back();
  const std::size_t at = trimmed.rfind('\n');
  return at == std::string::npos ? trimmed : trimmed.substr(at + 1);
}

}  // namespace

std::vector<std::string> gencode_flags_for(const std::vector<std::string>& archs) {
  std::vector<std::string> flags;
  for (const std::string& arch : archs) {
    const std::vector<std::string> pair = cuda::gencode_flags(arch);
    flags.insert(flags.end(), pair.begin(), pair.end());
  }
  return flags;
}

CudaBuilder::CudaBuilder(const EvalSettings& settings, ProcessRunner& runner, fs::path cache_dir, CompileSlots& slots)
    : m_settings(settings), m_runner(runner), m_cache_dir(std::move(cache_dir)), m_slots(slots) {}

const CudaToolchain& CudaBuilder::toolchain() {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (m_toolchain) return *m_toolchain;
  auto toolchain = std::make_unique<CudaToolchain>();
  const std::optional<fs::path> nvcc = cuda::find_cuda_tool("nvcc");
  if (!nvcc)
    throw Error("nvcc is not installed (set EVOTEAM_NVCC, CUDA_HOME or PATH): cuda tasks cannot be built here");
  toolchain->nvcc = nvcc->string();
  Command version;
  version.argv = {toolchain->nvcc, "--version"};
  version.timeout = std::chrono::milliseconds(60'000);
  const ProcessResult nvcc_version = m_runner.run(version);
  if (!nvcc_version.ok()) throw Error("cannot run " + toolchain->nvcc + " --version: " + nvcc_version.describe());
  version.argv = {m_settings.host.compiler, "--version"};
  const ProcessResult host_version = m_runner.run(version);
  toolchain->identity =
      last_line(nvcc_version.out.text) + "; host " + host_version.out.text.substr(0, host_version.out.text.find('\n'));
  if (const std::optional<fs::path> cuobjdump = cuda::find_cuda_tool("cuobjdump"))
    toolchain->cuobjdump = cuobjdump->string();
  toolchain->flags = m_settings.cuda.flags;
  toolchain->harness_flags = m_settings.cuda.harness_flags;
  m_toolchain = std::move(toolchain);
  return *m_toolchain;
}

std::string CudaBuilder::harness_version() {
  std::lock_guard<std::mutex> lock(m_mutex);
  // The shared files and the CUDA harness; the host harness (kernels/common/host) does not change it.
  if (m_harness_version.empty()) {
    const fs::path common = harness_source_dir();
    m_harness_version = hash_harness_sources({common, common / "cuda"}, common, "cuda\n");
  }
  return m_harness_version;
}

ProcessResult CudaBuilder::run_tool(const std::vector<std::string>& argv, const fs::path& cwd, double timeout_s,
                                    SandboxMode sandbox, const fs::path& writable) {
  // No address-space limit: the CUDA toolchain and runtime reserve far more than they use.
  return run_compile_tool(m_runner, m_slots, argv, cwd, timeout_s, sandbox, writable, 0);
}

HarnessTool CudaBuilder::harness_tool() {
  const double timeout_s = m_settings.cuda.harness_build_timeout_s;
  return [this, timeout_s](const std::vector<std::string>& argv, const fs::path& dir) {
    return run_tool(argv, dir, timeout_s, SandboxMode::none, dir);
  };
}

fs::path CudaBuilder::harness_objects(const std::vector<std::string>& archs) {
  const CudaToolchain& tools = toolchain();
  std::string key_material = "cuda-harness\n" + harness_version() + "\n" + tools.identity;
  for (const std::string& flag : tools.harness_flags) key_material += "\n" + flag;
  for (const std::string& arch : archs) key_material += "\narch " + arch;
  const fs::path dir = m_cache_dir / "harness" / ("cuda-" + sha256_hex(key_material).substr(0, 24));
  const fs::path objects = dir / "obj";
  std::shared_ptr<std::mutex> lock = m_locks.get(objects.string());
  std::lock_guard<std::mutex> guard(*lock);
  if (fs::is_directory(objects)) return objects;
  const std::vector<std::string> gencode = gencode_flags_for(archs);
  std::vector<std::string> compile = {tools.nvcc};
  compile.insert(compile.end(), tools.harness_flags.begin(), tools.harness_flags.end());
  compile.insert(compile.end(), gencode.begin(), gencode.end());
  compile.insert(compile.end(), {"-cudart", "shared", "-I", harness_source_dir().string()});
  compile_harness_objects(objects, cuda_harness_sources(), compile, harness_tool(), "the CUDA harness");
  return objects;
}

fs::path CudaBuilder::harness(const Task& task) {
  const CudaToolchain& tools = toolchain();
  const fs::path objects = harness_objects(task.archs);
  const std::string glue = glue_source(task);
  const std::string hooks = task.hooks_file.empty() ? "" : read_file(task.dir / task.hooks_file);
  const fs::path dir = objects.parent_path() / "tasks" / sha256_hex(glue + "\nhooks\n" + hooks).substr(0, 24);
  const fs::path executable = dir / "harness";
  std::shared_ptr<std::mutex> lock = m_locks.get(dir.string());
  std::lock_guard<std::mutex> guard(*lock);
  if (fs::is_regular_file(executable)) return executable;
  std::vector<std::string> link = {tools.nvcc};
  link.insert(link.end(), tools.harness_flags.begin(), tools.harness_flags.end());
  link.insert(link.end(), {"-cudart", "shared", "-I", harness_source_dir().string()});
  // cuBLAS for the peaks probe only (implementations never see it unless their task allows it); CUPTI for the
  // kernel trace of timing runs.
  std::vector<std::string> libraries = {"-lcublas", "-lcupti", "-ldl"};
  // A task with a ranks axis: the glue creates the harness's communicator and passes it to every call.
  if (!task.ranks_axis.empty()) libraries.push_back("-lnccl");
  return link_task_harness(dir, glue, hooks.empty() ? fs::path() : task.dir / task.hooks_file, objects, link, libraries,
                           harness_tool(), "the CUDA harness for task " + task.name);
}

}  // namespace evoteam::eval
