#include "kernels/gdn_prefill_qk4_v8_d128_k_last/cpu_reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace evoteam_kernels::gdn_prefill_qk4_v8_d128_k_last {
namespace {

std::size_t index(std::int64_t i) { return static_cast<std::size_t>(i); }

void check(const Inputs& inputs, const Gates& gates, const Dims& dims) {
  if (dims.num_qk_heads < 1 || dims.num_v_heads < 1 || dims.head_size < 1 || dims.num_v_heads % dims.num_qk_heads != 0)
    throw std::invalid_argument("gdn: num_v_heads must be a positive multiple of num_qk_heads");
  if (inputs.num_seqs < 0 || inputs.total_seq_len < 0) throw std::invalid_argument("gdn: negative size");
  if (inputs.cu_seqlens[0] != 0 || inputs.cu_seqlens[inputs.num_seqs] != inputs.total_seq_len)
    throw std::invalid_argument("gdn: cu_seqlens must run from 0 to total_seq_len");
  for (std::int64_t n = 0; n < inputs.num_seqs; ++n)
    if (inputs.cu_seqlens[n + 1] < inputs.cu_seqlens[n])
      throw std::invalid_argument("gdn: cu_seqlens decreases at " + std::to_string(n + 1));
  const std::size_t gate_count = index(inputs.total_seq_len * dims.num_v_heads);
  if (gates.log_decay.size() != gate_count || gates.beta.size() != gate_count)
    throw std::invalid_argument("gdn: gates do not match total_seq_len x num_v_heads");
}

// Where one (sequence, v head) pair reads and writes: the row strides of the token-major tensors and the offsets
// of its q/k head, v head and state block.
struct HeadView {
  const Inputs& inputs;
  const Dims& dims;
  std::int64_t head;     // v head
  std::int64_t qk_head;  // the q/k head it reads

