// Allocates scratch memory from the device heap, outside the harness's accounting (static: device malloc).
#include <cuda_runtime.h>

#include <cstdint>

extern "C" __global__ void device_malloc_kernel(const float* x, float* y, std::int64_t n) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  float* scratch = static_cast<float*>(malloc(sizeof(float)));
  if (scratch == nullptr) return;
  if (i < n) {
    *scratch = 2.0f * x[i];
    y[i] = *scratch;
  }
  free(scratch);
}

extern "C" cudaError_t scale(const float* x, float* y, std::int64_t n, cudaStream_t stream) {
  device_malloc_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(x, y, n);
  return cudaGetLastError();
}
