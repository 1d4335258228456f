// nvcc command lines and the parsers of the CUDA build's text outputs (ptxas -v, PTX, cuobjdump -sass).
#include <evoteam/core/error.hpp>

#include <charconv>
#include <limits>
#include <regex>
#include <sstream>

#include "eval/cuda/cuda_static.hpp"

namespace evoteam::eval::cuda {
namespace {

// Flags of every CUDA build (evaluator-spec §6.2). Constants rather than config keys until a task needs to vary
// them; fast math is the one switch a task may turn on.
const std::vector<std::string> k_nvcc_flags = {"-O3", "-lineinfo", "-std=c++17", "-Xptxas",
                                               "-v,-warn-spills,-warn-lmem-usage"};

// The PTX constructs counted by scan_ptx: key -> what a line must contain (after comments are stripped).
const std::vector<std::pair<std::string, std::string>> k_ptx_patterns = {
    {"wgmma.mma_async", "wgmma.mma_async"},
    {"tcgen05.mma", "tcgen05.mma"},
    {"cp.async.bulk.tensor", "cp.async.bulk.tensor"},
    {"mma.sync", "mma.sync"},
    {"ld.local", "ld.local"},
    {"st.local", "st.local"},
    {"%globaltimer", "%globaltimer"},
    {"%clock", "%clock"},
    {"cvt.f16", "cvt.rn.f16"},
    {"cvt.bf16", "cvt.rn.bf16"},
};

// A count from ptxas -v. The regexes only hand over digits, but a broken or hostile build log can hold more of
// them than any count has: that is bad input with a clear error, not a library exception.
std::int64_t to_int(const std::string& digits) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (error != std::errc() || end != digits.data() + digits.size())
    throw InvalidInput("ptxas output: \"" + digits.substr(0, 32) + "\" is not a count ptxas reports");
  return value;
}

// The same for the counts kept as int (registers, barriers).
int to_small_int(const std::string& digits) {
  const std::int64_t value = to_int(digits);
  if (value > std::numeric_limits<int>::max())
    throw InvalidInput("ptxas output: " + digits + " is more registers or barriers than a kernel can have");
  return static_cast<int>(value);
}

std::string strip_comment(const std::string& line) {
  const std::size_t at = line.find("//");
  return at == std::string::npos ? line : line.substr(0, at);
}

}  // namespace

std::vector<std::string> gencode_flags(const std::string& arch) {
  static const std::regex k_arch(R"(sm_([0-9]{2,3}[af]?))");
  std::smatch match;
  if (!std::regex_match(arch, match, k_arch))
    throw InvalidInput("task.json: archs: \"" + arch + "\" is not an sm_<number>[a|f] architecture");
  const std::string number = match[1];
  return {"-gencode", "arch=compute_" + number + ",code=sm_" + number};
}

std::vector<std::string> nvcc_command(const NvccInvocation& invocation) {
  if (invocation.sources.empty()) throw InvalidInput("nvcc command for " + invocation.arch + ": no sources");
  std::vector<std::string> argv = {invocation.nvcc};
  for (const std::string& flag : gencode_flags(invocation.arch)) argv.push_back(flag);
  switch (invocation.output) {
    case NvccOutput::cubin: argv.push_back("-cubin"); break;
    case NvccOutput::ptx: argv.push_back("-ptx"); break;
    case NvccOutput::object: argv.push_back("-c"); break;
  }
  for (const std::string& flag : k_nvcc_flags) argv.push_back(flag);
  if (invocation.fast_math == FastMath::on) argv.push_back("--use_fast_math");
  for (const auto& dir : invocation.include_dirs) argv.push_back("-I" + dir.string());
  if (!invocation.out.empty()) {
    // -o takes one output; several sources go to a directory.
    argv.push_back(invocation.sources.size() == 1 ? "-o" : "--output-directory");
    argv.push_back(invocation.out.string());
  }
  for (const std::string& flag : invocation.extra) argv.push_back(flag);
  for (const auto& source : invocation.sources) argv.push_back(source.string());
  return argv;
}

