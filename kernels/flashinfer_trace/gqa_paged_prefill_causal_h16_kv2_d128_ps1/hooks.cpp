// Input hooks of gqa_paged_prefill_causal_h16_kv2_d128_ps1 (imported): the offsets of a ragged causal prefill batch.
//   ragged_qo_indptr: qo_indptr [len_indptr], from 0 to total_q, sequence lengths varying up to 8x.
//   ragged_kv_indptr: kv_indptr [len_indptr], from 0 to num_kv_indices, split with the same weights, so each
//                     sequence has about as many keys as queries or more when the totals allow (causal prefill
//                     over a cache: every query sees at least itself).
//   page_indices:     kv_indices, distinct pages from [0, num_pages) in random order when there are enough.
// The weights come from the workload's axes, not the seed: the two offset arrays must agree with each other.
#include <cstdint>
#include <utility>
#include <vector>

#include "harness_abi.h"

namespace {

class SplitRng {
 public:
  explicit SplitRng(std::uint64_t seed) : m_state(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (m_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform01() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }

 private:
  std::uint64_t m_state;
};

// `total` split over `batch` parts in proportion to weights drawn from `key`, each part at least `floor` when
// the total allows; written as offsets [batch + 1] from 0.
void split_offsets(std::int32_t* offsets, std::int64_t batch, std::int64_t total, std::int64_t floor,
                   std::uint64_t key) {
  SplitRng rng(key);
  std::vector<double> weights(static_cast<std::size_t>(batch));
  double sum = 0;
  for (double& w : weights) sum += (w = 0.25 + 1.75 * rng.uniform01());
  const std::int64_t base = total >= floor * batch ? floor : 0;
  const std::int64_t rest = total - base * batch;
  std::int64_t assigned = 0;
  offsets[0] = 0;
  for (std::int64_t b = 0; b < batch; ++b) {
    std::int64_t share = base + static_cast<std::int64_t>(static_cast<double>(rest) * weights[static_cast<std::size_t>(b)] / sum);
    if (b == batch - 1 || assigned + share > total) share = total - assigned;
    assigned += share;
    offsets[b + 1] = static_cast<std::int32_t>(assigned);
  }
}

}  // namespace

extern "C" void evoteam_hook_ragged_qo_indptr(void* data, int64_t count, const char* const* axis_names,
                                              const int64_t* axis_values, int axis_count, uint64_t seed) {
  (void)seed;
  if (count < 2) return;
  const std::int64_t total = evoteam_axis_value(axis_names, axis_values, axis_count, "total_q");
  split_offsets(static_cast<std::int32_t*>(data), count - 1, total < 0 ? 0 : total, 1,
                0x716F5F696E647074ull ^ static_cast<std::uint64_t>(count));
}

extern "C" void evoteam_hook_ragged_kv_indptr(void* data, int64_t count, const char* const* axis_names,
                                              const int64_t* axis_values, int axis_count, uint64_t seed) {
  (void)seed;
  if (count < 2) return;
  const std::int64_t total = evoteam_axis_value(axis_names, axis_values, axis_count, "num_kv_indices");
  split_offsets(static_cast<std::int32_t*>(data), count - 1, total < 0 ? 0 : total, 1,
                0x716F5F696E647074ull ^ static_cast<std::uint64_t>(count));
}

extern "C" void evoteam_hook_page_indices(void* data, int64_t count, const char* const* axis_names,
                                         const int64_t* axis_values, int axis_count, uint64_t seed) {
  auto* indices = static_cast<std::int32_t*>(data);
  if (count <= 0) return;
  std::int64_t pages = evoteam_axis_value(axis_names, axis_values, axis_count, "num_pages");
  if (pages < 1) pages = 1;
  SplitRng rng(seed ^ 0x7061676573736574ull);
  if (pages < count) {
    for (int64_t i = 0; i < count; ++i) indices[i] = static_cast<std::int32_t>(rng.next() % static_cast<std::uint64_t>(pages));
    return;
  }
  std::vector<std::int32_t> pool(static_cast<std::size_t>(pages));
  for (std::int64_t p = 0; p < pages; ++p) pool[static_cast<std::size_t>(p)] = static_cast<std::int32_t>(p);
  for (int64_t i = 0; i < count; ++i) {
    const std::int64_t j = i + static_cast<std::int64_t>(rng.next() % static_cast<std::uint64_t>(pages - i));
    std::swap(pool[static_cast<std::size_t>(i)], pool[static_cast<std::size_t>(j)]);
    indices[i] = pool[static_cast<std::size_t>(i)];
  }
}
