// Stores through a wild pointer: a sticky cudaErrorIllegalAddress (runtime: FAULT_ILLEGAL_ADDRESS, a RUNTIME_FAULT record, then a health probe).
#include <cuda_runtime.h>

#include <cstdint>

extern "C" __global__ void illegal_address_kernel(const float* x, float* y, std::int64_t n) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  float* wild = reinterpret_cast<float*>(static_cast<std::uintptr_t>(0x10) + (reinterpret_cast<std::uintptr_t>(y) & 0xF));
  if (i < n) wild[i] = 2.0f * x[i];
}

extern "C" cudaError_t scale(const float* x, float* y, std::int64_t n, cudaStream_t stream) {
  illegal_address_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(x, y, n);
  return cudaGetLastError();
}
