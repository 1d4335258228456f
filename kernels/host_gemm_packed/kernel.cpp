// Starting kernel for host_gemm_packed: C[M][N] = A[M][K] * B[K][N], fp32, row-major, one thread.
// The classic three-level blocking of a BLAS GEMM: C is cut into MC x NC cache blocks, the k dimension into KC
// deep panels, and inside a block an MR x NR micro-tile of C is accumulated in registers over the panel's depth.
// With PACK_B the panel of B is first copied into a contiguous NR-wide layout on the stack (unit-stride loads
// for the micro-kernel, its depth taken in whole K_UNROLL groups); without it the micro-kernel reads
// B in place. K_UNROLL unrolls the micro-kernel's k loop. Every param is a compile-time macro (see task.json);
// the defaults are deliberately poor.
#include <cstdint>

#ifndef MC
#define MC 16
#endif
#ifndef NC
#define NC 48
#endif
#ifndef KC
#define KC 64
#endif
#ifndef MR
#define MR 1
#endif
#ifndef NR
#define NR 8
#endif
#ifndef PACK_B
#define PACK_B 0
#endif
#ifndef K_UNROLL
#define K_UNROLL 1
#endif

// A block must hold whole micro-tiles: the block loops step by MR and NR without a remainder of their own.
static_assert(MC % MR == 0, "MC must be a multiple of MR");
static_assert(NC % NR == 0, "NC must be a multiple of NR");
static_assert(KC % K_UNROLL == 0, "KC must be a multiple of K_UNROLL");

namespace {

inline std::int64_t min_of(std::int64_t a, std::int64_t b) { return a < b ? a : b; }

// Edge micro-tile (fewer than MR rows or NR columns): plain loops over C in memory.
inline void edge_tile(const float* __restrict A, std::int64_t lda, const float* __restrict B, std::int64_t ldb,
                      float* __restrict C, std::int64_t ldc, std::int64_t rows, std::int64_t cols, std::int64_t depth) {
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t k = 0; k < depth; ++k) {
      const float a = A[r * lda + k];
      for (std::int64_t c = 0; c < cols; ++c) C[r * ldc + c] += a * B[k * ldb + c];
    }
}

// A full MR x NR micro-tile: C += A[MR][depth] * B[depth][NR], accumulators in registers. The k loop runs in
// groups of K_UNROLL, then over the remainder (none in a packed panel).
inline void micro_tile(const float* __restrict A, std::int64_t lda, const float* __restrict B, std::int64_t ldb,
                       float* __restrict C, std::int64_t ldc, std::int64_t depth) {
  float acc[MR][NR];
  for (int r = 0; r < MR; ++r)
    for (int c = 0; c < NR; ++c) acc[r][c] = 0.0f;
  for (std::int64_t k = 0; k + K_UNROLL <= depth; k += K_UNROLL) {
#pragma GCC unroll 8
    for (int u = 0; u < K_UNROLL; ++u) {
      const float* b = B + (k + u) * ldb;
      for (int r = 0; r < MR; ++r) {
        const float a = A[r * lda + k + u];
        for (int c = 0; c < NR; ++c) acc[r][c] += a * b[c];
      }
    }
  }
  for (std::int64_t k = depth / K_UNROLL * K_UNROLL; k < depth; ++k)
    for (int r = 0; r < MR; ++r)
      for (int c = 0; c < NR; ++c) acc[r][c] += A[r * lda + k] * B[k * ldb + c];
  for (int r = 0; r < MR; ++r)
    for (int c = 0; c < NR; ++c) C[r * ldc + c] += acc[r][c];
}

#if PACK_B
// B[k0:k0+depth, j0:j0+cols] copied into panels of NR columns, each panel contiguous and its last columns padded
// with zeros. The panel's depth is taken in whole K_UNROLL groups, so that the micro-kernel needs no remainder.
inline std::int64_t pack_panel(const float* __restrict B, std::int64_t N, std::int64_t depth, std::int64_t cols,
                               float* __restrict packed) {
  const std::int64_t padded = depth / K_UNROLL * K_UNROLL;
  for (std::int64_t p = 0; p * NR < cols; ++p) {
    float* panel = packed + p * padded * NR;
    const std::int64_t width = min_of(NR, cols - p * NR);
    for (std::int64_t k = 0; k < padded; ++k)
      for (std::int64_t c = 0; c < NR; ++c) panel[k * NR + c] = (k < depth && c < width) ? B[k * N + p * NR + c] : 0.0f;
  }
  return padded;
}
#endif

}  // namespace

extern "C" void matmul(const float* A, const float* B, float* C, std::int64_t M, std::int64_t N, std::int64_t K) {
  for (std::int64_t i = 0; i < M * N; ++i) C[i] = 0.0f;
#if PACK_B
  float packed[(KC + K_UNROLL) * NC];
#endif
  for (std::int64_t j0 = 0; j0 < N; j0 += NC) {
    const std::int64_t cols = min_of(NC, N - j0);
    for (std::int64_t k0 = 0; k0 < K; k0 += KC) {
      const std::int64_t depth = min_of(KC, K - k0);
#if PACK_B
      const std::int64_t padded = pack_panel(B + k0 * N + j0, N, depth, cols, packed);
#endif
      for (std::int64_t i0 = 0; i0 < M; i0 += MC) {
        const std::int64_t rows = min_of(MC, M - i0);
        for (std::int64_t j = 0; j < cols; j += NR) {
          const std::int64_t width = min_of(NR, cols - j);
          for (std::int64_t i = 0; i < rows; i += MR) {
            const float* a = A + (i0 + i) * K + k0;
            float* c = C + (i0 + i) * N + j0 + j;
            const std::int64_t height = min_of(MR, rows - i);
#if PACK_B
            const float* b = packed + j / NR * padded * NR;
            if (height == MR && width == NR) {
              micro_tile(a, K, b, NR, c, N, padded);
            } else {
              edge_tile(a, K, b, NR, c, N, height, width, depth);
            }
#else
            const float* b = B + k0 * N + j0 + j;
            if (height == MR && width == NR) {
              micro_tile(a, K, b, N, c, N, depth);
            } else {
              edge_tile(a, K, b, N, c, N, height, width, depth);
            }
#endif
          }
        }
      }
    }
  }
}
