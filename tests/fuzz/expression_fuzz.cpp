// Shape and cost expressions (muparser plus %, floor, ceil, cdiv), as tasks write them.
#include <evoteam/task/task.hpp>

#include "fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::map<std::string, double> variables = {{"M", 64}, {"N", 32}, {"K", 16}, {"batch", 3}, {"zero", 0}};
  const std::string expression = evoteam::fuzz::as_text(data, size);
  evoteam::fuzz::expect_clean_outcome([&] { evoteam::evaluate_expression(expression, variables, "fuzz"); });
  return 0;
}
