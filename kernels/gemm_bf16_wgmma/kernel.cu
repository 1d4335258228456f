// Starting kernel for gemm_bf16: C[M, N] = A[M, K] * B[N, K]^T, bf16 in and out, fp32 accumulation, on the
// CUDA cores. Each block owns a TILE_M x TILE_N tile of C. It walks K in TILE_K-deep slices: the slices of A
// and B are read from global memory (consecutive threads read consecutive k, so the reads are coalesced),
// widened to float and stored transposed in shared memory, so that step kk of the slice is one contiguous row
// along m and one along n. Each thread then accumulates THREAD_M x THREAD_N outputs in registers: THREAD_M
// consecutive rows, and THREAD_N columns strided by the number of thread columns (conflict-free shared reads,
// coalesced stores).
//
// Deliberately left to the team: tensor cores (mma.sync / wgmma / tcgen05), TMA or cp.async staging, multi-stage
// pipelines, split-K or stream-K for small M, warp specialisation, epilogue vectorisation.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#ifndef TILE_M
#define TILE_M 128
#endif
#ifndef TILE_N
#define TILE_N 128
#endif
#ifndef TILE_K
#define TILE_K 16
#endif
#ifndef THREAD_M
#define THREAD_M 8
#endif
#ifndef THREAD_N
#define THREAD_N 8
#endif

namespace {

constexpr int k_tile_m = TILE_M;
constexpr int k_tile_n = TILE_N;
constexpr int k_tile_k = TILE_K;
constexpr int k_thread_m = THREAD_M;
constexpr int k_thread_n = THREAD_N;
constexpr int k_thread_cols = k_tile_n / k_thread_n;
constexpr int k_threads = (k_tile_m / k_thread_m) * k_thread_cols;
// A few floats of padding per shared row spread the transposed stores over the banks while keeping rows
// 16-byte aligned.
constexpr int k_pad = 4;

static_assert(k_tile_m % k_thread_m == 0, "TILE_M must be a multiple of THREAD_M");
static_assert(k_tile_n % k_thread_n == 0, "TILE_N must be a multiple of THREAD_N");
static_assert(k_threads >= 32 && k_threads <= 1024, "threads per block out of range");

__global__ void __launch_bounds__(k_threads)
    gemm_tiled(const __nv_bfloat16* __restrict__ a, const __nv_bfloat16* __restrict__ b, __nv_bfloat16* __restrict__ c,
               std::int64_t m, std::int64_t n, std::int64_t k) {
  __shared__ float a_tile[k_tile_k][k_tile_m + k_pad];
  __shared__ float b_tile[k_tile_k][k_tile_n + k_pad];

  const int tid = static_cast<int>(threadIdx.x);
  const int thread_col = tid % k_thread_cols;
  const int thread_row = tid / k_thread_cols;
  const std::int64_t row0 = static_cast<std::int64_t>(blockIdx.x) * k_tile_m;
  const std::int64_t col0 = static_cast<std::int64_t>(blockIdx.y) * k_tile_n;

  float acc[k_thread_m][k_thread_n];
#pragma unroll
  for (int i = 0; i < k_thread_m; ++i)
#pragma unroll
    for (int j = 0; j < k_thread_n; ++j) acc[i][j] = 0.0f;

  for (std::int64_t k0 = 0; k0 < k; k0 += k_tile_k) {
    // Out-of-range rows and depths load zeros, so partial tiles need no special case in the inner loop.
    for (int i = tid; i < k_tile_m * k_tile_k; i += k_threads) {
      const int kk = i % k_tile_k;
      const int mm = i / k_tile_k;
      const std::int64_t row = row0 + mm;
      const std::int64_t depth = k0 + kk;
      a_tile[kk][mm] = (row < m && depth < k) ? __bfloat162float(a[row * k + depth]) : 0.0f;
    }
    for (int i = tid; i < k_tile_n * k_tile_k; i += k_threads) {
      const int kk = i % k_tile_k;
      const int nn = i / k_tile_k;
      const std::int64_t col = col0 + nn;
      const std::int64_t depth = k0 + kk;
      b_tile[kk][nn] = (col < n && depth < k) ? __bfloat162float(b[col * k + depth]) : 0.0f;
    }
    __syncthreads();

#pragma unroll
    for (int kk = 0; kk < k_tile_k; ++kk) {
      float a_frag[k_thread_m];
      float b_frag[k_thread_n];
#pragma unroll
      for (int i = 0; i < k_thread_m; ++i) a_frag[i] = a_tile[kk][thread_row * k_thread_m + i];
#pragma unroll
      for (int j = 0; j < k_thread_n; ++j) b_frag[j] = b_tile[kk][thread_col + j * k_thread_cols];
#pragma unroll
      for (int i = 0; i < k_thread_m; ++i)
#pragma unroll
        for (int j = 0; j < k_thread_n; ++j) acc[i][j] = fmaf(a_frag[i], b_frag[j], acc[i][j]);
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < k_thread_m; ++i) {
    const std::int64_t row = row0 + thread_row * k_thread_m + i;
    if (row >= m) break;
#pragma unroll
    for (int j = 0; j < k_thread_n; ++j) {
      const std::int64_t col = col0 + thread_col + j * k_thread_cols;
      if (col < n) c[row * n + col] = __float2bfloat16_rn(acc[i][j]);
    }
  }
}

}  // namespace

extern "C" cudaError_t gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, std::int64_t M,
                                 std::int64_t N, std::int64_t K, cudaStream_t stream) {
  if (M <= 0 || N <= 0) return cudaSuccess;  // nothing to write
  // M tiles go on x (up to 2^31 - 1 blocks); N tiles on y, which allows 65535.
  const std::int64_t blocks_m = (M + k_tile_m - 1) / k_tile_m;
  const std::int64_t blocks_n = (N + k_tile_n - 1) / k_tile_n;
  if (blocks_m > 0x7fffffff || blocks_n > 65535) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(blocks_m), static_cast<unsigned>(blocks_n));
  gemm_tiled<<<grid, k_threads, 0, stream>>>(A, B, C, M, N, K);
  return cudaGetLastError();
}
