#pragma once
// The task's vendor baseline (task.vendor, FlashInfer): where the vendor's sources are, its build for each arch it
// has a kernel for, and its timing against the candidate's baseline by the same protocol, kept per GPU model so a
// run measures it once; a candidate's workloads then carry their speed as a fraction of the vendor's.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <evoteam/eval/evaluator.hpp>
#include <evoteam/eval/vendor_sources.hpp>

#include "eval/eval_phases.hpp"

namespace evoteam::eval {

// nvcc flags that build against them: FlashInfer's own (its bundled CCCL ahead of the toolkit's, fast math).
std::vector<std::string> flashinfer_flags(const VendorSources& sources);

struct VendorBuild {
  VendorComparison comparison;  // status "built" or "unavailable"
  BuildOutcome build;           // the shared object when comparison.status is "built"
};
// Builds the vendor's kernel (trusted, cached like every build) for each of the task's archs it has one for.
// The task must have a vendor baseline.
VendorBuild build_vendor(EvaluationRun& run);

// Times the built vendor against the task's baseline on this evaluation's workloads (or takes the figures from
// the cache), then sets each of result.workloads' vendor figures and result.vendor's fraction and status. A
// vendor that fails (a wrong output, a crash) leaves the candidate's verdict alone: result.vendor says so.
void measure_vendor(EvaluationRun& run, const VendorBuild& vendor, EvalResult& result);

// A candidate's workloads measured against the vendor's: the fraction is the ratio of their speedups over the
// same baseline. Workloads the vendor has no figures for get none; `fraction` is the geometric mean of the rest.
void apply_vendor_figures(const std::map<std::string, VendorWorkload>& vendor, EvalResult& result);

}  // namespace evoteam::eval
