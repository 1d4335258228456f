// nvcc command lines and the parsers of ptxas, PTX and SASS text, on output captured from nvcc 13.0 and
// cuobjdump (tests/data/cuda/), and the static verdicts drawn from them.
#include <gtest/gtest.h>

#include <evoteam/core/error.hpp>
#include <evoteam/core/fs.hpp>

#include <algorithm>
#include <limits>

#include "eval/cuda/cuda_static.hpp"

namespace evoteam::eval::cuda {
namespace {

std::string fixture(const std::string& name) {
  return read_file(std::filesystem::path(EVOTEAM_SOURCE_DIR) / "tests/data/cuda" / name);
}

const KernelResources& kernel_named(const std::vector<KernelResources>& kernels, const std::string& name) {
  const auto found =
      std::find_if(kernels.begin(), kernels.end(), [&](const KernelResources& k) { return k.name == name; });
  if (found == kernels.end()) throw std::runtime_error("no kernel " + name);
  return *found;
}

bool any_contains(const std::vector<std::string>& lines, const std::string& part) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& line) { return line.find(part) != std::string::npos; });
}

TEST(CudaBuild, CommandUsesGencodeNeverTheArchShorthand) {
  for (const std::string arch : {"sm_90a", "sm_100a"}) {
    NvccInvocation invocation;
    invocation.arch = arch;
    invocation.sources = {"kernel.cu"};
    invocation.out = "kernel.cubin";
    const std::vector<std::string> argv = nvcc_command(invocation);
    const std::string number = arch.substr(3);
    const auto gencode = std::find(argv.begin(), argv.end(), "-gencode");
    ASSERT_NE(gencode, argv.end());
    EXPECT_EQ(*(gencode + 1), "arch=compute_" + number + ",code=sm_" + number);
    for (const std::string& arg : argv) EXPECT_NE(arg.rfind("-arch", 0), 0u) << arg;
    EXPECT_NE(std::find(argv.begin(), argv.end(), "-cubin"), argv.end());
    EXPECT_NE(std::find(argv.begin(), argv.end(), "-v,-warn-spills,-warn-lmem-usage"), argv.end());
    EXPECT_EQ(std::find(argv.begin(), argv.end(), "--use_fast_math"), argv.end());
    EXPECT_EQ(argv.back(), "kernel.cu");
  }
}

TEST(CudaBuild, FastMathOnlyWhenAsked) {
  NvccInvocation invocation;
  invocation.arch = "sm_90a";
  invocation.output = NvccOutput::ptx;
  invocation.sources = {"a.cu", "b.cu"};
  invocation.out = "outdir";
  invocation.fast_math = FastMath::on;
  const std::vector<std::string> argv = nvcc_command(invocation);
  EXPECT_NE(std::find(argv.begin(), argv.end(), "--use_fast_math"), argv.end());
  EXPECT_NE(std::find(argv.begin(), argv.end(), "-ptx"), argv.end());
  EXPECT_NE(std::find(argv.begin(), argv.end(), "--output-directory"), argv.end());
}

TEST(CudaBuild, RejectsMalformedArchAndEmptySources) {
  EXPECT_THROW(gencode_flags("sm90a"), InvalidInput);
  EXPECT_THROW(gencode_flags("compute_90a"), InvalidInput);
  EXPECT_THROW(gencode_flags("sm_90a;rm"), InvalidInput);
  NvccInvocation invocation;
  invocation.arch = "sm_90a";
  EXPECT_THROW(nvcc_command(invocation), InvalidInput);
}

