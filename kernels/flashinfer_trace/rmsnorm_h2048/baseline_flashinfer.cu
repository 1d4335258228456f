// Vendor comparison for rmsnorm_h2048 (imported): FlashInfer's RMSNorm from flashinfer/norm.cuh of the pinned
// flashinfer-python wheel, called through the same harness as candidates. Trusted code, not a candidate.
// Called as flashinfer.norm.rmsnorm calls it: contiguous rows, PDL off.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include <flashinfer/norm.cuh>

extern "C" cudaError_t rmsnorm_h2048(const __nv_bfloat16* hidden_states, const __nv_bfloat16* weight, __nv_bfloat16* output, std::int64_t batch_size, cudaStream_t stream) {
  if (batch_size <= 0) return cudaSuccess;
  constexpr std::uint32_t k_hidden = 2048;
  const auto rows = static_cast<std::uint32_t>(batch_size);
  return flashinfer::norm::RMSNorm<__nv_bfloat16>(const_cast<__nv_bfloat16*>(hidden_states),
                                                  const_cast<__nv_bfloat16*>(weight), output, rows, k_hidden,
                                                  k_hidden, k_hidden, 1e-6f, false, stream);
}
