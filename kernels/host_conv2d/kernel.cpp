// Starting kernel for host_conv2d: a 5x5 "valid" 2-D convolution (cross-correlation) in fp32, one thread:
// out[y][x] = sum over i, j < 5 of in[y + i][x + j] * w[i][j]; `in` is (H + 4) x (W + 4), `out` is H x W.
// The output is cut into TILE_H x TILE_W cache tiles; inside a tile, BY x BX blocks of outputs are computed at a
// time, accumulated in registers (ACC_IN_REGISTERS=1) or in the output row itself, with the 25 weights either
// loaded once per tile into locals (WEIGHTS_IN_REGISTERS=1) or read from memory at every tap. Every param is a
// compile-time macro (see task.json); the defaults are deliberately poor.
#include <cstdint>

#ifndef BX
#define BX 8
#endif
#ifndef BY
#define BY 1
#endif
#ifndef TILE_W
#define TILE_W 64
#endif
#ifndef TILE_H
#define TILE_H 6
#endif
#ifndef ACC_IN_REGISTERS
#define ACC_IN_REGISTERS 0
#endif
#ifndef WEIGHTS_IN_REGISTERS
#define WEIGHTS_IN_REGISTERS 0
#endif

#define R 5  // the filter's side (the task's const axis)

// A cache tile holds whole register blocks in x: the block loop has no remainder inside a tile.
static_assert(TILE_W % BX == 0, "TILE_W must be a multiple of BX");

namespace {

inline std::int64_t min_of(std::int64_t a, std::int64_t b) { return a < b ? a : b; }

struct Weights {
  float tap[R * R];
};

inline Weights load_weights(const float* __restrict w) {
  Weights local;
  for (int t = 0; t < R * R; ++t) local.tap[t] = w[t];
  return local;
}

// Outputs [y, y + ROWS) x [x, x + COLS) of a full block, in registers.
template <int ROWS, int COLS>
inline void block_in_registers(const float* __restrict in, std::int64_t ldi, const float* __restrict w,
                               float* __restrict out, std::int64_t ldo) {
  float acc[ROWS][COLS];
  for (int r = 0; r < ROWS; ++r)
    for (int c = 0; c < COLS; ++c) acc[r][c] = 0.0f;
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < R; ++j) {
      const float weight = w[i * R + j];
      for (int r = 0; r < ROWS; ++r) {
        const float* row = in + (r + i) * ldi + j;
        for (int c = 0; c < COLS; ++c) acc[r][c] += weight * row[c];
      }
    }
  for (int r = 0; r < ROWS; ++r)
    for (int c = 0; c < COLS; ++c) out[r * ldo + c] = acc[r][c];
}

// The same block accumulated in the output rows, one filter tap at a time (also used for edge columns).
inline void block_in_memory(const float* __restrict in, std::int64_t ldi, const float* __restrict w,
                            float* __restrict out, std::int64_t ldo, std::int64_t rows, std::int64_t cols) {
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) out[r * ldo + c] = 0.0f;
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < R; ++j) {
      const float weight = w[i * R + j];
      for (std::int64_t r = 0; r < rows; ++r) {
        const float* row = in + (r + i) * ldi + j;
        float* o = out + r * ldo;
        for (std::int64_t c = 0; c < cols; ++c) o[c] += weight * row[c];
      }
    }
}

// The rows [y0, y1) of one tile's columns [x0, x1): BY-row strips of BX-wide blocks.
template <int ROWS>
inline void strip(const float* in, std::int64_t ldi, const float* w, float* out, std::int64_t ldo, std::int64_t y,
                  std::int64_t x0, std::int64_t x1) {
  std::int64_t x = x0;
  for (; x + BX <= x1; x += BX) {
#if ACC_IN_REGISTERS
    block_in_registers<ROWS, BX>(in + y * ldi + x, ldi, w, out + y * ldo + x, ldo);
#else
    block_in_memory(in + y * ldi + x, ldi, w, out + y * ldo + x, ldo, ROWS, BX);
#endif
  }
  if (x < x1) block_in_memory(in + y * ldi + x, ldi, w, out + y * ldo + x, ldo, ROWS, x1 - x);
}

}  // namespace

extern "C" void conv2d(const float* in, const float* w_in, float* out, std::int64_t H, std::int64_t W) {
  const std::int64_t ldi = W + R - 1;
#if WEIGHTS_IN_REGISTERS
  const Weights local = load_weights(w_in);
  const float* w = local.tap;
#else
  const float* w = w_in;
#endif
  for (std::int64_t y0 = 0; y0 < H; y0 += TILE_H) {
    const std::int64_t y1 = min_of(y0 + TILE_H, H);
    for (std::int64_t x0 = 0; x0 < W; x0 += TILE_W) {
      const std::int64_t x1 = min_of(x0 + TILE_W, W);
      std::int64_t y = y0;
      for (; y + BY <= y1; y += BY) strip<BY>(in, ldi, w, out, W, y, x0, x1);
      // The rows left over, by a halving ladder: 2 then 1 (exact for power-of-two BY).
      if (BY >= 4 && y + 2 <= y1) strip<2>(in, ldi, w, out, W, y, x0, x1), y += 2;
      if (BY >= 2 && y + 1 <= y1) strip<1>(in, ldi, w, out, W, y, x0, x1), y += 1;
    }
  }
}
