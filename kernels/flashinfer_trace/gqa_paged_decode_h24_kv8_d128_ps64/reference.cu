// Trusted reference for gqa_paged_decode_h24_kv8_d128_ps64 (imported): one thread per (sequence, query head). Two passes over the
// sequence's tokens in double (the maximum logit, then the sum of exponentials and the weighted value rows), one
// rounding of each output element to bf16, the lse in base 2 (-inf and zero rows for an empty sequence).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

namespace {

constexpr int k_qo_heads = 24;
constexpr int k_kv_heads = 8;
constexpr int k_head_dim = 128;
constexpr int k_page_size = 64;
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


__global__ void gqa_decode_reference(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k_cache,
                                     const __nv_bfloat16* __restrict__ v_cache,
                                     const std::int32_t* __restrict__ kv_indptr,
                                     const std::int32_t* __restrict__ kv_indices,
                                     const std::int32_t* __restrict__ last_page_len, float sm_scale,
                                     __nv_bfloat16* __restrict__ output, float* __restrict__ lse,
                                     std::int64_t batch_size) {
  const std::int64_t item = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (item >= batch_size * k_qo_heads) return;
  const int b = static_cast<int>(item / k_qo_heads);
  const int h = static_cast<int>(item % k_qo_heads);
  const __nv_bfloat16* q_row = q + item * k_head_dim;
  const std::int64_t kv_head_offset = static_cast<std::int64_t>(h / k_group) * k_head_dim;
  const std::int64_t tokens = sequence_tokens(kv_indptr, last_page_len, b);
  __nv_bfloat16* out = output + item * k_head_dim;
  if (tokens == 0) {
    for (int d = 0; d < k_head_dim; ++d) out[d] = __float2bfloat16(0.0f);
    lse[item] = -INFINITY;
    return;
  }
  auto logit = [&](std::int64_t t) {
    const std::int64_t row = token_row(kv_indptr, kv_indices, b, t) + kv_head_offset;
    double dot = 0.0;
    for (int d = 0; d < k_head_dim; ++d)
      dot += static_cast<double>(__bfloat162float(q_row[d])) * static_cast<double>(__bfloat162float(k_cache[row + d]));
    return dot * static_cast<double>(sm_scale);
  };
  double max_logit = -INFINITY;
  for (std::int64_t t = 0; t < tokens; ++t) max_logit = fmax(max_logit, logit(t));
  double acc[k_head_dim];
  for (int d = 0; d < k_head_dim; ++d) acc[d] = 0.0;
  double sum = 0.0;
  for (std::int64_t t = 0; t < tokens; ++t) {
    const double weight = exp(logit(t) - max_logit);
    sum += weight;
    const std::int64_t row = token_row(kv_indptr, kv_indices, b, t) + kv_head_offset;
    for (int d = 0; d < k_head_dim; ++d) acc[d] += weight * static_cast<double>(__bfloat162float(v_cache[row + d]));
  }
  for (int d = 0; d < k_head_dim; ++d) out[d] = __double2bfloat16(acc[d] / sum);
  lse[item] = static_cast<float>((max_logit + log(sum)) / log(2.0));
}

}  // namespace

extern "C" cudaError_t gqa_paged_decode_h24_kv8_d128_ps64(const __nv_bfloat16* q, const __nv_bfloat16* k_cache, const __nv_bfloat16* v_cache, const std::int32_t* kv_indptr, const std::int32_t* kv_indices, const std::int32_t* kv_last_page_len, float sm_scale, __nv_bfloat16* output, float* lse, std::int64_t batch_size, std::int64_t num_pages, std::int64_t num_kv_indices, cudaStream_t stream) {
  static_cast<void>(num_pages);
  static_cast<void>(num_kv_indices);
  if (batch_size <= 0) return cudaSuccess;
  const std::int64_t items = batch_size * k_qo_heads;
  gqa_decode_reference<<<static_cast<unsigned>((items + 63) / 64), 64, 0, stream>>>(
      q, k_cache, v_cache, kv_indptr, kv_indices, kv_last_page_len, sm_scale, output, lse, batch_size);
  return cudaGetLastError();
}
