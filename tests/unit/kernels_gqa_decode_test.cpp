// The double-precision CPU model of the GQA paged decode task: hand-computed cases, the head grouping, softmax
// properties, the base-2 log-sum-exp, ragged batches, page permutations and empty sequences.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "kernels/gqa_paged_decode_h32_kv8_d128_ps1/cpu_reference.hpp"

namespace {

namespace gqa = evoteam_kernels::gqa_paged_decode_h32_kv8_d128_ps1;

constexpr int k_heads = gqa::k_num_qo_heads;
constexpr int k_kv_heads = gqa::k_num_kv_heads;
constexpr int k_dim = gqa::k_head_dim;
constexpr int k_group = gqa::k_group_size;
constexpr std::int64_t k_page = static_cast<std::int64_t>(k_kv_heads) * k_dim;  // floats per page of k or v

struct Outputs {
  std::vector<double> output;
  std::vector<double> lse;
};

// One call's inputs; the caches hold num_pages pages, the sequences are given by their page lists.
struct GqaCase {
  std::int64_t num_pages = 0;
  std::vector<float> q, k, v;
  std::vector<std::int32_t> indptr{0};
  std::vector<std::int32_t> indices;
  double sm_scale = 1.0 / std::sqrt(128.0);

  std::int64_t batch() const { return static_cast<std::int64_t>(indptr.size()) - 1; }

  void add_sequence(const std::vector<std::int32_t>& pages) {
    indices.insert(indices.end(), pages.begin(), pages.end());
    indptr.push_back(static_cast<std::int32_t>(indices.size()));
  }

  float& k_at(std::int64_t page, int kv_head, int d) {
    return k[static_cast<std::size_t>(page * k_page + kv_head * k_dim + d)];
  }
  float& v_at(std::int64_t page, int kv_head, int d) {
    return v[static_cast<std::size_t>(page * k_page + kv_head * k_dim + d)];
  }
  float& q_at(std::int64_t b, int h, int d) { return q[static_cast<std::size_t>((b * k_heads + h) * k_dim + d)]; }

