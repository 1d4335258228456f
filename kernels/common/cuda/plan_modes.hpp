#pragma once
// The CUDA harness's plan-driven modes and the pieces they share (plan_modes.cu: reference, correctness,
// profile; timing_mode.cu: timing). Host copies are plain bytes; the device side is one guarded allocation per
// tensor. Every CUDA call is checked (cuda_check.hpp): a failure ends the process with a typed record.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../plan.hpp"
#include "../record.hpp"
#include "device_buffer.hpp"

namespace evoteam_harness::cuda {

using Bytes = std::vector<unsigned char>;

struct Implementation {
  void* entry = nullptr;  // null when not loaded
  // A trusted vendor library's `<entry>_plan` (same signature as the entry): its host-side scheduling for one
  // input set, called before that set's calls and never timed. Null for everything else.
  void* plan = nullptr;
  const char* phase = "candidate";
};

class RankGroup;

struct CudaContext {
  Plan plan;
  Implementation candidate;
  Implementation baseline;
  Implementation reference;
  cudaStream_t stream = nullptr;  // the harness's stream, handed to every implementation
  RankGroup* ranks = nullptr;     // this process's rank of a group (rank_group.hpp); null for one-process tasks
};

struct DeviceSet {
  std::vector<DeviceBuffer> buffers;
  std::vector<void*> pointers;
};

double now_s();
std::size_t tensor_bytes(const Plan& plan, const WorkloadPlan& workload, std::size_t t);
// Inputs generated from the trial's seed, outputs filled with the poison pattern. Throws for an unknown hook.
std::vector<Bytes> host_tensors(const Plan& plan, const TrialPlan& trial, int poison);
DeviceSet upload(const Plan& plan, const std::vector<Bytes>& host);
Bytes download(const DeviceBuffer& buffer);
// Reference outputs of a trial (empty for inputs and scratch outputs). Throws when a file is missing.
std::vector<Bytes> load_references(const Plan& plan, const TrialPlan& trial);
// Waits for `stream` with a deadline; past it, emits a "hang" record for `who` and ends the process.
void wait_with_deadline(cudaStream_t stream, double deadline_s, int trial, const char* who);
// The implementation's returned status and launch errors (no synchronisation: a hang must meet its deadline).
void check_launch(int returned, const char* who);
// The implementation's plan hook for one input set (outputs included, as the calls will see them), waited for.
void plan_for(const Implementation& implementation, const Plan& plan, const TrialPlan& trial, void* const* pointers,
              cudaStream_t stream);
// One call of an implementation and the wait for it (after its plan hook, if any); returns the call's wall time.
double call(const Implementation& implementation, const Plan& plan, const TrialPlan& trial, DeviceSet& set,
            cudaStream_t stream);
// "ok" or "oob_write" (with evidence in `line`).
std::string check_guards(const Plan& plan, const DeviceSet& set, JsonLine& line);
// "ok" or the first output's failure, with error norms in `line`; keeps host copies in `outputs` when given.
std::string compare_outputs(const Plan& plan, const TrialPlan& trial, const DeviceSet& set,
                            const std::vector<Bytes>& references, int poison, JsonLine& line,
                            std::vector<Bytes>* outputs = nullptr);
// The first input whose device copy differs from `host` and its first bad element, or {tensors, -1}.
std::pair<std::size_t, std::int64_t> mutated_input(const Plan& plan, const TrialPlan& trial, const DeviceSet& set,
                                                   const std::vector<Bytes>& host);

int run_reference(const CudaContext& context);
int run_correctness(const CudaContext& context);
int run_timing(const CudaContext& context);
int run_profile(const CudaContext& context);

}  // namespace evoteam_harness::cuda
