// Reads the device timers (to detect being timed, or to busy-wait to a deadline): static: %globaltimer and
// %clock reads in the PTX of a release build.
#include <cuda_runtime.h>

#include <cstdint>

extern "C" __global__ void timer_read_kernel(const float* x, float* y, std::int64_t n) {
  std::uint64_t now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  const long long start = clock64();
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i] + static_cast<float>((now + static_cast<std::uint64_t>(clock64() - start)) & 0) ;
}

extern "C" cudaError_t scale(const float* x, float* y, std::int64_t n, cudaStream_t stream) {
  timer_read_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(x, y, n);
  return cudaGetLastError();
}
