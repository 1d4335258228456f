// Trusted reference for host_conv2d: every output a sum of 25 products accumulated in double precision and
// rounded to float once.
#include <cstdint>

extern "C" void conv2d(const float* in, const float* w, float* out, std::int64_t H, std::int64_t W) {
  const std::int64_t ldi = W + 4;
  for (std::int64_t y = 0; y < H; ++y)
    for (std::int64_t x = 0; x < W; ++x) {
      double sum = 0.0;
      for (int i = 0; i < 5; ++i)
        for (int j = 0; j < 5; ++j)
          sum += static_cast<double>(in[(y + i) * ldi + x + j]) * static_cast<double>(w[i * 5 + j]);
      out[y * W + x] = static_cast<float>(sum);
    }
}
