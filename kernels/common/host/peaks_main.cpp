// Measures this machine's single-core peaks for roofline fractions (host candidates run on one thread):
// vector FMA throughput with many independent accumulators, and memory read bandwidth over a buffer far
// larger than the caches. Best of several repetitions; prints one JSON object on stdout, with the spread of the
// repetitions (best over worst). Timed on the thread's CPU clock, as host samples are by default: on a loaded
// machine the time this probe waits for a core is not counted, so a busy moment cannot lower the peaks below what
// a candidate timed on the same clock reaches.
//   peaks [buffer_mib]
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

#if defined(__AVX512F__)
constexpr int k_vector_bytes = 64;
#elif defined(__AVX__)
constexpr int k_vector_bytes = 32;
#else
constexpr int k_vector_bytes = 16;
#endif
typedef float Vector __attribute__((vector_size(k_vector_bytes)));
constexpr int k_lanes = k_vector_bytes / 4;

double now_s() {
  timespec time{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time);
  return static_cast<double>(time.tv_sec) + static_cast<double>(time.tv_nsec) * 1e-9;
}

// The multiplier and addend come from argv-derived values so nothing folds at compile time. Several
// accumulator counts are tried: enough independent chains to cover the FMA latency on every port count.
template <int k_accumulators>
double flops_once(float scale, long iterations) {
  Vector acc[k_accumulators];
  Vector mul, add;
  for (int l = 0; l < k_lanes; ++l) {
    mul[l] = 1.0f - scale * 1e-7f;
    add[l] = scale * 1e-7f;
  }
  for (int a = 0; a < k_accumulators; ++a)
    for (int l = 0; l < k_lanes; ++l) acc[a][l] = static_cast<float>(a + l);
  const double start = now_s();
  for (long i = 0; i < iterations; ++i) {
#pragma GCC unroll 16
    for (int a = 0; a < k_accumulators; ++a) acc[a] = acc[a] * mul + add;
  }
  const double elapsed = now_s() - start;
  float sink = 0;
  for (int a = 0; a < k_accumulators; ++a)
    for (int l = 0; l < k_lanes; ++l) sink += acc[a][l];
  if (sink == 12345.678f) std::puts("");
  return 2.0 * k_accumulators * k_lanes * static_cast<double>(iterations) / elapsed;
}

double bandwidth_once(const Vector* data, std::size_t count) {
  Vector sum0 = {}, sum1 = {}, sum2 = {}, sum3 = {};
  const double start = now_s();
  for (std::size_t i = 0; i + 3 < count; i += 4) {
    sum0 += data[i];
    sum1 += data[i + 1];
    sum2 += data[i + 2];
    sum3 += data[i + 3];
  }
  const double elapsed = now_s() - start;
  Vector total = sum0 + sum1 + sum2 + sum3;
  if (total[0] == 12345.678f) std::puts("");
  return static_cast<double>(count * sizeof(Vector)) / elapsed;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t mib = argc > 1 ? static_cast<std::size_t>(std::atol(argv[1])) : 256;
  const float scale = static_cast<float>(argc);
  double best_flops = 0, worst_flops = 0;
  for (int repeat = 0; repeat < 8; ++repeat) {
    const double flops = std::max(flops_once<12>(scale, 2'000'000), flops_once<24>(scale, 1'000'000));
    if (flops > best_flops) best_flops = flops;
    if (repeat == 0 || flops < worst_flops) worst_flops = flops;
  }
  const std::size_t count = mib * 1024 * 1024 / sizeof(Vector);
  std::vector<Vector> data(count);
  for (std::size_t i = 0; i < count; ++i)
    for (int l = 0; l < k_lanes; ++l) data[i][l] = static_cast<float>((i + static_cast<std::size_t>(l)) & 7);
  double best_bandwidth = 0, worst_bandwidth = 0;
  for (int repeat = 0; repeat < 4; ++repeat) {
    const double bandwidth = bandwidth_once(data.data(), count);
    if (bandwidth > best_bandwidth) best_bandwidth = bandwidth;
    if (repeat == 0 || bandwidth < worst_bandwidth) worst_bandwidth = bandwidth;
  }
  std::printf(
      "{\"peak_gflops\":%.3f,\"peak_gbytes_per_s\":%.3f,\"gflops_spread\":%.3f,\"gbytes_per_s_spread\":%.3f,"
      "\"clock\":\"thread_cpu\",\"vector_bytes\":%d,\"buffer_mib\":%zu}\n",
      best_flops / 1e9, best_bandwidth / 1e9, best_flops / worst_flops, best_bandwidth / worst_bandwidth,
      k_vector_bytes, mib);
  return 0;
}
