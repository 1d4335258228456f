// Input hooks for gdn_prefill_qk4_v8_d128_k_last (trusted, compiled into the harness). They give the inputs the
// structure a served model gives them: ragged cu_seqlens, L2-normalised q and k rows (the model normalises them
// before this operator, and the delta rule is only stable for |k| <= 1), decay parameters in the range of
// Qwen3-Next's A_log and dt_bias, and gate inputs that now and then saturate. Everything is a pure function of
// (axes, seed).
#include <cmath>
#include <cstdint>
#include <cstring>

#if __has_include("harness_abi.h")
#include "harness_abi.h"
#else
#include "kernels/common/harness_abi.h"  // when a unit test includes this file from the repository root
#endif

namespace {

// splitmix64: small, fast, and the same sequence on every platform.
class GdnHookRng {
 public:
  explicit GdnHookRng(uint64_t seed) : m_state(seed ^ 0x6a09e667f3bcc908ull) {}
  uint64_t next() {
    uint64_t z = (m_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform01() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }  // [0, 1)
  int64_t below(int64_t bound) { return bound <= 1 ? 0 : static_cast<int64_t>(next() % static_cast<uint64_t>(bound)); }
  double normal() {
    const double u1 = 1.0 - uniform01();
    const double u2 = uniform01();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  uint64_t m_state;
};

uint16_t gdn_to_bf16_bits(float value) {
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  bits += 0x7FFFu + ((bits >> 16) & 1u);  // round to nearest even (inputs are finite)
  return static_cast<uint16_t>(bits >> 16);
}

void gdn_sort(int64_t* values, int64_t count) {  // insertion sort: counts are a few dozen
  for (int64_t i = 1; i < count; ++i) {
    const int64_t value = values[i];
    int64_t j = i;
    for (; j > 0 && values[j - 1] > value; --j) values[j] = values[j - 1];
    values[j] = value;
  }
}

}  // namespace

extern "C" {

// cu_seqlens (int64, num_seqs + 1): 0, sorted uniform cut points, total_seq_len. Uniform cuts give ragged
// lengths (a few long sequences, many short ones); about one interior cut in eight repeats its predecessor, so
// empty sequences appear too (and many of them when num_seqs exceeds total_seq_len).
void evoteam_hook_gdn_cu_seqlens(void* data, int64_t count, const char* const* axis_names, const int64_t* axis_values,
                                 int axis_count, uint64_t seed) {
  int64_t* out = static_cast<int64_t*>(data);
  if (count < 1) return;
  int64_t total = evoteam_axis_value(axis_names, axis_values, axis_count, "total_seq_len");
  if (total < 0) total = 0;
  GdnHookRng rng(seed);
  const int64_t interior = count - 2;
  for (int64_t i = 0; i < interior; ++i) out[1 + i] = rng.below(total + 1);
  if (interior > 0) gdn_sort(out + 1, interior);
  for (int64_t i = 1; i < interior; ++i)
    if (rng.below(8) == 0) out[1 + i] = out[i];
  out[0] = 0;
  if (count > 1) out[count - 1] = total;
}

// q and k (bfloat16, rows of head_size): Gaussian directions scaled to unit L2 norm, then rounded to bf16.
void evoteam_hook_gdn_unit_rows(void* data, int64_t count, const char* const* axis_names, const int64_t* axis_values,
                                int axis_count, uint64_t seed) {
  uint16_t* out = static_cast<uint16_t*>(data);
  int64_t head_size = evoteam_axis_value(axis_names, axis_values, axis_count, "head_size");
  if (head_size < 1 || head_size > 1024) head_size = 128;  // the task's head_size is 128
  GdnHookRng rng(seed);
  double row[1024];
  for (int64_t begin = 0; begin < count; begin += head_size) {
    const int64_t length = count - begin < head_size ? count - begin : head_size;
    double norm2 = 0;
    for (int64_t i = 0; i < length; ++i) {
      row[i] = rng.normal();
      norm2 += row[i] * row[i];
    }
    const double inverse = norm2 > 0 ? 1.0 / std::sqrt(norm2) : 0.0;
    for (int64_t i = 0; i < length; ++i) out[begin + i] = gdn_to_bf16_bits(static_cast<float>(row[i] * inverse));
  }
}

// a and b (bfloat16, per token and v head): standard normal, except about one value in 32 is +-U(20, 40), which
// saturates the gate: decay (a) or beta (b) at 0 or 1 to within float precision. Kernels must survive both
// (log-space decays, no ratios of cumulative products).
void evoteam_hook_gdn_gate_input(void* data, int64_t count, const char* const* axis_names, const int64_t* axis_values,
                                 int axis_count, uint64_t seed) {
  (void)axis_names;
  (void)axis_values;
  (void)axis_count;
  uint16_t* out = static_cast<uint16_t*>(data);
  GdnHookRng rng(seed);
  for (int64_t i = 0; i < count; ++i) {
    double value = rng.normal();
    if (rng.below(32) == 0) value = (rng.below(2) == 0 ? -1.0 : 1.0) * (20.0 + 20.0 * rng.uniform01());
    out[i] = gdn_to_bf16_bits(static_cast<float>(value));
  }
}

// A_log (float32, per v head): log of A drawn uniformly from [1, 16], the range of the model's initialisation.
void evoteam_hook_gdn_a_log(void* data, int64_t count, const char* const* axis_names, const int64_t* axis_values,
                            int axis_count, uint64_t seed) {
  (void)axis_names;
  (void)axis_values;
  (void)axis_count;
  float* out = static_cast<float*>(data);
  GdnHookRng rng(seed);
  for (int64_t i = 0; i < count; ++i) out[i] = static_cast<float>(std::log(1.0 + 15.0 * rng.uniform01()));
}

// dt_bias (float32, per v head): softplus^-1(dt) for dt log-uniform in [1e-3, 1e-1], so softplus(a + dt_bias)
// is a small step for a near 0 and the per-token decay exp(-exp(A_log) softplus(a + dt_bias)) spans about 0.2..1.
void evoteam_hook_gdn_dt_bias(void* data, int64_t count, const char* const* axis_names, const int64_t* axis_values,
                              int axis_count, uint64_t seed) {
  (void)axis_names;
  (void)axis_values;
  (void)axis_count;
  float* out = static_cast<float*>(data);
  GdnHookRng rng(seed);
  for (int64_t i = 0; i < count; ++i) {
    const double dt = std::exp(std::log(1e-3) + (std::log(1e-1) - std::log(1e-3)) * rng.uniform01());
    out[i] = static_cast<float>(dt + std::log(-std::expm1(-dt)));
  }
}

}  // extern "C"
