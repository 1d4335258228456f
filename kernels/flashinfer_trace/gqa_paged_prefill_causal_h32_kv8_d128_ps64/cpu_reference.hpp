#pragma once
// Double-precision CPU reference of gqa_paged_prefill_causal_h32_kv8_d128_ps64 (imported): causal GQA prefill. Query token i of sequence b (q_len
// queries, kv_len keys) attends to keys [0, i + 1 + kv_len - q_len) of KV head h / 4: softmax of
// sm_scale * q.k, the weighted sum of value rows, and the base-2 log-sum-exp; a row that sees no key is zero with
// lse -inf. bf16 inputs are widened to float by the caller.
#include <cstdint>
#include <vector>

namespace evoteam_kernels::gqa_paged_prefill_causal_h32_kv8_d128_ps64 {

inline constexpr int k_qo_heads = 32;
inline constexpr int k_kv_heads = 8;
inline constexpr int k_head_dim = 128;
inline constexpr int k_page_size = 64;  // 0: ragged keys and values [total_kv][k_kv_heads][k_head_dim]

struct Result {
  std::vector<double> output;  // [total_q][k_qo_heads][k_head_dim]
  std::vector<double> lse;     // [total_q][k_qo_heads]
};

// kv_indptr counts pages when paged (kv_indices then names them; last_page_len, or null for full pages), tokens
// when ragged (kv_indices and last_page_len null).
Result run(const float* q, const float* k, const float* v, const std::int32_t* qo_indptr,
           const std::int32_t* kv_indptr, const std::int32_t* kv_indices, const std::int32_t* last_page_len,
           double sm_scale, std::int64_t batch, std::int64_t total_q);

}  // namespace evoteam_kernels::gqa_paged_prefill_causal_h32_kv8_d128_ps64
