// Not written yet: the task's reference, reference.py in CUDA.
// Imported from the FlashInfer-Trace definition rope_with_cos_sin_cache_neox_style_d128_rd64; reference.py holds its PyTorch reference. Until this file is
// written, every evaluation of the task fails with cudaErrorNotSupported.
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

extern "C" cudaError_t rope_with_cos_sin_cache_neox_style_d128_rd64(const __nv_bfloat16* /*q*/, const __nv_bfloat16* /*k*/, const float* /*cos_sin_cache*/, const std::int64_t* /*positions*/, __nv_bfloat16* /*q_out*/, __nv_bfloat16* /*k_out*/, std::int64_t /*num_tokens*/, std::int64_t /*num_qo_heads*/, std::int64_t /*num_kv_heads*/, std::int64_t /*max_seq_len*/, cudaStream_t /*stream*/) {
  return cudaErrorNotSupported;
}
