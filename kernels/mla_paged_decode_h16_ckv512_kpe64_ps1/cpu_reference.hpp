// Double-precision CPU model of mla_paged_decode_h16_ckv512_kpe64_ps1 (DeepSeek-V3 multi-head latent attention
// decode at tensor-parallel 8, page size 1). It states the task's semantics in plain C++ for the unit tests and
// checks the CUDA reference on small shapes; see README.md beside it for the math and the layouts.
#pragma once

#include <cstdint>

namespace evoteam_kernels::mla_paged_decode_h16_ckv512_kpe64_ps1 {

inline constexpr int k_num_qo_heads = 16;
inline constexpr int k_head_dim_ckv = 512;
inline constexpr int k_head_dim_kpe = 64;

// Computes, for each sequence b and head h, the attention of one query over the sequence's tokens
// kv_indices[kv_indptr[b] .. kv_indptr[b + 1]) (page size 1: a page is a token):
//   logit_t = sm_scale * (q_nope[b,h] . ckv[t] + q_pe[b,h] . kpe[t]),
//   output[b,h] = sum_t softmax(logit)_t * ckv[t],   lse[b,h] = log2(sum_t exp(logit_t)).
// An empty sequence gives a zero output row and lse = -inf. Layouts (row-major): q_nope [batch_size, 16, 512],
// q_pe [batch_size, 16, 64], ckv_cache [num_pages, 512], kpe_cache [num_pages, 64], kv_indptr [batch_size + 1],
// output [batch_size, 16, 512], lse [batch_size, 16]. Throws std::invalid_argument when kv_indptr is negative or
// decreasing, or when an index lies outside [0, num_pages).
void mla_paged_decode(const float* q_nope, const float* q_pe, const float* ckv_cache, const float* kpe_cache,
                      const std::int32_t* kv_indptr, const std::int32_t* kv_indices, double sm_scale,
                      std::int64_t batch_size, std::int64_t num_pages, double* output, double* lse);

}  // namespace evoteam_kernels::mla_paged_decode_h16_ckv512_kpe64_ps1
