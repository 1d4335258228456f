// Starting kernel for gemm_n3072_k8192 (imported): C = A @ B.T with A [M, 8192], B [3072, 8192], C [M, 3072], fp16 in and out.
// One thread per element of C, a BLOCK_N x BLOCK_M block of threads per tile, the dot product over K in fp32 and
// one rounding to fp16: the straightforward translation of reference.py. Left to the team: shared-memory tiles,
// register blocking, vectorised loads, tensor cores (mma, wgmma on sm_90a, tcgen05 on sm_100a), split-K for small M.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#ifndef BLOCK_N
#define BLOCK_N 32
#endif
#ifndef BLOCK_M
#define BLOCK_M 8
#endif

namespace {

constexpr std::int64_t k_n = 3072;
constexpr std::int64_t k_k = 8192;

static_assert(BLOCK_N * BLOCK_M >= 1 && BLOCK_N * BLOCK_M <= 1024, "a block holds at most 1024 threads");

__global__ void __launch_bounds__(BLOCK_N * BLOCK_M)
    gemm_naive(const __half* __restrict__ a, const __half* __restrict__ b, __half* __restrict__ c, std::int64_t m) {
  const std::int64_t col = static_cast<std::int64_t>(blockIdx.x) * BLOCK_N + threadIdx.x;
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.y) * BLOCK_M + threadIdx.y;
  if (row >= m || col >= k_n) return;
  const __half* a_row = a + row * k_k;
  const __half* b_row = b + col * k_k;
  float sum = 0.0f;
  for (std::int64_t k = 0; k < k_k; ++k) sum = fmaf(__half2float(a_row[k]), __half2float(b_row[k]), sum);
  c[row * k_n + col] = __float2half_rn(sum);
}

}  // namespace

extern "C" cudaError_t gemm_n3072_k8192(const __half* A, const __half* B, __half* C, std::int64_t M, cudaStream_t stream) {
  if (M <= 0) return cudaSuccess;
  const std::int64_t row_blocks = (M + BLOCK_M - 1) / BLOCK_M;
  if (row_blocks > 65535) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>((k_n + BLOCK_N - 1) / BLOCK_N), static_cast<unsigned>(row_blocks));
  gemm_naive<<<grid, dim3(BLOCK_N, BLOCK_M), 0, stream>>>(A, B, C, M);
  return cudaGetLastError();
}