TEST(CudaPtxas, ParsesCapturedReportForSm90a) {
  const std::vector<KernelResources> kernels = parse_ptxas(fixture("ptxas_sm90a.txt"));
  ASSERT_EQ(kernels.size(), 3u);
  const KernelResources& spilly = kernel_named(kernels, "spilly");
  EXPECT_EQ(spilly.arch, "sm_90a");
  EXPECT_EQ(spilly.registers, 32);
  EXPECT_EQ(spilly.spill_stores, 1360);
  EXPECT_EQ(spilly.spill_loads, 1412);
  EXPECT_EQ(spilly.stack_frame, 648);
  const KernelResources& tile = kernel_named(kernels, "tile_sum");
  EXPECT_EQ(tile.smem, 1024);
  EXPECT_EQ(tile.barriers, 1);
  EXPECT_EQ(tile.registers, 10);
  EXPECT_EQ(tile.spill_stores, 0);
  EXPECT_EQ(kernel_named(kernels, "local_array").stack_frame, 256);
  EXPECT_EQ(kernel_named(kernels, "local_array").cumulative_stack, 256);
}

TEST(CudaPtxas, ParsesCapturedReportForSm100a) {
  const std::vector<KernelResources> kernels = parse_ptxas(fixture("ptxas_sm100a.txt"));
  ASSERT_EQ(kernels.size(), 3u);
  EXPECT_EQ(kernel_named(kernels, "tile_sum").arch, "sm_100a");
  EXPECT_EQ(kernel_named(kernels, "tile_sum").registers, 11);
  EXPECT_EQ(kernel_named(kernels, "spilly").spill_stores, 1360);
}

TEST(CudaPtxas, KeepsDeviceFunctionFramesOffTheEntryAndReadsCmem) {
  // The older layout (cmem on the Used line) and a non-inlined device function's own properties.
  const std::string text =
      "ptxas info    : Compiling entry function '_Z4gemmPf' for 'sm_90a'\n"
      "ptxas info    : Function properties for _Z6helperv\n"
      "    96 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\n"
      "ptxas info    : Function properties for _Z4gemmPf\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 168 registers, used 1 barriers, 49152 bytes smem, 400 bytes cmem[0]\n";
  const std::vector<KernelResources> kernels = parse_ptxas(text);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].spill_stores, 0);
  EXPECT_EQ(kernels[0].stack_frame, 0);
  EXPECT_EQ(kernels[0].registers, 168);
  EXPECT_EQ(kernels[0].smem, 49152);
  EXPECT_EQ(kernels[0].cmem, 400);
  EXPECT_EQ(to_json(kernels[0])["registers"], 168);
}

TEST(CudaPtxas, ACountTooLargeForAnyKernelIsBadInputNotACrash) {
  // A build log is candidate-influenced text; a run of digits past 64 bits once escaped as std::out_of_range.
  const std::string entry = "ptxas info    : Compiling entry function '_Z4gemmPf' for 'sm_90a'\n";
  const std::string huge = "99999999999999999999999";
  for (const std::string& line :
       {"ptxas info    : Used " + huge + " registers\n", "ptxas info    : Used 8 registers, " + huge + " bytes smem\n",
        std::string("ptxas info    : Used 4294967296 registers\n")}) {
    try {
      parse_ptxas(entry + line);
      FAIL() << "accepted: " << line;
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), ExitCode::invalid_input) << line;
      EXPECT_NE(std::string(error.what()).find("ptxas output"), std::string::npos) << error.what();
    }
  }
  const std::vector<KernelResources> largest =
      parse_ptxas(entry + "ptxas info    : Used 8 registers, 9223372036854775807 bytes smem\n");
  ASSERT_EQ(largest.size(), 1u);
  EXPECT_EQ(largest[0].smem, std::numeric_limits<std::int64_t>::max());
}

TEST(CudaPtx, CountsTensorCoreInstructionsInCapturedPtx) {
  const PtxScan scan = scan_ptx(fixture("tensor_ops_sm90a.ptx"));
  EXPECT_EQ(scan.count("wgmma.mma_async"), 1);
  EXPECT_EQ(scan.count("mma.sync"), 1);
  EXPECT_EQ(scan.count("tcgen05.mma"), 0);
  EXPECT_EQ(scan.count("%globaltimer"), 0);
  EXPECT_EQ(scan.entries, (std::vector<std::string>{"mma_sync_tile", "wgmma_tile"}));
  EXPECT_TRUE(scan.writable_globals.empty());
}

