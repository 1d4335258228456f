// Trusted reference for gemm_allreduce (one rank's process): the rank's partial product
// A_r[M, K / world_size] * B_r[N, K / world_size]^T is accumulated in fp32 (16 x 16 shared-memory tiles, one
// thread per element) into the harness's fp32 workspace; ncclAllReduce sums the workspaces of all ranks in place,
// in fp32; one more kernel rounds the sum to bf16 into C. Correct for any M, N and any K divisible by world_size.
//
// The entry takes the communicator and this process's rank after the task's listed arguments (README.md).
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdint>

namespace {

constexpr int k_tile = 16;

__global__ void partial_gemm_reference(const __nv_bfloat16* __restrict__ a, const __nv_bfloat16* __restrict__ b,
                                       float* __restrict__ partial, std::int64_t m, std::int64_t n,
                                       std::int64_t k_shard) {
  __shared__ float a_tile[k_tile][k_tile + 1];  // [row of C][k]
  __shared__ float b_tile[k_tile][k_tile + 1];  // [column of C][k]
  const int tx = static_cast<int>(threadIdx.x);
  const int ty = static_cast<int>(threadIdx.y);
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.y) * k_tile + ty;
  const std::int64_t col = static_cast<std::int64_t>(blockIdx.x) * k_tile + tx;
  const std::int64_t b_row = static_cast<std::int64_t>(blockIdx.x) * k_tile + ty;

  float acc = 0.0f;
  for (std::int64_t k0 = 0; k0 < k_shard; k0 += k_tile) {
    const std::int64_t depth = k0 + tx;
    a_tile[ty][tx] = (row < m && depth < k_shard) ? __bfloat162float(a[row * k_shard + depth]) : 0.0f;
    b_tile[ty][tx] = (b_row < n && depth < k_shard) ? __bfloat162float(b[b_row * k_shard + depth]) : 0.0f;
    __syncthreads();
    for (int kk = 0; kk < k_tile; ++kk) acc = fmaf(a_tile[ty][kk], b_tile[tx][kk], acc);
    __syncthreads();
  }
  if (row < m && col < n) partial[row * n + col] = acc;
}

__global__ void round_to_bf16(const float* __restrict__ sum, __nv_bfloat16* __restrict__ c, std::int64_t count) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    c[i] = __float2bfloat16_rn(sum[i]);
}

}  // namespace

extern "C" cudaError_t gemm_allreduce(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C,
                                      float* workspace, std::int64_t M, std::int64_t N, std::int64_t K,
                                      std::int64_t world_size, ncclComm_t comm, std::int32_t rank,
                                      cudaStream_t stream) {
  if (M <= 0 || N <= 0) return cudaSuccess;
  if (world_size < 1 || K < 0 || K % world_size != 0) return cudaErrorInvalidValue;
  // A harness that handed the wrong communicator or rank would make every result meaningless: refuse.
  int comm_size = 0;
  int comm_rank = -1;
  if (ncclCommCount(comm, &comm_size) != ncclSuccess || ncclCommUserRank(comm, &comm_rank) != ncclSuccess)
    return cudaErrorInvalidResourceHandle;
  if (comm_size != world_size || comm_rank != rank) return cudaErrorInvalidValue;

  const std::int64_t k_shard = K / world_size;
  const std::int64_t blocks_n = (N + k_tile - 1) / k_tile;
  const std::int64_t blocks_m = (M + k_tile - 1) / k_tile;
  if (blocks_n > 0x7fffffff || blocks_m > 65535) return cudaErrorInvalidValue;
  partial_gemm_reference<<<dim3(static_cast<unsigned>(blocks_n), static_cast<unsigned>(blocks_m)), dim3(k_tile, k_tile),
                           0, stream>>>(A, B, workspace, M, N, k_shard);
  cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess) return error;

  const std::int64_t count = M * N;
  if (ncclAllReduce(workspace, workspace, static_cast<size_t>(count), ncclFloat32, ncclSum, comm, stream) != ncclSuccess)
    return cudaErrorUnknown;  // NCCL's own result is available to the harness through ncclGetLastError(comm)

  const std::int64_t blocks = (count + 255) / 256;
  round_to_bf16<<<static_cast<unsigned>(blocks < 65536 ? blocks : 65536), 256, 0, stream>>>(workspace, C, count);
  return cudaGetLastError();
}
