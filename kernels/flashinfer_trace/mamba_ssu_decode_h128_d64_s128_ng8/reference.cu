// Not written yet: the task's reference, reference.py in CUDA.
// Imported from the FlashInfer-Trace definition mamba_ssu_decode_h128_d64_s128_ng8; reference.py holds its PyTorch reference. Until this file is
// written, every evaluation of the task fails with cudaErrorNotSupported.
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

extern "C" cudaError_t mamba_ssu_decode_h128_d64_s128_ng8(const __nv_bfloat16* /*state*/, const __nv_bfloat16* /*x*/, const __nv_bfloat16* /*dt*/, const float* /*A*/, const __nv_bfloat16* /*B*/, const __nv_bfloat16* /*C*/, const __nv_bfloat16* /*D*/, const __nv_bfloat16* /*dt_bias*/, const std::int32_t* /*state_batch_indices*/, __nv_bfloat16* /*output*/, __nv_bfloat16* /*new_state*/, std::int64_t /*batch_size*/, std::int64_t /*state_cache_size*/, cudaStream_t /*stream*/) {
  return cudaErrorNotSupported;
}
