// Static verdicts of a CUDA build: hard rejections (forbidden host symbols, writable device globals, device
// malloc, timer reads) and warnings for agents (spills, local memory, no tensor-core or TMA instruction where the
// task expects them, printf, shape literals), from the ptxas report, the PTX scan and the SASS histogram.
#include <regex>
#include <vector>

#include "eval/cuda/cuda_static.hpp"
#include "eval/host/static_check.hpp"

namespace evoteam::eval::cuda {
namespace {

// Host symbols a candidate's entry point may reference: kernel launches, function attributes, error queries and
// the runtime's registration stubs that nvcc emits, plus the C++ runtime's plumbing.
const std::vector<std::string> k_allowed_host = {
    "__cuda*",
    "cudaLaunchKernel*",
    "cudaFuncSetAttribute",
    "cudaFuncGetAttributes",
    "cudaGetLastError",
    "cudaPeekAtLastError",
    "cudaMemsetAsync",
    "cudaGetDevice",
    "cudaDeviceGetAttribute",
    "cudaOccupancy*",
    "cudaGetFuncBySymbol",
    "cudaLaunchCooperativeKernel",
    "_Unwind_Resume",
    "__cxa_*",
    "__gxx_personality_v0",
    "atexit",
    "__stack_chk_fail",
    "memcpy",
    "memset",
    "memmove",
    "_GLOBAL_OFFSET_TABLE_",
    "__dso_handle",
    "_ZdlPv*",
    "_Znwm",
    "_ZSt*throw*",
    "__assert_fail",
    "__gmon_start__",
    "_ITM_*",
};

// Forbidden host symbols by category (evaluator-spec §6.1): prefix -> why.
const std::vector<std::pair<std::string, std::string>> k_forbidden_host = {
    {"cudaStreamSynchronize", "synchronisation"},  // before the prefix below: a sync, not a stream of its own
    {"cudaStream", "side stream"},
    {"cudaEvent", "timing events"},
    {"cudaGraph", "graph capture"},
    {"cudaMalloc", "allocation"},
    {"cudaFree", "allocation"},
    {"cudaHostAlloc", "allocation"},
    {"cudaMemcpy", "host copy"},
    {"cudaDeviceSynchronize", "synchronisation"},
    {"cudaCtxResetPersistingL2Cache", "L2 policy"},
    {"cudaDeviceSetLimit", "device settings"},
    {"cublas", "library call"},
    {"cudnn", "library call"},
    {"cufft", "library call"},
    {"curand", "library call"},
    {"cusparse", "library call"},
    {"pthread_", "threads"},
    {"_ZNSt6thread", "threads"},
    {"clone", "threads"},
    {"fork", "process"},
    {"system", "process"},
    {"exec", "process"},
    {"dlopen", "dynamic loading"},
    {"dlsym", "dynamic loading"},
    {"mprotect", "memory protection"},
    {"mmap", "memory mapping"},
    {"clock_gettime", "timer read"},
    {"gettimeofday", "timer read"},
    {"_ZNSt6chrono", "timer read"},
    {"fopen", "file I/O"},
    {"open", "file I/O"},
    {"getenv", "environment"},
    {"cuLaunch", "driver API"},
    {"cuModule", "driver API"},
    {"cuMem", "driver API"},
};

// The category of a host symbol that is in no forbidden category but not allowed either.
const char* const k_not_allowlisted = "not on the allowlist";

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

// Instructions that show the tensor-core path the arch should take.
int tensor_core_instructions(const CudaStaticSignals& signals, const std::string& arch, std::string* source) {
  if (signals.sass) {
    *source = "sass";
    const std::vector<std::string> opcodes =
        arch == "sm_90a" ? std::vector<std::string>{"HGMMA", "QGMMA", "IGMMA", "BGMMA"}
                         : std::vector<std::string>{"UTCHMMA", "UTCQMMA", "UTCIMMA", "UTCOMMA", "UTCMMA"};
    int count = 0;
    for (const std::string& opcode : opcodes) count += signals.sass->count(opcode);
    return count;
  }
  *source = "ptx";
  return arch == "sm_90a" ? signals.ptx.count("wgmma.mma_async") : signals.ptx.count("tcgen05.mma");
}

void source_literals(const CudaStaticSignals& signals, const CudaStaticPolicy& policy, CudaStaticVerdict& verdict) {
  static const std::regex k_number(R"(\b([0-9]+)\b)");
  for (const auto& [file, text] : signals.sources) {
    for (std::int64_t literal : policy.shape_literals) {
      if (literal <= 16) continue;  // small numbers are tile sizes and loop bounds, not shapes
      const std::string wanted = std::to_string(literal);
      for (std::sregex_iterator it(text.begin(), text.end(), k_number), end; it != end; ++it) {
        if ((*it)[1] != wanted) continue;
        verdict.warnings.push_back(file + ": literal " + wanted +
                                   " equals a task dimension (shape specialisation fails on other workloads)");
        break;
      }
    }
  }
}

}  // namespace

std::string forbidden_host_symbol(const std::string& symbol, const std::vector<std::string>& allowed) {
  for (const std::string& pattern : allowed)
    if (glob_match(pattern, symbol)) return "";
  for (const std::string& pattern : k_allowed_host)
    if (glob_match(pattern, symbol)) return "";
  for (const auto& [prefix, why] : k_forbidden_host)
    if (starts_with(symbol, prefix)) return why;
  return k_not_allowlisted;
}

CudaStaticVerdict judge_static(const CudaStaticSignals& signals, const CudaStaticPolicy& policy) {
  CudaStaticVerdict verdict;
  nlohmann::json kernels = nlohmann::json::array();
  for (const KernelResources& kernel : signals.kernels) kernels.push_back(to_json(kernel));
  verdict.report["arch"] = policy.arch;
  verdict.report["kernels"] = kernels;
  verdict.report["ptx"] = signals.ptx.counts;
  verdict.report["instructions_from"] = signals.sass ? "sass" : "ptx";
  if (signals.sass) verdict.report["sass"] = signals.sass->total;

  // Symbols of a forbidden category (a sync, a host copy, an allocation) come before those only missing from the
  // allowlist: the first rejection is the one reported, and it should name what the candidate must not do rather
  // than the first library internal in nm's order.
  std::vector<CudaFinding> unlisted;
  for (const std::string& symbol : signals.host_undefined) {
    const std::string why = forbidden_host_symbol(symbol, policy.allowed_host_symbols);
    if (why.empty()) continue;
    CudaFinding finding{"forbidden host symbol " + symbol + " (" + why + ")", {{"symbol", symbol}, {"category", why}}};
    (why == k_not_allowlisted ? unlisted : verdict.rejections).push_back(std::move(finding));
  }
  verdict.rejections.insert(verdict.rejections.end(), unlisted.begin(), unlisted.end());
  if (policy.device_state == DeviceState::forbidden && !signals.ptx.writable_globals.empty())
    verdict.rejections.push_back(
        {"writable device global " + signals.ptx.writable_globals.front() + " (state across calls can cache results)",
         {{"globals", signals.ptx.writable_globals}}});
  if (signals.ptx.count("device_malloc") > 0)
    verdict.rejections.push_back({"device-side malloc/free", {{"calls", signals.ptx.count("device_malloc")}}});
  if (policy.build_kind == BuildKind::release) {
    for (const char* timer : {"%globaltimer", "%clock"})
      if (signals.ptx.count(timer) > 0)
        verdict.rejections.push_back({std::string("timer read ") + timer + " in device code",
                                      {{"register", timer}, {"lines", signals.ptx.count(timer)}}});
  }

  for (const KernelResources& kernel : signals.kernels) {
    if (kernel.spill_stores > 0 || kernel.spill_loads > 0)
      verdict.warnings.push_back(kernel.name + " (" + kernel.arch + "): registers spilled, " +
                                 std::to_string(kernel.spill_stores) + " bytes spill stores, " +
                                 std::to_string(kernel.spill_loads) + " bytes spill loads at " +
                                 std::to_string(kernel.registers) + " registers");
    else if (kernel.stack_frame > 0)
      verdict.warnings.push_back(kernel.name + " (" + kernel.arch + "): " + std::to_string(kernel.stack_frame) +
                                 " bytes stack frame in local memory (a local array indexed at run time?)");
  }
  const int local = signals.sass ? signals.sass->count("LDL") + signals.sass->count("STL")
                                 : signals.ptx.count("ld.local") + signals.ptx.count("st.local");
  if (local > 0)
    verdict.warnings.push_back("local memory traffic: " + std::to_string(local) +
                               (signals.sass ? " LDL/STL" : " ld.local/st.local") + " instructions");
  if (policy.tensor_cores == TensorCores::required) {
    std::string from;
    if (tensor_core_instructions(signals, policy.arch, &from) == 0) {
      const bool legacy = signals.sass ? signals.sass->count("HMMA") > 0 : signals.ptx.count("mma.sync") > 0;
      verdict.warnings.push_back(std::string("no ") +
                                 (policy.arch == "sm_90a" ? "wgmma (HGMMA)" : "tcgen05 (UTC*MMA)") +
                                 " tensor-core instruction for " + policy.arch + " (checked in " + from + ")" +
                                 (legacy ? "; only the older mma.sync (HMMA) path, far from peak" : ""));
    }
  }
  if (policy.tma == Tma::expected) {
    const int tma = signals.sass ? signals.sass->count("UTMALDG") : signals.ptx.count("cp.async.bulk.tensor");
    if (tma == 0) verdict.warnings.push_back("no TMA load (cp.async.bulk.tensor / UTMALDG) where the task expects one");
  }
  if (signals.ptx.count("printf") > 0) verdict.warnings.push_back("device printf (slows every launch; remove it)");
  if (signals.ptx.count("cvt.f16") + signals.ptx.count("cvt.bf16") > 0)
    verdict.warnings.push_back("conversions to 16-bit floats: reduced precision must still meet the task's tolerance");
  source_literals(signals, policy, verdict);
  return verdict;
}

nlohmann::json static_profile(const CudaStaticSignals& signals, const CudaStaticPolicy& policy) {
  std::string from;
  const int tensor = tensor_core_instructions(signals, policy.arch, &from);
  nlohmann::json kernels = nlohmann::json::array();
  for (const KernelResources& kernel : signals.kernels)
    kernels.push_back({{"kernel", kernel.name},
                       {"registers", kernel.registers},
                       {"smem", kernel.smem},
                       {"spill_bytes", kernel.spill_stores + kernel.spill_loads},
                       {"stack_frame", kernel.stack_frame},
                       {"barriers", kernel.barriers}});
  const bool sass = signals.sass.has_value();
  return {{"source", "static"},
          {"arch", policy.arch},
          {"instructions_from", from},
          {"kernels", kernels},
          {"tensor_core_instructions", tensor},
          {"legacy_mma_instructions", sass ? signals.sass->count("HMMA") : signals.ptx.count("mma.sync")},
          {"tma_loads", sass ? signals.sass->count("UTMALDG") : signals.ptx.count("cp.async.bulk.tensor")},
          {"local_memory_instructions", sass ? signals.sass->count("LDL") + signals.sass->count("STL")
                                             : signals.ptx.count("ld.local") + signals.ptx.count("st.local")},
          {"bound", "unknown"}};
}

}  // namespace evoteam::eval::cuda
