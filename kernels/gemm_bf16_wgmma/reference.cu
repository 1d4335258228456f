// Trusted reference for gemm_bf16: C[M, N] = A[M, K] * B[N, K]^T. One thread per output element, 16 x 16
// tiles of A and B staged in shared memory, products of the bf16 inputs (exact in fp32) accumulated in fp32
// in increasing k, and the sum rounded to bf16 once. Correct for any M, N, K; slow but
// far below the call deadline (an estimate of a few hundred ms at M = 8192 on the target GPUs, not measured).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace {

constexpr int k_tile = 16;

__global__ void gemm_reference(const __nv_bfloat16* __restrict__ a, const __nv_bfloat16* __restrict__ b,
                               __nv_bfloat16* __restrict__ c, std::int64_t m, std::int64_t n, std::int64_t k) {
  // One column of padding: the [column][k] reads of b_tile by consecutive threads hit different banks.
  __shared__ float a_tile[k_tile][k_tile + 1];  // [row of C][k]
  __shared__ float b_tile[k_tile][k_tile + 1];  // [column of C][k]

  const int tx = static_cast<int>(threadIdx.x);
  const int ty = static_cast<int>(threadIdx.y);
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.y) * k_tile + ty;
  const std::int64_t col = static_cast<std::int64_t>(blockIdx.x) * k_tile + tx;
  const std::int64_t b_row = static_cast<std::int64_t>(blockIdx.x) * k_tile + ty;  // the B row thread (ty, tx) loads

  float acc = 0.0f;
  for (std::int64_t k0 = 0; k0 < k; k0 += k_tile) {
    const std::int64_t depth = k0 + tx;
    a_tile[ty][tx] = (row < m && depth < k) ? __bfloat162float(a[row * k + depth]) : 0.0f;
    b_tile[ty][tx] = (b_row < n && depth < k) ? __bfloat162float(b[b_row * k + depth]) : 0.0f;
    __syncthreads();
    for (int kk = 0; kk < k_tile; ++kk) acc = fmaf(a_tile[ty][kk], b_tile[tx][kk], acc);
    __syncthreads();
  }
  if (row < m && col < n) c[row * n + col] = __float2bfloat16_rn(acc);
}

}  // namespace

extern "C" cudaError_t gemm_bf16(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, std::int64_t M,
                                 std::int64_t N, std::int64_t K, cudaStream_t stream) {
  if (M <= 0 || N <= 0) return cudaSuccess;
  const std::int64_t blocks_n = (N + k_tile - 1) / k_tile;
  const std::int64_t blocks_m = (M + k_tile - 1) / k_tile;
  if (blocks_n > 0x7fffffff || blocks_m > 65535) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(blocks_n), static_cast<unsigned>(blocks_m));
  const dim3 block(k_tile, k_tile);
  gemm_reference<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
  return cudaGetLastError();
}
