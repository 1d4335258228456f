// Classification of CUDA errors and the failure record.
#include <unistd.h>

#include "../record.hpp"
#include "cuda_check.hpp"

namespace evoteam_harness::cuda {
namespace {

const char* g_phase = "setup";

}  // namespace

bool is_sticky(cudaError_t error) {
  switch (error) {
    case cudaErrorIllegalAddress:
    case cudaErrorMisalignedAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorAssert:
    case cudaErrorIllegalInstruction:
    case cudaErrorHardwareStackError:
    case cudaErrorInvalidPc:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorContextIsDestroyed:
      return true;
    default:
      return false;
  }
}

const char* failure_class(cudaError_t error, const char* who) {
  if (is_sticky(error)) return "RUNTIME_FAULT";
  const bool candidate = who != nullptr && who[0] == 'c';
  if (candidate) return "LAUNCH_ERROR";
  return "INFRA_ERROR";
}

void set_phase(const char* phase) { g_phase = phase; }

void fail(cudaError_t error, const char* call, const char* who, const char* file, int line) {
  JsonLine record;
  record.field("ev", "cuda_error")
      .field("class", failure_class(error, who))
      .field("error", cudaGetErrorName(error))
      .field("code", static_cast<int>(error))
      .field("sticky", is_sticky(error))
      .field("who", who)
      .field("phase", g_phase)
      .field("call", call)
      .field("at", std::string(file) + ":" + std::to_string(line));
  emit(record);
  _exit(is_sticky(error) || (who != nullptr && who[0] == 'c') ? k_exit_fault : k_exit_infra);
}

void check_candidate(cudaError_t returned, const char* phase) {
  set_phase(phase);
  if (returned != cudaSuccess) fail(returned, "entry point return value", "candidate", __FILE__, __LINE__);
  // A launch error is reported by the next runtime call; a fault inside the kernel only after synchronising.
  const cudaError_t launch = cudaGetLastError();
  if (launch != cudaSuccess) fail(launch, "cudaGetLastError after the candidate", "candidate", __FILE__, __LINE__);
  const cudaError_t done = cudaDeviceSynchronize();
  if (done != cudaSuccess) fail(done, "cudaDeviceSynchronize after the candidate", "candidate", __FILE__, __LINE__);
}

}  // namespace evoteam_harness::cuda
