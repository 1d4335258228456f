// Trusted reference of gqa_paged_decode_h32_kv8_d128_ps1: one block per (sequence, query head), double-precision
// dot products and softmax, two passes over the sequence (the maximum logit first, then the weights and the
// weighted value rows), so no running rescale is involved. Slow but plain; see README.md for the semantics.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

namespace {

constexpr int k_heads = 32;
constexpr int k_kv_heads = 8;
constexpr int k_group = k_heads / k_kv_heads;
constexpr int k_dim = 128;
constexpr int k_threads = 128;
constexpr int k_warps = k_threads / 32;
constexpr double k_ln2 = 0.693147180559945309417232121458;

static_assert(k_dim == k_threads, "each thread owns one value dimension");

__device__ __forceinline__ double warp_sum(double value) {
  for (int offset = 16; offset > 0; offset >>= 1) value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

// The unscaled logit of one token, computed by a whole warp in a fixed order (so both passes agree bit for bit).
__device__ __forceinline__ double token_dot(const float* q, const __nv_bfloat16* k_row, int lane) {
  double dot = 0;
  for (int d = lane; d < k_dim; d += 32) dot += static_cast<double>(q[d]) * static_cast<double>(__bfloat162float(k_row[d]));
  return warp_sum(dot);
}

__global__ void __launch_bounds__(k_threads)
    gqa_decode_reference_kernel(const __nv_bfloat16* q, const __nv_bfloat16* k_cache, const __nv_bfloat16* v_cache,
                                const std::int32_t* kv_indptr, const std::int32_t* kv_indices, float sm_scale,
                                __nv_bfloat16* output, float* lse) {
  __shared__ float q_s[k_dim];
  __shared__ double max_s[k_warps];
  __shared__ double weight_s[k_warps];
  const std::int64_t b = blockIdx.x;
  const int head = blockIdx.y;
  const int kv_head = head / k_group;
  const int tid = threadIdx.x;
  const int warp = tid / 32;
  const int lane = tid % 32;
  const std::int64_t row = b * k_heads + head;
  const std::int32_t begin = kv_indptr[b];
  const std::int32_t length = kv_indptr[b + 1] - begin;
  __nv_bfloat16* out = output + row * k_dim;

  if (length <= 0) {  // the definition: a zero output row and lse = -inf
    out[tid] = __float2bfloat16(0.0f);
    if (tid == 0) lse[row] = -INFINITY;
    return;
  }

  q_s[tid] = __bfloat162float(q[row * k_dim + tid]);
  __syncthreads();

  const double scale = static_cast<double>(sm_scale);
  const std::int32_t* pages = kv_indices + begin;
  // k_cache and v_cache are [num_pages, 1, 8, 128]: a page holds all KV heads of one token.
  auto row_of = [&](const __nv_bfloat16* cache, std::int32_t page) {
    return cache + (static_cast<std::int64_t>(page) * k_kv_heads + kv_head) * k_dim;
  };

  // Pass 1: the largest scaled logit; warps take tokens round-robin.
  double warp_max = -INFINITY;
  for (std::int32_t t = warp; t < length; t += k_warps)
    warp_max = fmax(warp_max, scale * token_dot(q_s, row_of(k_cache, pages[t]), lane));
  if (lane == 0) max_s[warp] = warp_max;
  __syncthreads();
  double max_logit = max_s[0];
  for (int w = 1; w < k_warps; ++w) max_logit = fmax(max_logit, max_s[w]);

  // Pass 2: weights exp(logit - max) in [0, 1], a chunk of k_warps tokens at a time; every thread accumulates
  // its value dimension and (redundantly) the sum of the weights.
  double acc = 0, sum = 0;
  for (std::int32_t t0 = 0; t0 < length; t0 += k_warps) {
    const std::int32_t t = t0 + warp;
    if (t < length) {
      const double logit = scale * token_dot(q_s, row_of(k_cache, pages[t]), lane);
      if (lane == 0) weight_s[warp] = exp(logit - max_logit);
    }
    __syncthreads();
    const int count = min(k_warps, length - t0);
    for (int j = 0; j < count; ++j) {
      const double weight = weight_s[j];
      acc += weight * static_cast<double>(__bfloat162float(row_of(v_cache, pages[t0 + j])[tid]));
      sum += weight;
    }
    __syncthreads();
  }
  out[tid] = __double2bfloat16(acc / sum);
  if (tid == 0) lse[row] = static_cast<float>((max_logit + log(sum)) / k_ln2);
}

}  // namespace

extern "C" cudaError_t gqa_paged_decode(const __nv_bfloat16* q, const __nv_bfloat16* k_cache,
                                        const __nv_bfloat16* v_cache, const std::int32_t* kv_indptr,
                                        const std::int32_t* kv_indices, float sm_scale, __nv_bfloat16* output,
                                        float* lse, float* workspace, std::int64_t batch_size, std::int64_t num_pages,
                                        std::int64_t num_kv_indices, cudaStream_t stream) {
  (void)workspace;
  (void)num_pages;
  (void)num_kv_indices;
  if (batch_size <= 0) return cudaGetLastError();
  const dim3 grid(static_cast<unsigned>(batch_size), k_heads);
  gqa_decode_reference_kernel<<<grid, k_threads, 0, stream>>>(q, k_cache, v_cache, kv_indptr, kv_indices, sm_scale,
                                                              output, lse);
  return cudaGetLastError();
}
