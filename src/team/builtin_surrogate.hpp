#pragma once
// The builtin Optimizer's model of the param space: a Gaussian process of log speedup over categorical params,
// fit on what the lab measured, with the dense linear algebra it shares with the param-effect fit.
#include <cstddef>
#include <vector>

#include <evoteam/history/history.hpp>
#include <evoteam/task/task.hpp>

namespace evoteam::builtin {

// One attempted point of the param space.
struct Measurement {
  enum class Outcome { passed, failed, pending };
  ParamValues params;
  Outcome outcome = Outcome::pending;
  double speedup = 0;        // passed only
  std::string failure = "";  // failed only: how, as the verdict of its failure signature ("COMPILE_ERROR", ...)
};

// A point as the index of each param's value (-1: absent or not a declared value).
std::vector<int> encode_point(const std::vector<ParamSpec>& space, const ParamValues& params);

// In-place Cholesky factorisation of a symmetric positive definite n x n matrix (row-major, lower part), and the
// two triangular solves with its factor L: L x = b, and L^T x = b.
void cholesky(std::vector<double>& a, std::size_t n);
std::vector<double> solve_lower(const std::vector<double>& l, std::size_t n, std::vector<double> b);
std::vector<double> solve_upper_transposed(const std::vector<double>& l, std::size_t n, std::vector<double> b);

// A Gaussian-process model of log speedup over categorical params: two points are alike in proportion to the
// values and the value pairs they share. A failed point counts as the worst passing one, so the model steers
// away from failing regions. Needs two measurements, one of them passing (check `usable()`).
class Surrogate {
 public:
  Surrogate(const std::vector<ParamSpec>& space, const std::vector<Measurement>& measured);

  struct Prediction {
    double mean = 0;  // log speedup
    double sd = 0;
  };
  bool usable() const { return m_points.size() >= 2; }
  Prediction predict(const ParamValues& params) const;
  double spread() const { return m_scale; }  // prior standard deviation of log speedup

 private:
  double kernel(const std::vector<int>& a, const std::vector<int>& b) const;
  std::vector<int> encode(const ParamValues& params) const;

  std::vector<ParamSpec> m_space;
  std::vector<std::vector<int>> m_points;  // value indices
  std::vector<double> m_alpha;             // (K + noise)^-1 (y - mean)
  std::vector<double> m_chol;              // lower Cholesky factor of K + noise, row-major
  double m_mean = 0;
  double m_scale = 1;
};

}  // namespace evoteam::builtin
