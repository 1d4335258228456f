// The Gaussian-process surrogate of the builtin Optimizer's search (builtin_surrogate.hpp), and the small dense
// linear algebra it and the param-effect fit share.
#include "team/builtin_surrogate.hpp"

#include <algorithm>
#include <cmath>

namespace evoteam::builtin {

namespace {

constexpr double k_kernel_pairs = 0.5;       // weight of shared value pairs against shared values
constexpr double k_noise = 0.01;             // measurement noise, relative to the prior variance
constexpr std::size_t k_model_points = 160;  // the model keeps at most this many (the best) measurements

}  // namespace

void cholesky(std::vector<double>& a, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      double sum = a[i * n + j];
      for (std::size_t k = 0; k < j; ++k) sum -= a[i * n + k] * a[j * n + k];
      a[i * n + j] = i == j ? std::sqrt(std::max(sum, 1e-12)) : sum / a[j * n + j];
    }
}

std::vector<double> solve_lower(const std::vector<double>& l, std::size_t n, std::vector<double> b) {
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < i; ++k) b[i] -= l[i * n + k] * b[k];
    b[i] /= l[i * n + i];
  }
  return b;
}

std::vector<double> solve_upper_transposed(const std::vector<double>& l, std::size_t n, std::vector<double> b) {
  for (std::size_t i = n; i-- > 0;) {
    for (std::size_t k = i + 1; k < n; ++k) b[i] -= l[k * n + i] * b[k];
    b[i] /= l[i * n + i];
  }
  return b;
}

std::vector<int> encode_point(const std::vector<ParamSpec>& space, const ParamValues& params) {
  std::vector<int> point(space.size(), -1);
  for (std::size_t p = 0; p < space.size(); ++p) {
    auto it = params.find(space[p].name);
    const std::string& value = it == params.end() ? space[p].default_value : it->second;
    auto at = std::find(space[p].values.begin(), space[p].values.end(), value);
    if (at != space[p].values.end()) point[p] = static_cast<int>(at - space[p].values.begin());
  }
  return point;
}

Surrogate::Surrogate(const std::vector<ParamSpec>& space, const std::vector<Measurement>& measured) : m_space(space) {
  std::vector<std::pair<double, std::vector<int>>> passing;
  std::vector<std::vector<int>> failing;
  for (const Measurement& point : measured) {
    std::vector<int> encoded = encode_point(space, point.params);
    if (point.outcome == Measurement::Outcome::passed) passing.emplace_back(std::log(point.speedup), encoded);
    if (point.outcome == Measurement::Outcome::failed) failing.push_back(encoded);
  }
  if (passing.empty()) return;
  double worst = std::min_element(passing.begin(), passing.end())->first;
  for (std::vector<int>& point : failing) passing.emplace_back(worst, std::move(point));
  // A long run keeps the best measurements: the model matters where the search is headed.
  if (passing.size() > k_model_points) {
    std::stable_sort(passing.begin(), passing.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    passing.resize(k_model_points);
  }
  const std::size_t n = passing.size();
  std::vector<double> ys;
  for (auto& [y, point] : passing) m_points.push_back(point), ys.push_back(y);
  for (double y : ys) m_mean += y / static_cast<double>(n);
  double variance = 0;
  for (double y : ys) variance += (y - m_mean) * (y - m_mean) / static_cast<double>(std::max<std::size_t>(1, n - 1));
  m_scale = std::sqrt(std::max(variance, 1e-4));
  m_chol.assign(n * n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j <= i; ++j)
      m_chol[i * n + j] = kernel(m_points[i], m_points[j]) + (i == j ? k_noise : 0.0);
  cholesky(m_chol, n);
  std::vector<double> centred;
  for (double y : ys) centred.push_back(y - m_mean);
  m_alpha = solve_upper_transposed(m_chol, n, solve_lower(m_chol, n, centred));
}

double Surrogate::kernel(const std::vector<int>& a, const std::vector<int>& b) const {
  const double params = static_cast<double>(a.size());
  double shared = 0;
  for (std::size_t p = 0; p < a.size(); ++p) shared += a[p] == b[p] && a[p] >= 0 ? 1.0 : 0.0;
  double single = params > 0 ? shared / params : 0.0;
  double pairs = params > 1 ? shared * (shared - 1) / (params * (params - 1)) : 0.0;
  double pair_weight = params > 1 ? k_kernel_pairs : 0.0;
  return (1.0 + single + pair_weight * pairs) / (2.0 + pair_weight);
}

std::vector<int> Surrogate::encode(const ParamValues& params) const { return encode_point(m_space, params); }

Surrogate::Prediction Surrogate::predict(const ParamValues& params) const {
  if (!usable()) return {m_mean, m_scale};
  std::vector<int> point = encode(params);
  const std::size_t n = m_points.size();
  std::vector<double> similarity(n);
  double mean = m_mean;
  for (std::size_t i = 0; i < n; ++i) {
    similarity[i] = kernel(point, m_points[i]);
    mean += similarity[i] * m_alpha[i];
  }
  std::vector<double> v = solve_lower(m_chol, n, similarity);
  double explained = 0;
  for (double x : v) explained += x * x;
  return {mean, std::sqrt(std::max(1e-12, kernel(point, point) - explained)) * m_scale};
}

}  // namespace evoteam::builtin
