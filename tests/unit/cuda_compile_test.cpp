// Builds the CUDA harness, its example implementation and the hostile CUDA corpus with the real nvcc, once per
// arch for the whole test binary (nvcc is slow on a loaded machine): sm_90a as host objects (-c, so the host
// code's undefined symbols can be read), sm_100a device-only (-cubin, the host side is the same). PTX is kept
// (-keep) for the static scan. Skips with a reason when nvcc is not installed. Needs no GPU.
#include <unistd.h>

#include <gtest/gtest.h>

#include <evoteam/core/fs.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>

#include "eval/cuda/cuda_static.hpp"
#include "eval/cuda/cuda_tools.hpp"

namespace evoteam::eval::cuda {
namespace {

namespace fs = std::filesystem;

const fs::path k_source_dir = EVOTEAM_SOURCE_DIR;

struct CommandResult {
  int rc = -1;
  std::string output;  // stdout and stderr together
};

std::string quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

CommandResult run_command(const std::vector<std::string>& argv, const fs::path& log) {
  std::string line;
  for (const std::string& arg : argv) line += quote(arg) + " ";
  line += "> " + quote(log.string()) + " 2>&1";
  CommandResult result;
  const int status = std::system(line.c_str());
  result.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::error_code error;
  if (fs::exists(log, error)) result.output = read_file(log);
  return result;
}

std::vector<fs::path> sources_in(const fs::path& dir) {
  std::vector<fs::path> sources;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".cu") sources.push_back(entry.path());
  std::sort(sources.begin(), sources.end());
  return sources;
}

std::vector<fs::path> hostile_sources() { return sources_in(k_source_dir / "tests/data/hostile/cuda"); }
std::vector<fs::path> harness_sources() { return sources_in(k_source_dir / "kernels/common/cuda"); }

// One build of everything for one arch, shared by every test in this file.
struct ArchBuild {
  std::string skip;  // non-empty: why the tests cannot run
  fs::path dir;
  CommandResult nvcc;
};

// Builds live under the build tree, keyed by the hash of the nvcc command and every source, so that the
// tests of this file (one process each under CTest) compile each arch once and reuse it.
fs::path build_root() { return fs::path(EVOTEAM_TEST_HELPERS_DIR) / "cuda-test-builds"; }

const ArchBuild& arch_build(const std::string& arch) {
  static std::mutex mutex;
  static std::map<std::string, ArchBuild> builds;
  std::lock_guard<std::mutex> lock(mutex);
  const auto found = builds.find(arch);
  if (found != builds.end()) return found->second;
  ArchBuild& build = builds[arch];
  const std::optional<fs::path> nvcc = find_cuda_tool("nvcc");
  if (!nvcc) {
    build.skip = "nvcc is not installed (set EVOTEAM_NVCC or put it on PATH)";
    return build;
  }
  NvccInvocation invocation;
  invocation.nvcc = nvcc->string();
  invocation.arch = arch;
  invocation.output = arch == "sm_90a" ? NvccOutput::object : NvccOutput::cubin;
  invocation.sources = hostile_sources();
  const std::vector<fs::path> harness = harness_sources();
  invocation.sources.insert(invocation.sources.end(), harness.begin(), harness.end());
  std::string key = arch;
  for (const std::string& arg : nvcc_command(invocation)) key += arg + " ";  // flags, before the output dir is set
  for (const fs::path& source : invocation.sources) key += source.string() + "\n" + read_file(source);
  build.dir = build_root() / (arch + "-" + sha256_hex(key).substr(0, 16));
  const fs::path stamp = build.dir / "nvcc.rc";
  if (fs::exists(stamp)) {
    build.nvcc.rc = std::stoi(read_file(stamp));
    build.nvcc.output = read_file(build.dir / "nvcc.log");
    return build;
  }
  // Each process builds in its own directory and publishes it by rename: test processes running side by side
  // (ctest -j) must not write nvcc's intermediate files over each other.
  const fs::path own = build.dir.string() + ".tmp-" + std::to_string(::getpid());
  fs::remove_all(own);
  fs::create_directories(own);
  invocation.out = own;
  invocation.extra = {"-keep", "-keep-dir", own.string(), "-Xcompiler", "-Wall,-Wextra,-Werror"};
  build.nvcc = run_command(nvcc_command(invocation), own / "nvcc.log");
  write_file_atomic(own / "nvcc.rc", std::to_string(build.nvcc.rc));
  std::error_code taken;
  if (fs::exists(build.dir) && !fs::exists(stamp)) fs::remove_all(build.dir, taken);  // a half-made earlier build
  fs::rename(own, build.dir, taken);  // fails when another process published first: use its build
  if (taken) {
    fs::remove_all(own);
    build.nvcc.rc = std::stoi(read_file(stamp));
    build.nvcc.output = read_file(build.dir / "nvcc.log");
  }
  return build;
}

#define REQUIRE_BUILD(build)                                                        \
  do {                                                                              \
    if (!(build).skip.empty()) GTEST_SKIP() << (build).skip;                        \
    ASSERT_EQ((build).nvcc.rc, 0) << (build).nvcc.output.substr(0, 4000);           \
  } while (0)

TEST(CudaCompile, HarnessAndExampleBuildForBothArchs) {
  for (const std::string arch : {"sm_90a", "sm_100a"}) {
    const ArchBuild& build = arch_build(arch);
    REQUIRE_BUILD(build);
    const std::vector<KernelResources> kernels = parse_ptxas(build.nvcc.output);
    // Harness-side kernels are in anonymous namespaces, so their names are mangled; match by substring.
    const auto mentions = [&](const std::string& part) {
      return std::any_of(kernels.begin(), kernels.end(), [&](const KernelResources& k) {
        return k.name.find(part) != std::string::npos && k.arch == arch;
      });
    };
    EXPECT_TRUE(mentions("read_all")) << arch;
    EXPECT_TRUE(mentions("scale_kernel")) << arch;
    for (const std::string stem : {"harness_main", "device_buffer", "l2_flush", "cuda_check", "example_kernel"}) {
      const fs::path output = build.dir / (stem + (arch == "sm_90a" ? ".o" : ".cubin"));
      EXPECT_TRUE(fs::exists(output)) << output;
    }
    EXPECT_TRUE(fs::exists(build.dir / "example_kernel.ptx")) << arch;
  }
}

// Everything the static stage would learn about one hostile file: PTX and ptxas for the arch, host symbols from
// the sm_90a object (the host side does not depend on the arch), SASS when cuobjdump is installed.
CudaStaticSignals signals_for(const fs::path& source, const std::string& arch, const std::optional<fs::path>& cuobjdump) {
  const std::string stem = source.stem().string();
  const ArchBuild& build = arch_build(arch);
  CudaStaticSignals signals;
  for (const KernelResources& kernel : parse_ptxas(build.nvcc.output))
    if (kernel.name.rfind(stem + "_kernel", 0) == 0) signals.kernels.push_back(kernel);
  signals.ptx = scan_ptx(read_file(build.dir / (stem + ".ptx")));
  const ArchBuild& host = arch_build("sm_90a");
  signals.host_undefined = parse_nm_undefined(run_command({"nm", "-u", (host.dir / (stem + ".o")).string()}, host.dir / (stem + ".nm")).output);
  if (cuobjdump) {
    const CommandResult sass = run_command({cuobjdump->string(), "-sass", (build.dir / (stem + ".cubin")).string()}, build.dir / (stem + ".sass"));
    if (sass.rc == 0) signals.sass = parse_sass(sass.output);
  }
  signals.sources[source.filename().string()] = read_file(source);
  return signals;
}

TEST(CudaHostile, StaticVerdictsMatchTheCorpusForBothArchs) {
  const nlohmann::json expected = nlohmann::json::parse(read_file(k_source_dir / "tests/data/hostile/cuda/expected.json"), nullptr, true, true);
  const std::vector<fs::path> sources = hostile_sources();
  ASSERT_EQ(sources.size() + 1, expected.size());  // every file has an entry (plus the "//" note)
  for (const std::string arch : {"sm_90a", "sm_100a"}) {
    REQUIRE_BUILD(arch_build(arch));
    REQUIRE_BUILD(arch_build("sm_90a"));
    for (const fs::path& source : sources) {
      const std::string name = source.filename().string();
      ASSERT_TRUE(expected.contains(name)) << name;
      CudaStaticPolicy policy;
      policy.arch = arch;
      policy.shape_literals = {1048576};
      const CudaStaticVerdict verdict = judge_static(signals_for(source, arch, std::nullopt), policy);
      const std::string want = expected[name]["static"];
      std::string reasons;
      for (const CudaFinding& finding : verdict.rejections) reasons += finding.reason + "; ";
      if (want == "ok") {
        EXPECT_TRUE(verdict.rejections.empty()) << arch << " " << name << ": " << reasons;
      } else {
        EXPECT_NE(reasons.find(want), std::string::npos) << arch << " " << name << " wants \"" << want << "\", got: " << reasons;
      }
      for (const auto& warning : expected[name].value("warnings", nlohmann::json::array())) {
        const std::string part = warning.get<std::string>();
        EXPECT_TRUE(std::any_of(verdict.warnings.begin(), verdict.warnings.end(),
                                [&](const std::string& w) { return w.find(part) != std::string::npos; }))
            << arch << " " << name << " lacks warning \"" << part << "\"";
      }
    }
  }
}

TEST(CudaHostile, TheExampleImplementationPassesTheStaticStage) {
  const ArchBuild& build = arch_build("sm_90a");
  REQUIRE_BUILD(build);
  CudaStaticSignals signals;
  signals.ptx = scan_ptx(read_file(build.dir / "example_kernel.ptx"));
  signals.host_undefined = parse_nm_undefined(run_command({"nm", "-u", (build.dir / "example_kernel.o").string()}, build.dir / "example.nm").output);
  CudaStaticPolicy policy;
  policy.arch = "sm_90a";
  const CudaStaticVerdict verdict = judge_static(signals, policy);
  EXPECT_TRUE(verdict.rejections.empty()) << verdict.rejections.front().reason;
  EXPECT_TRUE(verdict.warnings.empty());
  EXPECT_EQ(verdict.report["instructions_from"], "ptx");
}

TEST(CudaHostile, SassPathWhenCuobjdumpIsInstalled) {
  const std::optional<fs::path> cuobjdump = find_cuda_tool("cuobjdump");
  if (!cuobjdump) GTEST_SKIP() << "cuobjdump is not installed (the PTX scan stands in; set EVOTEAM_CUOBJDUMP to test the SASS path)";
  for (const std::string arch : {"sm_90a", "sm_100a"}) {
    REQUIRE_BUILD(arch_build(arch));
    REQUIRE_BUILD(arch_build("sm_90a"));
    const CudaStaticSignals signals = signals_for(k_source_dir / "tests/data/hostile/cuda/oob_write.cu", arch, cuobjdump);
    ASSERT_TRUE(signals.sass.has_value()) << arch;
    EXPECT_GT(signals.sass->count("EXIT"), 0) << arch;
    EXPECT_GT(signals.sass->count("STG"), 0) << arch;
    CudaStaticPolicy policy;
    policy.arch = arch;
    policy.tensor_cores = TensorCores::required;
    const CudaStaticVerdict verdict = judge_static(signals, policy);
    EXPECT_EQ(verdict.report["instructions_from"], "sass");
    EXPECT_TRUE(std::any_of(verdict.warnings.begin(), verdict.warnings.end(),
                            [](const std::string& w) { return w.find("(checked in sass)") != std::string::npos; }));
  }
}

}  // namespace
}  // namespace evoteam::eval::cuda
