#include "generate.hpp"

#include <cmath>
#include <cstring>

#include <vector>

#include "half_float.hpp"
#include "harness_abi.h"
#include "rng.hpp"

namespace evoteam_harness {
namespace {

// Normal, uniform, heavy-tailed (normal with about 1 in 64 elements scaled by 1e2..1e3) or small integers in
// [-2, 2] (exact in any float type, for exact-arithmetic checks).
template <typename T>
void fill_float(T* data, std::int64_t count, const std::string& distribution, Xoshiro256& rng) {
  if (distribution == "uniform") {
    for (std::int64_t i = 0; i < count; ++i) data[i] = static_cast<T>(2.0 * rng.uniform01() - 1.0);
  } else if (distribution == "small_int") {
    for (std::int64_t i = 0; i < count; ++i) data[i] = static_cast<T>(rng.uniform_int(-2, 3));
  } else {
    const bool heavy = distribution == "heavy_tailed";
    for (std::int64_t i = 0; i < count; i += 2) {
      // Marsaglia's polar method, both values used: exact normals without the sine and cosine of Box-Muller,
      // half the cost (input generation is a visible share of an evaluation's time).
      double u = 0, v = 0, s = 0;
      do {
        u = 2.0 * rng.uniform01() - 1.0;
        v = 2.0 * rng.uniform01() - 1.0;
        s = u * u + v * v;
      } while (s >= 1.0 || s == 0.0);
      const double scale = std::sqrt(-2.0 * std::log(s) / s);
      double values[2] = {u * scale, v * scale};
      for (int k = 0; k < 2 && i + k < count; ++k) {
        if (heavy && (rng.next() & 63) == 0) values[k] *= std::pow(10.0, 2.0 + rng.uniform01());
        data[i + k] = static_cast<T>(values[k]);
      }
    }
  }
}

// 16-bit floats: the same values as float32, rounded to the type (so a heavy tail stays finite in bf16 and
// saturates to the largest half where fp16 cannot hold it: 1e3 fits, so it never does with these scales).
void fill_16bit(std::uint16_t* data, std::int64_t count, const std::string& distribution, Xoshiro256& rng,
                DType dtype) {
  std::vector<float> wide(static_cast<std::size_t>(count));
  fill_float(wide.data(), count, distribution, rng);
  for (std::int64_t i = 0; i < count; ++i)
    data[i] = dtype == DType::bfloat16 ? float_to_bfloat16(wide[static_cast<std::size_t>(i)])
                                       : float_to_half(wide[static_cast<std::size_t>(i)]);
}

template <typename T>
void fill_int(T* data, std::int64_t count, std::int64_t low, std::int64_t high, Xoshiro256& rng) {
  for (std::int64_t i = 0; i < count; ++i) data[i] = static_cast<T>(rng.uniform_int(low, high));
}

}  // namespace

bool generate_input(void* data, const Plan& plan, std::size_t tensor_index, const WorkloadPlan& workload,
                    const TrialPlan& trial, std::string* error) {
  const TensorPlan& tensor = plan.tensors[tensor_index];
  const std::int64_t count = workload.elements[tensor_index];
  const std::uint64_t seed = mix_seed(trial.seed, tensor_index + 1);
  if (tensor.generator == "hook") {
    if (evoteam_glue_hook(tensor.hook.c_str(), data, count, workload.axes.data(), seed) != 0) {
      *error = "unknown hook " + tensor.hook;
      return false;
    }
    return true;
  }
  Xoshiro256 rng(seed);
  std::int64_t low = workload.int_low[tensor_index];
  std::int64_t high = workload.int_high[tensor_index];
  if (tensor.generator != "uniform_int") {
    const bool small = trial.distribution == "small_int";
    low = tensor.dtype == DType::uint8 ? 0 : (small ? -2 : -8);
    high = tensor.dtype == DType::uint8 ? (small ? 5 : 256) : (small ? 3 : 9);
  }
  if (high <= low) high = low + 1;
  switch (tensor.dtype) {
    case DType::float32: fill_float(static_cast<float*>(data), count, trial.distribution, rng); break;
    case DType::float64: fill_float(static_cast<double*>(data), count, trial.distribution, rng); break;
    case DType::int32: fill_int(static_cast<std::int32_t*>(data), count, low, high, rng); break;
    case DType::int64: fill_int(static_cast<std::int64_t*>(data), count, low, high, rng); break;
    case DType::uint8: fill_int(static_cast<std::uint8_t*>(data), count, low, high, rng); break;
    case DType::float16:
    case DType::bfloat16:
      fill_16bit(static_cast<std::uint16_t*>(data), count, trial.distribution, rng, tensor.dtype);
      break;
    case DType::other: *error = "unsupported dtype"; return false;
  }
  return true;
}

}  // namespace evoteam_harness
