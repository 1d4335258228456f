// Double-precision CPU model of gqa_paged_decode_h32_kv8_d128_ps1 (grouped-query attention decode over a paged
// cache: 32 query heads, 8 KV heads, head dim 128, page size 1). It states the task's semantics in plain C++ for
// the unit tests and checks the CUDA reference on small shapes; see README.md beside it.
#pragma once

#include <cstdint>

namespace evoteam_kernels::gqa_paged_decode_h32_kv8_d128_ps1 {

inline constexpr int k_num_qo_heads = 32;
inline constexpr int k_num_kv_heads = 8;
inline constexpr int k_head_dim = 128;
inline constexpr int k_group_size = k_num_qo_heads / k_num_kv_heads;  // query heads per KV head

// Computes, for each sequence b and query head h (KV head g = h / 4), the attention of one query over the
// sequence's tokens kv_indices[kv_indptr[b] .. kv_indptr[b + 1]) (page size 1: a page is a token):
//   logit_t = sm_scale * q[b,h] . k[t,g],   output[b,h] = sum_t softmax(logit)_t * v[t,g],
//   lse[b,h] = log2(sum_t exp(logit_t)).
// An empty sequence gives a zero output row and lse = -inf. Layouts (row-major): q [batch_size, 32, 128],
// k_cache and v_cache [num_pages, 8, 128], kv_indptr [batch_size + 1], output [batch_size, 32, 128],
// lse [batch_size, 32]. Throws std::invalid_argument when kv_indptr is negative or decreasing, or when an index
// lies outside [0, num_pages).
void gqa_paged_decode(const float* q, const float* k_cache, const float* v_cache, const std::int32_t* kv_indptr,
                      const std::int32_t* kv_indices, double sm_scale, std::int64_t batch_size, std::int64_t num_pages,
                      double* output, double* lse);

}  // namespace evoteam_kernels::gqa_paged_decode_h32_kv8_d128_ps1
