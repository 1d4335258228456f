// Straight from reference.py, in double: gather the sequence's tokens, then softmax and weighted sum per head.
#include "cpu_reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>

namespace evoteam_kernels::gqa_paged_decode_h6_kv1_d128_ps1 {

Result run(const float* q, const float* k_cache, const float* v_cache, const std::int32_t* kv_indptr,
           const std::int32_t* kv_indices, const std::int32_t* last_page_len, double sm_scale,
           std::int64_t batch_size) {
  if (batch_size < 0) throw std::invalid_argument("gqa_paged_decode_h6_kv1_d128_ps1: negative batch_size");
  Result result;
  result.output.assign(static_cast<std::size_t>(batch_size * k_qo_heads * k_head_dim), 0.0);
  result.lse.assign(static_cast<std::size_t>(batch_size * k_qo_heads), -std::numeric_limits<double>::infinity());
  for (std::int64_t b = 0; b < batch_size; ++b) {
    const std::int64_t pages = kv_indptr[b + 1] - kv_indptr[b];
    if (pages <= 0) continue;
    const std::int64_t tokens = (pages - 1) * k_page_size + (last_page_len ? last_page_len[b] : k_page_size);
    std::vector<std::int64_t> rows(static_cast<std::size_t>(tokens));
    for (std::int64_t t = 0; t < tokens; ++t) {
      const std::int64_t page = kv_indices[kv_indptr[b] + t / k_page_size];
      rows[static_cast<std::size_t>(t)] = (page * k_page_size + t % k_page_size) * k_kv_heads * k_head_dim;
    }
    for (int h = 0; h < k_qo_heads; ++h) {
      const float* q_row = q + (b * k_qo_heads + h) * k_head_dim;
      const std::int64_t head = static_cast<std::int64_t>(h / (k_qo_heads / k_kv_heads)) * k_head_dim;
      std::vector<double> logits(static_cast<std::size_t>(tokens));
      double max_logit = -std::numeric_limits<double>::infinity();
      for (std::int64_t t = 0; t < tokens; ++t) {
        double dot = 0.0;
        for (int d = 0; d < k_head_dim; ++d)
          dot += static_cast<double>(q_row[d]) * static_cast<double>(k_cache[rows[static_cast<std::size_t>(t)] + head + d]);
        logits[static_cast<std::size_t>(t)] = dot * sm_scale;
        max_logit = std::max(max_logit, dot * sm_scale);
      }
      double sum = 0.0;
      double* out = result.output.data() + (b * k_qo_heads + h) * k_head_dim;
      for (std::int64_t t = 0; t < tokens; ++t) {
        const double weight = std::exp(logits[static_cast<std::size_t>(t)] - max_logit);
        sum += weight;
        for (int d = 0; d < k_head_dim; ++d)
          out[d] += weight * static_cast<double>(v_cache[rows[static_cast<std::size_t>(t)] + head + d]);
      }
      for (int d = 0; d < k_head_dim; ++d) out[d] /= sum;
      result.lse[static_cast<std::size_t>(b * k_qo_heads + h)] = (max_logit + std::log(sum)) / std::log(2.0);
    }
  }
  return result;
}

}  // namespace evoteam_kernels::gqa_paged_decode_h6_kv1_d128_ps1
