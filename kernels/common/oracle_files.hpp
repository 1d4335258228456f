#pragma once
// The harness's side of the Python oracle (evoteam eval --oracle): in reference mode it writes a trial's
// inputs beside the reference outputs, and in compare mode it compares the oracle's outputs with the
// reference's, tensor by tensor, with the task's tolerances (compare.hpp). Shared by the host and CUDA harness.
#include <cstdint>
#include <string>

#include "plan.hpp"

namespace evoteam_harness {

// Writes `bytes` bytes of `data` to <trial.inputs>.<tensor>.bin when the trial asks for its inputs; a no-op
// otherwise. Throws std::runtime_error when the file cannot be written.
void write_trial_input(const TrialPlan& trial, const TensorPlan& tensor, const void* data, std::size_t bytes);

// Compare mode: for every trial and compared output, <trial.oracle>.<tensor>.bin against
// <trial.reference>.<tensor>.bin. Emits one "compare" record per (trial, tensor). Returns 0; throws
// std::runtime_error when a file is missing or short.
int run_compare_files(const Plan& plan);

}  // namespace evoteam_harness