  HeadView(const Inputs& in, const Dims& d, std::int64_t v_head)
      : inputs(in), dims(d), head(v_head), qk_head(v_head / (d.num_v_heads / d.num_qk_heads)) {}
  const float* q(std::int64_t t) const { return inputs.q + (t * dims.num_qk_heads + qk_head) * dims.head_size; }
  const float* k(std::int64_t t) const { return inputs.k + (t * dims.num_qk_heads + qk_head) * dims.head_size; }
  const float* v(std::int64_t t) const { return inputs.v + (t * dims.num_v_heads + head) * dims.head_size; }
  std::size_t gate(std::int64_t t) const { return index(t * dims.num_v_heads + head); }
  std::size_t out(std::int64_t t) const { return index((t * dims.num_v_heads + head) * dims.head_size); }
  std::int64_t state_offset(std::int64_t seq) const {
    return (seq * dims.num_v_heads + head) * dims.head_size * dims.head_size;
  }
};

Result make_result(const Inputs& inputs, const Dims& dims) {
  Result result;
  result.output.assign(index(inputs.total_seq_len * dims.num_v_heads * dims.head_size), 0.0);
  result.new_state.assign(index(inputs.num_seqs * dims.num_v_heads * dims.head_size * dims.head_size), 0.0);
  return result;
}

// One sequence and head through the chunked form. S (V x K, row-major) enters as the initial state and leaves
// as the final one. Per chunk of L tokens with G_i the cumulative log decay up to and including token i:
//   u_i = beta_i (v_i - exp(G_i) S0 k_i) - sum_{j<i} A_ij u_j,  A_ij = beta_i exp(G_i - G_j) k_i.k_j,
// i.e. U = T diag(beta) V - T diag(beta exp(G)) K S0^T with T = (I + A)^-1 (unit lower triangular), then
//   o_i = scale (exp(G_i) S0 q_i + sum_{j<=i} exp(G_i - G_j) (q_i.k_j) u_j),
//   S   = exp(G_L) S0 + sum_j exp(G_L - G_j) u_j k_j^T.
void chunked_head(const HeadView& view, const Gates& gates, std::int64_t begin, std::int64_t end,
                  std::int64_t chunk_size, double scale, std::vector<double>& S, std::vector<double>& output) {
  const std::int64_t D = view.dims.head_size;
  auto mat = [](std::vector<double>& m, std::int64_t cols, std::int64_t r, std::int64_t c) -> double& {
    return m[index(r * cols + c)];
  };
  for (std::int64_t c0 = begin; c0 < end; c0 += chunk_size) {
    const std::int64_t L = std::min(chunk_size, end - c0);
    std::vector<double> G(index(L)), beta(index(L));
    double running = 0;
    for (std::int64_t i = 0; i < L; ++i) {
      running += gates.log_decay[view.gate(c0 + i)];
      G[index(i)] = running;
      beta[index(i)] = gates.beta[view.gate(c0 + i)];
    }
    auto dot = [D](const float* x, const float* y) {
      double sum = 0;
      for (std::int64_t d = 0; d < D; ++d) sum += static_cast<double>(x[d]) * static_cast<double>(y[d]);
      return sum;
    };
    // A (strictly lower) and T = (I + A)^-1 by forward substitution: (I + A) T = I.
    std::vector<double> A(index(L * L), 0.0), T(index(L * L), 0.0);
    for (std::int64_t i = 0; i < L; ++i)
      for (std::int64_t j = 0; j < i; ++j)
        mat(A, L, i, j) = beta[index(i)] * std::exp(G[index(i)] - G[index(j)]) * dot(view.k(c0 + i), view.k(c0 + j));
    for (std::int64_t j = 0; j < L; ++j) {
      mat(T, L, j, j) = 1.0;
      for (std::int64_t i = j + 1; i < L; ++i) {
        double sum = 0;
        for (std::int64_t m = j; m < i; ++m) sum += mat(A, L, i, m) * mat(T, L, m, j);
        mat(T, L, i, j) = -sum;
      }
    }
    // W = T diag(beta exp(G)) K (L x K) and U = T diag(beta) V - W S0^T (L x V).
    std::vector<double> W(index(L * D), 0.0), U(index(L * D), 0.0);
    for (std::int64_t i = 0; i < L; ++i)
      for (std::int64_t j = 0; j <= i; ++j) {
        const double tk = mat(T, L, i, j) * beta[index(j)] * std::exp(G[index(j)]);
        const double tv = mat(T, L, i, j) * beta[index(j)];
        const float* kj = view.k(c0 + j);
        const float* vj = view.v(c0 + j);
        for (std::int64_t d = 0; d < D; ++d) {
          mat(W, D, i, d) += tk * kj[d];
          mat(U, D, i, d) += tv * vj[d];
        }
      }
    for (std::int64_t i = 0; i < L; ++i)
      for (std::int64_t row = 0; row < D; ++row) {
        double sum = 0;
        for (std::int64_t col = 0; col < D; ++col) sum += mat(S, D, row, col) * mat(W, D, i, col);
        mat(U, D, i, row) -= sum;
      }
    // Outputs: the inter-chunk part through S0, the intra-chunk part through the decayed q.k attention.
    for (std::int64_t i = 0; i < L; ++i) {
      const float* qi = view.q(c0 + i);
      std::vector<double> weight(index(i + 1));
      for (std::int64_t j = 0; j <= i; ++j)
        weight[index(j)] = std::exp(G[index(i)] - G[index(j)]) * dot(qi, view.k(c0 + j));
      for (std::int64_t row = 0; row < D; ++row) {
        double inter = 0;
        for (std::int64_t col = 0; col < D; ++col) inter += mat(S, D, row, col) * static_cast<double>(qi[col]);
        double intra = 0;
        for (std::int64_t j = 0; j <= i; ++j) intra += weight[index(j)] * mat(U, D, j, row);
        output[view.out(c0 + i) + index(row)] = scale * (std::exp(G[index(i)]) * inter + intra);
      }
    }
    // State to the end of the chunk.
    const double total = G[index(L - 1)];
    for (std::int64_t row = 0; row < D; ++row)
      for (std::int64_t col = 0; col < D; ++col) {
        double sum = std::exp(total) * mat(S, D, row, col);
        for (std::int64_t j = 0; j < L; ++j)
          sum += std::exp(total - G[index(j)]) * mat(U, D, j, row) * static_cast<double>(view.k(c0 + j)[col]);
        mat(S, D, row, col) = sum;
      }
  }
}

}  // namespace

