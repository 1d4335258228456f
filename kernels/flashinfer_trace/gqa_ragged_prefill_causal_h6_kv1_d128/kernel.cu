// Starting kernel for gqa_ragged_prefill_causal_h6_kv1_d128 (imported): causal GQA prefill, one block per (query token, query head), one
// thread per head-dim element; for each visible key the block reduces q.k (warp shuffles, then shared memory) and
// updates an online softmax in fp32: the straightforward translation of reference.py. Left to the team: tiles of
// queries and keys in shared memory, query heads of a group sharing K/V, tensor cores, a work list over sequences.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

namespace {

constexpr int k_qo_heads = 6;
constexpr int k_kv_heads = 1;
constexpr int k_head_dim = 128;
constexpr int k_group = k_qo_heads / k_kv_heads;
constexpr int k_page_size = 0;  // 0: a ragged (unpaged) KV
constexpr int k_page_divisor = k_page_size > 0 ? k_page_size : 1;  // the paged branch's, never 0

static_assert(k_head_dim % 32 == 0 && k_head_dim <= 1024, "one thread per head-dim element, whole warps");

struct Kv {
  const std::int32_t* kv_indptr;
  const std::int32_t* kv_indices;     // paged only
  const std::int32_t* last_page_len;  // paged with kv_last_page_len only; else every page is full
};

// The sequence holding query token `token` (qo_indptr is non-decreasing from 0).
__host__ __device__ inline int sequence_of(const std::int32_t* qo_indptr, int batch, std::int64_t token) {
  int low = 0, high = batch - 1;
  while (low < high) {
    const int mid = (low + high + 1) / 2;
    if (qo_indptr[mid] <= token) low = mid; else high = mid - 1;
  }
  return low;
}
__host__ __device__ inline std::int64_t kv_tokens(const Kv& kv, int b) {
  const std::int64_t span = kv.kv_indptr[b + 1] - kv.kv_indptr[b];
  if (k_page_size == 0 || span <= 0) return span > 0 ? span : 0;
  return (span - 1) * k_page_size + (kv.last_page_len != nullptr ? kv.last_page_len[b] : k_page_size);
}
// Element offset of key/value token t of sequence b, at KV head 0.
__host__ __device__ inline std::int64_t kv_row(const Kv& kv, int b, std::int64_t t) {
  if (k_page_size == 0) return (kv.kv_indptr[b] + t) * k_kv_heads * k_head_dim;
  const std::int64_t page = kv.kv_indices[kv.kv_indptr[b] + t / k_page_divisor];
  return ((page * k_page_divisor + t % k_page_divisor) * k_kv_heads) * k_head_dim;
}

constexpr int k_warps = k_head_dim / 32;

__global__ void __launch_bounds__(k_head_dim)
    prefill_naive(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
                  const __nv_bfloat16* __restrict__ v, const std::int32_t* __restrict__ qo_indptr, int batch, Kv kv,
                  float sm_scale, __nv_bfloat16* __restrict__ output, float* __restrict__ lse) {
  __shared__ float warp_sums[k_warps];
  const std::int64_t token = blockIdx.x;
  const int h = static_cast<int>(blockIdx.y);
  const int d = static_cast<int>(threadIdx.x);
  const int b = sequence_of(qo_indptr, batch, token);
  const std::int64_t q_len = qo_indptr[b + 1] - qo_indptr[b];
  const std::int64_t kv_len = kv_tokens(kv, b);
  std::int64_t visible = token - qo_indptr[b] + 1 + kv_len - q_len;
  visible = visible < 0 ? 0 : visible > kv_len ? kv_len : visible;
  const std::int64_t head = static_cast<std::int64_t>(h / k_group) * k_head_dim + d;
  const float q_d = __bfloat162float(q[(token * k_qo_heads + h) * k_head_dim + d]);
  float running_max = -INFINITY, running_sum = 0.0f, acc = 0.0f;
  for (std::int64_t t = 0; t < visible; ++t) {
    const std::int64_t row = kv_row(kv, b, t) + head;
    float part = q_d * __bfloat162float(k[row]);
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
    acc = acc * rescale + weight * __bfloat162float(v[row]);
    running_max = new_max;
  }
  output[(token * k_qo_heads + h) * k_head_dim + d] = __float2bfloat16_rn(visible > 0 ? acc / running_sum : 0.0f);
  if (d == 0)
    lse[token * k_qo_heads + h] = visible > 0 ? (running_max + logf(running_sum)) * 1.4426950408889634f : -INFINITY;
}

}  // namespace

extern "C" cudaError_t gqa_ragged_prefill_causal_h6_kv1_d128(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, const std::int32_t* qo_indptr, const std::int32_t* kv_indptr, float sm_scale, __nv_bfloat16* output, float* lse, std::int64_t len_indptr, std::int64_t total_q, std::int64_t total_kv, cudaStream_t stream) {
  static_cast<void>(total_kv);
  if (total_q <= 0 || len_indptr < 2) return cudaSuccess;
  if (total_q > 0x7fffffff) return cudaErrorInvalidValue;
  const Kv kv{kv_indptr, nullptr, nullptr};
  prefill_naive<<<dim3(static_cast<unsigned>(total_q), k_qo_heads), k_head_dim, 0, stream>>>(
      q, k, v, qo_indptr, static_cast<int>(len_indptr - 1), kv, sm_scale, output, lse);
  return cudaGetLastError();
}
