// Writes only the first half of the output: the poison left in the rest must fail correctness (runtime: UNWRITTEN_OUTPUT).
#include <cuda_runtime.h>

#include <cstdint>

extern "C" __global__ void unwritten_output_kernel(const float* x, float* y, std::int64_t n) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < n / 2) y[i] = 2.0f * x[i];
}

extern "C" cudaError_t scale(const float* x, float* y, std::int64_t n, cudaStream_t stream) {
  unwritten_output_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(x, y, n);
  return cudaGetLastError();
}
