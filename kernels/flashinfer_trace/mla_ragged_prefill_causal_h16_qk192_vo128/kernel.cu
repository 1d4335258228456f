// Not written yet: the starting kernel the team optimises.
// Imported from the FlashInfer-Trace definition mla_ragged_prefill_causal_h16_qk192_vo128; reference.py holds its PyTorch reference. Until this file is
// written, every evaluation of the task fails with cudaErrorNotSupported.
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

extern "C" cudaError_t mla_ragged_prefill_causal_h16_qk192_vo128(const __nv_bfloat16* /*q*/, const __nv_bfloat16* /*k*/, const __nv_bfloat16* /*v*/, const std::int32_t* /*qo_indptr*/, const std::int32_t* /*kv_indptr*/, float /*sm_scale*/, __nv_bfloat16* /*output*/, float* /*lse*/, std::int64_t /*total_q*/, std::int64_t /*total_kv*/, std::int64_t /*len_indptr*/, cudaStream_t /*stream*/) {
  return cudaErrorNotSupported;
}
