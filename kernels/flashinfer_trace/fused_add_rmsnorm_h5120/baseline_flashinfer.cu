// Vendor comparison for fused_add_rmsnorm_h5120 (imported): FlashInfer's FusedAddRMSNorm from flashinfer/norm.cuh of the pinned
// flashinfer-python wheel, called through the same harness as candidates. Trusted code, not a candidate.
// FusedAddRMSNorm works in place, so each call first copies hidden_states and residual (two extra
// passes over the rows, inside the timed call): its time is an upper bound of FlashInfer's.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include <flashinfer/norm.cuh>

extern "C" cudaError_t fused_add_rmsnorm_h5120(const __nv_bfloat16* hidden_states, const __nv_bfloat16* residual, const __nv_bfloat16* weight, __nv_bfloat16* output, std::int64_t batch_size, cudaStream_t stream) {
  if (batch_size <= 0) return cudaSuccess;
  constexpr std::uint32_t k_hidden = 5120;
  const auto rows = static_cast<std::uint32_t>(batch_size);
  // In place: output receives hidden_states and becomes the normalised row; the residual sum goes to a buffer of
  // this file's own, grown as needed (inputs stay untouched).
  static __nv_bfloat16* residual_copy = nullptr;
  static std::int64_t residual_rows = 0;
  cudaError_t status = cudaSuccess;
  if (batch_size > residual_rows) {
    cudaFree(residual_copy);
    residual_copy = nullptr;
    residual_rows = 0;
    status = cudaMalloc(&residual_copy, static_cast<std::size_t>(batch_size) * k_hidden * sizeof(__nv_bfloat16));
    if (status != cudaSuccess) return status;
    residual_rows = batch_size;
  }
  const std::size_t bytes = static_cast<std::size_t>(batch_size) * k_hidden * sizeof(__nv_bfloat16);
  status = cudaMemcpyAsync(output, hidden_states, bytes, cudaMemcpyDeviceToDevice, stream);
  if (status == cudaSuccess)
    status = cudaMemcpyAsync(residual_copy, residual, bytes, cudaMemcpyDeviceToDevice, stream);
  if (status != cudaSuccess) return status;
  return flashinfer::norm::FusedAddRMSNorm<__nv_bfloat16>(output, residual_copy,
                                                          const_cast<__nv_bfloat16*>(weight), rows, k_hidden,
                                                          k_hidden, k_hidden, 1e-6f, false, stream);
}
