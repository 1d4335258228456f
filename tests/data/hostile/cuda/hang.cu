// Spins until an input holds a value it never holds: the daemon's deadline must kill it (runtime: HANG_TIMEOUT).
#include <cuda_runtime.h>

#include <cstdint>

extern "C" __global__ void hang_kernel(const float* x, float* y, std::int64_t n) {
  for (;;) {
    if (*static_cast<const volatile float*>(x) == 12345.678f) break;
  }
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}

extern "C" cudaError_t scale(const float* x, float* y, std::int64_t n, cudaStream_t stream) {
  hang_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(x, y, n);
  return cudaGetLastError();
}
