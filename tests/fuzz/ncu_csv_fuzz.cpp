// The Nsight Compute raw CSV page parser, and the profile summary built from what it returns.
#include "eval/cuda/cuda_ncu.hpp"

#include "fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = evoteam::fuzz::as_text(data, size);
  evoteam::fuzz::expect_clean_outcome([&] {
    const auto launches = evoteam::eval::cuda::parse_ncu_csv(text, "fuzz.csv");
    evoteam::eval::cuda::profile_json(launches);
    evoteam::eval::cuda::profile_summary(launches);
  });
  return 0;
}
