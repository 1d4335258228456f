#pragma once
// Double-precision CPU model of kmeans_assign: the assignment step of k-means. Every point goes to the centroid at
// the smallest squared euclidean distance; ties go to the lowest centroid index. Inputs arrive as float (bf16
// already widened).
#include <cstdint>
#include <vector>

namespace evoteam_kernels::kmeans_assign {

// sum_j (x_j - c_j)^2 in double, j in [0, d).
double squared_distance(const float* x, const float* c, std::int64_t d);

struct Assignment {
  std::vector<std::int32_t> index;  // [n]: the nearest centroid, the lowest index among equals
  std::vector<double> distance;     // [n]: the squared distance to it
};

// points: [n][d], centroids: [k][d], row-major. Throws std::invalid_argument unless n >= 0, k >= 1, d >= 1.
Assignment assign(const float* points, const float* centroids, std::int64_t n, std::int64_t k, std::int64_t d);

}  // namespace evoteam_kernels::kmeans_assign
