// Trusted reference for kmeans_assign: one thread per point, squared euclidean distances accumulated in double
// as sum_j (x_j - c_j)^2, centroids visited in increasing index order and replaced only by a strictly smaller
// distance, so ties go to the lowest index. Sixteen centroids at a time keep their partial sums in registers, so
// a point's row is read once per sixteen centroids; both inputs are read straight from global memory (centroid
// reads are warp-wide broadcasts and stay in L1). Works for any n, k >= 1, d >= 1.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace {

constexpr int k_threads = 128;
constexpr int k_group = 16;  // centroids per pass over a point's row

__global__ void __launch_bounds__(k_threads)
    kmeans_reference_kernel(const __nv_bfloat16* __restrict__ points, const __nv_bfloat16* __restrict__ centroids,
                            std::int32_t* __restrict__ assignment, float* __restrict__ distance, std::int64_t n,
                            std::int64_t k, std::int64_t d) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(k_threads) + threadIdx.x;
  if (i >= n) return;
  const __nv_bfloat16* x = points + i * d;
  double best = 0;
  std::int64_t best_index = -1;
  for (std::int64_t c0 = 0; c0 < k; c0 += k_group) {
    const int group = k - c0 < k_group ? static_cast<int>(k - c0) : k_group;
    double sum[k_group];
#pragma unroll
    for (int g = 0; g < k_group; ++g) sum[g] = 0;
    for (std::int64_t j = 0; j < d; ++j) {
      const double xj = __bfloat162float(x[j]);
#pragma unroll
      for (int g = 0; g < k_group; ++g)
        if (g < group) {
          const double diff = xj - static_cast<double>(__bfloat162float(centroids[(c0 + g) * d + j]));
          sum[g] += diff * diff;
        }
    }
#pragma unroll
    for (int g = 0; g < k_group; ++g)
      if (g < group && (best_index < 0 || sum[g] < best)) {  // strict: an equal distance keeps the lower index
        best = sum[g];
        best_index = c0 + g;
      }
  }
  assignment[i] = static_cast<std::int32_t>(best_index);
  distance[i] = static_cast<float>(best);
}

}  // namespace

extern "C" cudaError_t kmeans_assign(const __nv_bfloat16* points, const __nv_bfloat16* centroids,
                                     std::int32_t* assignment, float* distance, std::int64_t n, std::int64_t k,
                                     std::int64_t d, cudaStream_t stream) {
  if (n > 0) {
    const unsigned blocks = static_cast<unsigned>((n + k_threads - 1) / k_threads);
    kmeans_reference_kernel<<<blocks, k_threads, 0, stream>>>(points, centroids, assignment, distance, n, k, d);
  }
  return cudaGetLastError();
}
