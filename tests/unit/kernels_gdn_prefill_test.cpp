// The CPU reference of gdn_prefill_qk4_v8_d128_k_last: a hand-computed token, the chunked formulation against
// the token-by-token recurrence (lengths on and off the chunk size), gates, zero beta, ragged batches, empty
// sequences, the GVA head mapping, and the task's input hooks.
#include "kernels/gdn_prefill_qk4_v8_d128_k_last/cpu_reference.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include "kernels/gdn_prefill_qk4_v8_d128_k_last/hooks.cpp"

namespace {

namespace gdn = evoteam_kernels::gdn_prefill_qk4_v8_d128_k_last;

std::size_t at(std::int64_t i) { return static_cast<std::size_t>(i); }

// One call's worth of inputs: unit-norm q and k rows (as the model feeds them), Gaussian v and state, decay
// parameters in the model's range.
struct Problem {
  gdn::Dims dims;
  std::vector<std::int64_t> cu_seqlens{0};
  std::vector<float> q, k, v, state, A_log, a, dt_bias, b;
  double scale = 0;

  std::int64_t total() const { return cu_seqlens.back(); }
  std::int64_t num_seqs() const { return static_cast<std::int64_t>(cu_seqlens.size()) - 1; }
  gdn::Inputs inputs() const {
    gdn::Inputs in;
    in.q = q.data();
    in.k = k.data();
    in.v = v.data();
    in.state = state.data();
    in.cu_seqlens = cu_seqlens.data();
    in.total_seq_len = total();
    in.num_seqs = num_seqs();
    in.scale = scale;
    return in;
  }
  gdn::Gates gates() const {
    return gdn::compute_gates(A_log.data(), a.data(), dt_bias.data(), b.data(), total(), dims);
  }
};

void fill_unit_rows(std::vector<float>& out, std::int64_t rows, std::int64_t size, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  out.resize(at(rows * size));
  for (std::int64_t r = 0; r < rows; ++r) {
    double norm2 = 0;
    std::vector<double> row(at(size));
    for (double& x : row) {
      x = normal(rng);
      norm2 += x * x;
    }
    for (std::int64_t i = 0; i < size; ++i) out[at(r * size + i)] = static_cast<float>(row[at(i)] / std::sqrt(norm2));
  }
}

Problem random_problem(const gdn::Dims& dims, const std::vector<std::int64_t>& lengths, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> uniform;
  Problem p;
  p.dims = dims;
  for (std::int64_t length : lengths) p.cu_seqlens.push_back(p.cu_seqlens.back() + length);
  const std::int64_t T = p.total(), D = dims.head_size, HV = dims.num_v_heads;
  fill_unit_rows(p.q, T * dims.num_qk_heads, D, rng);
  fill_unit_rows(p.k, T * dims.num_qk_heads, D, rng);
  auto gaussian = [&](std::vector<float>& out, std::int64_t count) {
    out.resize(at(count));
    for (float& x : out) x = static_cast<float>(normal(rng));
  };
  gaussian(p.v, T * HV * D);
  gaussian(p.state, p.num_seqs() * HV * D * D);
  gaussian(p.a, T * HV);
  gaussian(p.b, T * HV);
  p.A_log.resize(at(HV));
  p.dt_bias.resize(at(HV));
  for (std::int64_t h = 0; h < HV; ++h) {
    p.A_log[at(h)] = static_cast<float>(std::log(1.0 + 15.0 * uniform(rng)));
    p.dt_bias[at(h)] = static_cast<float>(-1.0 - 4.0 * uniform(rng));
  }
  p.scale = 1.0 / std::sqrt(static_cast<double>(D));
  return p;
}

double max_abs(const std::vector<double>& x) {
  double m = 0;
  for (double value : x) m = std::max(m, std::fabs(value));
  return m;
}

double max_abs_difference(const std::vector<double>& x, const std::vector<double>& y) {
  EXPECT_EQ(x.size(), y.size());
  double m = 0;
  for (std::size_t i = 0; i < std::min(x.size(), y.size()); ++i) m = std::max(m, std::fabs(x[i] - y[i]));
  return m;
}

void expect_chunked_matches_recurrent(const Problem& p, std::int64_t chunk_size) {
  const gdn::Gates gates = p.gates();
  const gdn::Result naive = gdn::recurrent(p.inputs(), gates, p.dims);
  const gdn::Result chunk = gdn::chunked(p.inputs(), gates, p.dims, chunk_size);
  EXPECT_LE(max_abs_difference(naive.output, chunk.output), 1e-10 * (1.0 + max_abs(naive.output)))
      << "chunk " << chunk_size;
  EXPECT_LE(max_abs_difference(naive.new_state, chunk.new_state), 1e-10 * (1.0 + max_abs(naive.new_state)))
      << "chunk " << chunk_size;
  EXPECT_GT(max_abs(naive.output), 0.0);
}

TEST(GdnPrefillCpuReference, HandComputedSingleToken) {
  // head_size 2, one head. A_log = 0 and a + dt_bias = 0 give decay exp(-softplus(0)) = 1/2; b = 0 gives beta 1/2.
  Problem p;
  p.dims = {1, 1, 2};
  p.cu_seqlens = {0, 1};
  p.q = {1.0f, 2.0f};
  p.k = {1.0f, 0.0f};
  p.v = {2.0f, -1.0f};
  p.state = {1.0f, 2.0f, 3.0f, 4.0f};  // rows are V, columns K
  p.A_log = {0.0f};
  p.dt_bias = {0.5f};
  p.a = {-0.5f};
  p.b = {0.0f};
  p.scale = 1.0;
  // S = S0 / 2 = [[0.5, 1], [1.5, 2]]; S k = (0.5, 1.5); delta = (v - S k) / 2 = (0.75, -1.25);
  // S += delta k^T = [[1.25, 1], [0.25, 2]]; o = S q = (3.25, 4.25).
  const gdn::Result r = gdn::gdn_prefill(p.inputs(), p.A_log.data(), p.a.data(), p.dt_bias.data(), p.b.data(), p.dims);
  ASSERT_EQ(r.output.size(), 2u);
  EXPECT_NEAR(r.output[0], 3.25, 1e-12);
  EXPECT_NEAR(r.output[1], 4.25, 1e-12);
  const std::vector<double> expected_state = {1.25, 1.0, 0.25, 2.0};
  for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(r.new_state[i], expected_state[i], 1e-12) << i;
}

TEST(GdnPrefillCpuReference, GatesFollowTheDefinition) {
  const gdn::Dims dims{1, 2, 4};
  const std::vector<float> A_log = {0.5f, 2.0f}, dt_bias = {-3.0f, 1.0f}, a = {0.25f, 30.0f, -40.0f, 0.0f},
                           b = {1.5f, -2.0f, 0.0f, 30.0f};
  const gdn::Gates gates = gdn::compute_gates(A_log.data(), a.data(), dt_bias.data(), b.data(), 2, dims);
  for (std::size_t t = 0; t < 2; ++t)
    for (std::size_t h = 0; h < 2; ++h) {
      const std::size_t i = t * 2 + h;
      const double x = static_cast<double>(a[i]) + dt_bias[h];
      const double expected = -std::exp(static_cast<double>(A_log[h])) * std::log1p(std::exp(x));
      EXPECT_NEAR(gates.log_decay[i], expected, 1e-14 * std::fabs(expected));
      EXPECT_DOUBLE_EQ(gates.beta[i], 1.0 / (1.0 + std::exp(-static_cast<double>(b[i]))));
    }
  EXPECT_EQ(gdn::softplus(31.0), 31.0);  // above the threshold the input passes through
  EXPECT_NEAR(gdn::softplus(-40.0), std::exp(-40.0), 1e-30);
}

TEST(GdnPrefillCpuReference, ChunkedMatchesRecurrentAcrossChunkBoundaries) {
  // Lengths below, at, just past and well past the chunk size, plus an empty one.
  const Problem p = random_problem({2, 4, 16}, {1, 63, 64, 65, 0, 130, 7}, 11);
  expect_chunked_matches_recurrent(p, 64);
  expect_chunked_matches_recurrent(p, 16);
  expect_chunked_matches_recurrent(p, 1);
}

TEST(GdnPrefillCpuReference, ChunkedMatchesRecurrentWithTaskShapes) {
  const Problem p = random_problem(gdn::Dims{}, {70, 0, 5}, 12);
  expect_chunked_matches_recurrent(p, 64);
}

TEST(GdnPrefillCpuReference, ZeroBetaOnlyDecaysTheState) {
  Problem p = random_problem({2, 4, 8}, {9, 4}, 13);
  for (float& value : p.b) value = -1000.0f;  // sigmoid(-1000) is exactly 0 in double
  const gdn::Gates gates = p.gates();
  const gdn::Result r = gdn::recurrent(p.inputs(), gates, p.dims);
  const std::int64_t D = p.dims.head_size, HV = p.dims.num_v_heads;
  for (std::int64_t seq = 0; seq < p.num_seqs(); ++seq)
    for (std::int64_t h = 0; h < HV; ++h) {
      double log_decay = 0;
      for (std::int64_t t = p.cu_seqlens[at(seq)]; t < p.cu_seqlens[at(seq + 1)]; ++t) {
        log_decay += gates.log_decay[at(t * HV + h)];
        // o_t = scale * gamma_t * S0 q_t
        const float* q = &p.q[at((t * p.dims.num_qk_heads + h / 2) * D)];
        for (std::int64_t row = 0; row < D; ++row) {
          double sum = 0;
          for (std::int64_t col = 0; col < D; ++col)
            sum += p.state[at(((seq * HV + h) * D + row) * D + col)] * static_cast<double>(q[col]);
          EXPECT_NEAR(r.output[at((t * HV + h) * D + row)], p.scale * std::exp(log_decay) * sum, 1e-12);
        }
      }
      for (std::int64_t i = 0; i < D * D; ++i) {
        const std::size_t s = at((seq * HV + h) * D * D + i);
        EXPECT_NEAR(r.new_state[s], std::exp(log_decay) * p.state[s], 1e-12);
      }
    }
}

TEST(GdnPrefillCpuReference, RaggedBatchEqualsIndependentSequences) {
  const gdn::Dims dims{2, 4, 8};
  const std::vector<std::int64_t> lengths = {5, 0, 12, 23, 1};
  const Problem batch = random_problem(dims, lengths, 14);
  const gdn::Result together =
      gdn::gdn_prefill(batch.inputs(), batch.A_log.data(), batch.a.data(), batch.dt_bias.data(), batch.b.data(), dims);
  const std::int64_t D = dims.head_size, HV = dims.num_v_heads, HQ = dims.num_qk_heads;
  for (std::size_t seq = 0; seq < lengths.size(); ++seq) {
    const std::int64_t begin = batch.cu_seqlens[seq];
    const std::int64_t length = lengths[seq];
    const std::vector<std::int64_t> cu = {0, length};
    gdn::Inputs one;
    one.q = batch.q.data() + begin * HQ * D;
    one.k = batch.k.data() + begin * HQ * D;
    one.v = batch.v.data() + begin * HV * D;
    one.state = batch.state.data() + at(seq) * at(HV * D * D);
    one.cu_seqlens = cu.data();
    one.total_seq_len = length;
    one.num_seqs = 1;
    one.scale = batch.scale;
    const gdn::Result alone = gdn::gdn_prefill(one, batch.A_log.data(), batch.a.data() + begin * HV,
                                               batch.dt_bias.data(), batch.b.data() + begin * HV, dims);
    for (std::int64_t i = 0; i < length * HV * D; ++i)
      ASSERT_EQ(alone.output[at(i)], together.output[at(begin * HV * D + i)]) << "sequence " << seq << " element " << i;
    for (std::int64_t i = 0; i < HV * D * D; ++i)
      ASSERT_EQ(alone.new_state[at(i)], together.new_state[seq * at(HV * D * D) + at(i)]) << "sequence " << seq;
  }
}

TEST(GdnPrefillCpuReference, EmptySequenceKeepsItsInitialState) {
  const Problem p = random_problem({2, 4, 8}, {0, 3, 0, 0}, 15);
  const std::int64_t block = p.dims.num_v_heads * p.dims.head_size * p.dims.head_size;
  for (const gdn::Result& r :
       {gdn::recurrent(p.inputs(), p.gates(), p.dims), gdn::chunked(p.inputs(), p.gates(), p.dims, 2)})
    for (std::int64_t seq : {0, 2, 3})
      for (std::int64_t i = 0; i < block; ++i)
        ASSERT_EQ(r.new_state[at(seq * block + i)], static_cast<double>(p.state[at(seq * block + i)]))
            << "sequence " << seq;
  // A batch with no tokens at all passes every state through.
  const Problem none = random_problem({2, 4, 8}, {0, 0}, 16);
  const gdn::Result r = gdn::recurrent(none.inputs(), none.gates(), none.dims);
  EXPECT_TRUE(r.output.empty());
  for (std::size_t i = 0; i < r.new_state.size(); ++i) ASSERT_EQ(r.new_state[i], static_cast<double>(none.state[i]));
}

TEST(GdnPrefillCpuReference, VHeadPairsShareOneQueryKeyHead) {
  // With the task's 4 q/k heads and 8 v heads, v head h must equal a one-head problem built from q/k head h / 2.
  const Problem p = random_problem(gdn::Dims{}, {6, 3}, 17);
  const gdn::Result full =
      gdn::gdn_prefill(p.inputs(), p.A_log.data(), p.a.data(), p.dt_bias.data(), p.b.data(), p.dims);
  const std::int64_t D = p.dims.head_size, HV = p.dims.num_v_heads, HQ = p.dims.num_qk_heads, T = p.total();
  for (std::int64_t h : {0, 1, 5, 7}) {
    Problem one;
    one.dims = {1, 1, D};
    one.cu_seqlens = p.cu_seqlens;
    one.scale = p.scale;
    one.A_log = {p.A_log[at(h)]};
    one.dt_bias = {p.dt_bias[at(h)]};
    for (std::int64_t t = 0; t < T; ++t) {
      const std::size_t qk = at((t * HQ + h / 2) * D), vv = at((t * HV + h) * D);
      one.q.insert(one.q.end(), p.q.begin() + static_cast<std::ptrdiff_t>(qk),
                   p.q.begin() + static_cast<std::ptrdiff_t>(qk + at(D)));
      one.k.insert(one.k.end(), p.k.begin() + static_cast<std::ptrdiff_t>(qk),
                   p.k.begin() + static_cast<std::ptrdiff_t>(qk + at(D)));
      one.v.insert(one.v.end(), p.v.begin() + static_cast<std::ptrdiff_t>(vv),
                   p.v.begin() + static_cast<std::ptrdiff_t>(vv + at(D)));
      one.a.push_back(p.a[at(t * HV + h)]);
      one.b.push_back(p.b[at(t * HV + h)]);
    }
    for (std::int64_t seq = 0; seq < p.num_seqs(); ++seq) {
      const std::size_t s = at((seq * HV + h) * D * D);
      one.state.insert(one.state.end(), p.state.begin() + static_cast<std::ptrdiff_t>(s),
                       p.state.begin() + static_cast<std::ptrdiff_t>(s + at(D * D)));
    }
    const gdn::Result single =
        gdn::gdn_prefill(one.inputs(), one.A_log.data(), one.a.data(), one.dt_bias.data(), one.b.data(), one.dims);
    for (std::int64_t t = 0; t < T; ++t)
      for (std::int64_t d = 0; d < D; ++d)
        ASSERT_EQ(single.output[at(t * D + d)], full.output[at((t * HV + h) * D + d)]) << "v head " << h;
  }
}

TEST(GdnPrefillCpuReference, RejectsMalformedCuSeqlens) {
  Problem p = random_problem({1, 1, 2}, {2, 3}, 18);
  p.cu_seqlens = {0, 4, 3, 5};  // decreasing offsets; the vectors still hold 5 tokens
  EXPECT_THROW(gdn::recurrent(p.inputs(), p.gates(), p.dims), std::invalid_argument);
  p.cu_seqlens = {1, 5};
  EXPECT_THROW(gdn::recurrent(p.inputs(), p.gates(), p.dims), std::invalid_argument);
}

// The hooks, called as the harness calls them.
struct HookAxes {
  std::vector<const char*> names = {"total_seq_len", "num_seqs",    "num_q_heads",
                                    "num_k_heads",   "num_v_heads", "head_size"};
  std::vector<int64_t> values;
  HookAxes(int64_t total, int64_t seqs) : values{total, seqs, 4, 4, 8, 128} {}
};

std::vector<int64_t> hook_cu_seqlens(int64_t total, int64_t seqs, uint64_t seed) {
  HookAxes axes(total, seqs);
  std::vector<int64_t> cu(at(seqs + 1), -1);
  evoteam_hook_gdn_cu_seqlens(cu.data(), seqs + 1, axes.names.data(), axes.values.data(), 6, seed);
  return cu;
}

TEST(GdnPrefillCpuReference, CuSeqlensHookIsRaggedValidAndSeeded) {
  int empty = 0;
  for (auto [total, seqs] :
       {std::pair<int64_t, int64_t>{8192, 60}, {7, 3}, {1, 24}, {24, 131}, {131, 131}, {24, 1}, {4096, 32}})
    for (uint64_t seed = 1; seed <= 4; ++seed) {
      const std::vector<int64_t> cu = hook_cu_seqlens(total, seqs, seed);
      ASSERT_EQ(cu.front(), 0);
      ASSERT_EQ(cu.back(), total);
      for (int64_t i = 0; i < seqs; ++i) {
        ASSERT_LE(cu[at(i)], cu[at(i + 1)]) << total << " " << seqs;
        empty += cu[at(i)] == cu[at(i + 1)] ? 1 : 0;
      }
      EXPECT_EQ(cu, hook_cu_seqlens(total, seqs, seed));
    }
  EXPECT_GT(empty, 0);
  EXPECT_NE(hook_cu_seqlens(8192, 60, 1), hook_cu_seqlens(8192, 60, 2));
  // Ragged: the longest of 60 sequences is well above the mean.
  const std::vector<int64_t> cu = hook_cu_seqlens(8192, 60, 3);
  int64_t longest = 0;
  for (std::size_t i = 0; i + 1 < cu.size(); ++i) longest = std::max(longest, cu[i + 1] - cu[i]);
  EXPECT_GT(longest, 2 * 8192 / 60);
}

TEST(GdnPrefillCpuReference, UnitRowsHookGivesUnitNormBf16Rows) {
  HookAxes axes(5, 2);
  std::vector<uint16_t> bits(5 * 4 * 128);
  evoteam_hook_gdn_unit_rows(bits.data(), static_cast<int64_t>(bits.size()), axes.names.data(), axes.values.data(), 6,
                             99);
  for (std::size_t row = 0; row < 20; ++row) {
    double norm2 = 0;
    for (std::size_t i = 0; i < 128; ++i) {
      const uint32_t widened = static_cast<uint32_t>(bits[row * 128 + i]) << 16;
      float value = 0;
      std::memcpy(&value, &widened, sizeof value);
      norm2 += static_cast<double>(value) * value;
    }
    EXPECT_NEAR(std::sqrt(norm2), 1.0, 1e-2) << row;
  }
}

TEST(GdnPrefillCpuReference, DecayHooksGiveDecaysBetweenZeroAndOne) {
  HookAxes axes(5, 2);
  std::vector<float> A_log(8), dt_bias(8);
  evoteam_hook_gdn_a_log(A_log.data(), 8, axes.names.data(), axes.values.data(), 6, 5);
  evoteam_hook_gdn_dt_bias(dt_bias.data(), 8, axes.names.data(), axes.values.data(), 6, 6);
  for (std::size_t h = 0; h < 8; ++h) {
    EXPECT_GE(A_log[h], 0.0f);
    EXPECT_LE(A_log[h], std::log(16.0f) + 1e-6f);
    const double dt = gdn::softplus(dt_bias[h]);  // the step at a = 0
    EXPECT_GE(dt, 0.999e-3);
    EXPECT_LE(dt, 1.001e-1);
    const double decay = std::exp(-std::exp(static_cast<double>(A_log[h])) * dt);
    EXPECT_GT(decay, 0.19);
    EXPECT_LT(decay, 1.0);
  }
}

TEST(GdnPrefillCpuReference, GateInputHookSometimesSaturatesTheGates) {
  HookAxes axes(4096, 2);
  std::vector<uint16_t> bits(4096 * 8);
  evoteam_hook_gdn_gate_input(bits.data(), static_cast<int64_t>(bits.size()), axes.names.data(), axes.values.data(), 6,
                              21);
  int saturated_high = 0, saturated_low = 0;
  for (uint16_t b : bits) {
    const uint32_t widened = static_cast<uint32_t>(b) << 16;
    float value = 0;
    std::memcpy(&value, &widened, sizeof value);
    ASSERT_TRUE(std::isfinite(value));
    ASSERT_LE(std::fabs(value), 40.5f);
    saturated_high += value >= 20.0f ? 1 : 0;
    saturated_low += value <= -20.0f ? 1 : 0;
  }
  // About one in 32 of 32768, split between the signs.
  EXPECT_GT(saturated_high, 300);
  EXPECT_GT(saturated_low, 300);
  EXPECT_LT(saturated_high + saturated_low, 1600);
  // Saturated decays go through the recurrence without NaN: a = +-40 gives decay ~0 and ~1.
  Problem p = random_problem({1, 1, 4}, {6}, 22);
  p.a = {40.0f, -40.0f, 40.0f, 0.0f, -40.0f, 40.0f};
  p.b = {40.0f, -40.0f, 0.0f, 40.0f, -40.0f, 0.0f};
  const gdn::Result r = gdn::chunked(p.inputs(), p.gates(), p.dims, 4);
  const gdn::Result naive = gdn::recurrent(p.inputs(), p.gates(), p.dims);
  for (std::size_t i = 0; i < r.output.size(); ++i) {
    ASSERT_TRUE(std::isfinite(r.output[i]));
    EXPECT_NEAR(r.output[i], naive.output[i], 1e-12);
  }
}

}  // namespace
