#include "kernels/gqa_paged_decode_h32_kv8_d128_ps1/cpu_reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace evoteam_kernels::gqa_paged_decode_h32_kv8_d128_ps1 {
namespace {

void check_indices(const std::int32_t* kv_indptr, const std::int32_t* kv_indices, std::int64_t batch_size,
                   std::int64_t num_pages) {
  if (batch_size < 0) throw std::invalid_argument("gqa_paged_decode: batch_size < 0");
  if (kv_indptr[0] < 0) throw std::invalid_argument("gqa_paged_decode: kv_indptr[0] < 0");
  for (std::int64_t b = 0; b < batch_size; ++b) {
    if (kv_indptr[b + 1] < kv_indptr[b])
      throw std::invalid_argument("gqa_paged_decode: kv_indptr decreases at " + std::to_string(b + 1));
    for (std::int32_t i = kv_indptr[b]; i < kv_indptr[b + 1]; ++i)
      if (kv_indices[i] < 0 || kv_indices[i] >= num_pages)
        throw std::invalid_argument("gqa_paged_decode: kv_indices[" + std::to_string(i) + "] outside [0, num_pages)");
  }
}

}  // namespace

void gqa_paged_decode(const float* q, const float* k_cache, const float* v_cache, const std::int32_t* kv_indptr,
                      const std::int32_t* kv_indices, double sm_scale, std::int64_t batch_size, std::int64_t num_pages,
                      double* output, double* lse) {
  check_indices(kv_indptr, kv_indices, batch_size, num_pages);
  constexpr std::int64_t k_page_stride = static_cast<std::int64_t>(k_num_kv_heads) * k_head_dim;
  std::vector<double> logits;
  for (std::int64_t b = 0; b < batch_size; ++b) {
    const std::int32_t begin = kv_indptr[b];
    const std::int32_t length = kv_indptr[b + 1] - begin;
    for (int h = 0; h < k_num_qo_heads; ++h) {
      const std::int64_t row = b * k_num_qo_heads + h;
      const std::int64_t kv_head = h / k_group_size;
      double* out = output + row * k_head_dim;
      std::fill(out, out + k_head_dim, 0.0);
      if (length == 0) {
        lse[row] = -std::numeric_limits<double>::infinity();
        continue;
      }
      const float* qh = q + row * k_head_dim;
      logits.assign(static_cast<std::size_t>(length), 0.0);
      for (std::int32_t t = 0; t < length; ++t) {
        const float* k = k_cache + kv_indices[begin + t] * k_page_stride + kv_head * k_head_dim;
        double dot = 0;
        for (int d = 0; d < k_head_dim; ++d) dot += static_cast<double>(qh[d]) * k[d];
        logits[static_cast<std::size_t>(t)] = sm_scale * dot;
      }
      // Subtracting the maximum keeps every exp() in [0, 1], so large logits cannot overflow.
      const double max_logit = *std::max_element(logits.begin(), logits.end());
      double sum = 0;
      for (std::int32_t t = 0; t < length; ++t) {
        const double weight = std::exp(logits[static_cast<std::size_t>(t)] - max_logit);
        sum += weight;
        const float* v = v_cache + kv_indices[begin + t] * k_page_stride + kv_head * k_head_dim;
        for (int d = 0; d < k_head_dim; ++d) out[d] += weight * v[d];
      }
      for (int d = 0; d < k_head_dim; ++d) out[d] /= sum;
      lse[row] = (max_logit + std::log(sum)) / std::log(2.0);
    }
  }
}

}  // namespace evoteam_kernels::gqa_paged_decode_h32_kv8_d128_ps1
