#pragma once
// Comparing one output with its reference, in the order of the oracle battery: poison survivors
// (unwritten output), NaN/Inf positional mismatches, then elementwise and normwise tolerance.
#include <cstdint>
#include <string>

#include "plan.hpp"

namespace evoteam_harness {

// Poison patterns rotate between trials: a quiet NaN with a payload, then huge finite values of either sign,
// so an unwritten element cannot match the reference by luck twice.
void fill_poison(void* data, std::int64_t count, DType dtype, int poison);

struct CompareResult {
  std::string status = "ok";  // ok | unwritten_output | nonfinite_mismatch | numeric_mismatch
  std::int64_t first_bad = -1;
  std::int64_t bad_count = 0;
  std::int64_t unwritten = 0;
  std::int64_t nonfinite_mismatches = 0;
  double max_abs = 0;
  double max_rel = 0;
  double normwise = 0;
  double candidate_value = 0;  // at first_bad
  double reference_value = 0;
};

CompareResult compare_output(const void* candidate, const void* reference, std::int64_t count, DType dtype,
                             const Tolerance& tolerance, int poison);

// Elements still holding the poison pattern bit for bit.
std::int64_t count_poison(const void* data, std::int64_t count, DType dtype, int poison);

// Index of the first element whose bytes differ, or -1.
std::int64_t first_difference(const void* a, const void* b, std::int64_t count, DType dtype);

}  // namespace evoteam_harness