TEST(CudaPtx, FindsGlobalsTimersLocalMemoryAndDeviceMalloc) {
  const std::string ptx =
      ".version 9.0\n.target sm_100a\n.address_size 64\n"
      ".global .align 4 .u32 g_valid;\n"
      ".visible .global .align 4 .b8 g_cache[4194304];\n"
      ".const .align 4 .f32 scale_constant = 0f40000000;\n"
      ".extern .func (.param .b64 func_retval0) malloc\n(\n\t.param .b64 malloc_param_0\n)\n;\n"
      ".visible .entry k(\n\t.param .u64 k_param_0\n)\n{\n"
      "\t.reg .b64 %rd<9>;\n"
      "\tld.global.u32 %r1, [g_valid];\n"
      "\tmov.u64 %rd1, %globaltimer; // read the clock\n"
      "\tmov.u32 %r2, %clock;\n"
      "\tst.local.f32 [%rd2], %f1;\n\tld.local.f32 %f2, [%rd2];\n"
      "\tcall.uni (retval0), malloc, (param0);\n"
      "\ttcgen05.mma.cta_group::1.kind::f16 [%r3], %rd4, %rd5, %r6, %p1;\n"
      "\tcp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3}], "
      "[%r4];\n"
      "}\n";
  const PtxScan scan = scan_ptx(ptx);
  EXPECT_EQ(scan.writable_globals, (std::vector<std::string>{"g_valid", "g_cache"}));
  EXPECT_EQ(scan.count("%globaltimer"), 1);
  EXPECT_EQ(scan.count("%clock"), 1);
  EXPECT_EQ(scan.count("ld.local"), 1);
  EXPECT_EQ(scan.count("st.local"), 1);
  EXPECT_EQ(scan.count("device_malloc"), 1);
  EXPECT_EQ(scan.count("tcgen05.mma"), 1);
  EXPECT_EQ(scan.count("cp.async.bulk.tensor"), 1);
  EXPECT_EQ(scan.count("ld.global"), 0);  // not a counted construct
}

// FlashInfer's PTX declares global tables with their whole initialiser on one line; scanning it must neither
// overflow the stack (a regex over the initialiser recursed per character) nor miss the name.
TEST(CudaStatic, AGlobalWithAHugeOneLineInitialiserIsScanned) {
  std::string table = ".visible .global .align 4 .b8 big_table[400000] = {";
  for (int i = 0; i < 400000; ++i) table += (i == 0 ? "" : ", ") + std::to_string(i % 251);
  table += "};\n";
  const PtxScan scan = scan_ptx(".version 9.0\n.target sm_90a\n" + table);
  EXPECT_EQ(scan.writable_globals, (std::vector<std::string>{"big_table"}));
}

TEST(CudaSass, HistogramSeparatesHgmmaFromHmmaInCapturedSass) {
  const SassHistogram sass = parse_sass(fixture("sass_sm90a_tensor.txt"));
  EXPECT_EQ(sass.count("HGMMA"), 1);
  EXPECT_EQ(sass.count("HMMA"), 1);
  EXPECT_EQ(sass.functions.at("wgmma_tile").count("HGMMA"), 1u);
  EXPECT_EQ(sass.functions.at("mma_sync_tile").count("HGMMA"), 0u);
  EXPECT_EQ(sass.functions.at("mma_sync_tile").at("HMMA"), 1);
}

