#include <evoteam/core/inventory.hpp>

#include <array>
#include <cstdlib>
#include <sstream>

#include <unistd.h>

#include <evoteam/core/fs.hpp>
#include <evoteam/core/text.hpp>

namespace evoteam {

namespace {

ProcessResult run_quietly(ProcessRunner& runner, std::vector<std::string> argv, std::chrono::milliseconds timeout) {
  Command command;
  command.argv = std::move(argv);
  command.env = scrubbed_env();
  command.timeout = timeout;
  return runner.run(command);
}

std::string last_nonempty_line(const std::string& text) {
  std::istringstream stream(text);
  std::string line, last;
  while (std::getline(stream, line))
    if (!line.empty()) last = line;
  return last;
}

ToolProbe probe_version(ProcessRunner& runner, const std::string& name, const std::string& program,
                        const std::string& version_flag, const std::string& fix) {
  ToolProbe probe{name, false, "", fix, false};
  std::optional<std::filesystem::path> path = find_program(program);
  if (!path) {
    probe.detail = "not found";
    return probe;
  }
  ProcessResult result = run_quietly(runner, {path->string(), version_flag}, std::chrono::seconds(20));
  probe.usable = result.ok();
  std::string text = result.out.text.empty() ? result.err.text : result.out.text;
  probe.detail = path->string() + (probe.usable ? ": " + last_nonempty_line(text) : ": " + result.describe());
  if (probe.usable) probe.fix.clear();
  return probe;
}

// Compiles an empty kernel for one arch: the only sure way to know nvcc and ptxas accept it.
bool nvcc_supports(ProcessRunner& runner, const std::filesystem::path& nvcc, const std::string& arch) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("evoteam-doctor-" + std::to_string(::getpid()));
  evoteam::create_directories(dir);
  std::filesystem::path source = dir / "probe.cu";
  write_file_atomic(source, "__global__ void probe(int* x) { if (x) *x = 1; }\n");
  std::string number = arch.substr(3);  // "sm_90a" -> "90a"
  ProcessResult result = run_quietly(runner,
                                     {nvcc.string(), "-c", "-gencode", "arch=compute_" + number + ",code=sm_" + number,
                                      source.string(), "-o", (dir / ("probe_" + number + ".o")).string()},
                                     std::chrono::seconds(120));
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  return result.ok();
}

ToolProbe probe_nvcc(ProcessRunner& runner) {
  ToolProbe probe = probe_version(runner, "nvcc", "nvcc", "--version",
                                  "install the CUDA toolkit (nvcc) or add /usr/local/cuda/bin to PATH");
  if (!probe.usable) return probe;
  std::filesystem::path nvcc = *find_program("nvcc");
  const std::string archs = join(std::array{"sm_90a", "sm_100a"}, ", ", [&](const char* arch) {
    return std::string(arch) + (nvcc_supports(runner, nvcc, arch) ? " yes" : " no");
  });
  probe.detail += " (" + archs + ")";
  return probe;
}

ToolProbe probe_gpu(ProcessRunner& runner) {
  ToolProbe probe{"gpu", false, "", "", false};
  std::optional<std::string> gpu = detect_gpu(runner);
  probe.usable = gpu.has_value();
  probe.detail = gpu.value_or("none visible (nvidia-smi absent or no device)");
  if (!probe.usable) probe.fix = "timing CUDA tasks needs an NVIDIA GPU: run evoteam on a machine with one";
  return probe;
}

// `--executor slurm` needs sbatch and a controller that answers; the partitions it lists are what
// cluster.slurm.partition may name.
ToolProbe probe_slurm(ProcessRunner& runner) {
  ToolProbe probe = probe_version(runner, "slurm", "sbatch", "--version",
                                  "apt-get install slurm-client (only --executor slurm needs it)");
  if (!probe.usable) return probe;
  ProcessResult partitions = run_quietly(
      runner, {find_program("sinfo").value_or("sinfo").string(), "-h", "-o", "%P %a %D %G"}, std::chrono::seconds(20));
  if (!partitions.ok()) {
    probe.usable = false;
    probe.detail += "; the controller does not answer: " +
                    first_line(partitions.err.text.empty() ? partitions.describe() : partitions.err.text);
    probe.fix = "check SLURM_CONF and that slurmctld runs (`sinfo`)";
    return probe;
  }
  std::vector<std::string> lines;
  std::istringstream in(partitions.out.text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  probe.detail += "; partitions (name state nodes gres): " + join(lines, ", ");
  return probe;
}

ToolProbe probe_bubblewrap(ProcessRunner& runner) {
  ToolProbe probe{"bubblewrap", false, "", "apt-get install bubblewrap (candidates then run without network)", false};
  std::optional<std::filesystem::path> bwrap = find_program("bwrap");
  if (!bwrap) {
    probe.detail = "not found; candidates run unsandboxed (own process group, scrubbed environment)";
    return probe;
  }
  ProcessResult result = run_quietly(
      runner, {bwrap->string(), "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-net", "--die-with-parent", "true"},
      std::chrono::seconds(20));
  probe.usable = result.ok();
  probe.detail = bwrap->string() +
                 (probe.usable ? ": works (no network, read-only root)"
                               : ": present but cannot create a sandbox here (" + first_line(result.err.text) + ")");
  if (probe.usable)
    probe.fix.clear();
  else
    probe.fix = "allow unprivileged user namespaces, or run with --sandbox none";
  return probe;
}

ToolProbe probe_key(const std::string& variable) {
  const char* value = std::getenv(variable.c_str());
  bool set = value != nullptr && *value != '\0';
  return ToolProbe{variable, set, set ? "set" : "not set",
                   set ? "" : "export " + variable + "=... to use that provider (the builtin team needs none)", false};
}

}  // namespace

std::optional<std::filesystem::path> find_program(const std::string& name) {
  std::vector<std::filesystem::path> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream stream(path);
    for (std::string dir; std::getline(stream, dir, ':');)
      if (!dir.empty()) dirs.emplace_back(dir);
  }
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* home = std::getenv(variable)) dirs.push_back(std::filesystem::path(home) / "bin");
  dirs.emplace_back("/usr/local/cuda/bin");
  for (const std::filesystem::path& dir : dirs) {
    std::filesystem::path candidate = dir / name;
    if (::access(candidate.c_str(), X_OK) == 0 && std::filesystem::is_regular_file(candidate)) return candidate;
  }
  return std::nullopt;
}

