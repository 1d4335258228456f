#include "compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "half_float.hpp"

namespace evoteam_harness {
namespace {

constexpr int k_poison_patterns = 3;

const std::uint32_t k_poison32[k_poison_patterns] = {0x7FC5A5A5u, 0xFF7FA5A5u, 0x7F7FA55Au};
const std::uint64_t k_poison64[k_poison_patterns] = {0x7FF8A5A5A5A5A5A5ull, 0xFFEFA5A5A5A5A5A5ull,
                                                     0x7FEFA55AA55AA55Aull};
const std::uint32_t k_poison_i32[k_poison_patterns] = {0xA5A5A5A5u, 0x5AA55AA5u, 0x7FFFFFA5u};
const std::uint64_t k_poison_i64[k_poison_patterns] = {0xA5A5A5A5A5A5A5A5ull, 0x5AA55AA55AA55AA5ull,
                                                       0x7FFFFFFFFFFFFFA5ull};
const std::uint8_t k_poison_u8[k_poison_patterns] = {0xA5, 0x5A, 0xC3};
// A NaN with a payload, then the most negative and a large positive finite value of each 16-bit type.
const std::uint16_t k_poison_bf16[k_poison_patterns] = {0x7FC5u, 0xFF7Fu, 0x7F5Au};
const std::uint16_t k_poison_f16[k_poison_patterns] = {0x7E5Au, 0xFBFFu, 0x7BA5u};

float widen(std::uint16_t bits, DType dtype) {
  return dtype == DType::bfloat16 ? bfloat16_to_float(bits) : half_to_float(bits);
}

std::vector<float> widen_all(const void* data, std::int64_t count, DType dtype) {
  const auto* bits = static_cast<const std::uint16_t*>(data);
  std::vector<float> wide(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) wide[static_cast<std::size_t>(i)] = widen(bits[i], dtype);
  return wide;
}

int slot(int poison) { return ((poison % k_poison_patterns) + k_poison_patterns) % k_poison_patterns; }

template <typename Bits>
void fill_bits(void* data, std::int64_t count, Bits bits) {
  Bits* out = static_cast<Bits*>(data);
  for (std::int64_t i = 0; i < count; ++i) out[i] = bits;
}

// One pass for the common case, where everything is within tolerance: the elementwise test
// d <= atol + atol_rms * RMS(r) + rtol * |r| is checked as max(d - rtol * |r|) <= atol + atol_rms * RMS(r), whose
// right side is known only at the end. Returns false when anything looks wrong; the full checks then run.
template <typename T, typename Bits>
bool all_within_tolerance(const T* y, const T* r, std::int64_t count, const Tolerance& tolerance, Bits poison_bits,
                          CompareResult* result) {
  double sum_r2 = 0, sum_d2 = 0, worst_margin = 0, max_abs = 0;
  bool odd = false;
  for (std::int64_t i = 0; i < count; ++i) {
    Bits bits;
    std::memcpy(&bits, &y[i], sizeof bits);
    const double reference = static_cast<double>(r[i]);
    const double difference = std::fabs(static_cast<double>(y[i]) - reference);
    odd |= bits == poison_bits || !std::isfinite(difference) || !std::isfinite(reference);
    sum_r2 += reference * reference;
    sum_d2 += difference * difference;
    worst_margin = std::max(worst_margin, difference - tolerance.rtol * std::fabs(reference));
    max_abs = std::max(max_abs, difference);
  }
  if (odd || count == 0) return false;
  const double rms = std::sqrt(sum_r2 / static_cast<double>(count));
  const double normwise = sum_r2 > 0 ? std::sqrt(sum_d2 / sum_r2) : std::sqrt(sum_d2);
  if (worst_margin > tolerance.atol + tolerance.atol_rms * rms || normwise > tolerance.normwise) return false;
  result->max_abs = max_abs;
  result->normwise = normwise;
  return true;
}

template <typename T, typename Bits>
CompareResult compare_floats(const T* y, const T* r, std::int64_t count, const Tolerance& tolerance, Bits poison_bits) {
  CompareResult result;
  if (all_within_tolerance(y, r, count, tolerance, poison_bits, &result)) return result;
  T poison_value;
  std::memcpy(&poison_value, &poison_bits, sizeof poison_value);
  const bool poison_is_nan = std::isnan(poison_value);
  auto note = [&](std::int64_t i) {
    if (result.first_bad < 0) {
      result.first_bad = i;
      result.candidate_value = static_cast<double>(y[i]);
      result.reference_value = static_cast<double>(r[i]);
    }
  };
  // 1. Poison survivors where the reference holds something else.
  for (std::int64_t i = 0; i < count; ++i) {
    Bits bits;
    std::memcpy(&bits, &y[i], sizeof bits);
    if (bits != poison_bits) continue;
    const bool reference_matches = poison_is_nan ? std::isnan(r[i]) : r[i] == poison_value;
    if (!reference_matches) {
      ++result.unwritten;
      note(i);
    }
  }
  if (result.unwritten > 0) {
    result.status = "unwritten_output";
    result.bad_count = result.unwritten;
    return result;
  }
  // 2. NaN and Inf must sit where the reference has them.
  for (std::int64_t i = 0; i < count; ++i) {
    const bool y_finite = std::isfinite(y[i]);
    const bool r_finite = std::isfinite(r[i]);
    bool mismatch = y_finite != r_finite;
    if (!mismatch && !y_finite)
      mismatch = std::isnan(y[i]) != std::isnan(r[i]) || (std::isinf(y[i]) && std::signbit(y[i]) != std::signbit(r[i]));
    if (mismatch) {
      ++result.nonfinite_mismatches;
      note(i);
    }
  }
  if (result.nonfinite_mismatches > 0) {
    result.status = "nonfinite_mismatch";
    result.bad_count = result.nonfinite_mismatches;
    return result;
  }
  // 3. Elementwise (absolute term scaled by the reference's RMS) and normwise tolerance.
  double sum_r2 = 0;
  std::int64_t finite = 0;
  for (std::int64_t i = 0; i < count; ++i)
    if (std::isfinite(r[i])) {
      sum_r2 += static_cast<double>(r[i]) * static_cast<double>(r[i]);
      ++finite;
    }
  const double rms = finite > 0 ? std::sqrt(sum_r2 / static_cast<double>(finite)) : 0.0;
  double sum_d2 = 0;
  for (std::int64_t i = 0; i < count; ++i) {
    if (!std::isfinite(r[i])) continue;
    const double reference = static_cast<double>(r[i]);
    const double difference = std::fabs(static_cast<double>(y[i]) - reference);
    sum_d2 += difference * difference;
    if (difference > result.max_abs) result.max_abs = difference;
    if (reference != 0 && difference / std::fabs(reference) > result.max_rel)
      result.max_rel = difference / std::fabs(reference);
    const double allowed = tolerance.atol + tolerance.atol_rms * rms + tolerance.rtol * std::fabs(reference);
    if (difference > allowed) {
      ++result.bad_count;
      note(i);
    }
  }
  result.normwise = sum_r2 > 0 ? std::sqrt(sum_d2 / sum_r2) : std::sqrt(sum_d2);
  if (result.bad_count > 0 || result.normwise > tolerance.normwise) result.status = "numeric_mismatch";
  return result;
}

template <typename T, typename Bits>
CompareResult compare_ints(const T* y, const T* r, std::int64_t count, Bits poison_bits) {
  CompareResult result;
  T poison_value;
  std::memcpy(&poison_value, &poison_bits, sizeof poison_value);
  for (std::int64_t i = 0; i < count; ++i) {
    if (y[i] == r[i]) continue;
    if (y[i] == poison_value) ++result.unwritten;
    ++result.bad_count;
    const double difference = std::fabs(static_cast<double>(y[i]) - static_cast<double>(r[i]));
    if (difference > result.max_abs) result.max_abs = difference;
    if (result.first_bad < 0) {
      result.first_bad = i;
      result.candidate_value = static_cast<double>(y[i]);
      result.reference_value = static_cast<double>(r[i]);
    }
  }
  if (result.unwritten > 0)
    result.status = "unwritten_output";
  else if (result.bad_count > 0)
    result.status = "numeric_mismatch";
  result.normwise = result.bad_count > 0 ? 1.0 : 0.0;
  return result;
}

}  // namespace

void fill_poison(void* data, std::int64_t count, DType dtype, int poison) {
  const int index = slot(poison);
  switch (dtype) {
    case DType::float32: fill_bits(data, count, k_poison32[index]); break;
    case DType::float64: fill_bits(data, count, k_poison64[index]); break;
    case DType::int32: fill_bits(data, count, k_poison_i32[index]); break;
    case DType::int64: fill_bits(data, count, k_poison_i64[index]); break;
    case DType::uint8: fill_bits(data, count, k_poison_u8[index]); break;
    case DType::float16: fill_bits(data, count, k_poison_f16[index]); break;
    case DType::bfloat16: fill_bits(data, count, k_poison_bf16[index]); break;
    case DType::other: break;
  }
}

CompareResult compare_output(const void* candidate, const void* reference, std::int64_t count, DType dtype,
                             const Tolerance& tolerance, int poison) {
  const int index = slot(poison);
  switch (dtype) {
    case DType::float32:
      return compare_floats(static_cast<const float*>(candidate), static_cast<const float*>(reference), count,
                            tolerance, k_poison32[index]);
    case DType::float64:
      return compare_floats(static_cast<const double*>(candidate), static_cast<const double*>(reference), count,
                            tolerance, k_poison64[index]);
    case DType::int32:
      return compare_ints(static_cast<const std::int32_t*>(candidate), static_cast<const std::int32_t*>(reference),
                          count, k_poison_i32[index]);
    case DType::int64:
      return compare_ints(static_cast<const std::int64_t*>(candidate), static_cast<const std::int64_t*>(reference),
                          count, k_poison_i64[index]);
    case DType::uint8:
      return compare_ints(static_cast<const std::uint8_t*>(candidate), static_cast<const std::uint8_t*>(reference),
                          count, k_poison_u8[index]);
    case DType::float16:
    case DType::bfloat16: {
      // Widening is exact, so the poison's float image identifies it as surely as its 16 bits do.
      const std::uint16_t poison16 = dtype == DType::bfloat16 ? k_poison_bf16[index] : k_poison_f16[index];
      const std::vector<float> y = widen_all(candidate, count, dtype);
      const std::vector<float> r = widen_all(reference, count, dtype);
      return compare_floats(y.data(), r.data(), count, tolerance, float_bits(widen(poison16, dtype)));
    }
    case DType::other: break;
  }
  CompareResult unsupported;
  unsupported.status = "numeric_mismatch";
  return unsupported;
}

std::int64_t count_poison(const void* data, std::int64_t count, DType dtype, int poison) {
  const std::size_t size = dtype_size(dtype);
  unsigned char pattern[8];
  fill_poison(pattern, 1, dtype, poison);
  const auto* bytes = static_cast<const unsigned char*>(data);
  std::int64_t found = 0;
  for (std::int64_t i = 0; i < count; ++i) found += std::memcmp(bytes + i * size, pattern, size) == 0 ? 1 : 0;
  return found;
}

std::int64_t first_difference(const void* a, const void* b, std::int64_t count, DType dtype) {
  const std::size_t size = dtype_size(dtype);
  const auto* left = static_cast<const unsigned char*>(a);
  const auto* right = static_cast<const unsigned char*>(b);
  if (std::memcmp(left, right, static_cast<std::size_t>(count) * size) == 0) return -1;
  for (std::int64_t i = 0; i < count; ++i)
    if (std::memcmp(left + i * size, right + i * size, size) != 0) return i;
  return -1;
}

}  // namespace evoteam_harness