TEST(CudaSass, CountsLocalMemoryOpcodesAndKeepsFmaOffTheTensorPath) {
  const SassHistogram sass = parse_sass(fixture("sass_sm90a_local.txt"));
  EXPECT_EQ(sass.count("STL"), 16);
  EXPECT_EQ(sass.count("LDL"), 1);
  EXPECT_GT(sass.count("HFMA2"), 0);  // HFMA2.MMA runs on the FMA path: not a tensor-core instruction
  EXPECT_EQ(sass.count("HMMA"), 0);
  EXPECT_GT(sass.functions.at("tile_sum").at("BAR"), 0);
}

TEST(CudaStaticVerdict, WarnsOnSpillsAndLocalMemory) {
  CudaStaticSignals signals;
  signals.kernels = parse_ptxas(fixture("ptxas_sm90a.txt"));
  signals.sass = parse_sass(fixture("sass_sm90a_local.txt"));
  CudaStaticPolicy policy;
  policy.arch = "sm_90a";
  const CudaStaticVerdict verdict = judge_static(signals, policy);
  EXPECT_TRUE(verdict.rejections.empty());
  EXPECT_TRUE(any_contains(verdict.warnings, "spilly (sm_90a): registers spilled, 1360 bytes spill stores"));
  EXPECT_TRUE(any_contains(verdict.warnings, "local_array (sm_90a): 256 bytes stack frame"));
  EXPECT_TRUE(any_contains(verdict.warnings, "17 LDL/STL"));
  EXPECT_EQ(verdict.report["instructions_from"], "sass");
  EXPECT_EQ(verdict.report["kernels"].size(), 3u);
}

TEST(CudaStaticVerdict, TensorCoreTaskWithoutWgmmaGetsAWarningFromPtxOrSass) {
  CudaStaticPolicy policy;
  policy.arch = "sm_90a";
  policy.tensor_cores = TensorCores::required;
  CudaStaticSignals legacy;
  legacy.ptx = scan_ptx("\tmma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1}, {%r1}, {%r5}, {%f1};\n");
  const CudaStaticVerdict from_ptx = judge_static(legacy, policy);
  EXPECT_TRUE(any_contains(from_ptx.warnings, "no wgmma (HGMMA) tensor-core instruction for sm_90a (checked in ptx)"));
  EXPECT_TRUE(any_contains(from_ptx.warnings, "mma.sync"));

  CudaStaticSignals hopper;
  hopper.sass = parse_sass(fixture("sass_sm90a_tensor.txt"));
  EXPECT_FALSE(any_contains(judge_static(hopper, policy).warnings, "tensor-core"));
  policy.arch = "sm_100a";  // the same SASS has no tcgen05 instruction
  EXPECT_TRUE(any_contains(judge_static(hopper, policy).warnings, "no tcgen05 (UTC*MMA)"));
  policy.tensor_cores = TensorCores::not_required;
  EXPECT_FALSE(any_contains(judge_static(legacy, policy).warnings, "tensor-core"));
}

TEST(CudaStaticVerdict, HostSymbolsByCategoryWithAllowlist) {
  EXPECT_EQ(forbidden_host_symbol("cudaStreamCreateWithFlags", {}), "side stream");
  EXPECT_EQ(forbidden_host_symbol("cublasSgemm_v2", {}), "library call");
  EXPECT_EQ(forbidden_host_symbol(
                "_ZNSt6thread15_M_start_threadESt10unique_ptrINS_6_StateESt14default_deleteIS1_EEPFvvE", {}),
            "threads");
  EXPECT_EQ(forbidden_host_symbol("pthread_create", {}), "threads");
  EXPECT_EQ(forbidden_host_symbol("cudaEventRecord", {}), "timing events");
  EXPECT_EQ(forbidden_host_symbol("some_unknown_function", {}), "not on the allowlist");
  EXPECT_EQ(forbidden_host_symbol("__cudaRegisterFunction", {}), "");
  EXPECT_EQ(forbidden_host_symbol("__cudaLaunchKernel", {}), "");
  EXPECT_EQ(forbidden_host_symbol("cudaGetLastError", {}), "");
  EXPECT_EQ(forbidden_host_symbol("cublasSgemm_v2", {"cublas*"}), "");
}

