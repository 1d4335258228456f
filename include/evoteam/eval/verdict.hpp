#pragma once
// The closed set of evaluation verdicts. Every evaluation ends in exactly one, with evidence (see
// EvalResult). INFRA_ERROR is the evaluator's own failure and is never charged to the candidate.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace evoteam {

enum class Verdict {
  pass,                   // every requested stage passed
  compile_error,          // the compiler or linker rejected the candidate
  compile_timeout,        // the build ran past its deadline
  static_reject,          // a forbidden symbol, instruction, include or construct (reason says which)
  runtime_fault,          // the candidate crashed the harness: SIGSEGV, SIGABRT, ... (reason says which)
  hang_timeout,           // a call ran past its deadline and was killed
  worker_crash,           // the harness process died without a record (killed, out of memory, ...)
  oob_write,              // a write into the guard zone around a buffer
  input_mutated,          // an input changed during the call
  unwritten_output,       // poison survived in an output where the reference has a value
  nonfinite_mismatch,     // NaN or Inf where the reference has none, or the reverse
  numeric_mismatch,       // outside the task's tolerance
  nondeterministic,       // the same inputs gave different bits
  shape_specialized,      // wrong only on the hidden edge shapes
  distribution_specific,  // wrong only on one input distribution
  recheck_fail,           // a timed run's output was wrong
  timing_side_work,       // work done outside the measured call (other threads)
  timing_inconsistent,    // much slower on fresh inputs than on the rotation: results reused across calls
  impossible_perf,        // faster than the machine's roofline
  suspicious_speedup,     // > threshold over a vendor-library baseline; held until audited
  noisy,                  // correct, but the timing did not converge within its cap
  infra_error,            // the evaluator failed (reference, harness, sandbox, baseline); not the candidate
};

// "PASS", "COMPILE_ERROR", ... as in the JSON.
std::string to_string(Verdict verdict);
std::optional<Verdict> parse_verdict(std::string_view text);
const std::vector<Verdict>& all_verdicts();

// How the team and the supervisor read a verdict. Every verdict has exactly one class, decided in one
// exhaustive switch (verdict.cpp): a new verdict does not compile until its class is chosen.
enum class VerdictClass {
  pass,              // the outputs were verified and the timing is usable (PASS, and NOISY: usable, not converged)
  build_failure,     // the candidate did not build or was rejected by the static checks
  test_failure,      // the candidate ran and was wrong, crashed, hung or wrote where it must not
  timing_integrity,  // correct outputs, but the timing cannot be trusted (side work, reuse, impossible, held)
  infra,             // the evaluator's own failure, never charged to the candidate
};
VerdictClass verdict_class(Verdict verdict);
// True for PASS and NOISY: a result the search may build on.
bool counts_as_pass(Verdict verdict);

// True for verdicts that are not the candidate's fault.
bool is_infra(Verdict verdict);
// True when the candidate's outputs were verified correct (PASS, NOISY, SUSPICIOUS_SPEEDUP, IMPOSSIBLE_PERF
// are about timing only).
bool outputs_verified(Verdict verdict);

}  // namespace evoteam
