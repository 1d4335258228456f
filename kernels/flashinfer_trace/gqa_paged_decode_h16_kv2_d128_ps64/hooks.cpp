// Input hooks of gqa_paged_decode_h16_kv2_d128_ps64 (imported): the page table of a ragged decode batch.
//   ragged_kv_indptr: kv_indptr [batch_size + 1], starting at 0 and ending at num_kv_indices; sequence lengths (in
//                     pages) vary by up to 8x within a batch (seed-dependent); every sequence gets at least one
//                     page when num_kv_indices >= batch_size, otherwise some sequences are empty.
//   page_indices:     kv_indices [num_kv_indices], distinct pages drawn from [0, num_pages) in random order when
//                     there are enough pages (else drawn with repetition), so no sequence sits contiguously.
#include <cstdint>
#include <utility>
#include <vector>

#include "harness_abi.h"

namespace {

// splitmix64: a small, well-mixed generator; enough for index arrays.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : m_state(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (m_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform01() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }
  std::int64_t below(std::int64_t n) {
    return n <= 1 ? 0 : static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(n));
  }

 private:
  std::uint64_t m_state;
};

}  // namespace

extern "C" void evoteam_hook_ragged_kv_indptr(void* data, int64_t count, const char* const* axis_names,
                                              const int64_t* axis_values, int axis_count, uint64_t seed) {
  auto* indptr = static_cast<std::int32_t*>(data);
  if (count <= 0) return;
  const std::int64_t batch = count - 1;
  std::int64_t tokens = evoteam_axis_value(axis_names, axis_values, axis_count, "num_kv_indices");
  if (tokens < 0) tokens = 0;
  Rng rng(seed ^ 0x6B76696E64707472ull);
  std::vector<double> weights(static_cast<std::size_t>(batch));
  double total = 0;
  for (double& w : weights) {
    w = 0.25 + 1.75 * rng.uniform01();
    total += w;
  }
  // One token each first (when there are enough), the rest in proportion to the weights, the rounding
  // remainder (fewer than batch tokens) one at a time to random sequences.
  const std::int64_t base = tokens >= batch ? 1 : 0;
  const std::int64_t rest = tokens - base * batch;
  std::vector<std::int64_t> lengths(static_cast<std::size_t>(batch));
  std::int64_t assigned = 0;
  for (std::int64_t b = 0; b < batch; ++b) {
    const auto share =
        static_cast<std::int64_t>(static_cast<double>(rest) * weights[static_cast<std::size_t>(b)] / total);
    lengths[static_cast<std::size_t>(b)] = base + share;
    assigned += base + share;
  }
  for (; assigned < tokens && batch > 0; ++assigned) ++lengths[static_cast<std::size_t>(rng.below(batch))];
  // Floating-point shares can in principle overshoot by a token; take it back from the longest sequences.
  for (std::int64_t b = 0; assigned > tokens && b < batch; ++b)
    while (assigned > tokens && lengths[static_cast<std::size_t>(b)] > base) {
      --lengths[static_cast<std::size_t>(b)];
      --assigned;
    }
  indptr[0] = 0;
  std::int64_t running = 0;
  for (std::int64_t b = 0; b < batch; ++b) {
    running += lengths[static_cast<std::size_t>(b)];
    indptr[b + 1] = static_cast<std::int32_t>(running);
  }
}

extern "C" void evoteam_hook_page_indices(void* data, int64_t count, const char* const* axis_names,
                                            const int64_t* axis_values, int axis_count, uint64_t seed) {
  auto* indices = static_cast<std::int32_t*>(data);
  if (count <= 0) return;
  std::int64_t pages = evoteam_axis_value(axis_names, axis_values, axis_count, "num_pages");
  if (pages < 1) pages = 1;
  Rng rng(seed ^ 0x7061676573736574ull);
  if (pages < count) {
    // The definition does not promise num_pages >= num_kv_indices: pages repeat, in bounds.
    for (int64_t i = 0; i < count; ++i) indices[i] = static_cast<std::int32_t>(rng.below(pages));
    return;
  }
  // The first `count` steps of a Fisher-Yates shuffle of all pages.
  std::vector<std::int32_t> pool(static_cast<std::size_t>(pages));
  for (std::int64_t p = 0; p < pages; ++p) pool[static_cast<std::size_t>(p)] = static_cast<std::int32_t>(p);
  for (int64_t i = 0; i < count; ++i) {
    const std::int64_t j = i + rng.below(pages - i);
    std::swap(pool[static_cast<std::size_t>(i)], pool[static_cast<std::size_t>(j)]);
    indices[i] = pool[static_cast<std::size_t>(i)];
  }
}
