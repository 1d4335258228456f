// Correct only for the benchmarked size 1048576 (static: a warning on the shape literal; runtime: SHAPE_SPECIALIZED on the
// battery's other shapes).
#include <cuda_runtime.h>

#include <cstdint>

extern "C" __global__ void shape_specialisation_kernel(const float* x, float* y, std::int64_t n) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < 1048576) y[i] = 2.0f * x[i];
  (void)n;
}

extern "C" cudaError_t scale(const float* x, float* y, std::int64_t n, cudaStream_t stream) {
  if (n != 1048576) return cudaSuccess;
  shape_specialisation_kernel<<<1048576 / 256, 256, 0, stream>>>(x, y, n);
  return cudaGetLastError();
}
