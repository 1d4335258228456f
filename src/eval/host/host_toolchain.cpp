// The host toolchain and the trusted programs built with it: the harness (per harness version and task glue)
// and the machine-peaks probe.
#include <evoteam/core/config.hpp>  // install_root() only: the "eval" section is read by eval_settings.cpp alone
#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>
#include <evoteam/core/inventory.hpp>
#include <evoteam/core/text.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <thread>

#include <evoteam/eval/sandbox.hpp>
#include "eval/glue.hpp"
#include "eval/harness_build.hpp"
#include "eval/host/host_build.hpp"

namespace evoteam::eval {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> harness_sources() {
  std::vector<fs::path> sources;
  for (const fs::path& dir : {harness_source_dir(), harness_source_dir() / "host"}) {
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(dir, error))
      if (entry.path().extension() == ".cpp" && entry.path().filename() != "peaks_main.cpp")
        sources.push_back(entry.path());
  }
  std::sort(sources.begin(), sources.end());
  return sources;
}

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 1);
  return "unknown cpu";
}

}  // namespace

fs::path harness_source_dir() { return install_root() / "kernels" / "common"; }

CompileSlots& CompileSlots::shared(int slots) {
  static std::mutex mutex;
  // Never destroyed: a compile on another thread may still release its slot while static destructors run at exit.
  static auto* by_bound = new std::map<int, std::unique_ptr<CompileSlots>>();
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<CompileSlots>& entry = (*by_bound)[slots];
  if (!entry) entry = std::make_unique<CompileSlots>(slots);
  return *entry;
}

void CompileSlots::acquire() {
  std::unique_lock<std::mutex> lock(m_mutex);
  m_changed.wait(lock, [this] { return m_free > 0; });
  --m_free;
}

void CompileSlots::release() {
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    ++m_free;
  }
  m_changed.notify_one();
}

std::string to_string(BuildStatus status) {
  switch (status) {
    case BuildStatus::ok: return "ok";
    case BuildStatus::compile_error: return "compile_error";
    case BuildStatus::compile_timeout: return "compile_timeout";
    case BuildStatus::static_reject: return "static_reject";
    case BuildStatus::infra_error: return "infra_error";
  }
  return "infra_error";
}

fs::path unique_sibling(const fs::path& final_dir) {
  static std::atomic<unsigned> counter{0};
  std::random_device device;
  return final_dir.parent_path() / (".tmp-" + final_dir.filename().string() + "-" + std::to_string(::getpid()) + "-" +
                                    std::to_string(counter++) + "-" + std::to_string(device()));
}

HostBuilder::HostBuilder(const EvalSettings& settings, ProcessRunner& runner, fs::path cache_dir)
    : m_settings(settings),
      m_runner(runner),
      m_cache_dir(std::move(cache_dir)),
      m_slots(CompileSlots::shared(settings.host.compile_jobs > 0
                                       ? settings.host.compile_jobs
                                       : static_cast<int>(std::max(1u, std::thread::hardware_concurrency())))) {}

