// Not written yet: the starting kernel the team optimises.
// Imported from the FlashInfer-Trace definition mla_paged_decode_h16_ckv512_kpe64_ps64; reference.py holds its PyTorch reference. Until this file is
// written, every evaluation of the task fails with cudaErrorNotSupported.
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

extern "C" cudaError_t mla_paged_decode_h16_ckv512_kpe64_ps64(const __nv_bfloat16* /*q_nope*/, const __nv_bfloat16* /*q_pe*/, const __nv_bfloat16* /*ckv_cache*/, const __nv_bfloat16* /*kpe_cache*/, const std::int32_t* /*kv_indptr*/, const std::int32_t* /*kv_indices*/, const std::int32_t* /*kv_last_page_len*/, float /*sm_scale*/, __nv_bfloat16* /*output*/, float* /*lse*/, std::int64_t /*batch_size*/, std::int64_t /*num_pages*/, std::int64_t /*num_kv_indices*/, cudaStream_t /*stream*/) {
  return cudaErrorNotSupported;
}
