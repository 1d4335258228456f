// Starting kernel for gqa_paged_decode_h6_kv1_d128_ps1 (imported): one block per (sequence, query head), one thread per
// head-dim element. For each token of the sequence the block reduces q.k (warp shuffles, then shared memory),
// updates a running max and sum (online softmax, fp32) and accumulates the value row: the straightforward
// translation of reference.py. Left to the team: several tokens per step, query heads of a group sharing the
// loaded K/V rows, split-KV across blocks for long sequences, vectorised loads, tensor cores.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

namespace {

constexpr int k_qo_heads = 6;
constexpr int k_kv_heads = 1;
constexpr int k_head_dim = 128;
constexpr int k_page_size = 1;
constexpr int k_group = k_qo_heads / k_kv_heads;

static_assert(k_head_dim % 32 == 0 && k_head_dim <= 1024, "one thread per head-dim element, whole warps");

// Sequence b's token count and where token t of it sits in the cache (element offset of its [head_dim] row at
// KV head 0).
__device__ std::int64_t sequence_tokens(const std::int32_t* kv_indptr, const std::int32_t* last_page_len, int b) {
  const std::int64_t pages = kv_indptr[b + 1] - kv_indptr[b];
  if (pages <= 0) return 0;
  const std::int64_t last = last_page_len != nullptr ? last_page_len[b] : k_page_size;
  return (pages - 1) * k_page_size + last;
}
__device__ std::int64_t token_row(const std::int32_t* kv_indptr, const std::int32_t* kv_indices, int b,
                                  std::int64_t t) {
  const std::int64_t page = kv_indices[kv_indptr[b] + t / k_page_size];
  return ((page * k_page_size + t % k_page_size) * k_kv_heads) * k_head_dim;
}

constexpr int k_warps = k_head_dim / 32;

__global__ void __launch_bounds__(k_head_dim)
    gqa_decode_naive(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k_cache,
                     const __nv_bfloat16* __restrict__ v_cache, const std::int32_t* __restrict__ kv_indptr,
                     const std::int32_t* __restrict__ kv_indices, const std::int32_t* __restrict__ last_page_len,
                     float sm_scale, __nv_bfloat16* __restrict__ output, float* __restrict__ lse) {
  __shared__ float warp_sums[k_warps];
  const int b = static_cast<int>(blockIdx.x);
  const int h = static_cast<int>(blockIdx.y);
  const int d = static_cast<int>(threadIdx.x);
  const std::int64_t kv_head_offset = static_cast<std::int64_t>(h / k_group) * k_head_dim + d;
  const float q_d = __bfloat162float(q[(static_cast<std::int64_t>(b) * k_qo_heads + h) * k_head_dim + d]);
  const std::int64_t tokens = sequence_tokens(kv_indptr, last_page_len, b);
  float running_max = -INFINITY;
  float running_sum = 0.0f;
  float acc = 0.0f;
  for (std::int64_t t = 0; t < tokens; ++t) {
    const std::int64_t row = token_row(kv_indptr, kv_indices, b, t) + kv_head_offset;
    float part = q_d * __bfloat162float(k_cache[row]);
    for (int offset = 16; offset > 0; offset >>= 1) part += __shfl_xor_sync(0xffffffffu, part, offset);
    if (d % 32 == 0) warp_sums[d / 32] = part;
    __syncthreads();
    float logit = 0.0f;
    for (int w = 0; w < k_warps; ++w) logit += warp_sums[w];
    __syncthreads();
    logit *= sm_scale;
    const float new_max = fmaxf(running_max, logit);
    const float rescale = expf(running_max - new_max);
    const float weight = expf(logit - new_max);
    running_sum = running_sum * rescale + weight;
    acc = acc * rescale + weight * __bfloat162float(v_cache[row]);
    running_max = new_max;
  }
  const std::int64_t out = (static_cast<std::int64_t>(b) * k_qo_heads + h) * k_head_dim + d;
  output[out] = __float2bfloat16_rn(tokens > 0 ? acc / running_sum : 0.0f);
  if (d == 0)
    lse[static_cast<std::int64_t>(b) * k_qo_heads + h] =
        tokens > 0 ? (running_max + logf(running_sum)) * 1.4426950408889634f : -INFINITY;
}

}  // namespace

extern "C" cudaError_t gqa_paged_decode_h6_kv1_d128_ps1(const __nv_bfloat16* q, const __nv_bfloat16* k_cache, const __nv_bfloat16* v_cache, const std::int32_t* kv_indptr, const std::int32_t* kv_indices, float sm_scale, __nv_bfloat16* output, float* lse, std::int64_t batch_size, std::int64_t num_pages, std::int64_t num_kv_indices, cudaStream_t stream) {
  static_cast<void>(num_pages);
  static_cast<void>(num_kv_indices);
  if (batch_size <= 0) return cudaSuccess;
  if (batch_size > 0x7fffffff) return cudaErrorInvalidValue;
  gqa_decode_naive<<<dim3(static_cast<unsigned>(batch_size), k_qo_heads), k_head_dim, 0, stream>>>(
      q, k_cache, v_cache, kv_indptr, kv_indices, nullptr, sm_scale, output, lse);
  return cudaGetLastError();
}
