#pragma once
// Build commands and static signals of the CUDA target: nvcc command lines per declared arch, the ptxas -v
// resource report per kernel, a PTX scan and a SASS opcode histogram (cuobjdump -sass text), and the verdicts
// drawn from them (hard rejections and warnings for agents). Pure functions over text, so tests need no GPU;
// only the commands they build run nvcc.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace evoteam::eval::cuda {

// "sm_90a" -> {"-gencode", "arch=compute_90a,code=sm_90a"}. Throws InvalidInput for an arch that is not
// "sm_<digits>[a|f]" (the -arch shorthand is never used: with CUDA 13 it also ptxas-checks a generic PTX image
// and rejects wgmma code).
std::vector<std::string> gencode_flags(const std::string& arch);

enum class NvccOutput { cubin, ptx, object };
enum class FastMath { off, on };

// One nvcc invocation. Flags are constants for now (k_nvcc_flags in cuda_static.cpp); a task that allows fast
// math turns it on here and the build records it.
struct NvccInvocation {
  std::string nvcc = "nvcc";
  std::string arch;  // "sm_90a"
  NvccOutput output = NvccOutput::cubin;
  std::vector<std::filesystem::path> sources;
  std::filesystem::path out;  // a file for one source; an output directory for several
  std::vector<std::filesystem::path> include_dirs;
  FastMath fast_math = FastMath::off;
  std::vector<std::string> extra;  // appended last (e.g. "-keep", "-keep-dir", dir)
};
// The argv (argv[0] is nvcc). Throws InvalidInput for an empty source list or a bad arch.
std::vector<std::string> nvcc_command(const NvccInvocation& invocation);

// One kernel's record in the ptxas -v report. -1 where the report did not say.
struct KernelResources {
  std::string name;
  std::string arch;
  int registers = -1;
  int barriers = 0;
  std::int64_t stack_frame = 0;
  std::int64_t spill_stores = 0;
  std::int64_t spill_loads = 0;
  std::int64_t smem = 0;  // static shared memory, bytes
  std::int64_t cmem = 0;  // constant bank 0 bytes, when the report prints it (older toolkits)
  std::int64_t cumulative_stack = 0;
};
// Entry functions in report order; several archs or files may be concatenated. Lines it does not know are
// skipped, so compiler chatter never breaks it.
std::vector<KernelResources> parse_ptxas(const std::string& text);
nlohmann::json to_json(const KernelResources& kernel);

// Counts of the PTX constructs the static checks look at, over a whole module.
struct PtxScan {
  std::map<std::string, int> counts;          // keys: see k_ptx_patterns in cuda_static.cpp ("wgmma.mma_async", ...)
  std::vector<std::string> entries;           // .entry names
  std::vector<std::string> writable_globals;  // module-scope .global variables (cross-call device state)
  int count(const std::string& key) const;
};
PtxScan scan_ptx(const std::string& text);

// Opcode histogram of `cuobjdump -sass` text: base opcodes (the mnemonic before the first '.'), per function
// and in total.
struct SassHistogram {
  std::map<std::string, std::map<std::string, int>> functions;
  std::map<std::string, int> total;
  int count(const std::string& opcode) const;
};
SassHistogram parse_sass(const std::string& text);

// What the task asks of a candidate's device code.
enum class TensorCores { not_required, required };
enum class Tma { not_expected, expected };
enum class DeviceState { forbidden, declared };  // declared: the harness re-zeroes it before every launch
enum class BuildKind { release, debug };         // debug builds may read timers
struct CudaStaticPolicy {
  std::string arch;  // "sm_90a", "sm_100a"
  TensorCores tensor_cores = TensorCores::not_required;
  Tma tma = Tma::not_expected;
  DeviceState device_state = DeviceState::forbidden;
  BuildKind build_kind = BuildKind::release;
  std::vector<std::int64_t> shape_literals;       // task dimensions that should not appear as literals
  std::vector<std::string> allowed_host_symbols;  // glob patterns on top of the built-in allowlist
};

// Everything the build learned about one arch. `sass` is absent when cuobjdump is not installed; the checks then
// fall back to the PTX scan and say so in the report.
struct CudaStaticSignals {
  std::vector<KernelResources> kernels;
  PtxScan ptx;
  std::optional<SassHistogram> sass;
  std::vector<std::string> host_undefined;     // `nm -u` of the host object (the entry point's code)
  std::map<std::string, std::string> sources;  // file name -> text, for source warnings
};

struct CudaFinding {
  std::string reason;  // one line: "forbidden host symbol cudaStreamCreate (side stream)"
  nlohmann::json evidence = nlohmann::json::object();
};

struct CudaStaticVerdict {
  std::vector<CudaFinding> rejections;  // empty: the build may go on
  std::vector<std::string> warnings;    // for agents, never a rejection
  nlohmann::json report;                // per-kernel resources, instruction counts, source of the counts
};
CudaStaticVerdict judge_static(const CudaStaticSignals& signals, const CudaStaticPolicy& policy);

// The profile stage's stand-in when ncu or a GPU is missing: per-kernel ptxas resources, tensor-core, TMA and
// local-memory instruction counts (from SASS when available, else PTX), marked "source": "static" so no one mistakes
// it for a measurement.
nlohmann::json static_profile(const CudaStaticSignals& signals, const CudaStaticPolicy& policy);

// Why a host symbol is forbidden for a candidate ("side stream", "library call", ...), or "" when allowed.
std::string forbidden_host_symbol(const std::string& symbol, const std::vector<std::string>& allowed);
// Undefined symbols from `nm -u` text.
std::vector<std::string> parse_nm_undefined(const std::string& text);

}  // namespace evoteam::eval::cuda
