// The double-precision CPU model of the MLA paged decode task: hand-computed cases, softmax properties, the
// base-2 log-sum-exp, ragged batches, page permutations and empty sequences.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "kernels/mla_paged_decode_h16_ckv512_kpe64_ps1/cpu_reference.hpp"

// Named, not anonymous: unity builds compile several test files as one, and helper names here repeat elsewhere.
namespace mla_decode_reference_test {

namespace mla = evoteam_kernels::mla_paged_decode_h16_ckv512_kpe64_ps1;

constexpr int k_heads = mla::k_num_qo_heads;
constexpr int k_ckv = mla::k_head_dim_ckv;
constexpr int k_kpe = mla::k_head_dim_kpe;

struct Outputs {
  std::vector<double> output;
  std::vector<double> lse;
};

// One call's inputs; the caches hold num_pages rows, the sequences are given by their page lists.
struct MlaCase {
  std::int64_t num_pages = 0;
  std::vector<float> q_nope, q_pe, ckv, kpe;
  std::vector<std::int32_t> indptr{0};
  std::vector<std::int32_t> indices;
  double sm_scale = 1.0 / std::sqrt(192.0);

  std::int64_t batch() const { return static_cast<std::int64_t>(indptr.size()) - 1; }

  void add_sequence(const std::vector<std::int32_t>& pages) {
    indices.insert(indices.end(), pages.begin(), pages.end());
    indptr.push_back(static_cast<std::int32_t>(indices.size()));
  }

