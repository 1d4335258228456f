#pragma once
// Double-precision CPU reference of gqa_paged_decode_h20_kv4_d128_ps64 (imported): for each sequence b and query head h, softmax over the
// sequence's tokens of sm_scale * q.k (KV head h / 5), the weighted sum of value rows, and the base-2
// log-sum-exp (-inf, zero row for an empty sequence). bf16 inputs are widened to float by the caller.
#include <cstdint>
#include <vector>

namespace evoteam_kernels::gqa_paged_decode_h20_kv4_d128_ps64 {

inline constexpr int k_qo_heads = 20;
inline constexpr int k_kv_heads = 4;
inline constexpr int k_head_dim = 128;
inline constexpr int k_page_size = 64;

struct Result {
  std::vector<double> output;  // [batch_size][k_qo_heads][k_head_dim]
  std::vector<double> lse;     // [batch_size][k_qo_heads]
};

// last_page_len: tokens in each sequence's last page; null means every page is full.
Result run(const float* q, const float* k_cache, const float* v_cache, const std::int32_t* kv_indptr,
           const std::int32_t* kv_indices, const std::int32_t* last_page_len, double sm_scale,
           std::int64_t batch_size);

}  // namespace evoteam_kernels::gqa_paged_decode_h20_kv4_d128_ps64
