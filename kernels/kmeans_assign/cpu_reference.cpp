#include "kernels/kmeans_assign/cpu_reference.hpp"

#include <cstddef>
#include <stdexcept>

namespace evoteam_kernels::kmeans_assign {

double squared_distance(const float* x, const float* c, std::int64_t d) {
  double sum = 0;
  for (std::int64_t j = 0; j < d; ++j) {
    const double diff = static_cast<double>(x[j]) - static_cast<double>(c[j]);
    sum += diff * diff;
  }
  return sum;
}

Assignment assign(const float* points, const float* centroids, std::int64_t n, std::int64_t k, std::int64_t d) {
  if (n < 0 || k < 1 || d < 1) throw std::invalid_argument("kmeans_assign: need n >= 0, k >= 1 and d >= 1");
  Assignment result;
  result.index.resize(static_cast<std::size_t>(n));
  result.distance.resize(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    std::int32_t best = 0;
    double best_distance = squared_distance(points + i * d, centroids, d);
    for (std::int64_t c = 1; c < k; ++c) {
      const double distance = squared_distance(points + i * d, centroids + c * d, d);
      if (distance < best_distance) {  // strict: an equal distance keeps the lower index
        best = static_cast<std::int32_t>(c);
        best_distance = distance;
      }
    }
    result.index[static_cast<std::size_t>(i)] = best;
    result.distance[static_cast<std::size_t>(i)] = best_distance;
  }
  return result;
}

}  // namespace evoteam_kernels::kmeans_assign
