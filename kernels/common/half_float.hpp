#pragma once
// bfloat16 and IEEE half on the host, without CUDA headers: the harness generates, poisons and compares 16-bit
// tensors through these conversions (round to nearest even, NaN kept quiet), so the host side of the CUDA harness
// needs no device code and its logic is testable anywhere.
#include <cmath>
#include <cstdint>
#include <cstring>

namespace evoteam_harness {

inline std::uint32_t float_bits(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

inline float bits_float(std::uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

inline std::uint16_t float_to_bfloat16(float value) {
  const std::uint32_t bits = float_bits(value);
  if (std::isnan(value)) return static_cast<std::uint16_t>((bits >> 16) | 0x0040u);
  const std::uint32_t rounding = 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>((bits + rounding) >> 16);
}

inline float bfloat16_to_float(std::uint16_t value) { return bits_float(static_cast<std::uint32_t>(value) << 16); }

inline float half_to_float(std::uint16_t value) {
  const std::uint32_t sign = static_cast<std::uint32_t>(value & 0x8000u) << 16;
  const std::uint32_t exponent = (value >> 10) & 0x1Fu;
  const std::uint32_t mantissa = value & 0x3FFu;
  if (exponent == 0x1F) return bits_float(sign | 0x7F800000u | (mantissa << 13));  // Inf and NaN, payload kept
  if (exponent == 0) {
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);  // zero and subnormals
    return sign ? -magnitude : magnitude;
  }
  return bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

inline std::uint16_t float_to_half(float value) {
  const std::uint32_t bits = float_bits(value);
  const std::uint16_t sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  if (std::isnan(value)) return static_cast<std::uint16_t>(sign | 0x7E00u | ((bits >> 13) & 0x3FFu));
  const float magnitude = std::fabs(value);
  if (magnitude >= 65520.0f) return static_cast<std::uint16_t>(sign | 0x7C00u);  // rounds to Inf
  if (magnitude < 6.103515625e-05f) {
    // Subnormal: the value in units of 2^-24, rounded to nearest even by the FPU's default mode.
    const float units = std::nearbyint(magnitude * 16777216.0f);
    return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(units));
  }
  const std::uint32_t magnitude_bits = float_bits(magnitude);
  const std::uint32_t rounding = 0xFFFu + ((magnitude_bits >> 13) & 1u);
  const std::uint32_t rounded = magnitude_bits + rounding;
  return static_cast<std::uint16_t>(sign | (((rounded >> 23) - 112u) << 10) | ((rounded >> 13) & 0x3FFu));
}

}  // namespace evoteam_harness