  Outputs run() const {
    Outputs result;
    result.output.assign(static_cast<std::size_t>(batch() * k_heads * k_ckv), -1.0);
    result.lse.assign(static_cast<std::size_t>(batch() * k_heads), -1.0);
    mla::mla_paged_decode(q_nope.data(), q_pe.data(), ckv.data(), kpe.data(), indptr.data(), indices.data(), sm_scale,
                          batch(), num_pages, result.output.data(), result.lse.data());
    return result;
  }
};

// Zero queries and caches for `batch` queries over `num_pages` pages (the sequences are added separately).
MlaCase zero_case(std::int64_t batch, std::int64_t num_pages) {
  MlaCase c;
  c.num_pages = num_pages;
  c.q_nope.assign(static_cast<std::size_t>(batch * k_heads * k_ckv), 0.0f);
  c.q_pe.assign(static_cast<std::size_t>(batch * k_heads * k_kpe), 0.0f);
  c.ckv.assign(static_cast<std::size_t>(num_pages * k_ckv), 0.0f);
  c.kpe.assign(static_cast<std::size_t>(num_pages * k_kpe), 0.0f);
  return c;
}

MlaCase random_case(std::int64_t batch, std::int64_t num_pages, std::uint32_t seed) {
  MlaCase c = zero_case(batch, num_pages);
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (auto* tensor : {&c.q_nope, &c.q_pe, &c.ckv, &c.kpe})
    for (float& x : *tensor) x = normal(rng);
  return c;
}

// Distinct random pages for sequences of the given lengths.
void add_random_sequences(MlaCase& c, const std::vector<int>& lengths, std::uint32_t seed) {
  std::vector<std::int32_t> pages(static_cast<std::size_t>(c.num_pages));
  std::iota(pages.begin(), pages.end(), 0);
  std::mt19937 rng(seed);
  std::shuffle(pages.begin(), pages.end(), rng);
  std::size_t next = 0;
  for (int length : lengths) {
    c.add_sequence(std::vector<std::int32_t>(pages.begin() + static_cast<std::ptrdiff_t>(next),
                                             pages.begin() + static_cast<std::ptrdiff_t>(next + length)));
    next += static_cast<std::size_t>(length);
  }
}

double independent_logit(const MlaCase& c, std::int64_t b, int h, std::int32_t page) {
  long double dot = 0;
  for (int d = 0; d < k_ckv; ++d)
    dot += static_cast<long double>(c.q_nope[(b * k_heads + h) * k_ckv + d]) * c.ckv[page * k_ckv + d];
  for (int d = 0; d < k_kpe; ++d)
    dot += static_cast<long double>(c.q_pe[(b * k_heads + h) * k_kpe + d]) * c.kpe[page * k_kpe + d];
  return static_cast<double>(dot * c.sm_scale);
}

TEST(MlaDecodeCpuReference, HandComputedTwoTokens) {
  // Logits ln 3 and 0 give weights 3/4 and 1/4; a head whose rope query is zero weighs both tokens equally.
  MlaCase c = zero_case(1, 8);
  c.sm_scale = std::log(3.0);
  for (int h = 0; h < k_heads; ++h) c.q_pe[static_cast<std::size_t>(h) * k_kpe] = h == 1 ? 0.0f : 1.0f;
  c.kpe[5 * k_kpe] = 1.0f;  // page 5: rope key (1, 0, ...) -> logit ln 3
  c.ckv[5 * k_ckv + 0] = 4.0f;
  c.ckv[2 * k_ckv + 1] = 8.0f;  // page 2: logit 0
  c.add_sequence({5, 2});
  const Outputs r = c.run();
  for (int h = 0; h < k_heads; ++h) {
    const double* out = &r.output[static_cast<std::size_t>(h) * k_ckv];
    const double expected0 = h == 1 ? 2.0 : 3.0;
    const double expected1 = h == 1 ? 4.0 : 2.0;
    EXPECT_NEAR(out[0], expected0, 1e-12) << "head " << h;
    EXPECT_NEAR(out[1], expected1, 1e-12) << "head " << h;
    for (int d = 2; d < k_ckv; ++d) ASSERT_EQ(out[d], 0.0) << "head " << h << " dim " << d;
    EXPECT_NEAR(r.lse[static_cast<std::size_t>(h)], h == 1 ? 1.0 : 2.0, 1e-12) << "head " << h;  // log2(2), log2(4)
  }
}

TEST(MlaDecodeCpuReference, ZeroScaleAveragesTheLatentRows) {
  MlaCase c = random_case(1, 16, 7);
  c.sm_scale = 0.0;
  add_random_sequences(c, {5}, 8);
  const Outputs r = c.run();
  for (int h = 0; h < k_heads; ++h) {
    EXPECT_NEAR(r.lse[static_cast<std::size_t>(h)], std::log2(5.0), 1e-12);
    for (int d = 0; d < k_ckv; d += 37) {
      double mean = 0;
      for (int t = 0; t < 5; ++t)
        mean += c.ckv[static_cast<std::size_t>(c.indices[static_cast<std::size_t>(t)]) * k_ckv + d];
      EXPECT_NEAR(r.output[static_cast<std::size_t>(h * k_ckv + d)], mean / 5.0, 1e-12);
    }
  }
}

TEST(MlaDecodeCpuReference, WeightsSumToOneAndOutputIsAConvexCombination) {
  MlaCase c = random_case(2, 64, 11);
  for (std::int64_t p = 0; p < c.num_pages; ++p) c.ckv[static_cast<std::size_t>(p * k_ckv + 100)] = 1.0f;
  add_random_sequences(c, {23, 40}, 12);
  const Outputs r = c.run();
  for (std::int64_t b = 0; b < 2; ++b)
    for (int h = 0; h < k_heads; ++h) {
      const double* out = &r.output[static_cast<std::size_t>((b * k_heads + h) * k_ckv)];
      // A dimension that is 1 in every latent row returns the sum of the weights.
      EXPECT_NEAR(out[100], 1.0, 1e-12) << "b " << b << " h " << h;
      for (int d = 0; d < k_ckv; ++d) {
        double low = std::numeric_limits<double>::infinity(), high = -low;
        for (std::int32_t i = c.indptr[static_cast<std::size_t>(b)]; i < c.indptr[static_cast<std::size_t>(b + 1)];
             ++i) {
          const double v = c.ckv[static_cast<std::size_t>(c.indices[static_cast<std::size_t>(i)]) * k_ckv + d];
          low = std::min(low, v);
          high = std::max(high, v);
        }
        ASSERT_GE(out[d], low - 1e-12) << "b " << b << " h " << h << " d " << d;
        ASSERT_LE(out[d], high + 1e-12) << "b " << b << " h " << h << " d " << d;
      }
    }
}

TEST(MlaDecodeCpuReference, SingleTokenReturnsItsLatentRow) {
  MlaCase c = random_case(3, 10, 21);
  c.add_sequence({7});
  c.add_sequence({0});
  c.add_sequence({9});
  const Outputs r = c.run();
  for (std::int64_t b = 0; b < 3; ++b) {
    const std::int32_t page = c.indices[static_cast<std::size_t>(b)];
    for (int h = 0; h < k_heads; ++h) {
      const std::size_t row = static_cast<std::size_t>(b * k_heads + h);
      for (int d = 0; d < k_ckv; ++d)
        ASSERT_NEAR(r.output[row * k_ckv + static_cast<std::size_t>(d)],
                    c.ckv[static_cast<std::size_t>(page * k_ckv + d)], 1e-12);
      EXPECT_NEAR(r.lse[row], independent_logit(c, b, h, page) / std::log(2.0), 1e-9);
    }
  }
}

TEST(MlaDecodeCpuReference, LseIsTheBase2LogSumExpOfTheScaledLogits) {
  MlaCase c = random_case(2, 40, 31);
  add_random_sequences(c, {17, 6}, 32);
  const Outputs r = c.run();
  for (std::int64_t b = 0; b < 2; ++b)
    for (int h = 0; h < k_heads; ++h) {
      // Without the max subtraction: these logits are small enough for a direct sum.
      long double sum = 0;
      for (std::int32_t i = c.indptr[static_cast<std::size_t>(b)]; i < c.indptr[static_cast<std::size_t>(b + 1)]; ++i)
        sum += std::exp(static_cast<long double>(independent_logit(c, b, h, c.indices[static_cast<std::size_t>(i)])));
      EXPECT_NEAR(r.lse[static_cast<std::size_t>(b * k_heads + h)], static_cast<double>(std::log2(sum)), 1e-9);
    }
}

TEST(MlaDecodeCpuReference, RaggedBatchEqualsPerSequenceCalls) {
  const std::vector<int> lengths = {3, 0, 9, 1, 14};
  MlaCase batch = random_case(5, 64, 41);
  add_random_sequences(batch, lengths, 42);
  const Outputs together = batch.run();
  for (std::int64_t b = 0; b < 5; ++b) {
    MlaCase single = batch;
    const auto q_rows = [&](const std::vector<float>& q, int dim) {
      return std::vector<float>(q.begin() + b * k_heads * dim, q.begin() + (b + 1) * k_heads * dim);
    };
    single.q_nope = q_rows(batch.q_nope, k_ckv);
    single.q_pe = q_rows(batch.q_pe, k_kpe);
    single.indptr = {0};
    single.indices.clear();
    single.add_sequence(
        std::vector<std::int32_t>(batch.indices.begin() + batch.indptr[static_cast<std::size_t>(b)],
                                  batch.indices.begin() + batch.indptr[static_cast<std::size_t>(b + 1)]));
    const Outputs alone = single.run();
    for (int h = 0; h < k_heads; ++h) {
      EXPECT_DOUBLE_EQ(alone.lse[static_cast<std::size_t>(h)], together.lse[static_cast<std::size_t>(b * k_heads + h)]);
      for (int d = 0; d < k_ckv; ++d)
        ASSERT_DOUBLE_EQ(alone.output[static_cast<std::size_t>(h * k_ckv + d)],
                         together.output[static_cast<std::size_t>((b * k_heads + h) * k_ckv + d)]);
    }
  }
}

TEST(MlaDecodeCpuReference, PermutedPagesGiveTheSameResult) {
  MlaCase c = random_case(3, 50, 51);
  add_random_sequences(c, {12, 20, 5}, 52);
  const Outputs original = c.run();
  // Move every page to a new slot and rewrite the page lists accordingly.
  std::vector<std::int32_t> moved_to(static_cast<std::size_t>(c.num_pages));
  std::iota(moved_to.begin(), moved_to.end(), 0);
  std::mt19937 rng(53);
  std::shuffle(moved_to.begin(), moved_to.end(), rng);
  MlaCase permuted = c;
  for (std::int64_t p = 0; p < c.num_pages; ++p) {
    const std::int64_t q = moved_to[static_cast<std::size_t>(p)];
    std::copy_n(c.ckv.begin() + p * k_ckv, k_ckv, permuted.ckv.begin() + q * k_ckv);
    std::copy_n(c.kpe.begin() + p * k_kpe, k_kpe, permuted.kpe.begin() + q * k_kpe);
  }
  for (std::int32_t& page : permuted.indices) page = moved_to[static_cast<std::size_t>(page)];
  const Outputs moved = permuted.run();
  EXPECT_EQ(moved.output, original.output);
  EXPECT_EQ(moved.lse, original.lse);
  // The order of the tokens within a sequence does not matter either (up to rounding).
  MlaCase reversed = c;
  for (std::size_t b = 0; b + 1 < c.indptr.size(); ++b)
    std::reverse(reversed.indices.begin() + c.indptr[b], reversed.indices.begin() + c.indptr[b + 1]);
  const Outputs flipped = reversed.run();
  for (std::size_t i = 0; i < original.output.size(); ++i) ASSERT_NEAR(flipped.output[i], original.output[i], 1e-12);
  for (std::size_t i = 0; i < original.lse.size(); ++i) ASSERT_NEAR(flipped.lse[i], original.lse[i], 1e-12);
}

TEST(MlaDecodeCpuReference, EmptySequenceGivesZeroRowsAndMinusInfinityLse) {
  MlaCase c = random_case(3, 20, 61);
  add_random_sequences(c, {4, 0, 6}, 62);
  const Outputs r = c.run();
  for (int h = 0; h < k_heads; ++h) {
    const std::size_t row = static_cast<std::size_t>(k_heads) + static_cast<std::size_t>(h);
    EXPECT_TRUE(std::isinf(r.lse[row]) && r.lse[row] < 0) << "head " << h << ": " << r.lse[row];
    for (int d = 0; d < k_ckv; ++d) ASSERT_EQ(r.output[row * k_ckv + static_cast<std::size_t>(d)], 0.0);
    EXPECT_TRUE(std::isfinite(r.lse[static_cast<std::size_t>(h)]));
    EXPECT_TRUE(std::isfinite(r.lse[static_cast<std::size_t>(2 * k_heads + h)]));
  }
  // A batch of nothing but empty sequences (more sequences than tokens, as in the hidden edge shapes).
  MlaCase empty = random_case(2, 4, 63);
  empty.add_sequence({});
  empty.add_sequence({});
  const Outputs nothing = empty.run();
  for (double v : nothing.output) ASSERT_EQ(v, 0.0);
  for (double v : nothing.lse) ASSERT_TRUE(std::isinf(v) && v < 0);
}

TEST(MlaDecodeCpuReference, HugeLogitsStayFinite) {
  // Heavy-tailed inputs give logits in the thousands: the softmax becomes one-hot on the largest logit.
  MlaCase c = zero_case(1, 4);
  for (int h = 0; h < k_heads; ++h) c.q_pe[static_cast<std::size_t>(h) * k_kpe] = 1000.0f;
  c.kpe[0 * k_kpe] = 30.0f;
  c.kpe[1 * k_kpe] = 20.0f;
  c.ckv[0 * k_ckv + 3] = 5.0f;
  c.ckv[1 * k_ckv + 3] = -5.0f;
  c.sm_scale = 1.0;
  c.add_sequence({1, 0});
  const Outputs r = c.run();
  for (int h = 0; h < k_heads; ++h) {
    EXPECT_NEAR(r.output[static_cast<std::size_t>(h * k_ckv + 3)], 5.0, 1e-12);
    EXPECT_NEAR(r.lse[static_cast<std::size_t>(h)], 30000.0 / std::log(2.0), 1e-9);
  }
}

TEST(MlaDecodeCpuReference, RejectsPagesOutsideTheCache) {
  MlaCase c = random_case(1, 4, 71);
  c.add_sequence({0, 4});
  EXPECT_THROW(c.run(), std::invalid_argument);
  MlaCase d = random_case(2, 4, 72);
  d.indptr = {0, 2, 1};
  d.indices = {0, 1};
  EXPECT_THROW(d.run(), std::invalid_argument);
}

}  // namespace mla_decode_reference_test
