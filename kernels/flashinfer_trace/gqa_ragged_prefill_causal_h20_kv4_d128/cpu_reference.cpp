// Straight from reference.py, in double: gather each sequence's keys, then a masked softmax per query and head.
#include "cpu_reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>

namespace evoteam_kernels::gqa_ragged_prefill_causal_h20_kv4_d128 {

Result run(const float* q, const float* k, const float* v, const std::int32_t* qo_indptr,
           const std::int32_t* kv_indptr, const std::int32_t* kv_indices, const std::int32_t* last_page_len,
           double sm_scale, std::int64_t batch, std::int64_t total_q) {
  if (batch < 0 || total_q < 0) throw std::invalid_argument("gqa_ragged_prefill_causal_h20_kv4_d128: negative size");
  constexpr std::int64_t page = k_page_size > 0 ? k_page_size : 1;
  Result result;
  result.output.assign(static_cast<std::size_t>(total_q * k_qo_heads * k_head_dim), 0.0);
  result.lse.assign(static_cast<std::size_t>(total_q * k_qo_heads), -std::numeric_limits<double>::infinity());
  for (std::int64_t b = 0; b < batch; ++b) {
    const std::int64_t span = kv_indptr[b + 1] - kv_indptr[b];
    std::vector<std::int64_t> rows;  // element offset of each key token at KV head 0
    if (k_page_size == 0) {
      for (std::int64_t t = 0; t < span; ++t) rows.push_back((kv_indptr[b] + t) * k_kv_heads * k_head_dim);
    } else if (span > 0) {
      const std::int64_t tokens = (span - 1) * page + (last_page_len ? last_page_len[b] : page);
      for (std::int64_t t = 0; t < tokens; ++t) {
        const std::int64_t id = kv_indices[kv_indptr[b] + t / page];
        rows.push_back((id * page + t % page) * k_kv_heads * k_head_dim);
      }
    }
    const auto kv_len = static_cast<std::int64_t>(rows.size());
    const std::int64_t q_len = qo_indptr[b + 1] - qo_indptr[b];
    for (std::int64_t i = 0; i < q_len; ++i) {
      const std::int64_t token = qo_indptr[b] + i;
      const std::int64_t visible = std::clamp<std::int64_t>(i + 1 + kv_len - q_len, 0, kv_len);
      if (visible == 0) continue;
      for (int h = 0; h < k_qo_heads; ++h) {
        const float* q_row = q + (token * k_qo_heads + h) * k_head_dim;
        const std::int64_t head = static_cast<std::int64_t>(h / (k_qo_heads / k_kv_heads)) * k_head_dim;
        std::vector<double> logits(static_cast<std::size_t>(visible));
        double max_logit = -std::numeric_limits<double>::infinity();
        for (std::int64_t t = 0; t < visible; ++t) {
          double dot = 0.0;
          for (int d = 0; d < k_head_dim; ++d)
            dot += static_cast<double>(q_row[d]) * static_cast<double>(k[rows[static_cast<std::size_t>(t)] + head + d]);
          logits[static_cast<std::size_t>(t)] = dot * sm_scale;
          max_logit = std::max(max_logit, dot * sm_scale);
        }
        double sum = 0.0;
        double* out = result.output.data() + (token * k_qo_heads + h) * k_head_dim;
        for (std::int64_t t = 0; t < visible; ++t) {
          const double weight = std::exp(logits[static_cast<std::size_t>(t)] - max_logit);
          sum += weight;
          for (int d = 0; d < k_head_dim; ++d)
            out[d] += weight * static_cast<double>(v[rows[static_cast<std::size_t>(t)] + head + d]);
        }
        for (int d = 0; d < k_head_dim; ++d) out[d] /= sum;
        result.lse[static_cast<std::size_t>(token * k_qo_heads + h)] = (max_logit + std::log(sum)) / std::log(2.0);
      }
    }
  }
  return result;
}

}  // namespace evoteam_kernels::gqa_ragged_prefill_causal_h20_kv4_d128
