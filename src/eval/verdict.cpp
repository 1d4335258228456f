#include <evoteam/eval/verdict.hpp>

#include <utility>

namespace evoteam {
namespace {

const std::pair<Verdict, const char*> k_names[] = {
    {Verdict::pass, "PASS"},
    {Verdict::compile_error, "COMPILE_ERROR"},
    {Verdict::compile_timeout, "COMPILE_TIMEOUT"},
    {Verdict::static_reject, "STATIC_REJECT"},
    {Verdict::runtime_fault, "RUNTIME_FAULT"},
    {Verdict::hang_timeout, "HANG_TIMEOUT"},
    {Verdict::worker_crash, "WORKER_CRASH"},
    {Verdict::oob_write, "OOB_WRITE"},
    {Verdict::input_mutated, "INPUT_MUTATED"},
    {Verdict::unwritten_output, "UNWRITTEN_OUTPUT"},
    {Verdict::nonfinite_mismatch, "NONFINITE_MISMATCH"},
    {Verdict::numeric_mismatch, "NUMERIC_MISMATCH"},
    {Verdict::nondeterministic, "NONDETERMINISTIC"},
    {Verdict::shape_specialized, "SHAPE_SPECIALIZED"},
    {Verdict::distribution_specific, "DISTRIBUTION_SPECIFIC"},
    {Verdict::recheck_fail, "RECHECK_FAIL"},
    {Verdict::timing_side_work, "TIMING_SIDE_WORK"},
    {Verdict::timing_inconsistent, "TIMING_INCONSISTENT"},
    {Verdict::impossible_perf, "IMPOSSIBLE_PERF"},
    {Verdict::suspicious_speedup, "SUSPICIOUS_SPEEDUP"},
    {Verdict::noisy, "NOISY"},
    {Verdict::infra_error, "INFRA_ERROR"},
};

}  // namespace

std::string to_string(Verdict verdict) {
  for (const auto& [value, name] : k_names)
    if (value == verdict) return name;
  return "INFRA_ERROR";
}

std::optional<Verdict> parse_verdict(std::string_view text) {
  for (const auto& [value, name] : k_names)
    if (text == name) return value;
  return std::nullopt;
}

const std::vector<Verdict>& all_verdicts() {
  static const std::vector<Verdict> verdicts = [] {
    std::vector<Verdict> list;
    for (const auto& entry : k_names) list.push_back(entry.first);
    return list;
  }();
  return verdicts;
}

VerdictClass verdict_class(Verdict verdict) {
  // No default: -Wswitch (an error in the test build) names a verdict left out.
  switch (verdict) {
    case Verdict::pass:
    case Verdict::noisy: return VerdictClass::pass;
    case Verdict::compile_error:
    case Verdict::compile_timeout:
    case Verdict::static_reject: return VerdictClass::build_failure;
    case Verdict::runtime_fault:
    case Verdict::hang_timeout:
    case Verdict::worker_crash:
    case Verdict::oob_write:
    case Verdict::input_mutated:
    case Verdict::unwritten_output:
    case Verdict::nonfinite_mismatch:
    case Verdict::numeric_mismatch:
    case Verdict::nondeterministic:
    case Verdict::shape_specialized:
    case Verdict::distribution_specific:
    case Verdict::recheck_fail: return VerdictClass::test_failure;
    case Verdict::timing_side_work:
    case Verdict::timing_inconsistent:
    case Verdict::impossible_perf:
    case Verdict::suspicious_speedup: return VerdictClass::timing_integrity;
    case Verdict::infra_error: return VerdictClass::infra;
  }
  return VerdictClass::infra;
}

bool counts_as_pass(Verdict verdict) { return verdict_class(verdict) == VerdictClass::pass; }

bool is_infra(Verdict verdict) { return verdict_class(verdict) == VerdictClass::infra; }

bool outputs_verified(Verdict verdict) {
  return verdict == Verdict::pass || verdict == Verdict::noisy || verdict == Verdict::suspicious_speedup ||
         verdict == Verdict::impossible_perf;
}

}  // namespace evoteam