std::vector<KernelResources> parse_ptxas(const std::string& text) {
  static const std::regex k_entry(R"(Compiling entry function '([^']+)' for '([^']+)')");
  static const std::regex k_properties(R"(Function properties for (\S+))");
  static const std::regex k_frame(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex k_used(R"(Used (\d+) registers)");
  static const std::regex k_barriers(R"(used (\d+) barriers)");
  static const std::regex k_smem(R"((\d+) bytes smem)");
  static const std::regex k_cmem(R"((\d+) bytes cmem\[0\])");
  static const std::regex k_cumulative(R"((\d+) bytes cumulative stack size)");
  std::vector<KernelResources> kernels;
  // The frame line follows "Function properties for X"; X may be a non-entry device function, whose frame must
  // not be charged to the entry being compiled.
  std::string properties_of;
  std::istringstream lines(text);
  std::string line;
  std::smatch match;
  while (std::getline(lines, line)) {
    if (std::regex_search(line, match, k_entry)) {
      KernelResources kernel;
      kernel.name = match[1];
      kernel.arch = match[2];
      kernels.push_back(kernel);
      properties_of.clear();
      continue;
    }
    if (std::regex_search(line, match, k_properties)) {
      properties_of = match[1];
      continue;
    }
    if (kernels.empty()) continue;
    KernelResources& kernel = kernels.back();
    if (std::regex_search(line, match, k_frame)) {
      if (properties_of == kernel.name) {
        kernel.stack_frame = to_int(match[1]);
        kernel.spill_stores = to_int(match[2]);
        kernel.spill_loads = to_int(match[3]);
      }
      properties_of.clear();
      continue;
    }
    if (std::regex_search(line, match, k_used)) {
      kernel.registers = to_small_int(match[1]);
      if (std::regex_search(line, match, k_barriers)) kernel.barriers = to_small_int(match[1]);
      if (std::regex_search(line, match, k_smem)) kernel.smem = to_int(match[1]);
      if (std::regex_search(line, match, k_cmem)) kernel.cmem = to_int(match[1]);
      if (std::regex_search(line, match, k_cumulative)) kernel.cumulative_stack = to_int(match[1]);
    }
  }
  return kernels;
}

nlohmann::json to_json(const KernelResources& kernel) {
  return {{"name", kernel.name},
          {"arch", kernel.arch},
          {"registers", kernel.registers},
          {"barriers", kernel.barriers},
          {"stack_frame", kernel.stack_frame},
          {"spill_stores", kernel.spill_stores},
          {"spill_loads", kernel.spill_loads},
          {"smem", kernel.smem},
          {"cmem", kernel.cmem},
          {"cumulative_stack", kernel.cumulative_stack}};
}

int PtxScan::count(const std::string& key) const {
  const auto found = counts.find(key);
  return found == counts.end() ? 0 : found->second;
}

PtxScan scan_ptx(const std::string& text) {
  static const std::regex k_entry(R"(\.entry\s+([A-Za-z_$][\w$]*))");
  // Module-scope variables in the global state space: `.visible .global .align 4 .b8 cache[64];`.
  static const std::regex k_global(
      R"(^\s*(?:\.(?:visible|weak|common|extern)\s+)*\.global\s+[^;]*?([A-Za-z_$][\w$]*)\s*(?:\[[^\]]*\]\s*)*(?:=[^;]*)?;)");
  // A call's target: nvcc splits `call.uni (retval0), malloc, (param0);` over lines, so the target may start one.
  static const std::regex k_malloc(R"(^\s*(?:call(?:\.uni)?\s*(?:\([^)]*\)\s*,)?\s*)?(?:malloc|free)\s*,)");
  static const std::regex k_printf(R"(^\s*(?:call(?:\.uni)?\s*(?:\([^)]*\)\s*,)?\s*)?vprintf\s*,)");
  PtxScan scan;
  for (const auto& pattern : k_ptx_patterns) scan.counts[pattern.first] = 0;
  scan.counts["device_malloc"] = 0;
  scan.counts["printf"] = 0;
  std::istringstream lines(text);
  std::string raw;
  std::smatch match;
  int depth = 0;  // brace depth: module scope is 0
  while (std::getline(lines, raw)) {
    const std::string line = strip_comment(raw);
    if (std::regex_search(line, match, k_entry)) scan.entries.push_back(match[1]);
    // Only the declaration up to its initialiser is matched: libstdc++'s regex recurses per character, and the
    // one-line initialiser of a large global table (FlashInfer's PTX has them) overflows the stack.
    if (depth == 0 && line.find(".global") != std::string::npos) {
      const std::string declaration = line.substr(0, line.find_first_of("=;")) + ";";
      if (std::regex_search(declaration, match, k_global)) scan.writable_globals.push_back(match[1]);
    }
    for (const auto& pattern : k_ptx_patterns)
      if (line.find(pattern.second) != std::string::npos) ++scan.counts[pattern.first];
    if (std::regex_search(line, k_malloc)) ++scan.counts["device_malloc"];
    if (std::regex_search(line, k_printf)) ++scan.counts["printf"];
    for (char c : line) depth += c == '{' ? 1 : c == '}' ? -1 : 0;
  }
  return scan;
}

int SassHistogram::count(const std::string& opcode) const {
  const auto found = total.find(opcode);
  return found == total.end() ? 0 : found->second;
}

SassHistogram parse_sass(const std::string& text) {
  static const std::regex k_function(R"(^\s*Function\s*:\s*(\S+))");
  // `/*0060*/  @!P0 LDG.E R2, desc[UR4][R2.64] ;  /* 0x... */`: offset, optional predicate, opcode.
  static const std::regex k_instruction(R"(^\s*/\*[0-9a-fA-F]+\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*))");
  SassHistogram histogram;
  std::string function = "";
  std::istringstream lines(text);
  std::string line;
  std::smatch match;
  while (std::getline(lines, line)) {
    if (std::regex_search(line, match, k_function)) {
      function = match[1];
      continue;
    }
    if (!std::regex_search(line, match, k_instruction)) continue;
    const std::string opcode = match[1];
    ++histogram.functions[function][opcode];
    ++histogram.total[opcode];
  }
  return histogram;
}

std::vector<std::string> parse_nm_undefined(const std::string& text) {
  std::vector<std::string> symbols;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string type;
    std::string name;
    // `nm -u` prints "                 U name"; `nm` without -u may include defined symbols, which are skipped.
    if (!(fields >> type)) continue;
    if (type != "U" && type != "w" && type != "v") continue;
    if (!(fields >> name)) continue;
    const std::size_t at = name.find('@');  // versioned: memcpy@GLIBC_2.14
    symbols.push_back(at == std::string::npos ? name : name.substr(0, at));
  }
  return symbols;
}

}  // namespace evoteam::eval::cuda
