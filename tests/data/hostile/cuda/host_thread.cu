// Launches from a detached host thread after returning (static: std::thread, a forbidden host symbol).
#include <cuda_runtime.h>

#include <cstdint>

#include <thread>

extern "C" __global__ void host_thread_kernel(const float* x, float* y, std::int64_t n) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}

extern "C" cudaError_t scale(const float* x, float* y, std::int64_t n, cudaStream_t stream) {
  std::thread worker([=] { host_thread_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(x, y, n); });
  worker.detach();
  return cudaSuccess;
}
