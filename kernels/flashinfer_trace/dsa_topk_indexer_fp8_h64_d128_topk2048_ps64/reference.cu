// Not written yet: the task's reference, reference.py in CUDA.
// Imported from the FlashInfer-Trace definition dsa_topk_indexer_fp8_h64_d128_topk2048_ps64; reference.py holds its PyTorch reference. Until this file is
// written, every evaluation of the task fails with cudaErrorNotSupported.
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

extern "C" cudaError_t dsa_topk_indexer_fp8_h64_d128_topk2048_ps64(const __nv_fp8_e4m3* /*q_index_fp8*/, const std::uint8_t* /*k_index_cache_fp8*/, const float* /*weights*/, const std::int32_t* /*seq_lens*/, const std::int32_t* /*block_table*/, std::int32_t* /*topk_indices*/, std::int64_t /*batch_size*/, std::int64_t /*max_num_pages*/, std::int64_t /*num_pages*/, cudaStream_t /*stream*/) {
  return cudaErrorNotSupported;
}
