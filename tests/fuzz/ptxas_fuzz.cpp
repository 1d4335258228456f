// What the static stage reads from the CUDA tools: ptxas -v resource lines, PTX, cuobjdump SASS and nm output.
#include "eval/cuda/cuda_static.hpp"

#include "fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = evoteam::fuzz::as_text(data, size);
  evoteam::fuzz::expect_clean_outcome([&] {
    for (const evoteam::eval::cuda::KernelResources& kernel : evoteam::eval::cuda::parse_ptxas(text))
      evoteam::eval::cuda::to_json(kernel);
  });
  evoteam::fuzz::expect_clean_outcome([&] { evoteam::eval::cuda::scan_ptx(text); });
  evoteam::fuzz::expect_clean_outcome([&] { evoteam::eval::cuda::parse_sass(text); });
  evoteam::fuzz::expect_clean_outcome([&] { evoteam::eval::cuda::parse_nm_undefined(text); });
  return 0;
}
