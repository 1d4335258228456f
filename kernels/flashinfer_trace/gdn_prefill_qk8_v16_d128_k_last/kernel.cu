// Not written yet: the starting kernel the team optimises.
// Imported from the FlashInfer-Trace definition gdn_prefill_qk8_v16_d128_k_last; reference.py holds its PyTorch reference. Until this file is
// written, every evaluation of the task fails with cudaErrorNotSupported.
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

extern "C" cudaError_t gdn_prefill_qk8_v16_d128_k_last(const __nv_bfloat16* /*q*/, const __nv_bfloat16* /*k*/, const __nv_bfloat16* /*v*/, const float* /*state*/, const float* /*A_log*/, const __nv_bfloat16* /*a*/, const float* /*dt_bias*/, const __nv_bfloat16* /*b*/, const std::int64_t* /*cu_seqlens*/, float /*scale*/, __nv_bfloat16* /*output*/, float* /*new_state*/, std::int64_t /*total_seq_len*/, std::int64_t /*num_seqs*/, cudaStream_t /*stream*/) {
  return cudaErrorNotSupported;
}