double softplus(double x) { return x > 20.0 ? x : std::log1p(std::exp(x)); }

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

Gates compute_gates(const float* A_log, const float* a, const float* dt_bias, const float* b,
                    std::int64_t total_seq_len, const Dims& dims) {
  Gates gates;
  gates.log_decay.resize(index(total_seq_len * dims.num_v_heads));
  gates.beta.resize(gates.log_decay.size());
  for (std::int64_t t = 0; t < total_seq_len; ++t)
    for (std::int64_t h = 0; h < dims.num_v_heads; ++h) {
      const std::size_t i = index(t * dims.num_v_heads + h);
      const double x = static_cast<double>(a[i]) + static_cast<double>(dt_bias[h]);
      gates.log_decay[i] = -std::exp(static_cast<double>(A_log[h])) * softplus(x);
      gates.beta[i] = sigmoid(static_cast<double>(b[i]));
    }
  return gates;
}

Result recurrent(const Inputs& inputs, const Gates& gates, const Dims& dims) {
  check(inputs, gates, dims);
  Result result = make_result(inputs, dims);
  const std::int64_t D = dims.head_size;
  std::vector<double> S(index(D * D));
  for (std::int64_t seq = 0; seq < inputs.num_seqs; ++seq)
    for (std::int64_t head = 0; head < dims.num_v_heads; ++head) {
      const HeadView view(inputs, dims, head);
      const std::int64_t offset = view.state_offset(seq);
      for (std::int64_t i = 0; i < D * D; ++i) S[index(i)] = inputs.state[offset + i];
      for (std::int64_t t = inputs.cu_seqlens[seq]; t < inputs.cu_seqlens[seq + 1]; ++t) {
        const double alpha = std::exp(gates.log_decay[view.gate(t)]);
        const double beta = gates.beta[view.gate(t)];
        const float* q = view.q(t);
        const float* k = view.k(t);
        const float* v = view.v(t);
        for (std::int64_t row = 0; row < D; ++row) {
          double* s = &S[index(row * D)];
          double predicted = 0;
          for (std::int64_t col = 0; col < D; ++col) {
            s[col] *= alpha;
            predicted += s[col] * static_cast<double>(k[col]);
          }
          const double delta = beta * (static_cast<double>(v[row]) - predicted);
          double out = 0;
          for (std::int64_t col = 0; col < D; ++col) {
            s[col] += delta * static_cast<double>(k[col]);
            out += s[col] * static_cast<double>(q[col]);
          }
          result.output[view.out(t) + index(row)] = inputs.scale * out;
        }
      }
      std::copy(S.begin(), S.end(), result.new_state.begin() + offset);
    }
  return result;
}

Result chunked(const Inputs& inputs, const Gates& gates, const Dims& dims, std::int64_t chunk_size) {
  check(inputs, gates, dims);
  if (chunk_size < 1) throw std::invalid_argument("gdn: chunk_size must be >= 1");
  Result result = make_result(inputs, dims);
  const std::int64_t D = dims.head_size;
  std::vector<double> S(index(D * D));
  for (std::int64_t seq = 0; seq < inputs.num_seqs; ++seq)
    for (std::int64_t head = 0; head < dims.num_v_heads; ++head) {
      const HeadView view(inputs, dims, head);
      const std::int64_t offset = view.state_offset(seq);
      for (std::int64_t i = 0; i < D * D; ++i) S[index(i)] = inputs.state[offset + i];
      chunked_head(view, gates, inputs.cu_seqlens[seq], inputs.cu_seqlens[seq + 1], chunk_size, inputs.scale, S,
                   result.output);
      std::copy(S.begin(), S.end(), result.new_state.begin() + offset);
    }
  return result;
}

Result gdn_prefill(const Inputs& inputs, const float* A_log, const float* a, const float* dt_bias, const float* b,
                   const Dims& dims) {
  return recurrent(inputs, compute_gates(A_log, a, dt_bias, b, inputs.total_seq_len, dims), dims);
}

}  // namespace evoteam_kernels::gdn_prefill_qk4_v8_d128_k_last
