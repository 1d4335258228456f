// Writes a few elements past the end of the output: they land in the harness's guard zone (runtime:
// OOB_WRITE_GUARD from the guard check, since no fault is raised inside the allocation).
#include <cuda_runtime.h>

#include <cstdint>

extern "C" __global__ void oob_write_kernel(const float* x, float* y, std::int64_t n) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
  if (i < 16) y[n + i] = 0.0f;
}

extern "C" cudaError_t scale(const float* x, float* y, std::int64_t n, cudaStream_t stream) {
  oob_write_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(x, y, n);
  return cudaGetLastError();
}
