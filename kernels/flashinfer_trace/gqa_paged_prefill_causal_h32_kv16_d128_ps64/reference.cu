// Trusted reference for gqa_paged_prefill_causal_h32_kv16_d128_ps64 (imported): one thread per (query token, query head), two passes over the
// visible keys in double (the maximum logit, then the exponentials and the weighted value rows), one rounding of
// each output element to bf16, the lse in base 2; rows that see no key are zero with lse -inf.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

namespace {

constexpr int k_qo_heads = 32;
constexpr int k_kv_heads = 16;
constexpr int k_head_dim = 128;
constexpr int k_group = k_qo_heads / k_kv_heads;
constexpr int k_page_size = 64;  // 0: a ragged (unpaged) KV
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


__global__ void prefill_reference(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
                                  const __nv_bfloat16* __restrict__ v, const std::int32_t* __restrict__ qo_indptr,
                                  int batch, Kv kv, float sm_scale, __nv_bfloat16* __restrict__ output,
                                  float* __restrict__ lse, std::int64_t total_q) {
  const std::int64_t item = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (item >= total_q * k_qo_heads) return;
  const std::int64_t token = item / k_qo_heads;
  const int h = static_cast<int>(item % k_qo_heads);
  const int b = sequence_of(qo_indptr, batch, token);
  const std::int64_t q_len = qo_indptr[b + 1] - qo_indptr[b];
  const std::int64_t kv_len = kv_tokens(kv, b);
  std::int64_t visible = token - qo_indptr[b] + 1 + kv_len - q_len;
  visible = visible < 0 ? 0 : visible > kv_len ? kv_len : visible;
  const __nv_bfloat16* q_row = q + item * k_head_dim;
  const std::int64_t head = static_cast<std::int64_t>(h / k_group) * k_head_dim;
  __nv_bfloat16* out = output + item * k_head_dim;
  if (visible == 0) {
    for (int d = 0; d < k_head_dim; ++d) out[d] = __float2bfloat16(0.0f);
    lse[item] = -INFINITY;
    return;
  }
  auto logit = [&](std::int64_t t) {
    const std::int64_t row = kv_row(kv, b, t) + head;
    double dot = 0.0;
    for (int d = 0; d < k_head_dim; ++d)
      dot += static_cast<double>(__bfloat162float(q_row[d])) * static_cast<double>(__bfloat162float(k[row + d]));
    return dot * static_cast<double>(sm_scale);
  };
  double max_logit = -INFINITY;
  for (std::int64_t t = 0; t < visible; ++t) max_logit = fmax(max_logit, logit(t));
  double acc[k_head_dim];
  for (int d = 0; d < k_head_dim; ++d) acc[d] = 0.0;
  double sum = 0.0;
  for (std::int64_t t = 0; t < visible; ++t) {
    const double weight = exp(logit(t) - max_logit);
    sum += weight;
    const std::int64_t row = kv_row(kv, b, t) + head;
    for (int d = 0; d < k_head_dim; ++d) acc[d] += weight * static_cast<double>(__bfloat162float(v[row + d]));
  }
  for (int d = 0; d < k_head_dim; ++d) out[d] = __double2bfloat16(acc[d] / sum);
  lse[item] = static_cast<float>((max_logit + log(sum)) / log(2.0));
}

}  // namespace

extern "C" cudaError_t gqa_paged_prefill_causal_h32_kv16_d128_ps64(const __nv_bfloat16* q, const __nv_bfloat16* k_cache, const __nv_bfloat16* v_cache, const std::int32_t* qo_indptr, const std::int32_t* kv_indptr, const std::int32_t* kv_indices, const std::int32_t* kv_last_page_len, float sm_scale, __nv_bfloat16* output, float* lse, std::int64_t len_indptr, std::int64_t total_q, std::int64_t num_kv_indices, std::int64_t num_pages, cudaStream_t stream) {
  static_cast<void>(num_kv_indices);
  static_cast<void>(num_pages);
  if (total_q <= 0 || len_indptr < 2) return cudaSuccess;
  const Kv kv{kv_indptr, kv_indices, kv_last_page_len};
  const std::int64_t items = total_q * k_qo_heads;
  prefill_reference<<<static_cast<unsigned>((items + 63) / 64), 64, 0, stream>>>(
      q, k_cache, v_cache, qo_indptr, static_cast<int>(len_indptr - 1), kv, sm_scale, output, lse, total_q);
  return cudaGetLastError();
}