  Outputs run() const {
    Outputs result;
    result.output.assign(static_cast<std::size_t>(batch() * k_heads * k_dim), -1.0);
    result.lse.assign(static_cast<std::size_t>(batch() * k_heads), -1.0);
    gqa::gqa_paged_decode(q.data(), k.data(), v.data(), indptr.data(), indices.data(), sm_scale, batch(), num_pages,
                          result.output.data(), result.lse.data());
    return result;
  }
};

double out_at(const Outputs& r, std::int64_t b, int h, int d) {
  return r.output[static_cast<std::size_t>((b * k_heads + h) * k_dim + d)];
}
double lse_at(const Outputs& r, std::int64_t b, int h) { return r.lse[static_cast<std::size_t>(b * k_heads + h)]; }

GqaCase zero_case(std::int64_t batch, std::int64_t num_pages) {
  GqaCase c;
  c.num_pages = num_pages;
  c.q.assign(static_cast<std::size_t>(batch * k_heads * k_dim), 0.0f);
  c.k.assign(static_cast<std::size_t>(num_pages * k_page), 0.0f);
  c.v.assign(static_cast<std::size_t>(num_pages * k_page), 0.0f);
  return c;
}

GqaCase random_case(std::int64_t batch, std::int64_t num_pages, std::uint32_t seed) {
  GqaCase c = zero_case(batch, num_pages);
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (auto* tensor : {&c.q, &c.k, &c.v})
    for (float& x : *tensor) x = normal(rng);
  return c;
}

// Distinct random pages for sequences of the given lengths.
void add_random_sequences(GqaCase& c, const std::vector<int>& lengths, std::uint32_t seed) {
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

double independent_logit(GqaCase& c, std::int64_t b, int h, std::int32_t page) {
  long double dot = 0;
  for (int d = 0; d < k_dim; ++d) dot += static_cast<long double>(c.q_at(b, h, d)) * c.k_at(page, h / k_group, d);
  return static_cast<double>(dot * c.sm_scale);
}

TEST(GqaDecodeCpuReference, HandComputedTwoTokens) {
  // Only KV head 2 tells the tokens apart (logits ln 3 and 0: weights 3/4 and 1/4); its query heads 8..11 see
  // that, every other head weighs both tokens equally.
  GqaCase c = zero_case(1, 6);
  c.sm_scale = std::log(3.0);
  for (int h = 0; h < k_heads; ++h) c.q_at(0, h, 0) = 1.0f;
  c.k_at(4, 2, 0) = 1.0f;
  for (int g = 0; g < k_kv_heads; ++g) {
    c.v_at(4, g, 0) = 4.0f;
    c.v_at(1, g, 1) = 8.0f;
  }
  c.add_sequence({4, 1});
  const Outputs r = c.run();
  for (int h = 0; h < k_heads; ++h) {
    const bool sharp = h / k_group == 2;
    EXPECT_NEAR(out_at(r, 0, h, 0), sharp ? 3.0 : 2.0, 1e-12) << "head " << h;
    EXPECT_NEAR(out_at(r, 0, h, 1), sharp ? 2.0 : 4.0, 1e-12) << "head " << h;
    for (int d = 2; d < k_dim; ++d) ASSERT_EQ(out_at(r, 0, h, d), 0.0) << "head " << h << " dim " << d;
    EXPECT_NEAR(lse_at(r, 0, h), sharp ? 2.0 : 1.0, 1e-12) << "head " << h;  // log2(3 + 1), log2(1 + 1)
  }
}

TEST(GqaDecodeCpuReference, QueryHeadsReadOnlyTheirGroupsKvHead) {
  GqaCase c = random_case(2, 30, 3);
  add_random_sequences(c, {9, 13}, 4);
  const Outputs before = c.run();
  for (std::int64_t p = 0; p < c.num_pages; ++p)
    for (int d = 0; d < k_dim; ++d) {
      c.k_at(p, 5, d) *= -1.5f;
      c.v_at(p, 5, d) += 1.0f;
    }
  const Outputs after = c.run();
  for (std::int64_t b = 0; b < 2; ++b)
    for (int h = 0; h < k_heads; ++h) {
      const bool in_group = h / k_group == 5;
      EXPECT_EQ(lse_at(after, b, h) != lse_at(before, b, h), in_group) << "b " << b << " h " << h;
      if (in_group) continue;
      for (int d = 0; d < k_dim; ++d)
        ASSERT_EQ(out_at(after, b, h, d), out_at(before, b, h, d)) << "b " << b << " h " << h;
    }
  // Query heads of one group with the same query give the same row.
  GqaCase same = random_case(1, 12, 5);
  for (int h = 13; h < 16; ++h)
    for (int d = 0; d < k_dim; ++d) same.q_at(0, h, d) = same.q_at(0, 12, d);
  add_random_sequences(same, {11}, 6);
  const Outputs r = same.run();
  for (int h = 13; h < 16; ++h) {
    EXPECT_EQ(lse_at(r, 0, h), lse_at(r, 0, 12));
    for (int d = 0; d < k_dim; ++d) ASSERT_EQ(out_at(r, 0, h, d), out_at(r, 0, 12, d));
  }
}

TEST(GqaDecodeCpuReference, ZeroScaleAveragesTheValueRows) {
  GqaCase c = random_case(1, 16, 7);
  c.sm_scale = 0.0;
  add_random_sequences(c, {6}, 8);
  const Outputs r = c.run();
  for (int h = 0; h < k_heads; ++h) {
    EXPECT_NEAR(lse_at(r, 0, h), std::log2(6.0), 1e-12);
    for (int d = 0; d < k_dim; d += 13) {
      double mean = 0;
      for (int t = 0; t < 6; ++t) mean += c.v_at(c.indices[static_cast<std::size_t>(t)], h / k_group, d);
      EXPECT_NEAR(out_at(r, 0, h, d), mean / 6.0, 1e-12);
    }
  }
}

TEST(GqaDecodeCpuReference, WeightsSumToOneAndOutputIsAConvexCombination) {
  GqaCase c = random_case(2, 64, 11);
  for (std::int64_t p = 0; p < c.num_pages; ++p)
    for (int g = 0; g < k_kv_heads; ++g) c.v_at(p, g, 77) = 1.0f;
  add_random_sequences(c, {25, 38}, 12);
  const Outputs r = c.run();
  for (std::int64_t b = 0; b < 2; ++b)
    for (int h = 0; h < k_heads; ++h) {
      // A value dimension that is 1 in every row returns the sum of the weights.
      EXPECT_NEAR(out_at(r, b, h, 77), 1.0, 1e-12) << "b " << b << " h " << h;
      for (int d = 0; d < k_dim; ++d) {
        double low = std::numeric_limits<double>::infinity(), high = -low;
        for (std::int32_t i = c.indptr[static_cast<std::size_t>(b)]; i < c.indptr[static_cast<std::size_t>(b + 1)];
             ++i) {
          const double v = c.v_at(c.indices[static_cast<std::size_t>(i)], h / k_group, d);
          low = std::min(low, v);
          high = std::max(high, v);
        }
        ASSERT_GE(out_at(r, b, h, d), low - 1e-12) << "b " << b << " h " << h << " d " << d;
        ASSERT_LE(out_at(r, b, h, d), high + 1e-12) << "b " << b << " h " << h << " d " << d;
      }
    }
}

TEST(GqaDecodeCpuReference, SingleTokenReturnsItsValueRow) {
  GqaCase c = random_case(3, 10, 21);
  c.add_sequence({3});
  c.add_sequence({9});
  c.add_sequence({0});
  const Outputs r = c.run();
  for (std::int64_t b = 0; b < 3; ++b) {
    const std::int32_t page = c.indices[static_cast<std::size_t>(b)];
    for (int h = 0; h < k_heads; ++h) {
      for (int d = 0; d < k_dim; ++d) ASSERT_NEAR(out_at(r, b, h, d), c.v_at(page, h / k_group, d), 1e-12);
      EXPECT_NEAR(lse_at(r, b, h), independent_logit(c, b, h, page) / std::log(2.0), 1e-9);
    }
  }
}

TEST(GqaDecodeCpuReference, LseIsTheBase2LogSumExpOfTheScaledLogits) {
  GqaCase c = random_case(2, 40, 31);
  add_random_sequences(c, {19, 4}, 32);
  const Outputs r = c.run();
  for (std::int64_t b = 0; b < 2; ++b)
    for (int h = 0; h < k_heads; ++h) {
      // Without the max subtraction: these logits are small enough for a direct sum.
      long double sum = 0;
      for (std::int32_t i = c.indptr[static_cast<std::size_t>(b)]; i < c.indptr[static_cast<std::size_t>(b + 1)]; ++i)
        sum += std::exp(static_cast<long double>(independent_logit(c, b, h, c.indices[static_cast<std::size_t>(i)])));
      EXPECT_NEAR(lse_at(r, b, h), static_cast<double>(std::log2(sum)), 1e-9);
    }
}

TEST(GqaDecodeCpuReference, RaggedBatchEqualsPerSequenceCalls) {
  const std::vector<int> lengths = {7, 1, 0, 20, 3};
  GqaCase batch = random_case(5, 64, 41);
  add_random_sequences(batch, lengths, 42);
  const Outputs together = batch.run();
  for (std::int64_t b = 0; b < 5; ++b) {
    GqaCase single = batch;
    single.q.assign(batch.q.begin() + b * k_heads * k_dim, batch.q.begin() + (b + 1) * k_heads * k_dim);
    single.indptr = {0};
    single.indices.clear();
    single.add_sequence(
        std::vector<std::int32_t>(batch.indices.begin() + batch.indptr[static_cast<std::size_t>(b)],
                                  batch.indices.begin() + batch.indptr[static_cast<std::size_t>(b + 1)]));
    const Outputs alone = single.run();
    for (int h = 0; h < k_heads; ++h) {
      EXPECT_DOUBLE_EQ(lse_at(alone, 0, h), lse_at(together, b, h));
      for (int d = 0; d < k_dim; ++d) ASSERT_DOUBLE_EQ(out_at(alone, 0, h, d), out_at(together, b, h, d));
    }
  }
}

TEST(GqaDecodeCpuReference, PermutedPagesGiveTheSameResult) {
  GqaCase c = random_case(3, 50, 51);
  add_random_sequences(c, {14, 22, 6}, 52);
  const Outputs original = c.run();
  // Move every page to a new slot and rewrite the page lists accordingly.
  std::vector<std::int32_t> moved_to(static_cast<std::size_t>(c.num_pages));
  std::iota(moved_to.begin(), moved_to.end(), 0);
  std::mt19937 rng(53);
  std::shuffle(moved_to.begin(), moved_to.end(), rng);
  GqaCase permuted = c;
  for (std::int64_t p = 0; p < c.num_pages; ++p) {
    const std::int64_t to = moved_to[static_cast<std::size_t>(p)];
    std::copy_n(c.k.begin() + p * k_page, k_page, permuted.k.begin() + to * k_page);
    std::copy_n(c.v.begin() + p * k_page, k_page, permuted.v.begin() + to * k_page);
  }
  for (std::int32_t& page : permuted.indices) page = moved_to[static_cast<std::size_t>(page)];
  const Outputs moved = permuted.run();
  EXPECT_EQ(moved.output, original.output);
  EXPECT_EQ(moved.lse, original.lse);
  // The order of the tokens within a sequence does not matter either (up to rounding).
  GqaCase reversed = c;
  for (std::size_t b = 0; b + 1 < c.indptr.size(); ++b)
    std::reverse(reversed.indices.begin() + c.indptr[b], reversed.indices.begin() + c.indptr[b + 1]);
  const Outputs flipped = reversed.run();
  for (std::size_t i = 0; i < original.output.size(); ++i) ASSERT_NEAR(flipped.output[i], original.output[i], 1e-12);
  for (std::size_t i = 0; i < original.lse.size(); ++i) ASSERT_NEAR(flipped.lse[i], original.lse[i], 1e-12);
}

TEST(GqaDecodeCpuReference, EmptySequenceGivesZeroRowsAndMinusInfinityLse) {
  GqaCase c = random_case(3, 20, 61);
  add_random_sequences(c, {0, 5, 2}, 62);
  const Outputs r = c.run();
  for (int h = 0; h < k_heads; ++h) {
    EXPECT_TRUE(std::isinf(lse_at(r, 0, h)) && lse_at(r, 0, h) < 0) << "head " << h << ": " << lse_at(r, 0, h);
    for (int d = 0; d < k_dim; ++d) ASSERT_EQ(out_at(r, 0, h, d), 0.0);
    EXPECT_TRUE(std::isfinite(lse_at(r, 1, h)));
    EXPECT_TRUE(std::isfinite(lse_at(r, 2, h)));
  }
  // More sequences than tokens, as in the hidden edge shapes: the surplus sequences are empty.
  GqaCase sparse = random_case(4, 3, 63);
  sparse.add_sequence({});
  sparse.add_sequence({2});
  sparse.add_sequence({});
  sparse.add_sequence({});
  const Outputs s = sparse.run();
  for (std::int64_t b : {0, 2, 3})
    for (int h = 0; h < k_heads; ++h) {
      ASSERT_TRUE(std::isinf(lse_at(s, b, h)) && lse_at(s, b, h) < 0);
      for (int d = 0; d < k_dim; ++d) ASSERT_EQ(out_at(s, b, h, d), 0.0);
    }
  for (int h = 0; h < k_heads; ++h) EXPECT_NEAR(out_at(s, 1, h, 5), sparse.v_at(2, h / k_group, 5), 1e-12);
}

TEST(GqaDecodeCpuReference, HugeLogitsStayFinite) {
  // Heavy-tailed inputs give logits in the thousands: the softmax becomes one-hot on the largest logit.
  GqaCase c = zero_case(1, 4);
  for (int h = 0; h < k_heads; ++h) c.q_at(0, h, 0) = 1000.0f;
  for (int g = 0; g < k_kv_heads; ++g) {
    c.k_at(2, g, 0) = 40.0f;
    c.k_at(3, g, 0) = 39.0f;
    c.v_at(2, g, 9) = -3.0f;
    c.v_at(3, g, 9) = 3.0f;
  }
  c.sm_scale = 1.0;
  c.add_sequence({3, 2});
  const Outputs r = c.run();
  for (int h = 0; h < k_heads; ++h) {
    EXPECT_NEAR(out_at(r, 0, h, 9), -3.0, 1e-12);
    EXPECT_NEAR(lse_at(r, 0, h), 40000.0 / std::log(2.0), 1e-9);
  }
}

TEST(GqaDecodeCpuReference, RejectsPagesOutsideTheCache) {
  GqaCase c = random_case(1, 4, 71);
  c.add_sequence({1, -1});
  EXPECT_THROW(c.run(), std::invalid_argument);
  GqaCase d = random_case(2, 4, 72);
  d.indptr = {0, 2, 1};
  d.indices = {0, 1};
  EXPECT_THROW(d.run(), std::invalid_argument);
}

}  // namespace
