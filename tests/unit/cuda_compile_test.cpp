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

#include "eval/cuda/cuda_constraints.hpp"
#include "eval/cuda/cuda_static.hpp"
#include "eval/cuda/cuda_tools.hpp"
#include "support/temp_dir.hpp"
#include "support/test_cache.hpp"

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
fs::path build_root() { return testing::test_cache_root() / "cuda-test-builds"; }

// Compiles `invocation` once into a directory keyed by the hash of its command and sources (the output directory is
// set here), or reuses the one an earlier process published.
void build_once(ArchBuild& build, const std::string& label, NvccInvocation invocation) {
  std::string key = label;
  for (const std::string& arg : nvcc_command(invocation)) key += arg + " ";  // flags, before the output dir is set
  for (const fs::path& source : invocation.sources) key += source.string() + "\n" + read_file(source);
  build.dir = build_root() / (label + "-" + sha256_hex(key).substr(0, 16));
  const fs::path stamp = build.dir / "nvcc.rc";
  if (fs::exists(stamp)) {
    build.nvcc.rc = std::stoi(read_file(stamp));
    build.nvcc.output = read_file(build.dir / "nvcc.log");
    return;
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
}

// `sources` for one arch: host objects for sm_90a (-c, so the host code's undefined symbols can be read), device
// code only (-cubin) for the others. Built once per label and arch for the whole test binary.
const ArchBuild& sources_build(const std::string& label, const std::string& arch,
                               const std::vector<fs::path>& sources) {
  static std::mutex mutex;
  static std::map<std::string, ArchBuild> builds;
  std::lock_guard<std::mutex> lock(mutex);
  const std::string name = label + arch;
  const auto found = builds.find(name);
  if (found != builds.end()) return found->second;
  ArchBuild& build = builds[name];
  const std::optional<fs::path> nvcc = find_cuda_tool("nvcc");
  if (!nvcc) {
    build.skip = "nvcc is not installed (set EVOTEAM_NVCC or put it on PATH)";
    return build;
  }
  NvccInvocation invocation;
  invocation.nvcc = nvcc->string();
  invocation.arch = arch;
  invocation.output = arch == "sm_90a" ? NvccOutput::object : NvccOutput::cubin;
  invocation.sources = sources;
  build_once(build, label + arch, invocation);
  return build;
}

// The hostile corpus and the harness.
const ArchBuild& arch_build(const std::string& arch) {
  std::vector<fs::path> sources = hostile_sources();
  const std::vector<fs::path> harness = harness_sources();
  sources.insert(sources.end(), harness.begin(), harness.end());
  return sources_build("", arch, sources);
}

#define REQUIRE_BUILD(build)                                              \
  do {                                                                    \
    if (!(build).skip.empty()) GTEST_SKIP() << (build).skip;              \
    ASSERT_EQ((build).nvcc.rc, 0) << (build).nvcc.output.substr(0, 4000); \
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
CudaStaticSignals signals_for(const fs::path& source, const std::string& arch,
                              const std::optional<fs::path>& cuobjdump) {
  const std::string stem = source.stem().string();
  const ArchBuild& build = arch_build(arch);
  CudaStaticSignals signals;
  for (const KernelResources& kernel : parse_ptxas(build.nvcc.output))
    if (kernel.name.rfind(stem + "_kernel", 0) == 0) signals.kernels.push_back(kernel);
  signals.ptx = scan_ptx(read_file(build.dir / (stem + ".ptx")));
  const ArchBuild& host = arch_build("sm_90a");
  signals.host_undefined = parse_nm_undefined(
      run_command({"nm", "-u", (host.dir / (stem + ".o")).string()}, host.dir / (stem + ".nm")).output);
  if (cuobjdump) {
    const CommandResult sass = run_command({cuobjdump->string(), "-sass", (build.dir / (stem + ".cubin")).string()},
                                           build.dir / (stem + ".sass"));
    if (sass.rc == 0) signals.sass = parse_sass(sass.output);
  }
  signals.sources[source.filename().string()] = read_file(source);
  return signals;
}

TEST(CudaHostile, StaticVerdictsMatchTheCorpusForBothArchs) {
  const nlohmann::json expected =
      nlohmann::json::parse(read_file(k_source_dir / "tests/data/hostile/cuda/expected.json"), nullptr, true, true);
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
        EXPECT_NE(reasons.find(want), std::string::npos)
            << arch << " " << name << " wants \"" << want << "\", got: " << reasons;
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
  signals.host_undefined = parse_nm_undefined(
      run_command({"nm", "-u", (build.dir / "example_kernel.o").string()}, build.dir / "example.nm").output);
  CudaStaticPolicy policy;
  policy.arch = "sm_90a";
  const CudaStaticVerdict verdict = judge_static(signals, policy);
  EXPECT_TRUE(verdict.rejections.empty()) << verdict.rejections.front().reason;
  EXPECT_TRUE(verdict.warnings.empty());
  EXPECT_EQ(verdict.report["instructions_from"], "ptx");
}

TEST(CudaHostile, SassPathWhenCuobjdumpIsInstalled) {
  const std::optional<fs::path> cuobjdump = find_cuda_tool("cuobjdump");
  if (!cuobjdump)
    GTEST_SKIP() << "cuobjdump is not installed (the PTX scan stands in; set EVOTEAM_CUOBJDUMP to test the SASS path)";
  for (const std::string arch : {"sm_90a", "sm_100a"}) {
    REQUIRE_BUILD(arch_build(arch));
    REQUIRE_BUILD(arch_build("sm_90a"));
    const CudaStaticSignals signals =
        signals_for(k_source_dir / "tests/data/hostile/cuda/oob_write.cu", arch, cuobjdump);
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

// The task-constraint fixtures (tests/data/cuda): a CUDA-core kernel and a wgmma kernel, for both archs.
const ArchBuild& constraint_build(const std::string& arch) {
  return sources_build(
      "constraints-", arch,
      {k_source_dir / "tests/data/cuda/fma_kernel.cu", k_source_dir / "tests/data/cuda/wgmma_kernel.cu"});
}

// What the build stage hands the task constraints for one fixture: its source, and per arch its PTX and, when
// cuobjdump is installed, its SASS.
CudaBuildTexts texts_of(const std::string& stem, const std::optional<fs::path>& cuobjdump) {
  CudaBuildTexts texts;
  texts.sources[stem + ".cu"] = read_file(k_source_dir / "tests/data/cuda" / (stem + ".cu"));
  for (const std::string arch : {"sm_90a", "sm_100a"}) {
    const ArchBuild& build = constraint_build(arch);
    texts.ptx[arch] = read_file(build.dir / (stem + ".ptx"));
    if (!cuobjdump) continue;
    const CommandResult sass = run_command({cuobjdump->string(), "-sass", (build.dir / (stem + ".cubin")).string()},
                                           build.dir / (stem + ".sass"));
    if (sass.rc == 0) texts.sass[arch] = sass.output;
  }
  return texts;
}

StaticConstraint wgmma_required(const std::string& scope, std::vector<std::string> archs, bool once_adopted = false) {
  StaticConstraint constraint;
  constraint.name = scope == "sass" ? "hgmma_sass" : "wgmma_ptx";
  constraint.scope = scope;
  constraint.pattern = scope == "sass" ? "HGMMA" : "wgmma\\.mma_async";
  constraint.required = true;
  constraint.message = "use warpgroup MMA";
  constraint.archs = std::move(archs);
  constraint.once_adopted = once_adopted;
  return constraint;
}

Task task_with(std::vector<StaticConstraint> constraints) {
  Task task;
  task.target = Target::cuda;
  task.archs = {"sm_90a", "sm_100a"};
  task.static_constraints = std::move(constraints);
  return task;
}

#define REQUIRE_CONSTRAINT_BUILDS()             \
  do {                                          \
    REQUIRE_BUILD(constraint_build("sm_90a"));  \
    REQUIRE_BUILD(constraint_build("sm_100a")); \
  } while (0)

// A required construct: the CUDA-core kernel fails it, naming the constraint and where it is missing; the wgmma
// kernel meets it on sm_90a, in the PTX and, where cuobjdump is installed, in the SASS ptxas emitted.
TEST(CudaTaskConstraints, RequireWgmmaOnSm90aRejectsCudaCoresAndPassesWgmma) {
  REQUIRE_CONSTRAINT_BUILDS();
  const std::optional<fs::path> cuobjdump = find_cuda_tool("cuobjdump");
  const CudaBuildTexts fma = texts_of("fma_kernel", cuobjdump);
  const CudaBuildTexts wgmma = texts_of("wgmma_kernel", cuobjdump);
  std::vector<std::string> scopes = {"ptx"};
  if (cuobjdump) scopes.push_back("sass");
  for (const std::string& scope : scopes) {
    SCOPED_TRACE(scope);
    const Task task = task_with({wgmma_required(scope, {"sm_90a"})});
    const ConstraintVerdict rejected = judge_task_constraints(task, fma);
    ASSERT_TRUE(rejected.violation.has_value());
    EXPECT_NE(rejected.violation->reason.find("constraint " + task.static_constraints[0].name + " not met in " + scope +
                                              " sm_90a"),
              std::string::npos)
        << rejected.violation->reason;
    EXPECT_NE(rejected.violation->reason.find("use warpgroup MMA"), std::string::npos) << rejected.violation->reason;
    EXPECT_EQ(rejected.violation->evidence["constraint"], task.static_constraints[0].name);
    const ConstraintVerdict passed = judge_task_constraints(task, wgmma);
    EXPECT_FALSE(passed.violation.has_value()) << passed.violation->reason;
  }
  if (!cuobjdump) {
    // The SASS constraint cannot be judged then: it neither rejects nor passes silently.
    const ConstraintVerdict unjudged = judge_task_constraints(task_with({wgmma_required("sass", {"sm_90a"})}), fma);
    EXPECT_FALSE(unjudged.violation.has_value());
    ASSERT_EQ(unjudged.warnings.size(), 1u);
    EXPECT_NE(unjudged.warnings[0].find("cuobjdump is not installed"), std::string::npos);
  }
}

// Per-arch scoping: wgmma exists on sm_90a only, so requiring it of every arch rejects even the wgmma kernel (its
// sm_100a code has none), the same constraint scoped to sm_90a passes it, and scoped to sm_100a rejects it there. A
// forbid scoped to sm_100a does not see the sm_90a wgmma.
TEST(CudaTaskConstraints, AConstraintScopedToArchsJudgesOnlyThoseArchs) {
  REQUIRE_CONSTRAINT_BUILDS();
  const CudaBuildTexts wgmma = texts_of("wgmma_kernel", std::nullopt);
  ASSERT_NE(wgmma.ptx.at("sm_90a").find("wgmma.mma_async"), std::string::npos);
  ASSERT_EQ(wgmma.ptx.at("sm_100a").find("wgmma.mma_async"), std::string::npos);

  const ConstraintVerdict everywhere = judge_task_constraints(task_with({wgmma_required("ptx", {})}), wgmma);
  ASSERT_TRUE(everywhere.violation.has_value());
  EXPECT_NE(everywhere.violation->reason.find("not met in ptx sm_100a"), std::string::npos)
      << everywhere.violation->reason;
  EXPECT_FALSE(judge_task_constraints(task_with({wgmma_required("ptx", {"sm_90a"})}), wgmma).violation.has_value());
  const ConstraintVerdict elsewhere = judge_task_constraints(task_with({wgmma_required("ptx", {"sm_100a"})}), wgmma);
  ASSERT_TRUE(elsewhere.violation.has_value());
  EXPECT_NE(elsewhere.violation->reason.find("ptx sm_100a"), std::string::npos) << elsewhere.violation->reason;

  StaticConstraint forbid = wgmma_required("ptx", {"sm_100a"});
  forbid.required = false;
  EXPECT_FALSE(judge_task_constraints(task_with({forbid}), wgmma).violation.has_value());
  forbid.archs = {};
  const ConstraintVerdict forbidden = judge_task_constraints(task_with({forbid}), wgmma);
  ASSERT_TRUE(forbidden.violation.has_value());
  EXPECT_NE(forbidden.violation->reason.find("violated in ptx sm_90a"), std::string::npos)
      << forbidden.violation->reason;
}

// A once-adopted constraint never rejects: the verdict lists it when the build meets it, for the lab to hold the
// team to.
TEST(CudaTaskConstraints, OnceAdoptedConstraintsAreReportedNeverRejected) {
  REQUIRE_CONSTRAINT_BUILDS();
  const std::optional<fs::path> cuobjdump = find_cuda_tool("cuobjdump");
  const Task task = task_with({wgmma_required("ptx", {"sm_90a"}, true), wgmma_required("sass", {"sm_90a"}, true)});
  const ConstraintVerdict fma = judge_task_constraints(task, texts_of("fma_kernel", cuobjdump));
  EXPECT_FALSE(fma.violation.has_value());
  EXPECT_TRUE(fma.adopted.empty());
  const ConstraintVerdict wgmma = judge_task_constraints(task, texts_of("wgmma_kernel", cuobjdump));
  EXPECT_FALSE(wgmma.violation.has_value());
  const std::vector<std::string> expected =
      cuobjdump ? std::vector<std::string>{"wgmma_ptx", "hgmma_sass"} : std::vector<std::string>{"wgmma_ptx"};
  EXPECT_EQ(wgmma.adopted, expected);
}

// The tensor-core warning a task that expects tensor cores turns on: the CUDA-core kernel gets it on sm_90a, the
// wgmma kernel does not. Judged on SASS where cuobjdump is installed, else on the PTX.
TEST(CudaTaskConstraints, TheTensorCoreWarningFiresForCudaCoresNotForWgmma) {
  REQUIRE_CONSTRAINT_BUILDS();
  const std::optional<fs::path> cuobjdump = find_cuda_tool("cuobjdump");
  CudaStaticPolicy policy;
  policy.arch = "sm_90a";
  policy.tensor_cores = TensorCores::required;
  const auto warned = [&](const std::string& stem) {
    const CudaBuildTexts texts = texts_of(stem, cuobjdump);
    CudaStaticSignals signals;
    signals.ptx = scan_ptx(texts.ptx.at("sm_90a"));
    if (texts.sass.count("sm_90a")) signals.sass = parse_sass(texts.sass.at("sm_90a"));
    const CudaStaticVerdict verdict = judge_static(signals, policy);
    return std::any_of(verdict.warnings.begin(), verdict.warnings.end(), [](const std::string& w) {
      return w.find("no wgmma (HGMMA) tensor-core instruction for sm_90a") != std::string::npos;
    });
  };
  EXPECT_TRUE(warned("fma_kernel"));
  EXPECT_FALSE(warned("wgmma_kernel"));
}

// The GPU suite's parts that need no device (tests/gpu): the independent timer builds for sm_90a and runs, and the
// suite itself says plainly that there is no GPU here, exits 3 and still writes its table in both forms.
TEST(CudaGpuSuite, TheIndependentTimerBuildsForSm90aAndRuns) {
  const std::optional<fs::path> nvcc = find_cuda_tool("nvcc");
  if (!nvcc) GTEST_SKIP() << "nvcc is not installed (set EVOTEAM_NVCC or put it on PATH)";
  evoteam::testing::TempDir dir;
  const fs::path timer = dir.path() / "event_timer";
  const CommandResult build =
      run_command({nvcc->string(), "-gencode", "arch=compute_90a,code=sm_90a", "-O3", "-std=c++17", "-cudart", "shared",
                   "-Xcompiler", "-Wall,-Wextra,-Werror", "-o", timer.string(),
                   (k_source_dir / "tests/gpu/event_timer.cu").string(), "-ldl"},
                  dir.path() / "nvcc.log");
  ASSERT_EQ(build.rc, 0) << build.output.substr(0, 4000);
  // No library to time: it says so before touching a device (exit 2), which shows that it links and loads here.
  const CommandResult missing =
      run_command({timer.string(), (dir.path() / "absent.so").string()}, dir.path() / "run.log");
  EXPECT_EQ(missing.rc, 2) << missing.output;
  EXPECT_NE(missing.output.find("cannot load"), std::string::npos) << missing.output;
}

TEST(CudaGpuSuite, WithoutADeviceTheSuiteSaysNoGpuExitsThreeAndWritesItsTable) {
  evoteam::testing::TempDir dir;
  if (run_command({"sh", "-c", "nvidia-smi -L"}, dir.path() / "smi.log").rc == 0)
    GTEST_SKIP() << "this machine has a GPU";
  const fs::path results = dir.path() / "gpu-results.txt";
  const CommandResult suite =
      run_command({"env", "-u", "OUT", "EVOTEAM_GPU_RESULTS=" + results.string(),
                   "EVOTEAM_GPU_BUILD=" + (dir.path() / "work").string(), (k_source_dir / "tests/gpu/run.sh").string()},
                  dir.path() / "suite.log");
  EXPECT_EQ(suite.rc, 3) << suite.output;
  EXPECT_NE(suite.output.find("NO GPU"), std::string::npos) << suite.output;
  ASSERT_TRUE(fs::exists(results));
  EXPECT_NE(read_file(results).find("NO_GPU"), std::string::npos);
  ASSERT_TRUE(fs::exists(dir.path() / "gpu-results.md"));
  EXPECT_NE(read_file(dir.path() / "gpu-results.md").find("| gpu present | NO_GPU |"), std::string::npos);
}

// The suite's per-workload table reads the vendor figures an evaluation carries per workload and for the task, and
// a task whose own baseline is the vendor library (gemm_bf16's cuBLAS) from its baseline's figures.
TEST(CudaGpuSuite, TheLatencyTableShowsEachWorkloadsVendorFigures) {
  evoteam::testing::TempDir dir;
  if (run_command({"python3", "--version"}, dir.path() / "python.log").rc != 0)
    GTEST_SKIP() << "python3 is not installed";
  fs::create_directories(dir.path() / "eval");
  write_file_atomic(dir.path() / "eval" / "rmsnorm_h4096.json", R"({"task": "rmsnorm_h4096", "verdict": "PASS",
    "workloads": [
      {"name": "b1", "candidate": {"median_s": 2e-5}, "baseline": {"median_s": 2e-5},
       "vendor": {"median_s": 1e-5, "speedup": 2.0, "fraction": 0.5}},
      {"name": "b8", "candidate": {"median_s": 4e-5}, "baseline": {"median_s": 4e-5}, "vendor": null}],
    "vendor": {"name": "flashinfer", "status": "measured", "fraction": 0.5}})");
  write_file_atomic(dir.path() / "eval" / "kmeans_assign.json", R"({"task": "kmeans_assign", "verdict": "PASS",
    "workloads": [{"name": "k8", "candidate": {"median_s": 3e-5}, "baseline": {"median_s": 3e-5}}],
    "vendor": {"name": "flashinfer", "status": "unavailable", "detail": "no C++ kernel"}})");
  write_file_atomic(dir.path() / "eval" / "rmsnorm_bare.json", R"({"task": "rmsnorm_bare", "verdict": "PASS",
    "workloads": [{"name": "b64", "candidate": {"median_s": 8e-5}, "baseline": {"median_s": 8e-5}}]})");
  write_file_atomic(dir.path() / "eval" / "gemm_bf16.json", R"({"task": "gemm_bf16", "verdict": "PASS", "speedup": 0.25,
    "workloads": [{"name": "m128", "candidate": {"median_s": 1e-4}, "baseline": {"median_s": 2.5e-5}}]})");
  const CommandResult table =
      run_command({"python3", (k_source_dir / "tests/gpu/latency_table.py").string(), "markdown",
                   (dir.path() / "eval").string(), (k_source_dir / "kernels").string()},
                  dir.path() / "table.md");
  ASSERT_EQ(table.rc, 0) << table.output;
  for (const std::string row :
       {"| gemm_bf16 | m128 | 0.1000 | cublas | 0.0250 | 0.250 | PASS |",
        "| gemm_bf16 | (geomean) | - | cublas | - | 0.250 | PASS |",
        "| rmsnorm_h4096 | b1 | 0.0200 | flashinfer | 0.0100 | 0.500 | PASS |",
        "| rmsnorm_h4096 | b8 | 0.0400 | flashinfer (measured) | - | - | PASS |",
        "| rmsnorm_h4096 | (geomean) | - | flashinfer | - | 0.500 | PASS |",
        "| kmeans_assign | k8 | 0.0300 | flashinfer (unavailable) | - | - | PASS |",
        "| kmeans_assign | (geomean) | - | flashinfer (unavailable: no C++ kernel) | - | - | PASS |",
        "| rmsnorm_bare | b64 | 0.0800 | - | - | - | PASS |"})
    EXPECT_NE(table.output.find(row), std::string::npos) << row << "\n" << table.output;
}

}  // namespace
}  // namespace evoteam::eval::cuda