const HostToolchain& HostBuilder::toolchain() {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (m_toolchain) return *m_toolchain;
  auto toolchain = std::make_unique<HostToolchain>();
  const std::string& name = m_settings.host.compiler;
  std::optional<fs::path> found = find_program(name);
  if (!found) throw Error("eval.host.compiler: cannot find \"" + name + "\" in PATH");
  toolchain->compiler = found->string();
  Command version;
  version.argv = {toolchain->compiler, "--version"};
  version.timeout = std::chrono::milliseconds(30'000);
  ProcessResult version_result = m_runner.run(version);
  Command machine;
  machine.argv = {toolchain->compiler, "-dumpmachine"};
  machine.timeout = std::chrono::milliseconds(30'000);
  ProcessResult machine_result = m_runner.run(machine);
  if (!version_result.ok())
    throw Error("cannot run " + toolchain->compiler + " --version: " + version_result.describe());
  const std::string version_line = first_line(version_result.out.text);
  toolchain->gcc = version_line.find("clang") == std::string::npos &&
                   (version_line.find("g++") != std::string::npos || version_line.find("GCC") != std::string::npos);
  toolchain->identity = version_line + "; " + first_line(machine_result.out.text) + ";" + cpu_model();
  toolchain->flags = m_settings.host.flags;
  toolchain->harness_flags = m_settings.host.harness_flags;
  toolchain->max_address_space = m_settings.host.max_address_space_bytes();
  m_toolchain = std::move(toolchain);
  return *m_toolchain;
}

std::string hash_harness_sources(const std::vector<fs::path>& dirs, const fs::path& base, const std::string& salt) {
  std::vector<fs::path> files;
  std::error_code error;
  for (const fs::path& dir : dirs)
    for (const auto& entry : fs::directory_iterator(dir, error))
      if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  if (files.empty()) throw Error("the harness sources are missing: " + base.string() + " (set EVOTEAM_HOME?)");
  std::string material = salt;
  for (const fs::path& file : files) material += fs::relative(file, base).string() + "\n" + read_file(file) + "\n";
  return sha256_hex(material).substr(0, 16);
}

ProcessResult run_compile_tool(ProcessRunner& runner, CompileSlots& slots, const std::vector<std::string>& argv,
                               const fs::path& cwd, double timeout_s, SandboxMode sandbox, const fs::path& writable,
                               std::uint64_t max_address_space) {
  Command command;
  SandboxSpec spec;
  spec.writable.push_back(writable);
  command.argv = sandbox_argv(sandbox, argv, spec);
  command.cwd = cwd;
  command.timeout = std::chrono::milliseconds(static_cast<long>(timeout_s * 1000));
  command.output_cap = 16u << 20;
  command.max_address_space = max_address_space;
  slots.acquire();
  ProcessResult result;
  try {
    result = runner.run(command);
  } catch (...) {
    slots.release();
    throw;
  }
  slots.release();
  return result;
}

std::string HostBuilder::harness_version() {
  std::lock_guard<std::mutex> lock(m_mutex);
  // The shared files and the host harness; other targets' harnesses (kernels/common/cuda) do not change it.
  if (m_harness_version.empty())
    m_harness_version =
        hash_harness_sources({harness_source_dir(), harness_source_dir() / "host"}, harness_source_dir(), "");
  return m_harness_version;
}

ProcessResult HostBuilder::run_tool(const std::vector<std::string>& argv, const fs::path& cwd, double timeout_s,
                                    SandboxMode sandbox, const fs::path& writable) {
  return run_compile_tool(m_runner, m_slots, argv, cwd, timeout_s, sandbox, writable, toolchain().max_address_space);
}

HarnessTool HostBuilder::harness_tool() {
  const double timeout_s = m_settings.host.harness_build_timeout_s;
  return [this, timeout_s](const std::vector<std::string>& argv, const fs::path& dir) {
    return run_tool(argv, dir, timeout_s, SandboxMode::none, dir);
  };
}

fs::path HostBuilder::harness_objects() {
  const HostToolchain& tools = toolchain();
  std::string key_material = harness_version() + "\n" + tools.identity;
  for (const std::string& flag : tools.harness_flags) key_material += "\n" + flag;
  const fs::path dir = m_cache_dir / "harness" / sha256_hex(key_material).substr(0, 24);
  const fs::path objects = dir / "obj";
  std::shared_ptr<std::mutex> lock = m_locks.get(objects.string());
  std::lock_guard<std::mutex> guard(*lock);
  if (fs::is_directory(objects)) return objects;
  std::vector<std::string> compile = {tools.compiler};
  compile.insert(compile.end(), tools.harness_flags.begin(), tools.harness_flags.end());
  compile.insert(compile.end(), {"-I", harness_source_dir().string()});
  compile_harness_objects(objects, harness_sources(), compile, harness_tool(), "the harness");
  return objects;
}

fs::path HostBuilder::harness(const Task& task) {
  const HostToolchain& tools = toolchain();
  const fs::path objects = harness_objects();
  const std::string glue = glue_source(task);
  std::string hooks = task.hooks_file.empty() ? "" : read_file(task.dir / task.hooks_file);
  // Full RELRO: every relocation is resolved at load and the tables holding them (the clock's slot among them)
  // are read-only before the first call, so a candidate cannot redirect what the harness calls.
  const std::vector<std::string> libraries = {"-ldl", "-Wl,-z,relro", "-Wl,-z,now"};
  const fs::path dir = objects.parent_path() / "tasks" /
                       sha256_hex(glue + "\nhooks\n" + hooks + "\nlink " + join(libraries, " ")).substr(0, 24);
  const fs::path executable = dir / "harness";
  std::shared_ptr<std::mutex> lock = m_locks.get(dir.string());
  std::lock_guard<std::mutex> guard(*lock);
  if (fs::is_regular_file(executable)) return executable;
  std::vector<std::string> link = {tools.compiler};
  link.insert(link.end(), tools.harness_flags.begin(), tools.harness_flags.end());
  link.insert(link.end(), {"-I", harness_source_dir().string()});
  return link_task_harness(dir, glue, hooks.empty() ? fs::path() : task.dir / task.hooks_file, objects, link, libraries,
                           harness_tool(), "the harness for task " + task.name);
}

fs::path HostBuilder::peaks_program() {
  const HostToolchain& tools = toolchain();
  std::string key_material = harness_version() + "\n" + tools.identity;
  for (const std::string& flag : tools.flags) key_material += "\n" + flag;
  const fs::path dir = m_cache_dir / "harness" / ("peaks-" + sha256_hex(key_material).substr(0, 24));
  const fs::path program = dir / "peaks";
  std::shared_ptr<std::mutex> lock = m_locks.get(dir.string());
  std::lock_guard<std::mutex> guard(*lock);
  if (fs::is_regular_file(program)) return program;
  evoteam::create_directories(dir.parent_path());
  const fs::path temporary = unique_sibling(dir);
  evoteam::create_directories(temporary);
  std::vector<std::string> argv = {tools.compiler};
  argv.insert(argv.end(), tools.flags.begin(), tools.flags.end());
  argv.insert(argv.end(),
              {"-ffp-contract=fast", (harness_source_dir() / "host" / "peaks_main.cpp").string(), "-o", "peaks"});
  ProcessResult result = harness_tool()(argv, temporary);
  if (!result.ok()) {
    std::error_code ignored;
    fs::remove_all(temporary, ignored);
    throw Error("cannot build the peaks probe: " + result.describe() + "\n" + result.err.text);
  }
  publish_build(temporary, dir);
  return program;
}

}  // namespace evoteam::eval
