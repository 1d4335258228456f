#pragma once
// Input generation: the same (trial seed, tensor) always gives the same bits, in any process.
#include <cstdint>

#include "plan.hpp"

namespace evoteam_harness {

// Fills `data` with workload.elements[tensor_index] elements of tensor `tensor_index` for `trial`.
// Returns false (with `error` set) when a task hook is unknown to the glue.
bool generate_input(void* data, const Plan& plan, std::size_t tensor_index, const WorkloadPlan& workload,
                    const TrialPlan& trial, std::string* error);

}  // namespace evoteam_harness