std::optional<std::string> detect_gpu(ProcessRunner& runner) {
  std::optional<std::filesystem::path> smi = find_program("nvidia-smi");
  if (!smi) return std::nullopt;
  ProcessResult result = run_quietly(
      runner, {smi->string(), "--query-gpu=name,driver_version", "--format=csv,noheader"}, std::chrono::seconds(20));
  std::string line = first_line(result.out.text);
  if (!result.ok() || line.empty()) return std::nullopt;
  std::size_t comma = line.find(',');
  if (comma == std::string::npos) return line;
  return line.substr(0, comma) + ", driver" + line.substr(comma + 1);
}

std::vector<ToolProbe> probe_inventory(ProcessRunner& runner, const std::vector<std::string>& key_variables) {
  std::vector<ToolProbe> probes;
  ToolProbe cxx = probe_version(runner, "c++ compiler", "c++", "--version", "apt-get install g++");
  cxx.required = true;
  if (cxx.usable) {
    ProcessResult result = run_quietly(runner, {find_program("c++")->string(), "--version"}, std::chrono::seconds(20));
    cxx.detail = find_program("c++")->string() + ": " + first_line(result.out.text);
  }
  probes.push_back(cxx);
  probes.push_back(probe_nvcc(runner));
  probes.push_back(probe_gpu(runner));
  probes.push_back(probe_version(runner, "ncu", "ncu", "--version",
                                 "install Nsight Compute (profiles fall back to static ptxas/PTX signals)"));
  probes.push_back(probe_version(runner, "compute-sanitizer", "compute-sanitizer", "--version",
                                 "install the CUDA toolkit's compute-sanitizer (memcheck of new bests is skipped)"));
  probes.push_back(probe_version(runner, "cuobjdump", "cuobjdump", "--version",
                                 "pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm and put their bin folders on "
                                 "PATH (SASS checks fall back to the PTX scan)"));
  probes.push_back(probe_bubblewrap(runner));
  probes.push_back(probe_slurm(runner));
  probes.push_back(probe_version(runner, "perf", "perf", "--version",
                                 "apt-get install linux-perf (host profiles then use timing only)"));
  for (const std::string& variable : key_variables) probes.push_back(probe_key(variable));
  return probes;
}

nlohmann::json to_json(const std::vector<ToolProbe>& probes) {
  nlohmann::json items = nlohmann::json::array();
  for (const ToolProbe& probe : probes)
    items.push_back({{"name", probe.name},
                     {"usable", probe.usable},
                     {"detail", probe.detail},
                     {"fix", probe.fix},
                     {"required", probe.required}});
  return items;
}

}  // namespace evoteam
