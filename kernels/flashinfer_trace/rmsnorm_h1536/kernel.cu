// Starting kernel for rmsnorm_h1536 (imported): one block of BLOCK_THREADS threads per row. Pass 1 strides over the
// row accumulating squares in fp32, reduced by warp shuffles and shared memory; pass 2 reads the row again and
// writes x * rsqrt(mean + eps) * weight, rounded to bf16 once. The straightforward translation of reference.py.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#ifndef BLOCK_THREADS
#define BLOCK_THREADS 256
#endif

namespace {

constexpr int k_threads = BLOCK_THREADS;
constexpr int k_warps = k_threads / 32;
constexpr std::int64_t k_hidden = 1536;
constexpr float k_eps = 1e-6f;

static_assert(k_threads % 32 == 0 && k_threads >= 32 && k_threads <= 1024, "BLOCK_THREADS must be whole warps");

__device__ float row_value(const __nv_bfloat16* x, const __nv_bfloat16* r, std::int64_t i) {
  static_cast<void>(r);
  return __bfloat162float(x[i]);
}

__device__ float warp_sum(float value) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

__global__ void __launch_bounds__(k_threads)
    rmsnorm_rows(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ r,
                 const __nv_bfloat16* __restrict__ weight, __nv_bfloat16* __restrict__ y) {
  __shared__ float warp_sums[k_warps];
  __shared__ float row_sum;
  const std::int64_t offset = static_cast<std::int64_t>(blockIdx.x) * k_hidden;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  float sum = 0.0f;
  for (std::int64_t i = threadIdx.x; i < k_hidden; i += k_threads) {
    const float value = row_value(x, r, offset + i);
    sum = fmaf(value, value, sum);
  }
  sum = warp_sum(sum);
  if (lane == 0) warp_sums[warp] = sum;
  __syncthreads();
  if (warp == 0) {
    float total = lane < k_warps ? warp_sums[lane] : 0.0f;
    total = warp_sum(total);
    if (lane == 0) row_sum = total;
  }
  __syncthreads();
  const float inv_rms = rsqrtf(row_sum / static_cast<float>(k_hidden) + k_eps);
  for (std::int64_t i = threadIdx.x; i < k_hidden; i += k_threads)
    y[offset + i] = __float2bfloat16_rn(row_value(x, r, offset + i) * inv_rms * __bfloat162float(weight[i]));
}

}  // namespace

extern "C" cudaError_t rmsnorm_h1536(const __nv_bfloat16* hidden_states, const __nv_bfloat16* weight, __nv_bfloat16* output, std::int64_t batch_size, cudaStream_t stream) {
  if (batch_size <= 0) return cudaSuccess;
  if (batch_size > 0x7fffffff) return cudaErrorInvalidValue;
  rmsnorm_rows<<<static_cast<unsigned>(batch_size), k_threads, 0, stream>>>(hidden_states, nullptr, weight,
                                                                           output);
  return cudaGetLastError();
}