TEST(CudaStaticVerdict, ReleaseBuildsRejectTimersAndUndeclaredDeviceState) {
  CudaStaticSignals signals;
  signals.ptx = scan_ptx(".global .align 4 .u32 g_seen;\n.visible .entry k()\n{\n\tmov.u64 %rd1, %globaltimer;\n}\n");
  signals.host_undefined = parse_nm_undefined(
      "                 U cudaGetLastError\n                 U cudaStreamCreate\n0000000000000000 T scale\n");
  CudaStaticPolicy policy;
  policy.arch = "sm_90a";
  CudaStaticVerdict verdict = judge_static(signals, policy);
  ASSERT_EQ(verdict.rejections.size(), 3u);
  EXPECT_EQ(verdict.rejections[0].reason, "forbidden host symbol cudaStreamCreate (side stream)");
  EXPECT_NE(verdict.rejections[1].reason.find("writable device global g_seen"), std::string::npos);
  EXPECT_EQ(verdict.rejections[2].reason, "timer read %globaltimer in device code");
  policy.build_kind = BuildKind::debug;
  policy.device_state = DeviceState::declared;
  policy.allowed_host_symbols = {"cudaStreamCreate"};
  EXPECT_TRUE(judge_static(signals, policy).rejections.empty());
}

// Published torch bindings throw std::runtime_error and synchronise: the reported rejection is the sync, whatever
// nm's order.
TEST(CudaStaticVerdict, AForbiddenCategoryIsReportedBeforeASymbolOnlyMissingFromTheAllowlist) {
  CudaStaticSignals signals;
  signals.host_undefined =
      parse_nm_undefined("                 U _ZNSt13runtime_errorC1EPKc\n                 U cudaStreamSynchronize\n");
  CudaStaticPolicy policy;
  policy.arch = "sm_90a";
  const CudaStaticVerdict verdict = judge_static(signals, policy);
  ASSERT_EQ(verdict.rejections.size(), 2u);
  EXPECT_EQ(verdict.rejections[0].reason, "forbidden host symbol cudaStreamSynchronize (synchronisation)");
  EXPECT_EQ(verdict.rejections[1].reason, "forbidden host symbol _ZNSt13runtime_errorC1EPKc (not on the allowlist)");
}

TEST(CudaStaticVerdict, StaticProfileIsMarkedAsSuch) {
  CudaStaticSignals signals;
  signals.kernels = parse_ptxas(fixture("ptxas_sm90a.txt"));
  signals.sass = parse_sass(fixture("sass_sm90a_tensor.txt"));
  CudaStaticPolicy policy;
  policy.arch = "sm_90a";
  const nlohmann::json profile = static_profile(signals, policy);
  EXPECT_EQ(profile["source"], "static");
  EXPECT_EQ(profile["instructions_from"], "sass");
  EXPECT_EQ(profile["tensor_core_instructions"], 1);
  EXPECT_EQ(profile["legacy_mma_instructions"], 1);
  EXPECT_EQ(profile["bound"], "unknown");
  ASSERT_EQ(profile["kernels"].size(), 3u);
  EXPECT_EQ(profile["kernels"][1]["spill_bytes"], 1360 + 1412);
}

TEST(CudaNm, ParsesUndefinedSymbolsAndDropsVersions) {
  const std::vector<std::string> symbols = parse_nm_undefined(
      "                 U memcpy@GLIBC_2.14\n                 U __cudaRegisterFatBinary\n"
      "                 w __gmon_start__\n0000000000000010 T scale\n");
  EXPECT_EQ(symbols, (std::vector<std::string>{"memcpy", "__cudaRegisterFatBinary", "__gmon_start__"}));
}

}  // namespace
}  // namespace evoteam::eval::cuda
