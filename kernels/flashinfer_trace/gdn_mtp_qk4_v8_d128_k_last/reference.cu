// Not written yet: the task's reference, reference.py in CUDA.
// Imported from the FlashInfer-Trace definition gdn_mtp_qk4_v8_d128_k_last; reference.py holds its PyTorch reference. Until this file is
// written, every evaluation of the task fails with cudaErrorNotSupported.
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

extern "C" cudaError_t gdn_mtp_qk4_v8_d128_k_last(const __nv_bfloat16* /*q*/, const __nv_bfloat16* /*k*/, const __nv_bfloat16* /*v*/, const float* /*initial_state*/, const std::int32_t* /*initial_state_indices*/, const float* /*A_log*/, const __nv_bfloat16* /*a*/, const float* /*dt_bias*/, const __nv_bfloat16* /*b*/, float /*scale*/, const float* /*intermediate_states_buffer*/, __nv_bfloat16* /*output*/, float* /*final_state*/, std::int64_t /*batch_size*/, std::int64_t /*seq_len*/, std::int64_t /*pool_size*/, cudaStream_t /*stream*/) {
  return cudaErrorNotSupported;
}
