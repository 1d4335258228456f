// Input hooks for kmeans_assign (trusted, compiled into the harness). Points and centroids are drawn from a
// rounded standard normal on a grid: every coordinate is m / 16 with m an integer in [-63, 63]. On that grid
// every product and every partial sum of a squared distance (direct (x - c)^2 or expanded |x|^2 - 2 x.c + |c|^2,
// in any order) is an integer multiple of 2^-8 below 2^24 * 2^-8 for d <= 256, so fp32 arithmetic computes it
// exactly: any correct fp32-accumulating kernel gets the reference's distances bit for bit, and the nearest
// index (lowest among equals) is well defined with no rounding-dependent near-ties. About one centroid in
// sixteen repeats an earlier one, so exact ties occur in every workload and the lowest-index rule is exercised.
#include <cmath>
#include <cstdint>

#if __has_include("harness_abi.h")
#include "harness_abi.h"
#else
#include "kernels/common/harness_abi.h"  // when a unit test includes this file from the repository root
#endif

namespace {

// splitmix64: small, fast, and the same sequence on every platform.
class KmeansHookRng {
 public:
  explicit KmeansHookRng(uint64_t seed) : m_state(seed ^ 0xbb67ae8584caa73bull) {}
  uint64_t next() {
    uint64_t z = (m_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform01() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }  // [0, 1)
  double normal() {
    const double u1 = 1.0 - uniform01();
    const double u2 = uniform01();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  uint64_t m_state;
};

constexpr int k_grid_steps = 16;  // coordinates are multiples of 1/16
constexpr int k_grid_max = 63;    // |m| <= 63

// The bf16 bit pattern of m / 16 for an integer |m| <= 63 (exact: at most 6 significant bits).
uint16_t kmeans_grid_bf16(int m) {
  if (m == 0) return 0;
  const uint16_t sign = m < 0 ? 0x8000u : 0u;
  unsigned magnitude = static_cast<unsigned>(m < 0 ? -m : m);
  int exponent = 0;  // magnitude = 1.f * 2^exponent with f the bits below the leading one
  while ((magnitude >> (exponent + 1)) != 0) ++exponent;
  const unsigned fraction = (magnitude << (7 - exponent)) & 0x7Fu;    // 7 mantissa bits
  const unsigned biased = static_cast<unsigned>(127 + exponent - 4);  // divide by 16
  return static_cast<uint16_t>(sign | (biased << 7) | fraction);
}

int kmeans_grid_draw(KmeansHookRng& rng) {
  const double scaled = std::nearbyint(rng.normal() * k_grid_steps);
  return static_cast<int>(scaled < -k_grid_max ? -k_grid_max : (scaled > k_grid_max ? k_grid_max : scaled));
}

}  // namespace

extern "C" {

// points (bfloat16, [n][d]): independent grid coordinates.
void evoteam_hook_kmeans_grid_points(void* data, int64_t count, const char* const* axis_names,
                                     const int64_t* axis_values, int axis_count, uint64_t seed) {
  (void)axis_names;
  (void)axis_values;
  (void)axis_count;
  uint16_t* out = static_cast<uint16_t*>(data);
  KmeansHookRng rng(seed);
  for (int64_t i = 0; i < count; ++i) out[i] = kmeans_grid_bf16(kmeans_grid_draw(rng));
}

// centroids (bfloat16, [k][d]): grid coordinates, with about one row in sixteen (after the first) a copy of a
// random earlier row.
void evoteam_hook_kmeans_grid_centroids(void* data, int64_t count, const char* const* axis_names,
                                        const int64_t* axis_values, int axis_count, uint64_t seed) {
  uint16_t* out = static_cast<uint16_t*>(data);
  int64_t d = evoteam_axis_value(axis_names, axis_values, axis_count, "d");
  if (d < 1) d = 1;
  KmeansHookRng rng(seed);
  for (int64_t row = 0; row * d < count; ++row) {
    uint16_t* target = out + row * d;
    if (row > 0 && rng.next() % 16 == 0) {
      const uint16_t* source = out + static_cast<int64_t>(rng.next() % static_cast<uint64_t>(row)) * d;
      for (int64_t j = 0; j < d && row * d + j < count; ++j) target[j] = source[j];
    } else {
      for (int64_t j = 0; j < d && row * d + j < count; ++j) target[j] = kmeans_grid_bf16(kmeans_grid_draw(rng));
    }
  }
}

}  // extern "C"
