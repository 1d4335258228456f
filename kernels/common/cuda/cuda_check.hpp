#pragma once
// Every CUDA call the harness makes goes through EVOTEAM_CUDA_CHECK. A failure writes one record on the result
// channel and ends the process: a sticky error (illegal address, misaligned access, trap, ...) poisons the
// context, so nothing after it can be trusted, and the evaluator turns the record into RUNTIME_FAULT; any other
// failure of a harness call is the harness's own problem (INFRA_ERROR). The candidate's launch status is checked
// with check_candidate(), which names the candidate in the record.
#include <cuda_runtime.h>

namespace evoteam_harness::cuda {

// Errors after which the context is unusable and the process must end (cudaErrorIllegalAddress and friends).
bool is_sticky(cudaError_t error);
// "RUNTIME_FAULT" for sticky errors, "LAUNCH_ERROR" for a bad launch of the candidate (invalid configuration,
// too many resources), "INFRA_ERROR" otherwise.
const char* failure_class(cudaError_t error, const char* who);

// Process exit codes of the CUDA harness (the evaluator reads the record first; the code is a fallback).
constexpr int k_exit_fault = 3;
constexpr int k_exit_infra = 4;

// Writes {"ev":"cuda_error",...} and exits. `who` is "harness" or "candidate".
[[noreturn]] void fail(cudaError_t error, const char* call, const char* who, const char* file, int line);
// Called with the candidate's returned status and after synchronising; returns normally on success.
void check_candidate(cudaError_t returned, const char* phase);
void set_phase(const char* phase);

}  // namespace evoteam_harness::cuda

#define EVOTEAM_CUDA_CHECK(call)                                                            \
  do {                                                                                      \
    const cudaError_t evoteam_status_ = (call);                                             \
    if (evoteam_status_ != cudaSuccess)                                                     \
      ::evoteam_harness::cuda::fail(evoteam_status_, #call, "harness", __FILE__, __LINE__); \
  } while (0)
